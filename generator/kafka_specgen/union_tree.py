"""The field trees ``union`` merges: a spec's structs with the exact versions of each field.

A spec says where a field is with version ranges cut by its parents'; a tree spells them
out as sets, so that definitions from several Kafka releases can be laid side by side and
merged: the union tree holds, for every version, the fields of the release that owns that
version, in that release's order, under the newest release's names. ``emit_fields`` writes
a tree back as spec JSON, with the simplest version ranges that say the same. (What a
version puts on the wire is the plans' business: ``wire_diff`` compares them.)
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .versions import Versions

Versionset = frozenset[int]


class UnionError(ValueError):
    """Two releases' definitions cannot be merged into one spec."""


@dataclass(eq=False)
class TreeField:
    spec: dict[str, Any]
    """The field's JSON (without ``fields``) from the release that brought it."""
    present: set[int]
    nullable: set[int]
    tagged: set[int]
    struct: TreeStruct | None = None

    @property
    def name(self) -> str:
        return str(self.spec["name"])

    @property
    def tag(self) -> int | None:
        tag = self.spec.get("tag")
        return tag if isinstance(tag, int) else None

    @property
    def kind(self) -> str:
        """The wire type: ``records`` is ``bytes`` on the wire; struct names do not count."""
        text = str(self.spec["type"])
        prefix = "[]" if text.startswith("[]") else ""
        if self.struct is not None:
            return prefix + "struct"
        return text.replace("records", "bytes")


@dataclass(eq=False)
class TreeStruct:
    name: str
    common: bool
    fields: list[TreeField] = field(default_factory=list)
    spec: dict[str, Any] = field(default_factory=dict)
    """A common struct's JSON without ``fields``; empty for an inline struct."""


@lru_cache(maxsize=None)
def versions_of(text: Any) -> Versionset:
    """The versions a spec's version string names (an open range ``N+`` up to
    ``OPEN_END``)."""
    parsed = Versions.parse(str(text))
    if parsed.empty:
        return frozenset()
    return frozenset(range(parsed.lo, min(parsed.hi, OPEN_END) + 1))


#: Where open ranges (``N+``) are cut: above every message version (``validVersions`` is
#: always bounded, and ``union`` refuses one above this), so sets stay small.
OPEN_END = 127


def parse_tree(data: dict[str, Any], versions: Versionset) -> TreeStruct:
    """The tree of one spec (its root struct) at ``versions``."""
    commons = {str(c["name"]): c for c in data.get("commonStructs", [])}
    built: dict[str, TreeStruct] = {}

    def struct(name: str, specs: list[dict[str, Any]], where: Versionset) -> TreeStruct:
        node = TreeStruct(name, common=False)
        node.fields = [one_field(spec, where) for spec in specs]
        return node

    def common(name: str) -> TreeStruct:
        if name not in built:
            spec = commons[name]
            where = versions & versions_of(spec["versions"])
            node = TreeStruct(name, True, spec={k: v for k, v in spec.items() if k != "fields"})
            built[name] = node
            node.fields = [one_field(f, where) for f in spec["fields"]]
        return built[name]

    def one_field(spec: dict[str, Any], where: Versionset) -> TreeField:
        declared = spec.get("versions", spec.get("taggedVersions", "none"))
        present = set(where & versions_of(declared))
        result = TreeField(
            spec={k: v for k, v in spec.items() if k != "fields"},
            present=present,
            nullable=present & versions_of(spec.get("nullableVersions", "none")),
            tagged=present & versions_of(spec.get("taggedVersions", "none")),
        )
        name = str(spec["type"]).removeprefix("[]")
        if name[:1].isupper():
            if name in commons and "fields" not in spec:
                result.struct = common(name)
            else:
                result.struct = struct(name, spec.get("fields", []), frozenset(present))
        return result

    return struct(str(data["name"]), data.get("fields", []), versions)


# --- merging -----------------------------------------------------------------------------


class Merger:
    """Merges the trees of one message's definitions, newest owner first, into one tree.

    ``owned`` versions take their fields from the tree being merged; ``shared`` versions
    (ones the union already has, laid out alike in both) pair the tree's fields with the
    union's by wire position, which is how a renamed field keeps its newest name.
    """

    def __init__(self, root: TreeStruct, owned: Versionset) -> None:
        self.commons: dict[int, TreeStruct] = {}
        """A merged tree's common structs (by id) -> the union's they went into."""
        self.named: dict[str, TreeStruct] = {}
        """The union's common structs by name."""
        self.partners: dict[tuple[int, int], dict[int, TreeField]] = {}
        self.root = self.copy_struct(root, owned)

    def merge(self, tree: TreeStruct, shared: Versionset, owned: Versionset) -> None:
        # ids are only unique among live objects: the maps hold one tree's structs at a time
        self.commons, self.partners = {}, {}
        self.merge_struct(self.root, tree, shared, owned)

    def merge_struct(
        self, union: TreeStruct, other: TreeStruct, shared: Versionset, owned: Versionset
    ) -> None:
        if other.common:
            self.commons.setdefault(id(other), union)
        partners = self.partners.setdefault((id(union), id(other)), {})
        self.pair_by_position(union, other, shared, partners)
        last = -1
        for index, f in enumerate(other.fields):
            mine = frozenset(f.present) & owned
            partner = partners.get(id(f))
            if partner is None and mine:
                partner = self.pair_by_name(union, other, f, partners, index, last)
            if partner is not None:
                last = union.fields.index(partner)
                if mine:
                    self.extend(partner, f, mine, frozenset(f.present) & shared)
            elif mine:
                last += 1
                union.fields.insert(last, self.copy_field(f, mine))

    @staticmethod
    def pair_by_position(
        union: TreeStruct, other: TreeStruct, shared: Versionset, partners: dict[int, TreeField]
    ) -> None:
        for version in sorted(shared):
            theirs = [f for f in other.fields if version in f.present]
            ours = [f for f in union.fields if version in f.present]
            regular_theirs = [f for f in theirs if version not in f.tagged]
            regular_ours = [f for f in ours if version not in f.tagged]
            pairs = list(zip(regular_theirs, regular_ours))
            by_tag = {f.tag: f for f in ours if version in f.tagged}
            pairs += [(f, by_tag[f.tag]) for f in theirs if version in f.tagged]
            for theirs_field, our_field in pairs:
                known = partners.setdefault(id(theirs_field), our_field)
                if known is not our_field:
                    raise UnionError(
                        f"field {theirs_field.name} of struct {other.name} matches both "
                        f"{known.name} and {our_field.name}"
                    )

    @staticmethod
    def pair_by_name(
        union: TreeStruct,
        other: TreeStruct,
        f: TreeField,
        partners: dict[int, TreeField],
        index: int,
        last: int,
    ) -> TreeField | None:
        """A field only older versions have may still be one the union knows by name (one
        dropped from a version in the middle, or met again through a common struct): pair
        them when wire type, tag and place agree."""
        taken = {id(p) for p in partners.values()}
        later = [partners[id(g)] for g in other.fields[index + 1 :] if id(g) in partners]
        limit = min((union.fields.index(p) for p in later), default=len(union.fields))
        for position in range(last + 1, limit):
            candidate = union.fields[position]
            if (
                id(candidate) not in taken
                and candidate.name.lower() == f.name.lower()
                and candidate.kind == f.kind
                and candidate.tag == f.tag
            ):
                partners[id(f)] = candidate
                return candidate
        return None

    def extend(self, union: TreeField, f: TreeField, owned: Versionset, shared: Versionset) -> None:
        if union.kind != f.kind or (f.tagged & owned and union.tag != f.tag):
            raise UnionError(f"field {f.name} changes its wire type or tag ({union.name})")
        if union.spec.get("flexibleVersions") != f.spec.get("flexibleVersions"):
            raise UnionError(f"field {f.name} changes its own flexibleVersions")
        union.present |= owned
        union.nullable |= f.nullable & owned
        union.tagged |= f.tagged & owned
        if union.struct is not None and f.struct is not None:
            self.merge_struct(union.struct, f.struct, shared, owned)

    def copy_field(self, f: TreeField, owned: Versionset) -> TreeField:
        result = TreeField(copy.deepcopy(f.spec), set(owned), f.nullable & owned, f.tagged & owned)
        if f.struct is not None:
            known = self.commons.get(id(f.struct))
            if known is None and f.struct.common:
                known = self.named.get(f.struct.name)
            if known is not None and known.common:
                self.merge_struct(known, f.struct, frozenset(), owned)
                result.struct = known
            else:
                result.struct = self.copy_struct(f.struct, owned)
        return result

    def copy_struct(self, struct: TreeStruct, owned: Versionset) -> TreeStruct:
        """A copy holding the fields present at ``owned`` (and fields never present, which
        the newest spec may keep)."""
        result = TreeStruct(struct.name, struct.common, spec=copy.deepcopy(struct.spec))
        if struct.common:
            self.commons[id(struct)] = result
            self.named.setdefault(struct.name, result)
        for f in struct.fields:
            mine = frozenset(f.present) & owned
            if mine or not f.present:
                result.fields.append(self.copy_field(f, mine))
        return result


# --- writing specs back ------------------------------------------------------------------


def version_text(
    present: set[int], care: set[int], declared: Any, *, open_ended: bool = False
) -> str:
    """The simplest version string that holds exactly ``present`` of the versions in
    ``care`` (the others do not matter): ``declared`` when it does, else ``N``, ``A-B`` or
    ``N+`` (``N+`` when ``declared`` was open-ended or ``open_ended``)."""
    if declared is not None and {v for v in care if v in versions_of(declared)} == present:
        return str(declared)
    if not present:
        return "none"
    lo, hi = min(present), max(present)
    if {v for v in care if lo <= v <= hi} != present:
        shown = Versions(lo, hi)
        raise UnionError(f"versions {sorted(present)} are not one range (within {shown})")
    was_open = declared is not None and Versions.parse(str(declared)).open_ended
    if (was_open or open_ended) and {v for v in care if v >= lo} == present:
        return f"{lo}+"
    return str(Versions(lo, hi))


def common_structs(root: TreeStruct) -> list[TreeStruct]:
    """The common structs a tree uses, in the order first met."""
    found: dict[int, TreeStruct] = {}

    def walk(struct: TreeStruct) -> None:
        for f in struct.fields:
            if f.struct is not None:
                if f.struct.common and id(f.struct) not in found:
                    found[id(f.struct)] = f.struct
                walk(f.struct)

    walk(root)
    return list(found.values())


def struct_presence(root: TreeStruct, valid: set[int]) -> dict[int, set[int]]:
    """Struct id -> the versions it is on the wire at (a common struct: any use's)."""
    result: dict[int, set[int]] = {id(root): set(valid)}

    def walk(struct: TreeStruct) -> None:
        for f in struct.fields:
            if f.struct is not None:
                seen = id(f.struct) in result
                result.setdefault(id(f.struct), set()).update(f.present)
                if not seen or f.struct.common:
                    walk(f.struct)

    walk(root)
    return result


def emit_fields(struct: TreeStruct, care: dict[int, set[int]]) -> list[dict[str, Any]]:
    """The JSON of ``struct``'s fields: inline structs nested, common ones by name."""
    return [_emit_field(f, care[id(struct)], care) for f in struct.fields]


def _emit_field(f: TreeField, where: set[int], care: dict[int, set[int]]) -> dict[str, Any]:
    spec = copy.deepcopy(f.spec)
    declared = spec.get("versions", spec.get("taggedVersions"))
    versions = version_text(f.present, where, declared, open_ended=bool(f.tagged))
    if "versions" in spec or f.tagged != f.present:
        spec["versions"] = versions
    if f.nullable == f.present and f.present:
        # nullable wherever present: the declared text still does if it covers the versions
        # (a null default needs every declared version nullable)
        if not versions_of(spec.get("nullableVersions", "none")) >= versions_of(versions):
            spec["nullableVersions"] = versions
    elif f.nullable:
        spec["nullableVersions"] = version_text(f.nullable, f.present, spec.get("nullableVersions"))
    elif "nullableVersions" in spec and versions_of(spec["nullableVersions"]) & f.present:
        del spec["nullableVersions"]
    if f.tagged:
        lo = min(f.tagged)
        if {v for v in f.present if v >= lo} != f.tagged:
            raise UnionError(f"field {f.name} is tagged at {sorted(f.tagged)}: not N+")
        if versions_of(spec.get("taggedVersions", "none")) & f.present != f.tagged:
            spec["taggedVersions"] = f"{lo}+"
    if spec.get("default") == "null" and f.nullable != f.present:
        raise UnionError(f"field {f.name} defaults to null but is not nullable everywhere")
    if f.struct is not None:
        prefix = "[]" if str(spec["type"]).startswith("[]") else ""
        spec["type"] = prefix + f.struct.name
        if not f.struct.common:
            spec["fields"] = emit_fields(f.struct, care)
    return spec


def emit_common(struct: TreeStruct, care: dict[int, set[int]]) -> dict[str, Any]:
    spec = copy.deepcopy(struct.spec)
    spec["name"] = struct.name
    where = care.get(id(struct), set())
    if where:
        spec["versions"] = version_text(where, where, spec.get("versions"))
    spec["fields"] = emit_fields(struct, care)
    return spec
