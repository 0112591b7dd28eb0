"""``kafka-specgen diff OLD NEW``: what changed between two spec sets, and is it legal?

Both sides go through the same stages as ``generate`` (load -> schema -> model), so the
comparison is between models, not JSON text: comments, key order, string-vs-number
defaults and the like never show up as changes.

Every change has a severity:

- ``violation``: breaks one of Kafka's evolution rules (spec-language.md section 11 and
  what the wire format implies): the api key or message type changed, the highest valid
  version went down, a version present on both sides changed its wire layout (a field
  added, removed, retyped or (un)tagged in it, its flexibility changed, a nullable
  struct's null marker came or went), a tag moved or was given to another field, a
  default changed.
- ``breaking``: legal, but generated code or its users notice: versions removed (Kafka
  4.0 removed old versions this way), a message or field removed, a field renamed (the
  wire is the same, the Python attribute is not).
- ``info``: versions added, fields added in new versions, tagged fields added, nullability
  widened, documentation-level facts (deprecated versions, unstable latest version).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..library import load_specs
from ..model import Field, Message, Struct
from ..plan import version_ranges
from ..versions import MAX_VERSION, Versions

SEVERITIES = ("violation", "breaking", "info")


@dataclass(frozen=True)
class Change:
    severity: str
    rule: str
    detail: str
    path: str = ""
    """The field path inside the message (``Topics.Partitions.Index``), or empty."""

    def text(self) -> str:
        where = f"{self.path}: " if self.path else ""
        return f"{where}{self.detail}"


@dataclass
class MessageDiff:
    name: str
    type: str
    api_key: int | None
    api_name: str
    status: str
    """``added``, ``removed``, ``changed`` or ``unchanged``."""
    old_versions: str | None
    new_versions: str | None
    old_flexible: str | None
    new_flexible: str | None
    changes: list[Change] = field(default_factory=list)

    def add(self, severity: str, rule: str, detail: str, path: str = "") -> None:
        self.changes.append(Change(severity, rule, detail, path))

    @property
    def group(self) -> tuple[int, int, str]:
        """Sort key: APIs by key first, then other kinds by name."""
        if self.type in ("request", "response") and self.api_key is not None:
            return (0, self.api_key, self.api_name)
        order = {"header": 1, "metadata": 2, "data": 3}.get(self.type, 4)
        return (order, self.api_key if self.api_key is not None else -1, self.name)

    @property
    def group_title(self) -> str:
        if self.type in ("request", "response") and self.api_key is not None:
            return f"API {self.api_key} {self.api_name}"
        if self.type == "metadata":
            key = "" if self.api_key is None else f" (record type {self.api_key})"
            return f"metadata record {self.name}{key}"
        return f"{self.type} {self.name}"


@dataclass
class SpecDiff:
    old: str
    new: str
    messages: list[MessageDiff]

    @property
    def changes(self) -> list[tuple[MessageDiff, Change]]:
        return [(m, c) for m in self.messages for c in m.changes]

    def count(self, severity: str) -> int:
        return sum(1 for _, c in self.changes if c.severity == severity)

    def message(self, name: str) -> MessageDiff:
        for m in self.messages:
            if m.name == name:
                return m
        raise KeyError(name)

    def summary(self) -> dict[str, int]:
        statuses = [m.status for m in self.messages]
        return {
            "added": statuses.count("added"),
            "removed": statuses.count("removed"),
            "changed": statuses.count("changed"),
            "unchanged": statuses.count("unchanged"),
            **{f"{s}s": self.count(s) for s in SEVERITIES},
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "old": self.old,
            "new": self.new,
            "summary": self.summary(),
            "messages": [
                {**asdict(m), "changes": [asdict(c) for c in m.changes]}
                for m in self.messages
                if m.status != "unchanged"
            ],
        }


# --- comparing ---------------------------------------------------------------------------


def ranges(versions: Iterable[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``"0-2, 5"``; a run up to the maximum reads ``N+``."""
    items = sorted(set(versions))
    if not items:
        return "none"
    text = version_ranges(items)
    if items[-1] != MAX_VERSION:
        return text
    head, _, last = text.rpartition(", ")
    open_ended = f"{last.split('-')[0]}+"
    return f"{head}, {open_ended}" if head else open_ended


def vset(versions: Versions) -> set[int]:
    return set(range(versions.lo, versions.hi + 1)) if versions else set()


def untagged(f: Field, common: Versions) -> set[int]:
    """The versions of ``common`` in which ``f`` is a regular (untagged) wire field."""
    present = f.versions.intersect(common)
    return vset(present) - vset(f.tagged_versions) if f.tag is not None else vset(present)


def tagged(f: Field, common: Versions) -> set[int]:
    if f.tag is None:
        return set()
    return vset(f.versions.intersect(common).intersect(f.tagged_versions))


def nullable(f: Field, scope: Versions) -> set[int]:
    return vset(f.nullable_versions.intersect(f.versions).intersect(scope))


def norm(v: Versions, valid: Versions, floor: int | None = None) -> Versions:
    """A field's versions as a spec would declare them: reaching the message's last
    version reads as open-ended (``N+``), and with ``floor`` (the higher of the two
    sides' lowest versions) the start is clipped to it. Field versions in the model are
    cut to the message's valid versions; without this, every field of a message that
    gained or lost versions would show up as changed."""
    if v.empty:
        return v
    lo = v.lo if floor is None else max(v.lo, floor)
    hi = MAX_VERSION if v.hi >= valid.hi else v.hi
    return Versions(lo, hi) if lo <= hi else Versions(1, 0)


def shape(f: Field) -> str:
    """The type as the wire sees it: struct names do not matter, their fields do."""
    if f.type.is_struct:
        return "struct"
    if f.type.is_struct_array:
        return "[]struct"
    # records is a bytes blob with another name: the same wire format.
    return "bytes" if f.type.text == "records" else f.type.text


def fmt_default(value: Any) -> str:
    return repr(value)


class UnstableAware:
    """Adds changes to a MessageDiff; a message whose latest version was unstable may
    still change that version, so wire-layout violations there are downgraded."""

    def __init__(self, md: MessageDiff, old: Message) -> None:
        self.md = md
        self.unstable = old.latest_version_unstable

    def add(self, severity: str, rule: str, detail: str, path: str = "") -> None:
        if severity == "violation" and self.unstable and rule not in LASTING_RULES:
            severity = "breaking"
            detail += " (allowed: the old latest version was marked unstable)"
        self.md.add(severity, rule, detail, path)


#: Violations that an unstable latest version does not excuse.
LASTING_RULES = frozenset({"type-changed", "api-key-changed", "max-version-lowered", "tag-reused"})


class Differ:
    def __init__(self, md: MessageDiff, old: Message, new: Message) -> None:
        self.md: Any = UnstableAware(md, old)
        self.old = old
        self.new = new
        self.common = old.valid_versions.intersect(new.valid_versions)
        self.floor = max(old.valid_versions.lo, new.valid_versions.lo)

    def run(self) -> None:
        md, old, new = self.md, self.old, self.new
        if old.type != new.type:
            md.add("violation", "type-changed", f"message type changed: {old.type} -> {new.type}")
        if old.api_key != new.api_key:
            md.add(
                "violation", "api-key-changed", f"api key changed: {old.api_key} -> {new.api_key}"
            )
        self.versions()
        self.flexible()
        self.facts()
        self.struct(old.root, new.root, "")

    def versions(self) -> None:
        md, old, new = self.md, self.old.valid_versions, self.new.valid_versions
        added = vset(new) - vset(old)
        removed = vset(old) - vset(new)
        if removed:
            md.add("breaking", "versions-removed", f"versions {ranges(removed)} removed")
        if added:
            md.add("info", "versions-added", f"versions {ranges(added)} added")
        if new.hi < old.hi:
            md.add(
                "violation",
                "max-version-lowered",
                f"the highest version went down: {old.hi} -> {new.hi}",
            )
        if new.lo > old.lo and not self.common:
            md.add("breaking", "no-common-version", "no version is on both sides")

    def flexible(self) -> None:
        md, old, new = self.md, self.old.flexible_versions, self.new.flexible_versions
        if old == new:
            return
        md.add("info", "flexible-versions-changed", f"flexible versions {old} -> {new}")
        lost = vset(old.intersect(self.common)) - vset(new)
        gained = vset(new.intersect(self.common)) - vset(old)
        if lost:
            md.add(
                "violation",
                "flexible-versions-shrunk",
                f"versions {ranges(lost)} are no longer flexible (flexible versions may "
                "only grow, into new versions)",
            )
        if gained:
            md.add(
                "violation",
                "flexible-versions-changed-existing",
                f"existing versions {ranges(gained)} became flexible (their wire format "
                "changes)",
            )

    def facts(self) -> None:
        md, old, new = self.md, self.old, self.new
        if old.deprecated_versions != new.deprecated_versions:
            md.add(
                "info",
                "deprecated-versions-changed",
                f"deprecated versions {old.deprecated_versions} -> {new.deprecated_versions}",
            )
        if old.latest_version_unstable != new.latest_version_unstable:
            state = "unstable" if new.latest_version_unstable else "stable"
            md.add(
                "info",
                "latest-version-unstable-changed",
                f"the latest version is now marked {state}",
            )
        if set(old.listeners) != set(new.listeners):
            md.add(
                "info",
                "listeners-changed",
                f"listeners {sorted(old.listeners)} -> {sorted(new.listeners)}",
            )

    def struct(self, old: Struct, new: Struct, prefix: str) -> None:
        old_fields = {f.name: f for f in old.fields}
        new_fields = {f.name: f for f in new.fields}
        removed = [f for f in old.fields if f.name not in new_fields]
        added = [f for f in new.fields if f.name not in old_fields]
        renames: list[tuple[Field, Field]] = []
        ov, nv = self.old.valid_versions, self.new.valid_versions
        fl = self.floor
        for r in list(removed):
            for a in added:
                same_declared = norm(a.versions, nv, fl) == norm(r.versions, ov, fl) and norm(
                    a.nullable_versions.intersect(a.versions), nv, fl
                ) == norm(r.nullable_versions.intersect(r.versions), ov, fl)
                same_wire = bool(untagged(a, self.common)) and (
                    untagged(a, self.common) == untagged(r, self.common)
                    and tagged(a, self.common) == tagged(r, self.common)
                )
                if shape(a) == shape(r) and a.tag == r.tag and (same_declared or same_wire):
                    renames.append((r, a))
                    removed.remove(r)
                    added.remove(a)
                    break
        for r, a in renames:
            self.md.add(
                "breaking",
                "field-renamed",
                f"field renamed {r.name} -> {a.name} (same wire format; the Python "
                f"attribute changes: {r.attr} -> {a.attr})",
                prefix + a.name,
            )
            self.field(r, a, prefix + a.name, renamed=True)
        for a in added:
            self.field_added(a, prefix + a.name)
        for r in removed:
            self.field_removed(r, prefix + r.name)
        for name, o in old_fields.items():
            if name in new_fields:
                self.field(o, new_fields[name], prefix + name)
        self.tags(old, new, renames, prefix)

    def field_added(self, f: Field, path: str) -> None:
        where = untagged(f, self.common)
        kind = f"tagged field (tag {f.tag})" if f.tag is not None else "field"
        self.md.add(
            "info",
            "field-added",
            f"{kind} added, {f.type.text}, versions "
            f"{norm(f.versions, self.new.valid_versions)}",
            path,
        )
        if where:
            self.md.add(
                "violation",
                "field-added-to-existing-version",
                f"a regular field added to existing version(s) {ranges(where)}",
                path,
            )

    def field_removed(self, f: Field, path: str) -> None:
        where = untagged(f, self.common)
        self.md.add(
            "breaking",
            "field-removed",
            f"field removed ({f.type.text}, versions "
            f"{norm(f.versions, self.old.valid_versions)})",
            path,
        )
        if where:
            self.md.add(
                "violation",
                "field-removed-from-existing-version",
                f"a regular field removed from version(s) {ranges(where)} that remain",
                path,
            )

    def field(self, o: Field, n: Field, path: str, renamed: bool = False) -> None:
        md, common = self.md, self.common
        if o.type.text != n.type.text:
            if shape(o) == shape(n) and o.struct is None:
                md.add(
                    "info",
                    "field-retyped-compatible",
                    f"type changed {o.type.text} -> {n.type.text} (same wire format)",
                    path,
                )
            elif shape(o) == shape(n):
                md.add(
                    "info",
                    "struct-type-renamed",
                    f"struct type renamed {o.type.text} -> {n.type.text}",
                    path,
                )
            else:
                both = vset(o.versions.intersect(n.versions).intersect(common))
                severity = "violation" if both else "breaking"
                md.add(
                    severity,
                    "field-retyped",
                    f"type changed {o.type.text} -> {n.type.text}"
                    + (f" in existing version(s) {ranges(both)}" if both else ""),
                    path,
                )
        ov, nv, fl = self.old.valid_versions, self.new.valid_versions, self.floor
        if norm(o.versions, ov, fl) != norm(n.versions, nv, fl):
            md.add(
                "info",
                "field-versions-changed",
                f"versions {norm(o.versions, ov, fl)} -> {norm(n.versions, nv, fl)}",
                path,
            )
        uo, un = untagged(o, common), untagged(n, common)
        if uo != un:
            md.add(
                "violation",
                "field-layout-changed",
                f"present as a regular field in {ranges(uo)} before, {ranges(un)} now "
                f"(within the common versions {common})",
                path,
            )
        if o.tag != n.tag and o.tag is not None and n.tag is not None:
            md.add("violation", "tag-changed", f"tag changed {o.tag} -> {n.tag}", path)
        elif o.tag != n.tag:
            md.add(
                "info",
                "tagging-changed",
                f"tag {o.tag} -> {n.tag}; tagged versions {o.tagged_versions} -> "
                f"{n.tagged_versions}",
                path,
            )
        if o.tagged_versions != n.tagged_versions and o.tag == n.tag and o.tag is not None:
            md.add(
                "info",
                "tagged-versions-changed",
                f"tagged versions {o.tagged_versions} -> {n.tagged_versions}",
                path,
            )
        scope = Versions(0, MAX_VERSION)
        no_decl = norm(o.nullable_versions.intersect(o.versions), ov, fl)
        nn_decl = norm(n.nullable_versions.intersect(n.versions), nv, fl)
        if no_decl != nn_decl:
            md.add("info", "nullability-changed", f"nullable in {no_decl} -> {nn_decl}", path)
            no, nn = nullable(o, scope), nullable(n, scope)
            changed = {v for v in (no ^ nn) & vset(common) if v in uo and v in un}
            if changed and shape(n) == "struct":
                md.add(
                    "violation",
                    "nullable-struct-changed",
                    f"null marker of a struct added/removed in existing version(s) "
                    f"{ranges(changed)}",
                    path,
                )
        if o.default != n.default and shape(o) == shape(n):
            # The default is on the wire's side when a decoder fills it in: for a version
            # of the message that lacks the field. Otherwise only new objects see it.
            absent = vset(self.new.valid_versions) - vset(n.versions)
            md.add(
                "violation" if absent else "breaking",
                "default-changed",
                f"default changed {fmt_default(o.default)} -> {fmt_default(n.default)}",
                path,
            )
        if o.ignorable != n.ignorable:
            md.add("info", "ignorable-changed", f"ignorable {o.ignorable} -> {n.ignorable}", path)
        if o.flexible_versions != n.flexible_versions:
            md.add(
                "info",
                "field-flexible-versions-changed",
                f"field flexible versions {o.flexible_versions} -> {n.flexible_versions}",
                path,
            )
        if o.struct is not None and n.struct is not None:
            self.struct(o.struct, n.struct, path + ".")

    def tags(
        self, old: Struct, new: Struct, renames: list[tuple[Field, Field]], prefix: str
    ) -> None:
        """A tag once used by one field must never name another."""
        renamed = {a.name: r.name for r, a in renames}
        old_tags = {f.tag: f.name for f in old.fields if f.tag is not None}
        for f in new.fields:
            if f.tag is None or f.tag not in old_tags:
                continue
            before = old_tags[f.tag]
            if before != renamed.get(f.name, f.name):
                self.md.add(
                    "violation",
                    "tag-reused",
                    f"tag {f.tag} belonged to {before}, now to {f.name}",
                    prefix + f.name,
                )


def diff_models(
    old: Sequence[Message],
    new: Sequence[Message],
    old_label: str = "OLD",
    new_label: str = "NEW",
) -> SpecDiff:
    olds = {m.name: m for m in old}
    news = {m.name: m for m in new}
    # A request or response that vanished while another with the same api key appeared
    # was renamed (e.g. ListClientMetricsResources -> ListConfigResources, api key 74).
    renamed: dict[str, str] = {}
    gone: dict[tuple[str, int | None], str] = {
        (m.type, m.api_key): m.name
        for m in old
        if m.name not in news and m.type in ("request", "response") and m.api_key is not None
    }
    for m in new:
        if m.name not in olds and (m.type, m.api_key) in gone:
            renamed[m.name] = gone[(m.type, m.api_key)]
    result: list[MessageDiff] = []
    for name in sorted((olds.keys() - set(renamed.values())) | news.keys()):
        o, n = olds.get(renamed.get(name, name)), news.get(name)
        ref = n or o
        assert ref is not None
        md = MessageDiff(
            name=name,
            type=ref.type,
            api_key=ref.api_key,
            api_name=ref.api_name,
            status="changed",
            old_versions=str(o.valid_versions) if o else None,
            new_versions=str(n.valid_versions) if n else None,
            old_flexible=str(o.flexible_versions) if o else None,
            new_flexible=str(n.flexible_versions) if n else None,
        )
        if o is None:
            assert n is not None
            md.status = "added"
            md.add(
                "info",
                "message-added",
                f"new {n.type} message, versions {n.valid_versions}, flexible "
                f"{n.flexible_versions}",
            )
        elif n is None:
            md.status = "removed"
            md.add(
                "breaking",
                "message-removed",
                f"{o.type} message removed (had versions {o.valid_versions})",
            )
        else:
            if name in renamed:
                md.add(
                    "breaking",
                    "message-renamed",
                    f"renamed from {renamed[name]} (same api key {n.api_key}); the "
                    "Python class and module change",
                )
            Differ(md, o, n).run()
            if not md.changes:
                md.status = "unchanged"
        result.append(md)
    result.sort(key=lambda m: (m.group, m.name))
    return SpecDiff(old_label, new_label, result)


def load_model(path: Path) -> list[Message]:
    """The model of a spec folder, file or zip/jar, as ``generate`` builds it."""
    return load_specs([path], warn=False)[0]


def diff_paths(old: Path, new: Path) -> SpecDiff:
    return diff_models(load_model(old), load_model(new), str(old), str(new))


# --- rendering ---------------------------------------------------------------------------


def _groups(diff: SpecDiff) -> list[tuple[str, list[MessageDiff]]]:
    groups: dict[str, list[MessageDiff]] = {}
    for m in diff.messages:
        if m.status != "unchanged":
            groups.setdefault(m.group_title, []).append(m)
    return list(groups.items())


def _headline(m: MessageDiff) -> str:
    if m.status == "added":
        return f"{m.name}: added (versions {m.new_versions}, flexible {m.new_flexible})"
    if m.status == "removed":
        return f"{m.name}: removed (had versions {m.old_versions})"
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
        f"messages: {s['added']} added, {s['removed']} removed, {s['changed']} changed, "
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
                if m.status in ("added", "removed") and c.rule.startswith("message-"):
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
                if not (m.status in ("added", "removed") and c.rule.startswith("message-"))
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


def cmd_diff(args: argparse.Namespace) -> int:
    diff = diff_paths(args.old, args.new)
    sys.stdout.write(render(diff, args.format))
    if args.fail_on_violation and diff.count("violation"):
        return 1
    return 0


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "diff",
        help="show what changed between two spec sets (a changelog for a spec bump)",
        description="Compare two spec sets (folders or .zip/.jar files, as for generate): "
        "per API and message, versions added/removed, flexible-version changes, fields "
        "added/removed/retyped/renamed, nullability and tag changes, and violations of "
        "Kafka's evolution rules.",
    )
    parser.add_argument("old", type=Path, metavar="OLD", help="the old spec set")
    parser.add_argument("new", type=Path, metavar="NEW", help="the new spec set")
    parser.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    parser.add_argument(
        "--fail-on-violation",
        action="store_true",
        help="exit 1 when a change breaks Kafka's evolution rules",
    )
    parser.set_defaults(func=cmd_diff)


__all__ = [
    "Change",
    "MessageDiff",
    "SpecDiff",
    "diff_models",
    "diff_paths",
    "load_model",
    "register",
    "render",
]
