# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""Reading: the helpers generated readers call, and the checked reader behind them.

Generated readers are the fast path: they check only what could otherwise go wrong
silently (a null in a non-nullable field, a negative length, a count whose items could
take no bytes) and let everything else fail as it may: a read past the end raises
``IndexError`` or ``struct.error``, and a slice past the end leaves the offset beyond the
buffer, which the final end test catches. Whenever the fast path fails, ``read_checked``
decodes the same bytes again from the plans, checking every length before it is used, and
raises the one ``DecodeError`` (offset and field path) that says what is wrong.
"""

from __future__ import annotations

import struct
from sys import byteorder
from uuid import UUID, SafeUUID

from ._plan import NO_TAGS, FieldPlan, Kind, Plan, RawTaggedField
from .errors import DecodeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

    from ._plan import Buffer

_INT16 = struct.Struct(">h").unpack_from
_INT32 = struct.Struct(">i").unpack_from
# Final: the compiled build reads it as a constant, not through the module's dict.
ZERO_UUID: Final[UUID] = UUID(int=0)
_ZERO_16 = bytes(16)
_SWAP = byteorder == "little"


class _Failed(Exception):
    """The fast path met something it does not decode; the checked reader says what."""


# --- the fast path ---------------------------------------------------------------------


def read_uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    """An unsigned varint of at most 5 bytes (32 bits), as Kafka writes them."""
    value = 0
    for shift in (0, 7, 14, 21, 28):
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            if value > 0xFFFFFFFF:
                break
            return value, pos
    raise _Failed()


def read_string(buf: bytes, pos: int) -> tuple[str, int]:
    (n,) = _INT16(buf, pos)
    if n < 0:
        raise _Failed()
    end = pos + 2 + n
    return buf[pos + 2 : end].decode(), end


def read_nullable_string(buf: bytes, pos: int) -> tuple[str | None, int]:
    (n,) = _INT16(buf, pos)
    if n < 0:
        if n == -1:
            return None, pos + 2
        raise _Failed()
    end = pos + 2 + n
    return buf[pos + 2 : end].decode(), end


def _compact_length(buf: bytes, pos: int) -> tuple[int, int]:
    """A compact length (uvarint length + 1, 0 for null) and the offset after it: one
    and two bytes (up to 16 KiB) read inline, longer ones by ``read_uvarint``."""
    n = buf[pos]
    if n < 0x80:
        return n, pos + 1
    m = buf[pos + 1]
    if m < 0x80:
        return (n & 0x7F) | (m << 7), pos + 2
    return read_uvarint(buf, pos)


def read_compact_string(buf: bytes, pos: int) -> tuple[str, int]:
    n = buf[pos]
    if n == 0 or n > 0x7F:  # null, or a length of two bytes or more
        n, pos = _compact_length(buf, pos)
        if n == 0:
            raise _Failed()
        end = pos + n - 1
        return buf[pos:end].decode(), end
    end = pos + n
    return buf[pos + 1 : end].decode(), end


def read_compact_nullable_string(buf: bytes, pos: int) -> tuple[str | None, int]:
    n = buf[pos]
    if n == 0:
        return None, pos + 1
    if n > 0x7F:
        n, pos = _compact_length(buf, pos)
        if n == 0:
            return None, pos
        end = pos + n - 1
        return buf[pos:end].decode(), end
    end = pos + n
    return buf[pos + 1 : end].decode(), end


def read_bytes(buf: bytes, pos: int) -> tuple[bytes, int]:
    (n,) = _INT32(buf, pos)
    if n < 0:
        raise _Failed()
    end = pos + 4 + n
    return buf[pos + 4 : end], end


def read_nullable_bytes(buf: bytes, pos: int) -> tuple[bytes | None, int]:
    (n,) = _INT32(buf, pos)
    if n < 0:
        if n == -1:
            return None, pos + 4
        raise _Failed()
    end = pos + 4 + n
    return buf[pos + 4 : end], end


def read_compact_bytes(buf: bytes, pos: int) -> tuple[bytes, int]:
    n, pos = _compact_length(buf, pos)
    if n == 0:
        raise _Failed()
    end = pos + n - 1
    return buf[pos:end], end


def read_compact_nullable_bytes(buf: bytes, pos: int) -> tuple[bytes | None, int]:
    n = buf[pos]
    if n < 0x80:
        if n == 0:
            return None, pos + 1
        pos += 1
    else:
        n, pos = _compact_length(buf, pos)
        if n == 0:
            return None, pos
    end = pos + n - 1
    return buf[pos:end], end


def read_uuid(buf: bytes, pos: int) -> tuple[UUID, int]:
    end = pos + 16
    data = buf[pos:end]
    if data == _ZERO_16:
        return ZERO_UUID, end  # immutable, so one instance serves every zero UUID
    if len(data) != 16:
        raise _Failed()
    # UUID.__init__ checks arguments these bytes cannot get wrong; this is 3x faster.
    value = object.__new__(UUID)
    object.__setattr__(value, "int", int.from_bytes(data, "big"))
    object.__setattr__(value, "is_safe", SafeUUID.unknown)
    return value, end


def read_count(buf: bytes, pos: int) -> tuple[int, int]:
    """The int32 count of a classic array that may not be null."""
    (n,) = _INT32(buf, pos)
    if n < 0:
        raise _Failed()
    return n, pos + 4


def read_nullable_count(buf: bytes, pos: int) -> tuple[int, int]:
    """The int32 count of a classic nullable array: -1 for null."""
    (n,) = _INT32(buf, pos)
    if n < -1:
        raise _Failed()
    return n, pos + 4


def read_compact_count(buf: bytes, pos: int) -> tuple[int, int]:
    """The uvarint count + 1 of a compact array that may not be null."""
    n = buf[pos]
    if n == 0 or n > 0x7F:
        n, pos = read_uvarint(buf, pos)
        if n == 0:
            raise _Failed()
        return n - 1, pos
    return n - 1, pos + 1


def read_compact_nullable_count(buf: bytes, pos: int) -> tuple[int, int]:
    """The uvarint count + 1 of a compact nullable array: -1 for null."""
    n = buf[pos]
    if n > 0x7F:
        n, pos = read_uvarint(buf, pos)
        return n - 1, pos
    return n - 1, pos + 1


class FixedItems:
    """Arrays of one fixed-size type. Counts up to 64 (nearly all) are read with one of
    the ``struct`` unpackers made here; longer arrays, after their bytes are known to be
    there, through ``array``: no ``struct`` format is ever made from a count on the wire."""

    __slots__ = ("code", "size", "unpackers")

    def __init__(self, code: str, size: int) -> None:
        self.code = code
        self.size = size
        self.unpackers = [struct.Struct(f">{n}{code}").unpack_from for n in range(65)]

    def read(self, buf: bytes, pos: int, n: int) -> tuple[tuple[Any, ...], int]:
        """``n`` items at ``pos``: a tuple (the empty one shared) and the end offset."""
        if n <= 64:
            return self.unpackers[n](buf, pos), pos + n * self.size
        end = pos + n * self.size
        if end > len(buf):
            raise _Failed()
        if self.code == "?":
            return tuple([byte != 0 for byte in buf[pos:end]]), end
        from array import array  # here, not at the top: long arrays are rare, imports cost

        items = array(self.code, buf[pos:end])
        if _SWAP:
            items.byteswap()
        return tuple(items), end


BOOLS = FixedItems("?", 1)
INT8S = FixedItems("b", 1)
INT16S = FixedItems("h", 2)
INT32S = FixedItems("i", 4)
INT64S = FixedItems("q", 8)
UINT16S = FixedItems("H", 2)
UINT32S = FixedItems("I", 4)
FLOAT64S = FixedItems("d", 8)


def read_fixed_array(buf: bytes, pos: int, items: FixedItems) -> tuple[tuple[Any, ...], int]:
    n, pos = read_count(buf, pos)
    return items.read(buf, pos, n)


def read_nullable_fixed_array(
    buf: bytes, pos: int, items: FixedItems
) -> tuple[tuple[Any, ...] | None, int]:
    n, pos = read_nullable_count(buf, pos)
    if n < 0:
        return None, pos
    return items.read(buf, pos, n)


def read_compact_fixed_array(
    buf: bytes, pos: int, items: FixedItems
) -> tuple[tuple[Any, ...], int]:
    n = buf[pos] - 1
    if 0 <= n <= 64:  # the usual one-byte count, read inline: this runs per int array
        return items.unpackers[n](buf, pos + 1), pos + 1 + n * items.size
    n, pos = read_compact_count(buf, pos)
    return items.read(buf, pos, n)


def read_compact_nullable_fixed_array(
    buf: bytes, pos: int, items: FixedItems
) -> tuple[tuple[Any, ...] | None, int]:
    n, pos = read_compact_nullable_count(buf, pos)
    if n < 0:
        return None, pos
    return items.read(buf, pos, n)


def read_tags(buf: bytes, pos: int, obj: Any, plan: Plan) -> int:
    """A tagged-field section that is not empty (the fast path tests the usual empty one
    itself): known fields onto ``obj``, unknown ones kept raw. Read with the checked
    readers: tagged fields are rare, and their errors need no second pass."""
    return read_tag_section(buf, pos, obj, plan, "")


def fail() -> _Failed:
    """For generated checks: the exception that hands over to the checked reader."""
    # A new one each time: a shared instance would keep its last traceback, and with it
    # the frames and the buffer they read, alive.
    return _Failed()


# --- the checked reader ------------------------------------------------------------------


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


# --- whole buffers -----------------------------------------------------------------------


def decode(data: Buffer, offset: int, plan: Plan, name: str, whole: bool) -> tuple[Any, int]:
    """Decode ``plan``'s struct at ``offset``: the fast path first, the checked reader when
    it fails. ``whole``: the value must end exactly at the end of ``data``."""
    # A bytearray or memoryview is copied once, here: slices of bytes are values already.
    buf = data if isinstance(data, bytes) else bytes(data)
    try:
        obj, end = plan.read(buf, offset)
        if end == len(buf) or (not whole and end < len(buf)):
            return obj, end
    except Exception:  # noqa: BLE001 - whatever went wrong, the checked reader says it
        pass
    obj, end = read_checked(buf, offset, plan, name)
    if whole and end != len(buf):
        raise DecodeError(f"{len(buf) - end} trailing bytes after the body", end, name)
    return obj, end
