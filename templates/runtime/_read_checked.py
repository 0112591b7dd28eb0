"""The checked reader: decodes a struct from its plan (``_plan``) with every length checked
before it is used, and raises the one ``DecodeError`` (byte offset and field path) that
says what is wrong. ``_read.decode`` runs it when the fast path (the generated readers)
fails; tagged fields, which are rare, are always read by it (``_read.read_tags``).
"""

from __future__ import annotations

import struct
from uuid import UUID

from ._plan import NO_TAGS, FieldPlan, Kind, Plan, RawTaggedField
from .errors import DecodeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_INT16 = struct.Struct(">h").unpack_from
_INT32 = struct.Struct(">i").unpack_from


def read_checked(buf: bytes, pos: int, plan: Plan, path: str) -> tuple[Any, int]:
    """Decode one struct at ``pos`` with every length checked before it is used; any
    problem is a ``DecodeError`` naming the byte offset and the field path."""
    obj = plan.cls()
    for f in plan.fields:
        value, pos = read_value(buf, pos, f, _join(path, f.attr), False)
        setattr(obj, f.attr, value)
    if plan.flexible:
        pos = read_tag_section(buf, pos, obj, plan, path)
    return obj, pos


def read_tag_section(buf: bytes, pos: int, obj: Any, plan: Plan, path: str) -> int:
    where = _join(path, "tagged fields")
    count, pos = checked_uvarint(buf, pos, where)
    known = {f.tag: f for f in plan.tagged}
    previous = -1
    seen: list[int] = []
    unknown: list[RawTaggedField] = []
    for _ in range(count):
        tag_pos = pos
        tag, pos = checked_uvarint(buf, pos, where)
        if tag <= previous:
            raise DecodeError(
                f"tag {tag} follows tag {previous}: tags must be unique and ascending",
                tag_pos,
                where,
            )
        previous = tag
        size, pos = checked_uvarint(buf, pos, where)
        end = _need(buf, pos, size, where)
        f = known.get(tag)
        if f is not None:
            field_path = _join(path, f.attr)
            value, after = read_value(buf, pos, f, field_path, True)
            if after != end:
                raise DecodeError(
                    f"tagged field {tag} declared {size} bytes but its value used {after - pos}",
                    pos,
                    field_path,
                )
            setattr(obj, f.attr, value)
            seen.append(tag)
        elif tag in plan.invalid_tags:
            raise DecodeError(f"tag {tag} is not valid at this version", tag_pos, where)
        else:
            unknown.append(RawTaggedField(tag, buf[pos:end]))
        pos = end
    obj.unknown_tagged_fields = tuple(unknown)
    if plan.tagged:
        obj.tags_on_wire = frozenset(seen) if seen else NO_TAGS
    return pos


def read_value(buf: bytes, pos: int, f: FieldPlan, path: str, in_tag: bool) -> tuple[Any, int]:
    """One field's value, by its wire kind."""
    kind = f.kind
    if kind.array:
        n, pos = _checked_count(buf, pos, kind, path)
        if n < 0:
            return None, pos
        items: list[Any] = []
        element = _ELEMENTS[kind.compact]
        for index in range(n):
            item_path = f"{path}[{index}]"
            if f.child is not None:
                item, pos = read_checked(buf, pos, f.child, item_path)
            else:
                item, pos = _read_primitive(buf, pos, kind.type, element, item_path)
            items.append(item)
        return tuple(items), pos
    if kind.type == "struct":
        assert f.child is not None
        if kind.nullable:
            if in_tag:
                present, pos = checked_uvarint(buf, pos, path)
            else:
                _need(buf, pos, 1, path)
                present, pos = buf[pos] < 0x80, pos + 1
            if not present:
                return None, pos
        return read_checked(buf, pos, f.child, path)
    return _read_primitive(buf, pos, kind.type, kind, path)


#: How array elements are encoded: compact elements in compact arrays, never nullable.
_ELEMENTS = {False: Kind("[]bytes"), True: Kind("c[]bytes")}


def _read_primitive(buf: bytes, pos: int, type_name: str, kind: Kind, path: str) -> tuple[Any, int]:
    fixed = _FIXED.get(type_name)
    if fixed is not None:
        end = _need(buf, pos, fixed.size, path)
        return fixed.unpack_from(buf, pos)[0], end
    if type_name == "uuid":
        end = _need(buf, pos, 16, path)
        return UUID(bytes=buf[pos:end]), end
    start = pos
    if kind.compact:
        n, pos = checked_uvarint(buf, pos, path)
        n -= 1
    else:
        length = _INT16 if type_name == "string" else _INT32
        width = 2 if type_name == "string" else 4
        _need(buf, pos, width, path)
        (n,) = length(buf, pos)
        pos += width
    if n < 0:
        if n == -1 and kind.nullable:
            return None, pos
        null = "null" if n == -1 else f"negative length {n}"
        raise DecodeError(f"{null} in a non-nullable {type_name}", start, path)
    end = _need(buf, pos, n, path)
    if type_name != "string":
        return buf[pos:end], end
    try:
        return buf[pos:end].decode(), end
    except UnicodeDecodeError as exc:
        raise DecodeError(f"invalid UTF-8: {exc.reason}", pos + exc.start, path) from None


_FIXED: dict[str, struct.Struct] = {
    name: struct.Struct(">" + code)
    for name, code in (
        ("bool", "?"),
        ("int8", "b"),
        ("int16", "h"),
        ("int32", "i"),
        ("int64", "q"),
        ("uint16", "H"),
        ("uint32", "I"),
        ("float64", "d"),
    )
}


def _checked_count(buf: bytes, pos: int, kind: Kind, path: str) -> tuple[int, int]:
    """An array's count, or -1 for a null array: refused if its items cannot fit in the
    bytes that remain (no allocation from a lie)."""
    start = pos
    if kind.compact:
        n, pos = checked_uvarint(buf, pos, path)
        n -= 1
    else:
        _need(buf, pos, 4, path)
        (n,) = _INT32(buf, pos)
        pos += 4
    if n < 0:
        if n == -1 and kind.nullable:
            return -1, pos
        null = "null" if n == -1 else f"negative count {n}"
        raise DecodeError(f"{null} in a non-nullable array", start, path)
    least = _least_size(kind)
    if n * least > len(buf) - pos:
        raise DecodeError(
            f"array of {n} items of at least {least} bytes each does not fit in the "
            f"{len(buf) - pos} bytes left",
            pos,
            path,
        )
    return n, pos


def _least_size(kind: Kind) -> int:
    fixed = _FIXED.get(kind.type)
    if fixed is not None:
        return fixed.size
    if kind.type == "uuid":
        return 16
    return 1  # a struct or a length: an item that takes no bytes still costs a loop turn


def checked_uvarint(buf: bytes, pos: int, path: str) -> tuple[int, int]:
    start = pos
    value = 0
    for shift in (0, 7, 14, 21, 28):
        if pos >= len(buf):
            raise _truncated(pos, 1, 0, path)
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            if value > 0xFFFFFFFF:
                break
            return value, pos
    raise DecodeError("unsigned varint longer than 5 bytes or above 32 bits", start, path)


def _need(buf: bytes, pos: int, size: int, path: str) -> int:
    """The end offset of ``size`` bytes at ``pos``, or a ``DecodeError`` if they are not
    all there."""
    end = pos + size
    if end > len(buf):
        raise _truncated(pos, size, len(buf) - pos, path)
    return end


def _truncated(pos: int, need: int, have: int, path: str) -> DecodeError:
    return DecodeError(f"needs {need} bytes, {max(have, 0)} left", pos, path)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name
