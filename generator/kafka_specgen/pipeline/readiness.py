"""Upgrade readiness: would the traffic in a capture still work against a target?

The target is a spec set (``Target(specs)``, loaded as ``generate`` and ``diff`` load one)
or a Kafka release (``Target.release("4.0")``: the API ranges its brokers accept, from the
tool's release table). Each client and API gets one verdict (``judge_api``):

- **ok, will use vN**: the version the client will negotiate with the target;
- **breaks**: the client's newest version is below the target's lowest (Kafka 4.0 removed
  Produce v0-v2, Fetch v0-v3, ...), or the target has no such API;
- **optional, not used after the upgrade**: the target lacks an API that clients use only
  when a broker advertises it (``OPTIONAL_APIS``, e.g. KIP-714's telemetry);
- **cannot tell**: the client's newest version is not known and the versions seen are
  below the target's lowest.

A client's newest version of an API is inferred with KIP-35's rule: a client uses the
newest version it shares with the broker, so a version below the broker's newest (in the
ApiVersions answer on the same connection, or failing that any the client got in the
capture) is the client's own newest. A version equal to the broker's newest says only
"this or newer". A client that got no ApiVersions answer sends fixed versions (a
pre-KIP-35 client, or one pinned to a release): it will send what it sent.

Message formats (``judge_format``): magic 0 and 1 (message sets) travel only in Produce
v0-v2 (v3 requires record batches, magic 2: KIP-98); Kafka 4.0 removed them (KIP-724).
Versions the target's specs mark deprecated are flagged, for the upgrade after this one.

``judge_rows`` gives the ``readiness/`` rows and ``verdict`` the verdict: plain Python. The
Spark job (``pipeline.tables.readiness``) feeds them the requests and batches it
aggregated. Standard library only, plus kafka_specgen's own loader.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, NamedTuple, Optional, Sequence

from .. import broker_releases
from ..facts import split_raws, build_facts
from .columns import OptBool, OptDouble, OptInt, OptLong, OptStr, OptStrs, Str, ddl
from ..library import SpecSource, bundled_specs, load_specs, spec_set
from ..load import load_paths
from ..versions import Versions

#: Produce versions whose requests carry message sets (magic 0 and 1); from v3 on a
#: Produce request holds record batches (magic 2) only.
LEGACY_FORMAT_PRODUCE = Versions(0, 2)
PRODUCE, FETCH = 0, 1

#: APIs a client sends only to a broker that advertises them: a target without them is
#: not a break, the client goes on without (KIP-714: librdkafka and the Java client ask
#: for telemetry subscriptions only then).
OPTIONAL_APIS = {71: "GetTelemetrySubscriptions", 72: "PushTelemetry"}


class TargetError(ValueError):
    """A target release the table does not have (one line for the command line)."""


#: Verdicts of a client and API (``Judgment.verdict``).
OK, BREAKS, OPTIONAL, UNKNOWN = "ok", "breaks", "optional", "cannot tell"


@dataclass(frozen=True)
class Judgment:
    verdict: str  # OK, BREAKS, OPTIONAL or UNKNOWN
    will_use: int | None  # OK: the version the client will use with the target
    target_versions: str  # the target's range of the API's request ("none": no such API)
    reason: str
    api_name: str | None

    @property
    def supported(self) -> bool | None:
        """True (ok, optional), False (breaks), None (cannot tell)."""
        return None if self.verdict == UNKNOWN else self.verdict != BREAKS


class ReadinessRow(NamedTuple):
    """A row of ``readiness/``: a version (or message format) a client was seen using,
    with the verdict on that client and API."""

    software_name: OptStr
    software_version: OptStr
    address: OptStr
    client_ids: OptStrs
    kind: Str  # "api" or "message_format"
    api_key: OptInt
    api_name: OptStr
    api_version: OptInt
    magic: OptInt  # message_format rows: the batches' magic
    requests: OptLong  # api rows: requests seen at this version
    batches: OptLong  # message_format rows: batches seen
    client_newest: OptStr  # what the capture says of the client's newest version
    verdict: Str
    will_use: OptInt
    supported_by_target: OptBool
    target_versions: Str
    reason: Str
    first_ts: OptDouble
    last_ts: OptDouble
    target: Str  # the target (its label)


#: The columns of ``readiness/`` in Spark's DDL.
READINESS_DDL = ddl(ReadinessRow)


class Target:
    """A target's request versions per api key: from a spec set, or (``release``) the
    ranges a broker of a Kafka release accepts."""

    def __init__(self, specs: SpecSource, label: str | None = None) -> None:
        chosen = spec_set(specs)
        messages, _ = load_specs(chosen, warn=False)
        self.label = label or chosen.label
        self.requests: dict[int, tuple[str, Versions]] = {
            m.api_key: (m.api_name, Versions(1, 0) if m.removed else m.valid_versions)
            for m in messages
            if m.type == "request" and m.api_key is not None
        }
        self.deprecated: dict[int, Versions] = {
            m.api_key: m.deprecated_versions
            for m in messages
            if m.type == "request" and m.api_key is not None and m.deprecated_versions
        }

    @classmethod
    def release(cls, name: str) -> Target:
        """Kafka release ``name`` (``4.0`` is 4.0.0; ``4.0.2`` the table's newest 4.0 row at
        or below it): what its brokers accept (ZooKeeper brokers before 4.0)."""
        try:
            chosen = broker_releases.release(name)
        except broker_releases.ReleaseTableError as exc:
            raise TargetError(f"--target-release: {exc}") from None
        facts = build_facts(split_raws(load_paths([bundled_specs() / "facts"]))[1])
        names = {fact.key: fact.name for fact in facts.api_keys}
        target = cls.__new__(cls)
        target.label = f"Kafka {chosen.label}"
        target.requests = {
            key: (names.get(key, f"api key {key}"), Versions(lo, hi))
            for key, (lo, hi) in chosen.accepted.items()
        }
        target.deprecated = {}
        return target

    def judge_api(
        self,
        api_key: int,
        api_version: int,
        seen_name: str | None = None,
        broker_newest: int | None = None,
    ) -> Judgment:
        """The verdict on a client whose newest version seen of ``api_key`` is
        ``api_version``. ``broker_newest``: the broker's newest version of it in the
        ApiVersions answer on the connection that version was sent on (None: the client
        got none, so its versions are fixed).
        ``seen_name``: the API's name from the decoding package (for an API the target
        lacks)."""
        known = self.requests.get(api_key)
        if (known is None or not known[1]) and api_key in OPTIONAL_APIS:
            name = seen_name or OPTIONAL_APIS[api_key]
            return Judgment(
                OPTIONAL,
                None,
                "none",
                f"optional, not used after the upgrade: clients send {name} only to a broker "
                "that advertises it, and the target does not",
                name,
            )
        if known is not None and not known[1]:
            return Judgment(
                BREAKS,
                None,
                "none",
                f"{known[0]} (api key {api_key}) was removed from Kafka in the target: no "
                "version of it is served",
                known[0],
            )
        if known is None:
            name = seen_name or f"api key {api_key}"
            return Judgment(
                BREAKS,
                None,
                "none",
                f"{name} (api key {api_key}) is not in the target spec set: the target "
                "does not serve this API at all",
                seen_name,
            )
        name, valid = known
        at_least = broker_newest is not None and api_version >= broker_newest
        if api_version < valid.lo:
            if at_least:
                return Judgment(
                    UNKNOWN,
                    None,
                    str(valid),
                    f"cannot tell: the client sent {name} v{api_version}, the broker's newest, "
                    f"so its own newest is v{api_version} or later; the target needs "
                    f"v{valid.lo} or later",
                    name,
                )
            why = (
                f"v{api_version} is the client's newest: the broker offered v{broker_newest}"
                if broker_newest is not None
                else "the client asked for no ApiVersions, so its versions are fixed"
            )
            return Judgment(
                BREAKS,
                None,
                str(valid),
                f"{name} v{api_version} was removed: the target accepts v{valid} only ({why})",
                name,
            )
        will_use = min(api_version, valid.hi)
        newer = " or later" if at_least and will_use < valid.hi else ""
        deprecated = self.deprecated.get(api_key)
        note = (
            f"; deprecated there (v{deprecated}): expect its removal in a later release"
            if deprecated and will_use in deprecated and not newer
            else ""
        )
        how = (
            f"in the target's v{valid}"
            if api_version <= valid.hi
            else f"v{api_version} is newer than the target's highest, and clients negotiate "
            "down through ApiVersions"
        )
        return Judgment(
            OK, will_use, str(valid), f"ok, will use v{will_use}{newer}: {how}{note}", name
        )

    def judge_format(self, magic: int) -> Judgment:
        """Does the target take record data of message format ``magic``?"""
        produce = self.requests.get(PRODUCE)
        valid = produce[1] if produce is not None else Versions(1, 0)
        legacy = valid.intersect(LEGACY_FORMAT_PRODUCE)
        label = f"message format v{magic} (magic {magic})"
        if magic >= 2:
            if valid and valid.subtract(LEGACY_FORMAT_PRODUCE):
                why = f"{label}, record batches: the target's Produce v{valid} carries them"
                return Judgment(OK, magic, str(valid), why, "Produce")
            why = f"{label}: the target has no Produce version that carries record batches"
            return Judgment(BREAKS, None, str(valid), why, "Produce")
        if legacy:
            return Judgment(
                OK,
                magic,
                str(valid),
                f"{label} is deprecated but still accepted: the target has Produce v{legacy}, "
                "which carries message sets",
                "Produce",
            )
        return Judgment(
            BREAKS,
            None,
            str(valid),
            f"{label} is not supported: Kafka 4.0 removed message formats v0 and v1 (KIP-724); "
            f"the target's Produce v{valid} carries record batches (magic 2) only",
            "Produce",
        )


Client = tuple[Optional[str], Optional[str], Optional[str], tuple[str, ...]]


def client_of(row: Mapping[str, Any]) -> Client:
    """A row's client: software name and version, address, client ids."""
    ids = row.get("client_ids")
    if ids is None and row.get("client_id") is not None:
        ids = [row["client_id"]]
    return (
        row.get("software_name"),
        row.get("software_version"),
        row.get("address"),
        tuple(ids or ()),
    )


def judge_rows(
    target: Target,
    requests: Iterable[Mapping[str, Any]],
    formats: Iterable[Mapping[str, Any]] = (),
) -> list[ReadinessRow]:
    """``readiness/`` rows.

    ``requests``: per client (``software_name``, ``software_version``, ``address``,
    ``client_ids``), api key (``api_name`` as decoded) and ``api_version``: ``requests``,
    ``first_ts``, ``last_ts`` and ``broker_newest`` (the broker's newest version of the
    API in the ApiVersions answers on the connections that version was sent on; None if
    the client got none). ``formats``: per client and ``magic``: ``batches``,
    ``first_ts``, ``last_ts``. One row each; every row of a client and API gets the
    verdict on the newest version the client was seen using.
    """
    requests = list(requests)
    # per client and API: the newest version seen, and the broker's newest where it was
    # sent (KIP-35 compares the two on one connection)
    newest: dict[tuple[Client, int], Mapping[str, Any]] = {}
    for r in requests:
        key = (client_of(r), r["api_key"])
        before = newest.get(key)
        if before is None or r["api_version"] > before["api_version"]:
            newest[key] = r
    judged: dict[tuple[Client, int], tuple[Judgment, str]] = {}
    for key, r in newest.items():
        seen, broker = r["api_version"], r.get("broker_newest")
        if broker is None:
            known = f"v{seen} (no ApiVersions asked: fixed)"
        elif seen < broker:
            known = f"v{seen} (below the broker's v{broker})"
        else:
            known = f"v{seen} or later (the broker's newest)"
        judged[key] = (target.judge_api(r["api_key"], seen, r.get("api_name"), broker), known)
    rows: list[ReadinessRow] = []
    for r in requests:
        client = client_of(r)
        j, known = judged[(client, r["api_key"])]
        rows.append(
            ReadinessRow(
                *client[:3],
                list(client[3]),
                "api",
                r["api_key"],
                j.api_name or r.get("api_name"),
                r["api_version"],
                None,
                r.get("requests"),
                None,
                known,
                j.verdict,
                j.will_use,
                j.supported,
                j.target_versions,
                j.reason,
                r.get("first_ts"),
                r.get("last_ts"),
                target.label,
            )
        )
    for r in formats:
        client = client_of(r)
        j = target.judge_format(r["magic"])
        rows.append(
            ReadinessRow(
                *client[:3],
                list(client[3]),
                "message_format",
                None,
                None,
                None,
                r["magic"],
                None,
                r.get("batches"),
                None,
                j.verdict,
                j.will_use,
                j.supported,
                j.target_versions,
                j.reason,
                r.get("first_ts"),
                r.get("last_ts"),
                target.label,
            )
        )
    rows.sort(key=_row_order)
    return rows


def _row_order(r: ReadinessRow) -> tuple[Any, ...]:
    return (
        r.software_name or "",
        r.software_version or "",
        r.address or "",
        tuple(r.client_ids or ()),
        r.kind,
        r.api_key if r.api_key is not None else -1,
        r.api_version if r.api_version is not None else -1,
        r.magic if r.magic is not None else -1,
    )


def client_label(
    software_name: str | None,
    software_version: str | None,
    address: str | None,
    client_ids: Sequence[str] | None,
) -> str:
    """``librdkafka 2.16 at 10.0.0.5 ('rd', 'rd-2')``; without an address, the client
    ids first: ``'producer-1' (kafka-python 3.0.12)``. ``software unknown``: no
    ApiVersions v3+ on its connections."""
    software = " ".join(p for p in (software_name, software_version) if p) or "software unknown"
    ids = ", ".join(repr(i) for i in client_ids or ())
    if address:
        return f"{software} at {address}" + (f" ({ids})" if ids else "")
    return f"{ids or '(no client id)'} ({software})"


def what(row: ReadinessRow) -> str:
    """``Produce v1``, or ``message format v0``."""
    if row.kind == "message_format":
        return f"message format v{row.magic}"
    return f"{row.api_name or f'api key {row.api_key}'} v{row.api_version}"


@dataclass(frozen=True)
class Verdict:
    target: str
    clients: int  # clients seen
    breaking: dict[str, list[str]]  # client label -> what it sends that the target lacks
    undecided: dict[str, list[str]]  # client label -> what cannot be told from the capture

    @property
    def ready(self) -> bool:
        return not self.breaking

    def by_item(self) -> dict[str, list[str]]:
        """What the target lacks -> the clients that send it."""
        return _by_item(self.breaking)

    def text(self, width: int = 3) -> str:
        """A short verdict: one line, then one line per thing the target lacks (at most
        ``width`` clients named on it), then what the capture cannot tell."""
        if self.ready:
            lines = [
                f"all {self.clients} clients seen are ready for the target ({self.target}): "
                "every API version and message format they use is supported"
            ]
        else:
            n = len(self.breaking)
            lines = [
                f"{n} of {self.clients} client{'s' if self.clients != 1 else ''} would break "
                f"on the target ({self.target}):"
            ]
            lines += _item_lines(self.by_item(), width)
        if self.undecided:
            lines.append(
                f"cannot tell for {len(self.undecided)} client"
                f"{'s' if len(self.undecided) != 1 else ''} (they used the broker's newest "
                "version, which the target no longer has):"
            )
            lines += _item_lines(_by_item(self.undecided), width)
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
            f"  {item}: {len(clients)} client{'s' if len(clients) != 1 else ''} " f"({named}{more})"
        )
    return lines


def label_of(row: ReadinessRow) -> str:
    return client_label(row.software_name, row.software_version, row.address, row.client_ids)


def newest_rows(rows: Iterable[ReadinessRow]) -> list[ReadinessRow]:
    """One row per client and API (its newest version seen: the row the verdict is on)
    and per client and message format."""
    newest: dict[tuple[str, str, int | None], ReadinessRow] = {}
    for row in sorted(rows, key=_row_order):
        newest[(label_of(row), row.kind, row.api_key if row.kind == "api" else row.magic)] = row
    return list(newest.values())


def verdict(rows: Iterable[ReadinessRow], target: str) -> Verdict:
    """Which clients send something the target does not support (from ``readiness/``),
    and where the capture cannot tell."""
    breaking: dict[str, list[str]] = {}
    undecided: dict[str, list[str]] = {}
    judged = newest_rows(rows)
    for row in judged:
        if row.verdict == BREAKS:
            breaking.setdefault(label_of(row), []).append(what(row))
        elif row.verdict == UNKNOWN:
            undecided.setdefault(label_of(row), []).append(what(row))
    return Verdict(target, len({label_of(r) for r in judged}), breaking, undecided)
