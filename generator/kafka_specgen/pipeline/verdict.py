"""The readiness verdict: ``breaks``, ``incomplete`` or ``ready``, and never ``ready``
without evidence.

What a capture did not show is a *gap*, named in the verdict and written to
``readiness/`` (rows of kind ``gap``):

- ``undecoded``: N frames could not be decoded, so the verdict covers only the rest;
- ``no_batches``: message formats cannot be judged for clients that sent Produce v0-v2
  (the versions that carry message sets) whose record batches were not read;
- ``no_data``: no Produce or Fetch was captured for these clients (a capture of bootstrap
  traffic only, or of the wrong broker);
- ``unseen_brokers``: Metadata names brokers the capture never saw traffic to, whose
  clients may send what this capture does not hold.

With a gap and no break the verdict is ``incomplete``. ``Verdict.state`` gives it, and the
exit status of ``--fail-on-unready``: 0 ready, 1 a client breaks, 3 incomplete
(``EXIT_BREAKS``, ``EXIT_INCOMPLETE``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

from .readiness import (
    BREAKS,
    INCOMPLETE,
    KNOWN_BUG,
    ReadinessRow,
    label_of,
    row_order,
    what,
)

GAPS = {
    "undecoded": "{n} frames could not be decoded: the verdict covers only the rest",
    "no_batches": "cannot judge message formats: no record batches were read for clients "
    "that sent Produce v0-v2, which carry message sets",
    "no_data": "no Produce or Fetch was captured for these clients: what they send when they "
    "produce or consume was not seen",
    "unseen_brokers": "Metadata names brokers this capture never saw traffic to ({brokers}): "
    "clients may send them what this capture does not hold",
}

EXIT_BREAKS, EXIT_INCOMPLETE = 1, 3
READY, BROKEN, UNSURE = "ready", "breaks", "incomplete"


@dataclass(frozen=True)
class Evidence:
    """What the job saw, beyond the rows judged: the facts gaps are found from."""

    undecoded: int = 0  # frames that could not be decoded
    legacy_produce_without_batches: Sequence[ReadinessRow] = ()  # client rows (api rows)
    without_data: Sequence[ReadinessRow] = ()  # one api row per client with no Produce/Fetch
    unseen_brokers: Sequence[str] = ()  # named by Metadata, no traffic seen to them


def gap_rows(evidence: Evidence, target: str) -> list[ReadinessRow]:
    """``readiness/`` rows of kind ``gap`` for what ``evidence`` says was not observed:
    one per gap and client where a gap concerns clients, else one per gap."""
    rows: list[ReadinessRow] = []

    def gap(kind: str, text: str, client: ReadinessRow | None = None) -> None:
        who = (
            (client.software_name, client.software_version, client.address, client.client_ids)
            if client is not None
            else (None, None, None, None)
        )
        rows.append(
            ReadinessRow(
                *who,
                "gap",
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                INCOMPLETE,
                None,
                None,
                "-",
                text,
                None,
                None,
                target,
                client.source if client is not None else None,
                None,
                kind,
            )
        )

    if evidence.undecoded:
        gap("undecoded", GAPS["undecoded"].format(n=evidence.undecoded))
    for client in _one_per_client(evidence.legacy_produce_without_batches):
        gap("no_batches", GAPS["no_batches"], client)
    for client in _one_per_client(evidence.without_data):
        gap("no_data", GAPS["no_data"], client)
    if evidence.unseen_brokers:
        brokers = ", ".join(sorted(evidence.unseen_brokers))
        gap("unseen_brokers", GAPS["unseen_brokers"].format(brokers=brokers))
    return rows


def _one_per_client(rows: Iterable[ReadinessRow]) -> list[ReadinessRow]:
    seen: dict[str, ReadinessRow] = {}
    for row in sorted(rows, key=row_order):
        seen.setdefault(label_of(row), row)
    return list(seen.values())


@dataclass(frozen=True)
class Gap:
    kind: str
    text: str
    clients: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Verdict:
    target: str
    clients: int  # clients seen
    breaking: dict[str, list[str]]  # client label -> what it sends that the target lacks
    gaps: list[Gap] = field(default_factory=list)
    fixes: dict[str, list[str]] = field(default_factory=dict)  # client label -> what to do
    bugs: dict[str, list[str]] = field(default_factory=dict)  # client label -> known bugs

    @property
    def state(self) -> str:
        return BROKEN if self.breaking else UNSURE if self.gaps else READY

    @property
    def ready(self) -> bool:
        return self.state == READY

    def exit_status(self) -> int:
        """``--fail-on-unready``'s exit status: 0 ready, 1 breaks, 3 incomplete."""
        return {READY: 0, BROKEN: EXIT_BREAKS, UNSURE: EXIT_INCOMPLETE}[self.state]

    def by_item(self) -> dict[str, list[str]]:
        """What the target lacks -> the clients that send it."""
        return _by_item(self.breaking)

    def headline(self) -> str:
        n = self.clients
        clients = f"{n} client{'s' if n != 1 else ''}"
        if self.state == BROKEN:
            head = f"{len(self.breaking)} of {clients} would break on the target ({self.target})"
            return head + (" (and the capture is incomplete)" if self.gaps else "")
        if self.state == UNSURE:
            return (
                f"incomplete: no break found for the {clients} seen on the target "
                f"({self.target}), but the capture does not show enough to call them ready"
            )
        return (
            f"all {clients} seen are ready for the target ({self.target}): every API "
            "version and message format they use is accepted"
        )

    def text(self, width: int = 3) -> str:
        """The verdict: its headline, a line per thing the target lacks (with at most
        ``width`` clients named), what to do, the known bugs, then the gaps."""
        lines = [self.headline() + (":" if self.breaking else "")]
        lines += _item_lines(self.by_item(), width)
        for client, fixes in self.fixes.items():
            lines += [f"  fix {client}: {fix}" for fix in fixes]
        for client, bugs in self.bugs.items():
            lines += [f"  known bug, {client}: {bug}" for bug in bugs]
        for gap in self.gaps:
            named = ", ".join(gap.clients[:width])
            more = f" and {len(gap.clients) - width} more" if len(gap.clients) > width else ""
            lines.append(f"  not observed: {gap.text}" + (f" ({named}{more})" if named else ""))
        return "\n".join(lines)


def _by_item(per_client: dict[str, list[str]]) -> dict[str, list[str]]:
    items: dict[str, list[str]] = {}
    for client, missing in per_client.items():
        for item in missing:
            items.setdefault(item, []).append(client)
    return dict(sorted(items.items(), key=lambda kv: (-len(kv[1]), kv[0])))


def _item_lines(items: dict[str, list[str]], width: int) -> list[str]:
    lines = []
    for item, clients in items.items():
        named = ", ".join(clients[:width])
        more = f" and {len(clients) - width} more" if len(clients) > width else ""
        lines.append(
            f"  {item}: {len(clients)} client{'s' if len(clients) != 1 else ''} ({named}{more})"
        )
    return lines


def verdict(rows: Iterable[ReadinessRow], target: str) -> Verdict:
    """The verdict of ``readiness/`` rows: which clients send something the target does
    not accept, what to do, known bugs, and what the capture did not show."""
    breaking: dict[str, list[str]] = {}
    fixes: dict[str, list[str]] = {}
    bugs: dict[str, list[str]] = {}
    gaps: dict[tuple[str, str], list[str]] = {}
    clients: set[str] = set()
    for row in sorted(rows, key=row_order):
        label = label_of(row)
        if row.kind in ("api", "message_format"):
            clients.add(label)
            if row.verdict == BREAKS:
                items = breaking.setdefault(label, [])
                if what(row) not in items:
                    items.append(what(row))
                if row.fix and row.fix not in fixes.get(label, []):
                    fixes.setdefault(label, []).append(row.fix)
        elif row.kind == "bug" and row.verdict == KNOWN_BUG:
            entry = row.reason + (f" ({row.fix})" if row.fix else "")
            if entry not in bugs.get(label, []):
                bugs.setdefault(label, []).append(entry)
        elif row.kind == "gap":
            named = gaps.setdefault((row.gap or "", row.reason), [])
            if row.client_ids is not None or row.address or row.software_name:
                named.append(label)
    return Verdict(
        target,
        len(clients),
        breaking,
        [Gap(kind, text, names) for (kind, text), names in gaps.items()],
        fixes,
        bugs,
    )
