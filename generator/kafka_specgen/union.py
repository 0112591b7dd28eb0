"""``--release all``: one spec set that decodes every version any of several Kafka releases
defines.

``union_specs`` takes the spec sets of Kafka releases, oldest first, and returns raw specs
that go through the usual stages (schema -> model -> catalog -> render) into ONE package.
The rules:

- A message is the same message across releases by what the wire knows it by: a request
  or response by its api key (``ListOffsetRequest`` became ``ListOffsetsRequest``), a
  metadata or coordinator record by its folder and record type, anything else by name.
- Before Kafka 4.1 a coordinator record's key was a ``data`` spec whose version was the
  record type (``OffsetCommitKey`` versions 0-1); 4.1 gave each record type its own
  ``coordinator-key`` spec at version 0 (``LegacyOffsetCommitKey``, ``OffsetCommitKey``).
  The union uses 4.1's form for every release: an old key at version N is the key of
  record type N, and its value the ``coordinator-value`` of that type.
- Each version is laid out as the newest release that defines it *stably* does: not as
  the latest version of a request marked ``latestVersionUnstable`` (nor of its response),
  and not as a definition in ``EARLY_ACCESS``. A version only unstable releases define is
  taken from the newest of them. Two stable releases that lay out one version differently
  are a conflict: an error naming both. Adding tagged fields to a version is no conflict
  (older bytes still decode); the union holds the newest, fuller definition.
- Fields removed by a newer release come back at their wire position for the versions
  that have them (``MaxNumOffsets`` in ListOffsets v0); names, ``about`` texts and defaults
  are the newest release's that has the field.
- ``listeners`` is the union of every release's; ``latestVersionUnstable`` holds when the
  union's newest version is unstable; ``deprecatedVersions`` of a request holds what its
  owner deprecated and every version the newest release no longer has (Kafka 4.0's
  removals, whole removed APIs). An API every release removed stays removed.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable, Sequence

from .facts import is_facts
from .load import RawSpec
from .release_names import Release, ReleaseNameError
from .union_message import Definition, MessageUnion, PlanCache, Superseded
from .union_tree import OPEN_END, UnionError, versions_of

Identity = tuple[str, str, int] | tuple[str, str]


@dataclass(frozen=True)
class EarlyAccess:
    """Specs Kafka shipped for a feature that was not yet production-ready and later
    changed in place (same version, other layout). The union treats them as it treats
    versions marked unstable: a newer definition of the same version wins."""

    names: tuple[str, ...]
    first: str
    last: str
    why: str

    def covers(self, name: str, release: str) -> bool:
        which, first, last = _release(release), _release(self.first), _release(self.last)
        if which is None or first is None or last is None:
            return False
        return name in self.names and first <= which <= last


@lru_cache(maxsize=None)
def _release(name: str) -> Release | None:
    try:
        return Release.parse(name)
    except ReleaseNameError:
        return None


# fmt: off
EARLY_ACCESS: tuple[EarlyAccess, ...] = (
    EarlyAccess(("LeaderChangeMessage", "EndQuorumEpochRequest"), "2.7.0", "2.7.0",
                "Raft (KIP-595) before KRaft mode existed"),
    EarlyAccess(("LeaderChangeMessage", "RegisterBrokerRecord", "UnregisterBrokerRecord",
                 "TopicRecord", "PartitionRecord", "ConfigRecord", "FenceBrokerRecord",
                 "UnfenceBrokerRecord", "RemoveTopicRecord", "DelegationTokenRecord",
                 "UserScramCredentialRecord", "FeatureLevelRecord", "QuotaRecord"),
                "2.8.0", "2.8.0",
                "KRaft early access (KIP-500): 3.0 made the metadata records flexible"),
    EarlyAccess(("FeatureLevelRecord",), "3.0.0", "3.2.0",
                "KRaft before production use (KIP-833, 3.3); KIP-778 changed the record"),
    EarlyAccess(("UserScramCredentialRecord",), "3.0.0", "3.4.0",
                "written by KRaft only since SCRAM support in 3.5 (KIP-900)"),
    EarlyAccess(("DelegationTokenRecord",), "3.0.0", "3.5.0",
                "written by KRaft only since delegation token support in 3.6"),
    EarlyAccess(("RemoteLogSegmentMetadataRecord", "RemoteLogSegmentMetadataUpdateRecord",
                 "RemoteLogSegmentMetadataSnapshotRecord"), "3.0.0", "3.5.0",
                "tiered storage (KIP-405) before its early access in 3.6"),
    EarlyAccess(("ConsumerGroupCurrentMemberAssignmentValue", "ConsumerGroupMemberMetadataValue",
                 "ConsumerGroupPartitionMetadataValue",
                 "ConsumerGroupTargetAssignmentMemberValue"), "3.5.0", "3.7.0",
                "the new consumer group protocol (KIP-848) before 3.8 (early access in 3.7)"),
    EarlyAccess(("ShareGroupMetadataValue", "ShareGroupStatePartitionMetadataValue",
                 "ShareSnapshotValue", "ShareUpdateValue"), "3.9.0", "4.0.2",
                "share groups (KIP-932) before their preview in 4.1"),
    EarlyAccess(("ShareGroupPartitionMetadataValue",), "3.9.0", "3.9.0",
                "share groups (KIP-932) before their early access in 4.0"),
)
# fmt: on


@dataclass(frozen=True)
class SpecUnion:
    """The union's specs and what ``build_union`` decided on the way."""

    specs: list[RawSpec]
    superseded: tuple[Superseded, ...]
    owners: dict[str, dict[int, str]]
    """Union message name -> version -> the release whose definition it holds."""


def union_specs(sets: Sequence[tuple[str, Sequence[RawSpec]]]) -> list[RawSpec]:
    """One spec set holding every version of every message any of ``sets`` defines:
    ``sets`` are (release name, raw specs) oldest first. Raises ``UnionError`` on a
    conflict, naming the message, version and both releases."""
    return build_union(sets).specs


def build_union(sets: Sequence[tuple[str, Sequence[RawSpec]]]) -> SpecUnion:
    """``union_specs`` with what it decided: superseded versions and each version's owner."""
    if not sets:
        raise UnionError("no spec sets to merge")
    definitions = collect_definitions(sets)
    specs: list[RawSpec] = []
    superseded: list[Superseded] = []
    owners: dict[str, dict[int, str]] = {}
    plans = PlanCache()
    for key in sorted(definitions, key=repr):
        merged = MessageUnion(definitions[key], len(sets) - 1, plans)
        specs.append(merged.spec())
        superseded += merged.superseded
        owners[str(specs[-1].data["name"])] = {v: d.release for v, d in merged.owners.items()}
    specs.sort(key=lambda raw: (raw.source, str(raw.data["name"])))
    return SpecUnion(specs + newest_facts(sets), tuple(superseded), owners)


def newest_facts(sets: Sequence[tuple[str, Sequence[RawSpec]]]) -> list[RawSpec]:
    """Facts tables are not messages: the newest set's pass through unchanged."""
    for _, raws in reversed(sets):
        facts = [raw for raw in raws if is_facts(raw)]
        if facts:
            return facts
    return []


# --- which message is which ---------------------------------------------------------------


def folder(raw: RawSpec) -> str:
    """The folder a spec sits in (``metadata``), whatever comes before it: a release's
    sources may be ``metadata/X.json`` or ``3.2.0/metadata/X.json``."""
    parts = raw.source.rsplit("!/", 1)[-1].split("/")
    return parts[-2] if len(parts) > 1 else ""


def identity(raw: RawSpec) -> Identity:
    """What makes specs of two releases the same message (after ``modernise``)."""
    data = raw.data
    kind = str(data["type"])
    if kind in ("request", "response"):
        return (kind, "", int(data["apiKey"]))
    if kind in ("metadata", "coordinator-key", "coordinator-value"):
        return (kind, folder(raw), int(data["apiKey"]))
    return (kind, str(data["name"]))


def is_legacy_record(raw: RawSpec) -> bool:
    """A coordinator record in the form before Kafka 4.1: a ``data`` spec in ``core/`` or
    a ``*-coordinator/`` folder."""
    where = folder(raw).rsplit("/", 1)[-1]
    name = str(raw.data["name"])
    return (
        raw.data["type"] == "data"
        and (where == "core" or where.endswith("-coordinator"))
        and name.endswith(("Key", "Value"))
    )


@dataclass(frozen=True)
class Modern:
    """Where 4.1's form puts coordinator records, learnt from every set that has it."""

    folders: dict[str, str]
    value_types: dict[str, int]

    @staticmethod
    def learn(sets: Sequence[tuple[str, Sequence[RawSpec]]]) -> Modern:
        folders: dict[str, str] = {}
        value_types: dict[str, int] = {}
        for _, raws in sets:
            for raw in raws:
                kind = raw.data.get("type")
                name = str(raw.data.get("name"))
                if kind in ("coordinator-key", "coordinator-value"):
                    folders[name] = folder(raw)
                if kind == "coordinator-value":
                    value_types[name] = int(raw.data["apiKey"])
        return Modern(folders, value_types)


def modernise(raws: Sequence[RawSpec], modern: Modern) -> list[tuple[RawSpec, dict[int, int]]]:
    """Each spec in 4.1's form, with the map from its versions to the new spec's: an old
    coordinator key becomes one key spec per record type (its versions)."""
    by_name = {str(raw.data["name"]): raw for raw in raws if not is_facts(raw)}
    result: list[tuple[RawSpec, dict[int, int]]] = []
    for raw in raws:
        if is_facts(raw):
            continue
        versions = versions_of(raw.data["validVersions"])
        if not is_legacy_record(raw):
            result.append((raw, {v: v for v in versions}))
            continue
        name = str(raw.data["name"])
        where = modern.folders.get(name, folder(raw))
        source = f"{where}/{raw.source.rsplit('/', 1)[-1]}"
        data = copy.deepcopy(raw.data)
        if name.endswith("Key"):
            for version in sorted(versions):
                key = dict(data, type="coordinator-key", apiKey=version, validVersions="0")
                key["flexibleVersions"] = "none"
                key["fields"] = _fields_at(data["fields"], version)
                result.append((RawSpec(source, key, raw.warnings, raw.notes), {version: 0}))
            continue
        record_type = modern.value_types.get(name)
        if record_type is None:
            key_raw = by_name.get(name.removesuffix("Value") + "Key")
            key_versions = versions_of(key_raw.data["validVersions"]) if key_raw else frozenset()
            if len(key_versions) != 1:
                raise UnionError(f"{raw.source}: no record type for {name}: no key of one version")
            record_type = min(key_versions)
        data.update(type="coordinator-value", apiKey=record_type)
        result.append((RawSpec(source, data, raw.warnings, raw.notes), {v: v for v in versions}))
    return result


def _fields_at(fields: list[dict[str, Any]], version: int) -> list[dict[str, Any]]:
    """The fields present at ``version``, as version 0 of a spec."""
    result = []
    for spec in fields:
        if version not in versions_of(spec.get("versions", spec.get("taggedVersions", "none"))):
            continue
        spec = dict(spec, versions="0")
        if version in versions_of(spec.pop("nullableVersions", "none")):
            spec["nullableVersions"] = "0"
        if "fields" in spec:
            spec["fields"] = _fields_at(spec["fields"], version)
        result.append(spec)
    return result


def unstable_versions(raws: Iterable[RawSpec]) -> dict[int, frozenset[int]]:
    """Api key -> the version its request marks unstable (which holds for the response)."""
    result: dict[int, frozenset[int]] = {}
    for raw in raws:
        data = raw.data
        if data.get("type") == "request" and data.get("latestVersionUnstable") is True:
            versions = versions_of(data["validVersions"])
            result[int(data["apiKey"])] = frozenset({max(versions)}) if versions else frozenset()
    return result


def collect_definitions(
    sets: Sequence[tuple[str, Sequence[RawSpec]]],
) -> dict[Identity, list[Definition]]:
    modern = Modern.learn(sets)
    found: dict[Identity, list[Definition]] = defaultdict(list)
    for index, (release, raws) in enumerate(sets):
        unstable = unstable_versions(raws)
        for raw, mapping in modernise(raws, modern):
            if max(mapping, default=0) >= OPEN_END:
                raise UnionError(f"{release}: {raw.source}: versions above {OPEN_END - 1}")
            key = identity(raw)
            if found[key] and found[key][-1].index == index:
                other = found[key][-1].raw.source
                raise UnionError(f"{release}: {raw.source} and {other} are the same message")
            data = raw.data
            api_key = data.get("apiKey", -1)
            paired = data["type"] in ("request", "response")
            marked = unstable.get(int(api_key), frozenset()) if paired else frozenset()
            origin = str(data["name"])
            found[key].append(
                Definition(
                    release,
                    index,
                    raw,
                    origin,
                    versions_of(data["validVersions"]),
                    frozenset(marked),
                    any(entry.covers(origin, release) for entry in EARLY_ACCESS),
                )
            )
    return found
