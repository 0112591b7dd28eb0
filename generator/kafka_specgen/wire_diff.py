"""What differs on the wire between two plans of one struct at one version.

A plan (``plan.py``) says what the encoder and decoder of a struct do at a version: flexible
or not, the regular fields in order (wire type, compact, nullable, nested plan) and the
tagged fields by tag. Bytes laid out by one plan read right with another when the regular
fields agree and every tagged field of the first is a tagged field of the second (Kafka adds
tagged fields to a version in place). Names and docs do not count; ``records`` is ``bytes``
on the wire. ``union`` and ``union_check`` hold Kafka releases' versions to each other with it.
"""

from __future__ import annotations

from .plan import FieldPlan, StructPlan


def _kind(p: FieldPlan) -> str:
    ftype = p.field.type
    if ftype.is_struct:
        return "struct"
    if ftype.is_struct_array:
        return "[]struct"
    return ftype.text.replace("records", "bytes")


def _describe(p: FieldPlan) -> str:
    facts = [_kind(p)]
    facts += ["compact"] if p.compact else []
    facts += ["nullable"] if p.nullable else []
    return " ".join(facts)


def difference(release: StructPlan, union: StructPlan, path: str) -> str | None:
    """None when bytes of ``release``'s layout read right with ``union``'s; else where and
    how they first differ."""
    if release.flexible != union.flexible:
        return f"{path}: flexible {release.flexible} in the release, {union.flexible} in the union"
    if len(release.regular) != len(union.regular):
        names = [p.field.name for p in release.regular]
        union_names = [p.field.name for p in union.regular]
        return f"{path}: fields {names} in the release, {union_names} in the union"
    for mine, theirs in zip(release.regular, union.regular):
        problem = _field_difference(mine, theirs, f"{path}.{mine.field.name}")
        if problem:
            return problem
    tagged = {p.field.tag: p for p in union.tagged}
    for mine in release.tagged:
        where = f"{path}.{mine.field.name} (tag {mine.field.tag})"
        match = tagged.get(mine.field.tag)
        if match is None:
            return f"{where}: not a tagged field of the union"
        problem = _field_difference(mine, match, where)
        if problem:
            return problem
    return None


def _field_difference(release: FieldPlan, union: FieldPlan, path: str) -> str | None:
    if _describe(release) != _describe(union):
        return f"{path}: {_describe(release)} in the release, {_describe(union)} in the union"
    if release.child is not None and union.child is not None:
        return difference(release.child, union.child, path)
    return None


def same_layout(a: StructPlan, b: StructPlan) -> bool:
    """Whether ``a`` and ``b`` put exactly the same on the wire."""
    return difference(a, b, "") is None and difference(b, a, "") is None
