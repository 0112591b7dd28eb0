"""One union message: the definitions several releases give it, merged into one spec.

``MessageUnion`` picks the owner of each version (the newest release that defines it
stably), checks every other definition against it (a stable one that lays the version out
differently is a conflict), merges the owners' trees newest first and writes the spec.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from .load import RawSpec
from .model_builder import MessageBuilder
from .plan import StructPlan, plan_message
from .union_tree import (
    Merger,
    TreeStruct,
    UnionError,
    common_structs,
    emit_common,
    emit_fields,
    parse_tree,
    struct_presence,
    versions_of,
)
from .versions import VersionSet, Versions, version_ranges
from .wire_diff import difference, same_layout

Plans = dict[int, StructPlan]
"""A message's root plan at each of its versions."""


class PlanCache:
    """Each spec's plans, built once per distinct spec: releases repeat most files."""

    def __init__(self) -> None:
        self.known: dict[str, Plans] = {}

    def __call__(self, raw: RawSpec) -> Plans:
        key = json.dumps([raw.source, raw.data], sort_keys=True)
        if key not in self.known:
            self.known[key] = plan_message(MessageBuilder(raw).build()).root
        return self.known[key]


@dataclass(frozen=True)
class Definition:
    """One release's spec of one union message (coordinator keys in 4.1's form)."""

    release: str
    index: int
    """The release's place in the sets given, oldest 0."""
    raw: RawSpec
    origin: str
    """The message's name in that release."""
    versions: frozenset[int]
    unstable: frozenset[int]
    """Versions marked unstable (a request's latest, and its response's)."""
    early: bool
    """Listed in ``union.EARLY_ACCESS``: no version of it is vouched for."""

    def vouches(self, version: int) -> bool:
        return not self.early and version not in self.unstable

    def flexible(self, version: int) -> bool:
        return version in versions_of(self.raw.data.get("flexibleVersions", "none"))


@dataclass(frozen=True)
class Superseded:
    """A version a release defined unstably (or as early access) that a newer release
    redefined: the union holds the newer definition."""

    release: str
    message: str
    version: int
    by: str
    reason: str
    differs: bool
    """Whether the two lay the version out differently (else nothing is lost)."""

    def __str__(self) -> str:
        how = "laid out differently" if self.differs else "laid out alike"
        return (
            f"{self.message} v{self.version} of {self.release} ({self.reason}): {how} in {self.by}"
        )


class MessageUnion:
    """The definitions of one message in every release that has it, oldest first: who owns
    each version, what was superseded, and (``spec``) the merged spec."""

    def __init__(self, definitions: list[Definition], last_index: int, plans: PlanCache) -> None:
        self.definitions = definitions
        self.last_index = last_index
        self.defined = [d for d in definitions if d.versions]
        self.owners = self.pick_owners()
        self.plans = {id(d): plans(d.raw) for d in self.defined}
        self.superseded = self.check_others()

    def pick_owners(self) -> dict[int, Definition]:
        owners = {}
        for version in sorted({v for d in self.defined for v in d.versions}):
            candidates = [d for d in self.defined if version in d.versions]
            vouched = [d for d in candidates if d.vouches(version)]
            owners[version] = (vouched or candidates)[-1]
        return owners

    def reads(self, d: Definition, version: int) -> bool:
        """Whether bytes of ``d``'s layout of ``version`` read right with its owner's."""
        owner = self.owners[version]
        mine, theirs = self.plans[id(d)][version], self.plans[id(owner)][version]
        return difference(mine, theirs, d.origin) is None

    def check_others(self) -> list[Superseded]:
        superseded = []
        for d in self.defined:
            for version in sorted(d.versions):
                owner = self.owners[version]
                if owner is d:
                    continue
                same = self.reads(d, version)
                if not d.vouches(version):
                    reason = "early access" if d.early else "unstable"
                    superseded.append(
                        Superseded(d.release, d.origin, version, owner.release, reason, not same)
                    )
                elif not same:
                    raise UnionError(
                        f"{owner.origin} v{version}: Kafka {d.release} and {owner.release} "
                        "lay it out differently on the wire"
                    )
        return superseded

    def spec(self) -> RawSpec:
        """The union's spec of this message."""
        if not self.defined:  # an API every release has removed stays removed
            return self.definitions[-1].raw
        order = sorted({id(d): d for d in self.owners.values()}.values(), key=lambda d: -d.index)
        base = order[0]
        merger = Merger(self.tree(base), self.owned(base))
        done = set(self.owned(base))
        for d in order[1:]:
            shared = frozenset(v for v in d.versions & done if self.reads(d, v))
            merger.merge(self.tree(d), shared, self.owned(d))
            done |= self.owned(d)
        result = RawSpec(
            base.raw.source, self.message_data(base, merger.root), (), self.notes(base)
        )
        self.verify(result)
        return result

    def tree(self, d: Definition) -> TreeStruct:
        return parse_tree(d.raw.data, d.versions)

    def owned(self, d: Definition) -> frozenset[int]:
        return frozenset(v for v, owner in self.owners.items() if owner is d)

    def verify(self, raw: RawSpec) -> None:
        """The merged spec lays out each version exactly as its owner does."""
        merged = plan_message(MessageBuilder(raw).build()).root
        for version, owner in sorted(self.owners.items()):
            if not same_layout(merged[version], self.plans[id(owner)][version]):
                raise UnionError(
                    f"{owner.origin} v{version}: the merged fields differ from Kafka "
                    f"{owner.release}'s (fields reordered between releases?)"
                )

    def message_data(self, base: Definition, root: TreeStruct) -> dict[str, Any]:
        data = copy.deepcopy(base.raw.data)
        valid = sorted(self.owners)
        if valid != list(range(valid[0], valid[-1] + 1)):
            raise UnionError(f"{base.origin}: versions {version_ranges(valid)} are not one range")
        data["validVersions"] = str(Versions(valid[0], valid[-1]))
        flexible = [v for v in valid if self.owners[v].flexible(v)]
        if flexible and flexible != valid[valid.index(flexible[0]) :]:
            raise UnionError(f"{base.origin}: flexible versions {version_ranges(flexible)}")
        data["flexibleVersions"] = f"{flexible[0]}+" if flexible else "none"
        care = struct_presence(root, set(valid))
        data["fields"] = emit_fields(root, care)
        used = common_structs(root)
        names = {s.name for s in used}
        unused = [c for c in data.get("commonStructs", []) if c["name"] not in names]
        if used or unused:
            data["commonStructs"] = [emit_common(s, care) for s in used] + unused
        if data["type"] == "request":
            self.request_keys(data, valid)
        return data

    def request_keys(self, data: dict[str, Any], valid: list[int]) -> None:
        listeners: list[str] = []
        for d in sorted(self.defined, key=lambda d: -d.index):
            listeners += [x for x in d.raw.data.get("listeners", []) if x not in listeners]
        if listeners:
            data["listeners"] = listeners
        newest = self.owners[valid[-1]]
        if valid[-1] in newest.unstable:
            data["latestVersionUnstable"] = True
        elif "latestVersionUnstable" in data:
            data["latestVersionUnstable"] = False
        last = self.definitions[-1]
        kept = last.versions if last.index == self.last_index else frozenset()
        deprecated = VersionSet.from_versions(
            v
            for v, owner in self.owners.items()
            if v not in kept or v in versions_of(owner.raw.data.get("deprecatedVersions", "none"))
        )
        if len(deprecated.ranges) > 1:
            raise UnionError(f"{data['name']}: deprecated versions {deprecated} are not one range")
        if deprecated:
            data["deprecatedVersions"] = str(deprecated.ranges[0])
        else:
            data.pop("deprecatedVersions", None)

    def notes(self, base: Definition) -> str:
        by_release: dict[str, list[int]] = {}
        for version, owner in sorted(self.owners.items()):
            by_release.setdefault(owner.release, []).append(version)
        parts = [f"{version_ranges(vs)} as in Kafka {r}" for r, vs in by_release.items()]
        provenance = "Union of Kafka releases: versions " + "; ".join(parts) + "."
        return f"{base.raw.notes}\n\n{provenance}" if base.raw.notes else provenance
