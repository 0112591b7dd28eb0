"""Upgrade readiness: would the traffic in a capture still work against a target
(``pipeline.target``)? Plain Python; the Spark job (``pipeline.tables.readiness``) feeds it
the requests and batches it aggregated.

**Clients.** A client is an app: its software's name and version (KIP-511, from an
ApiVersionsRequest v3+ on its connections, or the broker's request log) and the host it
connects from. Apps that report no software are told apart by client id as well: two apps
on one host with different client ids are never one client. A client's versions are its
own: nothing one app sends is taken as evidence about another.

**Verdicts.** Every version a client sent gets a row (``judge_rows``):

- **breaks**: the target does not accept that version (Kafka 4.0 removed Produce v0-v2,
  Fetch v0-v3, ...), does not have the API, or removed it; or the client sends a version
  above the target's highest without asking for ApiVersions. Whatever else is inferred,
  such a version is a break: a client that sent it may send it again;
- **optional, not used after the upgrade**: an API clients send only to a broker that
  advertises it (``OPTIONAL_APIS``, KIP-714's telemetry), which the target lacks;
- **ok, will use vN**: the version the client will use with the target, from its newest.

**A client's newest version** of an API follows KIP-35: a client uses the newest version
it shares with the broker, so a version below the broker's newest in the ApiVersions answer
on the connection it was sent on (or, where that connection's exchange is not in the
capture, on another connection of the same client) is the client's own newest; one equal
to the broker's newest says only "this or later". A client that got no ApiVersions answer
sends fixed versions (it predates KIP-35 or is pinned to a release).

**Message formats** (``judge_format``): magic 0 and 1 travel only in Produce v0-v2 (v3
requires record batches, KIP-98); Kafka 4.0 removed them (KIP-724).

What the capture does not show (``pipeline.verdict``) and what to do about a break
(``pipeline.advice``) are added by the job.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, NamedTuple, Optional, Sequence

from ..api_keys import ApiKey
from ..capture.columns import OptBool, OptDouble, OptInt, OptLong, OptStr, OptStrs, Str, ddl
from .target import Target, TargetError
from ..versions import Versions

__all__ = ["Target", "TargetError"]

#: Produce versions whose requests carry message sets (magic 0 and 1); from v3 on a
#: Produce request holds record batches (magic 2) only.
LEGACY_FORMAT_PRODUCE = Versions(0, 2)

#: APIs a client sends only to a broker that advertises them: a target without them is
#: not a break, the client goes on without (KIP-714: librdkafka and the Java client ask
#: for telemetry subscriptions only then).
OPTIONAL_APIS: dict[int, str] = {
    ApiKey.GET_TELEMETRY_SUBSCRIPTIONS: "GetTelemetrySubscriptions",
    ApiKey.PUSH_TELEMETRY: "PushTelemetry",
}

#: Verdicts of a row (``ReadinessRow.verdict``): a client's API version or message format
#: (OK, BREAKS, OPTIONAL), something the capture did not show (INCOMPLETE, kind ``gap``),
#: a known client bug that bites on the target (KNOWN_BUG, kind ``bug``).
OK, BREAKS, OPTIONAL = "ok", "breaks", "optional"
INCOMPLETE, KNOWN_BUG = "incomplete", "known bug"

#: ``ReadinessRow.source``: what the row rests on.
BYTES, REQUEST_LOG = "bytes", "request log"


@dataclass(frozen=True)
class Judgment:
    verdict: str  # OK, BREAKS or OPTIONAL
    will_use: int | None  # OK: the version the client will use with the target
    target_versions: str  # the target's range of the API's request ("none": no such API)
    reason: str
    api_name: str | None

    @property
    def supported(self) -> bool:
        return self.verdict != BREAKS


class ReadinessRow(NamedTuple):
    """A row of ``readiness/``: a version (or message format) a client was seen using and
    its verdict; or (kind ``gap``) something the capture did not show; or (kind ``bug``)
    a known bug of a client's software that bites on the target."""

    software_name: OptStr
    software_version: OptStr
    address: OptStr
    client_ids: OptStrs
    kind: Str  # "api", "message_format", "gap" or "bug"
    api_key: OptInt
    api_name: OptStr
    api_version: OptInt
    magic: OptInt  # message_format rows: the batches' magic
    requests: OptLong  # api rows: requests seen at this version
    batches: OptLong  # message_format rows: batches seen
    client_newest: OptStr  # what the capture says of the client's newest version
    verdict: Str
    will_use: OptInt
    supported_by_target: OptBool  # null on gap and bug rows
    target_versions: Str
    reason: Str
    first_ts: OptDouble
    last_ts: OptDouble
    target: Str  # the target (its label)
    source: OptStr = None  # BYTES or REQUEST_LOG: what the row rests on
    fix: OptStr = None  # breaks and bug rows: what to do (``pipeline.advice``)
    gap: OptStr = None  # gap rows: which (``pipeline.verdict.GAPS``)


#: The columns of ``readiness/`` in Spark's DDL.
READINESS_DDL = ddl(ReadinessRow)


def judge_version(
    target: Target,
    api_key: int,
    version: int,
    newest: int,
    broker_newest: int | None,
    seen_name: str | None = None,
) -> Judgment:
    """The verdict on a version a client sent. ``newest``: the newest version of the API
    the client was seen sending; ``broker_newest``: the broker's newest version of it in
    the ApiVersions answer on the connection that newest was sent on (None: the client got
    none, so its versions are fixed); ``seen_name``: the API's name from the decoding
    package (for an API the target lacks)."""
    known = target.accepted.get(api_key)
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
        why = f"{known[0]} (api key {api_key}) was removed from Kafka in the target"
        return Judgment(BREAKS, None, "none", f"{why}: no version of it is served", known[0])
    if known is None:
        name = seen_name or f"api key {api_key}"
        return Judgment(
            BREAKS,
            None,
            "none",
            f"{name} (api key {api_key}) is not in the target: it does not serve this API",
            seen_name,
        )
    name, valid = known
    fixed = broker_newest is None
    if version < valid.lo:
        if broker_newest is None:
            why = "the client asked for no ApiVersions: it sends fixed versions"
        elif newest >= valid.lo:
            why = f"the client also sent v{newest}, but sent v{version} on this connection"
        elif newest < broker_newest:
            why = f"v{newest} is the client's newest: the broker offered v{broker_newest}"
        else:
            why = (
                f"v{newest} was the broker's newest, so the capture cannot show whether the "
                "client has a newer one"
            )
        return Judgment(
            BREAKS,
            None,
            str(valid),
            f"{name} v{version} is not accepted: the target accepts v{valid} only ({why})",
            name,
        )
    if fixed and version > valid.hi:
        return Judgment(
            BREAKS,
            None,
            str(valid),
            f"{name} v{version} is above the target's highest (v{valid.hi}) and the client "
            "asked for no ApiVersions: it will not negotiate down",
            name,
        )
    at_least = not fixed and newest >= (broker_newest or 0)
    will_use = version if fixed else min(newest, valid.hi)
    newer = " or later" if at_least and will_use < valid.hi else ""
    deprecated = target.deprecated.get(api_key)
    note = (
        f"; deprecated there (v{deprecated}): expect its removal in a later release"
        if deprecated and will_use in deprecated and not newer
        else ""
    )
    if fixed:
        how = "the client sends fixed versions, and the target accepts this one"
    elif newest <= valid.hi:
        how = f"in the target's v{valid}"
    else:
        how = (
            f"v{newest} is newer than the target's highest, and clients negotiate down "
            "through ApiVersions"
        )
    return Judgment(OK, will_use, str(valid), f"ok, will use v{will_use}{newer}: {how}{note}", name)


def judge_format(target: Target, magic: int) -> Judgment:
    """Does the target take record data of message format ``magic``?"""
    produce = target.accepted.get(ApiKey.PRODUCE)
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


def _known(seen: int, broker: int | None) -> str:
    if broker is None:
        return f"v{seen} (no ApiVersions asked: fixed)"
    if seen < broker:
        return f"v{seen} (below the broker's v{broker})"
    return f"v{seen} or later (the broker's newest)"


def judge_rows(
    target: Target,
    requests: Iterable[Mapping[str, Any]],
    formats: Iterable[Mapping[str, Any]] = (),
) -> list[ReadinessRow]:
    """``readiness/`` rows of kind ``api`` and ``message_format``.

    ``requests``: per client (``software_name``, ``software_version``, ``address``,
    ``client_ids``), api key (``api_name`` as decoded) and ``api_version``: ``requests``,
    ``first_ts``, ``last_ts``, ``source`` and ``broker_newest`` (the broker's newest
    version of the API in the ApiVersions answers on the connections that version was
    sent on; None if the client got none). ``formats``: per client and ``magic``:
    ``batches``, ``first_ts``, ``last_ts``. One row each.
    """
    requests = list(requests)
    newest: dict[tuple[Client, int], Mapping[str, Any]] = {}
    for r in requests:
        key = (client_of(r), r["api_key"])
        before = newest.get(key)
        if before is None or r["api_version"] > before["api_version"]:
            newest[key] = r
    rows: list[ReadinessRow] = []
    for r in requests:
        client = client_of(r)
        top = newest[(client, r["api_key"])]
        broker = top.get("broker_newest")
        if r.get("broker_newest") is None:
            broker = None  # this version went out on connections without ApiVersions
        j = judge_version(
            target, r["api_key"], r["api_version"], top["api_version"], broker, r.get("api_name")
        )
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
                _known(top["api_version"], top.get("broker_newest")),
                j.verdict,
                j.will_use,
                j.supported,
                j.target_versions,
                j.reason,
                r.get("first_ts"),
                r.get("last_ts"),
                target.label,
                r.get("source") or BYTES,
            )
        )
    for r in formats:
        client = client_of(r)
        j = judge_format(target, r["magic"])
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
                BYTES,
            )
        )
    rows.sort(key=row_order)
    return rows


def row_order(r: ReadinessRow) -> tuple[Any, ...]:
    return (
        r.software_name or "",
        r.software_version or "",
        r.address or "",
        tuple(r.client_ids or ()),
        r.kind,
        r.api_key if r.api_key is not None else -1,
        r.api_version if r.api_version is not None else -1,
        r.magic if r.magic is not None else -1,
        r.gap or "",
        r.reason,
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


def label_of(row: ReadinessRow) -> str:
    return client_label(row.software_name, row.software_version, row.address, row.client_ids)


def what(row: ReadinessRow) -> str:
    """``Produce v1``, or ``message format v0``."""
    if row.kind == "message_format":
        return f"message format v{row.magic}"
    return f"{row.api_name or f'api key {row.api_key}'} v{row.api_version}"
