"""What to do about a client that breaks on the target, and the known bugs of its
software that bite there, from the table of known client lines (``client_lines.json``,
package data: each entry cites its sources).

A client's line is found from the software it reports (KIP-511) or, failing that, from a
default client id that names it (kafka-python's ``kafka-python-2.0.2``, librdkafka's
``rdkafka``, ...: a guess, and said so). Then:

- a client of a known line and release older than the oldest release known to work with
  the target: upgrade to it (or to the release that fixes a known bug that bites there);
- a client of a known release that still breaks, or that asked for no ApiVersions: it is
  pinned to old protocol versions by its configuration (how, per line);
- software unknown: the API versions it must move to, and each line's release that sends
  them.

Plain Python; ``fix`` texts go to ``readiness/`` rows of kind ``api`` (verdict
``breaks``), known bugs to rows of kind ``bug``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

from .readiness import BREAKS, KNOWN_BUG, ReadinessRow, row_order
from .target import Target

TABLE = Path(__file__).resolve().parent / "client_lines.json"


@dataclass(frozen=True)
class Floor:
    target: str  # a Kafka release, "4.0"
    release: str
    why: str
    sources: tuple[str, ...]


@dataclass(frozen=True)
class Bug:
    id: str
    affects_below: str
    when: dict[str, Any]
    text: str
    fixed_in: str
    links: tuple[str, ...]


@dataclass(frozen=True)
class Line:
    line: str  # its id
    label: str  # how texts name it: "Java client", "KafkaJS"
    name: str
    software: dict[str, str]  # software name (KIP-511) -> regex with group "version"
    client_ids: tuple[str, ...]  # default client ids (regexes, group "version" if any)
    pinning: str
    floors: tuple[Floor, ...]
    bugs: tuple[Bug, ...]


@lru_cache(maxsize=1)
def client_lines() -> tuple[Line, ...]:
    """The table of known client lines."""
    raw = json.loads(TABLE.read_text(encoding="utf-8"))
    return tuple(
        Line(
            entry["line"],
            entry["label"],
            entry["name"],
            dict(entry["software"]),
            tuple(entry["client_ids"]),
            entry["pinning"],
            tuple(
                Floor(f["target"], f["release"], f["why"], tuple(f["sources"]))
                for f in entry["floors"]
            ),
            tuple(
                Bug(
                    b["id"],
                    b["affects_below"],
                    dict(b["when"]),
                    b["text"],
                    b["fixed_in"],
                    tuple(b["links"]),
                )
                for b in entry["bugs"]
            ),
        )
        for entry in raw["lines"]
    )


def release_key(text: str) -> tuple[int, ...]:
    """``2.11.1`` -> ``(2, 11, 1)``; anything after the numbers is ignored."""
    match = re.match(r"v?(\d+(?:\.\d+)*)", text.strip())
    return tuple(int(p) for p in match.group(1).split(".")) if match else ()


@dataclass(frozen=True)
class Identity:
    line: Line
    version: str | None  # the line's release, where known
    guessed: bool  # from a default client id, not from the software the client reported


def identify(
    software_name: str | None, software_version: str | None, client_ids: Sequence[str] | None
) -> Identity | None:
    """The client line (and release) of a client, or None if no entry matches."""
    for line in client_lines():
        pattern = line.software.get(software_name or "")
        if pattern is not None:
            match = re.search(pattern, software_version or "")
            return Identity(line, match.group("version") if match else None, False)
    if software_name:
        return None
    for client_id in client_ids or ():
        for line in client_lines():
            for pattern in line.client_ids:
                match = re.search(pattern, client_id)
                if match:
                    version = match.groupdict().get("version")
                    return Identity(line, version, True)
    return None


def floor_for(line: Line, target: Target) -> Floor | None:
    """The line's floor for the target: the one of the newest target release at or
    below it (a spec-set target, which names no release, takes the newest floor)."""
    floors = sorted(line.floors, key=lambda f: release_key(f.target))
    if target.release_name is None:
        return floors[-1] if floors else None
    chosen = None
    for floor in floors:
        if release_key(floor.target) <= release_key(target.release_name):
            chosen = floor
    return chosen


def bites(bug: Bug, target: Target) -> bool:
    """Whether a bug's condition holds on the target."""
    for kind, (api_key, version) in bug.when.items():
        if kind == "advertised_lacks" and not target.advertises(api_key, version):
            return True
        if kind == "rejects_or_deprecates":
            accepted = target.accepted.get(api_key)
            deprecated = target.deprecated.get(api_key)
            if accepted is None or version not in accepted[1]:
                return True
            if deprecated is not None and version in deprecated:
                return True
    return False


def needs(rows: Sequence[ReadinessRow], target: Target) -> list[str]:
    """What a breaking client must send instead: ``Produce v3 or later`` per API."""
    out: list[str] = []
    for row in rows:
        if row.kind == "message_format":
            text = "record batches (message format v2, Produce v3 or later)"
        elif row.api_key is not None and target.lowest(row.api_key) is not None:
            text = (
                f"{row.api_name or f'api key {row.api_key}'} v{target.lowest(row.api_key)} or later"
            )
        else:
            text = f"no {row.api_name or f'api key {row.api_key}'} at all (the target lacks it)"
        if text not in out:
            out.append(text)
    return out


def fix_for(client_rows: Sequence[ReadinessRow], target: Target) -> str | None:
    """What to do about a client whose rows include breaks (None if none break)."""
    breaking = [r for r in client_rows if r.verdict == BREAKS]
    if not breaking:
        return None
    first = breaking[0]
    must = "; it must send " + ", ".join(needs(breaking, target))
    pinned = any("no ApiVersions" in r.reason for r in breaking)
    who = identify(first.software_name, first.software_version, first.client_ids)
    if who is None:
        others = "; ".join(
            f"{line.label} {floor.release}"
            for line in client_lines()
            if (floor := floor_for(line, target)) is not None
        )
        pin = (
            " It asked for no ApiVersions: if its library can negotiate, unpin it."
            if pinned
            else ""
        )
        return (
            f"software unknown{must}. Releases known to work with {target.label}: {others}." + pin
        )
    line, version = who.line, who.version
    named = f"{line.label} {version}" if version else line.label
    if who.guessed:
        named += " (going by its client id)"
    floor = floor_for(line, target)
    upgrade_to = floor.release if floor is not None else None
    reasons = []
    if floor is not None:
        reasons.append(
            f"{floor.release} is the oldest release known to work with Kafka {floor.target} "
            f"({floor.why}: {', '.join(floor.sources)})"
        )
    for bug in line.bugs:
        if bites(bug, target) and (
            upgrade_to is None or release_key(bug.fixed_in) > release_key(upgrade_to)
        ):
            upgrade_to = bug.fixed_in
            reasons.append(
                f"{bug.fixed_in} fixes a known bug that bites there ({bug.text}: "
                f"{', '.join(bug.links)})"
            )
    old = (
        version is not None
        and upgrade_to is not None
        and release_key(version) < release_key(upgrade_to)
    )
    if version is None or old:
        if upgrade_to is None:
            step = f"{named}: no release is known to work with {target.label}"
        else:
            step = f"upgrade {named} to {upgrade_to} or later: " + "; ".join(reasons)
        if pinned:
            step += f"; it is also pinned to old versions: {line.pinning}"
        return step + must
    return (
        f"{named} is recent enough, so its configuration pins old versions: {line.pinning}" + must
    )


def bug_rows(client_rows: Sequence[ReadinessRow], target: Target) -> list[ReadinessRow]:
    """Rows of kind ``bug`` for the known bugs of a client's release that bite on the
    target."""
    if not client_rows:
        return []
    first = sorted(client_rows, key=row_order)[0]
    who = identify(first.software_name, first.software_version, first.client_ids)
    if who is None or who.version is None:
        return []
    out = []
    for bug in who.line.bugs:
        if release_key(who.version) < release_key(bug.affects_below) and bites(bug, target):
            out.append(
                ReadinessRow(
                    first.software_name,
                    first.software_version,
                    first.address,
                    first.client_ids,
                    "bug",
                    None,
                    None,
                    None,
                    None,
                    None,
                    None,
                    None,
                    KNOWN_BUG,
                    None,
                    None,
                    "-",
                    f"{who.line.label} before {bug.fixed_in} {bug.text}",
                    None,
                    None,
                    target.label,
                    first.source,
                    f"upgrade to {bug.fixed_in} or later: {', '.join(bug.links)}",
                    bug.id,
                )
            )
    return out


def with_advice(rows: Sequence[ReadinessRow], target: Target) -> list[ReadinessRow]:
    """``rows`` (kinds ``api`` and ``message_format``) with the ``fix`` of each breaking
    client on its breaking rows, and the rows of its known bugs."""
    per_client: dict[tuple[Any, ...], list[ReadinessRow]] = {}
    for row in rows:
        key = (row.software_name, row.software_version, row.address, tuple(row.client_ids or ()))
        per_client.setdefault(key, []).append(row)
    out: list[ReadinessRow] = []
    for client_rows in per_client.values():
        fix = fix_for(client_rows, target)
        out += [r._replace(fix=fix) if r.verdict == BREAKS else r for r in client_rows]
        out += bug_rows(client_rows, target)
    return sorted(out, key=row_order)
