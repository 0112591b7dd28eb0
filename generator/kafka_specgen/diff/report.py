"""A spec comparison as text, markdown or JSON."""

from __future__ import annotations

import json

from .changes import SEVERITIES, MessageDiff, SpecDiff


def _groups(diff: SpecDiff) -> list[tuple[str, list[MessageDiff]]]:
    groups: dict[str, list[MessageDiff]] = {}
    for m in diff.messages:
        if m.status != "unchanged":
            groups.setdefault(m.group_title, []).append(m)
    return list(groups.items())


def _headline(m: MessageDiff) -> str:
    if m.status == "added":
        return f"{m.name}: added (versions {m.new_versions}, flexible {m.new_flexible})"
    if m.status == "absent":
        return f"{m.name}: not in the new set (had versions {m.old_versions})"
    versions = (
        f"versions {m.old_versions}"
        if m.old_versions == m.new_versions
        else f"versions {m.old_versions} -> {m.new_versions}"
    )
    flexible = (
        f"flexible {m.new_flexible}"
        if m.old_flexible == m.new_flexible
        else f"flexible {m.old_flexible} -> {m.new_flexible}"
    )
    return f"{m.name}: {versions}, {flexible}"


def _summary_line(diff: SpecDiff) -> str:
    s = diff.summary()
    return (
        f"messages: {s['added']} added, {s['absent']} not in the new set, {s['changed']} changed, "
        f"{s['unchanged']} unchanged; {s['violations']} evolution-rule violations, "
        f"{s['breakings']} breaking changes, {s['infos']} other changes"
    )


def render_text(diff: SpecDiff) -> str:
    lines = [f"spec diff: {diff.old} -> {diff.new}", _summary_line(diff)]
    for title, messages in _groups(diff):
        lines.append("")
        lines.append(title)
        for m in messages:
            lines.append(f"  {_headline(m)}")
            for c in sorted(m.changes, key=lambda c: SEVERITIES.index(c.severity)):
                if m.status in ("added", "absent") and c.rule.startswith("message-"):
                    continue
                lines.append(f"    {c.severity:<9} {c.rule:<34} {c.text()}")
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(diff: SpecDiff) -> str:
    lines = [f"# Spec changes: `{diff.old}` → `{diff.new}`", "", _summary_line(diff), ""]
    violations = [(m, c) for m, c in diff.changes if c.severity == "violation"]
    if violations:
        lines += ["## Evolution-rule violations", ""]
        for m, c in violations:
            lines.append(f"- **{m.name}** `{c.rule}`: {_md(c.text())}")
        lines.append("")
    for title, messages in _groups(diff):
        lines += [f"## {title}", ""]
        for m in messages:
            lines.append(f"### {_md(_headline(m))}")
            lines.append("")
            body = [
                c
                for c in m.changes
                if not (m.status in ("added", "absent") and c.rule.startswith("message-"))
            ]
            if body:
                lines += ["| severity | rule | change |", "|---|---|---|"]
                for c in sorted(body, key=lambda c: SEVERITIES.index(c.severity)):
                    lines.append(f"| {c.severity} | `{c.rule}` | {_md(c.text())} |")
                lines.append("")
    return "\n".join(lines)


def render(diff: SpecDiff, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(diff.to_dict(), indent=2, sort_keys=True) + "\n"
    if fmt == "markdown":
        return render_markdown(diff)
    return render_text(diff)


# --- command line ------------------------------------------------------------------------
