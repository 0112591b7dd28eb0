"""Holding a union spec set to the releases it was made from, version by version.

For every release and every version of every message it defines, the version's plan
(``plan.py``: what the encoder and decoder do) in the release's own model is compared with
the plan of the same version in the union's model: flexible or not, the regular fields in
order with their wire types, compactness and nullability, nested structs alike, and every
tagged field of the release at its tag in the union (the union may know more tags: Kafka
adds tagged fields to versions in place). Names and docs do not count; ``records`` is
``bytes`` on the wire. A version a release marks unstable (or lists as early access) that
a newer release redefines is excepted and listed when it differs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from .errors import each
from .load import RawSpec
from .model import Message
from .model_builder import build_messages
from .plan import plan_message
from .schema import validate_spec
from .union import EARLY_ACCESS, Identity, Modern, identity, modernise, unstable_versions
from .wire_diff import difference


@dataclass
class UnionCheck:
    checked: int = 0
    """(release, message, version) triples whose layout the union has."""
    mismatches: list[str] = field(default_factory=list)
    superseded: list[tuple[str, str, int]] = field(default_factory=list)
    """(release, message, version): unstable or early-access versions a newer release
    redefined differently."""
    missing: list[str] = field(default_factory=list)
    """Messages or versions of a release the union lacks."""
    extra: list[str] = field(default_factory=list)
    """Union versions no release defines."""

    @property
    def ok(self) -> bool:
        return not (self.mismatches or self.missing or self.extra)

    def problems(self) -> list[str]:
        return self.mismatches + self.missing + self.extra


def check_union(
    sets: Sequence[tuple[str, Sequence[RawSpec]]], union: Sequence[RawSpec]
) -> UnionCheck:
    """Compare every version of every release in ``sets`` with ``union`` on the wire."""
    each([raw for raw in union if "facts" not in raw.data], validate_spec)
    union_models = {
        identity(raw): message
        for raw, message in zip(*_models([r for r in union if "facts" not in r.data]))
        if not message.removed
    }
    union_plans = {key: plan_message(m).root for key, m in union_models.items()}
    modern = Modern.learn(sets)
    result = UnionCheck()
    covered: set[tuple[Identity, int]] = set()
    targets = [_targets(raws, modern) for _, raws in sets]
    for index, (release, raws) in enumerate(sets):
        later = [set(t.values()) for t in targets[index + 1 :]]
        unstable = unstable_versions(raws)
        for raw, message in zip(*_models(raws)):
            if message.removed:
                continue
            plans = plan_message(message).root
            marked = unstable.get(-1 if message.api_key is None else message.api_key, frozenset())
            if message.type not in ("request", "response"):
                marked = frozenset()
            early = any(entry.covers(message.name, release) for entry in EARLY_ACCESS)
            for version, plan in sorted(plans.items()):
                target = targets[index].get((message.name, version))
                where = f"{message.name} v{version} of {release}"
                if target is None or target[0] not in union_plans:
                    result.missing.append(f"{where}: no such message in the union")
                    continue
                key, union_version = target
                covered.add(target)
                theirs = union_plans[key].get(union_version)
                if theirs is None:
                    result.missing.append(f"{where}: the union has no v{union_version}")
                    continue
                problem = difference(plan, theirs, message.name)
                if problem is None:
                    result.checked += 1
                elif (version in marked or early) and any(target in t for t in later):
                    result.superseded.append((release, message.name, version))
                else:
                    result.mismatches.append(f"{where}: {problem}")
    for key, plans in sorted(union_plans.items(), key=repr):
        for version in plans:
            if (key, version) not in covered:
                result.extra.append(f"{union_models[key].name} v{version}: no release has it")
    return result


def _models(raws: Sequence[RawSpec]) -> tuple[list[RawSpec], list[Message]]:
    """The specs and their messages, in the same order."""
    specs = [raw for raw in raws if "facts" not in raw.data]
    by_source = {(m.source, m.name): m for m in build_messages(specs)}
    return specs, [by_source[(raw.source, str(raw.data["name"]))] for raw in specs]


def _targets(
    raws: Sequence[RawSpec], modern: Modern
) -> dict[tuple[str, int], tuple[Identity, int]]:
    """(message name, version) in a release -> (union message, version) holding it."""
    result: dict[tuple[str, int], tuple[Identity, int]] = {}
    for raw, mapping in modernise(raws, modern):
        for version, union_version in mapping.items():
            result[(str(raw.data["name"]), version)] = (identity(raw), union_version)
    return result
