"""Upgrade readiness: would the traffic in a capture still work against a target spec set?

``Target(specs)`` loads a spec set (e.g. a Kafka 4.x release's) the way ``generate`` and
``diff`` do (``kafka_specgen.library.load_specs``) and judges what clients were seen
sending, with the version arithmetic of ``kafka_specgen.versions.Versions`` (the code
``diff`` compares ranges with):

- an API version (``judge_api``): *supported* if the target's request spec has it; *not
  supported* if the target dropped it (below the target's lowest version, as Kafka 4.0
  removed Produce v0-v2, Fetch v0-v3, ...) or has no such API at all. A version above
  the target's highest is supported: clients pick the version from the broker's
  ApiVersions answer (ApiVersions itself falls back per KIP-511), so it is negotiated
  down, not broken;
- a message format (``judge_format``): magic 0 and 1 (message sets) travel only in
  Produce v0-v2 (v3 requires record batches, magic 2: KIP-98); a target without those
  versions does not take them: Kafka 4.0 removed message formats v0 and v1 (KIP-724).

The target is a spec set (``Target(specs)``) or a Kafka release (``Target.release("4.0")``:
the API ranges its brokers advertise, from the tool's release table). APIs that clients
use only when the broker advertises them (``OPTIONAL_APIS``, e.g. KIP-714's telemetry) do
not break a client when the target lacks them: the client stops using them. Versions the
target's specs mark deprecated are flagged, for the upgrade after this one.

``Readiness`` rows (``judge_rows``) and the verdict (``verdict``) are plain Python; the
Spark job (``pipeline.job``) feeds them the requests and batches it aggregated.
Standard library only, plus kafka_specgen's own loader.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

from ..facts import split_raws, build_facts
from ..library import bundled_specs, load_specs
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


#: The columns of ``readiness/`` (``ReadinessRow``), in order, and their Spark DDL.
READINESS_DDL = (
    "software_name string, software_version string, client_id string, kind string, "
    "api_key int, api_name string, api_version int, magic int, requests long, batches long, "
    "supported_by_target boolean, target_versions string, reason string, "
    "first_ts double, last_ts double, target string"
)


@dataclass(frozen=True)
class Judgment:
    supported: bool
    target_versions: str  # the target's range of the API's request ("none": no such API)
    reason: str
    api_name: str | None


class ReadinessRow(NamedTuple):
    software_name: str | None
    software_version: str | None
    client_id: str | None
    kind: str  # "api" or "message_format"
    api_key: int | None
    api_name: str | None
    api_version: int | None
    magic: int | None  # message_format rows: the batches' magic
    requests: int | None  # api rows: requests seen at this version
    batches: int | None  # message_format rows: batches seen
    supported_by_target: bool
    target_versions: str
    reason: str
    first_ts: float | None
    last_ts: float | None
    target: str  # the target spec set (its label)


class Target:
    """A target's request versions per api key: from a spec set, or (``release``) the
    ranges a broker of a Kafka release advertises."""

    def __init__(self, specs: Sequence[Path | str], label: str | None = None) -> None:
        paths = [Path(p) for p in specs]
        messages, _ = load_specs(paths, warn=False)
        self.label = label or ", ".join(str(p) for p in paths)
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
        """Kafka release ``name`` (``4.0`` is the newest 4.0.x of the table)."""
        facts = build_facts(split_raws(load_paths([bundled_specs() / "facts"]))[1])
        releases = {r.release: r for r in facts.broker_releases}
        matches = [r for r in releases if r == name or r.startswith(name + ".")]
        if not matches:
            raise TargetError(
                f"--target-release: no Kafka release {name!r} in the table "
                f"({', '.join(releases)})"
            )
        chosen = releases[matches[-1]]
        names = {fact.key: fact.name for fact in facts.api_keys}
        target = cls.__new__(cls)
        target.label = f"Kafka {chosen.release}"
        target.requests = {
            key: (names.get(key, f"api key {key}"), Versions(lo, hi)) for key, lo, hi in chosen.apis
        }
        target.deprecated = {}
        return target

    def judge_api(self, api_key: int, api_version: int, seen_name: str | None = None) -> Judgment:
        """Does the target take ``api_key`` at ``api_version``? ``seen_name``: the API's
        name from the decoding package (used when the target lacks the API)."""
        known = self.requests.get(api_key)
        if (known is None or not known[1]) and api_key in OPTIONAL_APIS:
            name = seen_name or OPTIONAL_APIS[api_key]
            return Judgment(
                True,
                "none",
                f"optional, not used after the upgrade: clients send {name} only to a broker "
                "that advertises it, and the target does not",
                name,
            )
        if known is not None and not known[1]:
            return Judgment(
                False,
                "none",
                f"{known[0]} (api key {api_key}) was removed from Kafka in the target: no "
                "version of it is served",
                known[0],
            )
        if known is None:
            name = seen_name or f"api key {api_key}"
            return Judgment(
                False,
                "none",
                f"{name} (api key {api_key}) is not in the target spec set: the target "
                "does not serve this API at all",
                seen_name,
            )
        name, valid = known
        if api_version in valid:
            deprecated = self.deprecated.get(api_key)
            note = (
                f"; deprecated there (v{deprecated}): expect its removal in a later release"
                if deprecated and api_version in deprecated
                else ""
            )
            return Judgment(
                True,
                str(valid),
                f"ok, will use v{api_version}: in the target's v{valid}{note}",
                name,
            )
        if valid and api_version > valid.hi:
            return Judgment(
                True,
                str(valid),
                f"ok, will use v{valid.hi}: v{api_version} is newer than the target's highest, "
                "and clients negotiate down through ApiVersions",
                name,
            )
        return Judgment(
            False,
            str(valid),
            f"{name} v{api_version} was removed: the target accepts v{valid} only",
            name,
        )

    def judge_format(self, magic: int) -> Judgment:
        """Does the target take record data of message format ``magic``?"""
        produce = self.requests.get(PRODUCE)
        valid = produce[1] if produce is not None else Versions(1, 0)
        legacy = valid.intersect(LEGACY_FORMAT_PRODUCE)
        label = f"message format v{magic} (magic {magic})"
        if magic >= 2:
            ok = bool(valid.subtract(LEGACY_FORMAT_PRODUCE)) if valid else False
            why = (
                f"{label}, record batches: the target's Produce v{valid} carries them"
                if ok
                else f"{label}: the target has no Produce version that carries record batches"
            )
            return Judgment(ok, str(valid), why, "Produce")
        if legacy:
            return Judgment(
                True,
                str(valid),
                f"{label} is deprecated but still accepted: the target has Produce v{legacy}, "
                "which carries message sets",
                "Produce",
            )
        return Judgment(
            False,
            str(valid),
            f"{label} is not supported: Kafka 4.0 removed message formats v0 and v1 (KIP-724); "
            f"the target's Produce v{valid} carries record batches (magic 2) only",
            "Produce",
        )


def judge_rows(
    target: Target,
    requests: Iterable[Mapping[str, Any]],
    formats: Iterable[Mapping[str, Any]] = (),
) -> list[ReadinessRow]:
    """``readiness/`` rows.

    ``requests``: per client (``software_name``, ``software_version``, ``client_id``), api
    key (``api_name`` as decoded) and ``api_version``: ``requests``, ``first_ts``,
    ``last_ts``. ``formats``: per client and ``magic``: ``batches``, ``first_ts``,
    ``last_ts``. One row each, judged.
    """
    rows: list[ReadinessRow] = []
    for r in requests:
        j = target.judge_api(r["api_key"], r["api_version"], r.get("api_name"))
        rows.append(
            ReadinessRow(
                r.get("software_name"),
                r.get("software_version"),
                r.get("client_id"),
                "api",
                r["api_key"],
                j.api_name or r.get("api_name"),
                r["api_version"],
                None,
                r.get("requests"),
                None,
                j.supported,
                j.target_versions,
                j.reason,
                r.get("first_ts"),
                r.get("last_ts"),
                target.label,
            )
        )
    for r in formats:
        j = target.judge_format(r["magic"])
        rows.append(
            ReadinessRow(
                r.get("software_name"),
                r.get("software_version"),
                r.get("client_id"),
                "message_format",
                None,
                None,
                None,
                r["magic"],
                None,
                r.get("batches"),
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
        r.client_id or "",
        r.kind,
        r.api_key if r.api_key is not None else -1,
        r.api_version if r.api_version is not None else -1,
        r.magic if r.magic is not None else -1,
    )


def client_label(
    software_name: str | None, software_version: str | None, client_id: str | None
) -> str:
    """``'client-id' (kafka-python 3.0.12)``; ``(software unknown)`` when the connection
    sent no ApiVersions v3+."""
    software = " ".join(p for p in (software_name, software_version) if p) or "software unknown"
    return f"{client_id!r} ({software})"


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

    @property
    def ready(self) -> bool:
        return not self.breaking

    def by_item(self) -> dict[str, list[str]]:
        """What the target lacks -> the clients that send it."""
        items: dict[str, list[str]] = {}
        for client, missing in self.breaking.items():
            for item in missing:
                items.setdefault(item, []).append(client)
        return dict(sorted(items.items(), key=lambda kv: (-len(kv[1]), kv[0])))

    def text(self, width: int = 3) -> str:
        """A short verdict: one line, then one line per thing the target lacks (at most
        ``width`` clients named on it)."""
        if self.ready:
            return (
                f"all {self.clients} clients seen are ready for the target ({self.target}): "
                "every API version and message format they use is supported"
            )
        n = len(self.breaking)
        lines = [
            f"{n} of {self.clients} client{'s' if self.clients != 1 else ''} would break on "
            f"the target ({self.target}):"
        ]
        for item, clients in self.by_item().items():
            named = ", ".join(clients[:width])
            more = f" and {len(clients) - width} more" if len(clients) > width else ""
            lines.append(
                f"  {item}: {len(clients)} client{'s' if len(clients) != 1 else ''} "
                f"({named}{more})"
            )
        return "\n".join(lines)


def verdict(rows: Iterable[ReadinessRow], target: str) -> Verdict:
    """Which clients send something the target does not support (from ``readiness/``)."""
    clients: dict[str, list[str]] = {}
    breaking: dict[str, list[str]] = {}
    for row in sorted(rows, key=_row_order):
        label = client_label(row.software_name, row.software_version, row.client_id)
        clients.setdefault(label, [])
        if not row.supported_by_target:
            breaking.setdefault(label, []).append(what(row))
    return Verdict(target, len(clients), breaking)
