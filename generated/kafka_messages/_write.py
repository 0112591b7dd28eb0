# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""Writing: the helpers generated writers call, and tagged fields written from the plans.

Writers check nothing a failure would not reveal anyway: ``None`` where a value belongs,
a string where an int belongs or an int out of range all raise inside ``struct`` or
``len``, and the encoder then asks ``_diagnose`` which field it was. What could go wrong
silently is checked here: a string longer than the protocol allows, an array that is not
a tuple or a list.
"""

from __future__ import annotations

import struct

from ._plan import FieldPlan, Plan, RawTaggedField
from .errors import EncodeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from uuid import UUID

_INT16 = struct.Struct(">h").pack
_INT32 = struct.Struct(">i").pack
#: Written through a lookup, not ``struct``: struct packs any object by its truthiness.
BOOL_BYTES: dict[object, bytes] = {True: b"\x01", False: b"\x00"}
MAX_STRING_LENGTH = 0x7FFF
_ARRAYS = (tuple, list)


def write_uvarint(out: bytearray, value: int) -> None:
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _utf8(value: str) -> bytes:
    data = value.encode()
    if len(data) > MAX_STRING_LENGTH:
        raise ValueError(f"string of {len(data)} UTF-8 bytes is longer than 32767")
    return data


def write_string(out: bytearray, value: str) -> None:
    data = _utf8(value)
    out += _INT16(len(data))
    out += data


def write_nullable_string(out: bytearray, value: str | None) -> None:
    if value is None:
        out += b"\xff\xff"
    else:
        write_string(out, value)


def write_compact_string(out: bytearray, value: str) -> None:
    data = _utf8(value)
    n = len(data) + 1
    if n < 0x80:
        out.append(n)
    else:
        write_uvarint(out, n)
    out += data


def write_compact_nullable_string(out: bytearray, value: str | None) -> None:
    if value is None:
        out.append(0)
    else:
        write_compact_string(out, value)


def write_bytes(out: bytearray, value: bytes) -> None:
    out += _INT32(len(value))
    out += value


def write_nullable_bytes(out: bytearray, value: bytes | None) -> None:
    if value is None:
        out += b"\xff\xff\xff\xff"
    else:
        write_bytes(out, value)


def write_compact_bytes(out: bytearray, value: bytes) -> None:
    write_uvarint(out, len(value) + 1)
    out += value


def write_compact_nullable_bytes(out: bytearray, value: bytes | None) -> None:
    if value is None:
        out.append(0)
    else:
        write_compact_bytes(out, value)


def write_uuid(out: bytearray, value: UUID) -> None:
    out += value.bytes


def write_count(out: bytearray, items: tuple[Any, ...] | list[Any]) -> None:
    """The int32 count of a classic array (a tuple or a list: a string would pass as a
    sequence of one-letter strings)."""
    if items.__class__ not in _ARRAYS:
        raise TypeError(f"expected a tuple or a list, got {type(items).__name__}")
    out += _INT32(len(items))


def write_compact_count(out: bytearray, items: tuple[Any, ...] | list[Any]) -> None:
    """The uvarint count + 1 of a compact array."""
    if items.__class__ not in _ARRAYS:
        raise TypeError(f"expected a tuple or a list, got {type(items).__name__}")
    n = len(items) + 1
    if n < 0x80:
        out.append(n)
    else:
        write_uvarint(out, n)


class FixedPacker:
    """Packs arrays of one fixed-size type in one ``struct`` call; the formats of counts
    up to 64 are kept (values come from the caller, so any count may be compiled)."""

    __slots__ = ("code", "packers")

    def __init__(self, code: str) -> None:
        self.code = code
        self.packers: dict[int, Any] = {}

    def pack(self, values: tuple[Any, ...] | list[Any]) -> bytes:
        n = len(values)
        pack = self.packers.get(n)
        if pack is None:
            pack = struct.Struct(f">{n}{self.code}").pack
            if n <= 64:
                self.packers[n] = pack
        data: bytes = pack(*values)
        return data


PACK_BOOLS = FixedPacker("?")
PACK_INT8S = FixedPacker("b")
PACK_INT16S = FixedPacker("h")
PACK_INT32S = FixedPacker("i")
PACK_INT64S = FixedPacker("q")
PACK_UINT16S = FixedPacker("H")
PACK_UINT32S = FixedPacker("I")
PACK_FLOAT64S = FixedPacker("d")
_PACKERS = {
    "bool": PACK_BOOLS,
    "int8": PACK_INT8S,
    "int16": PACK_INT16S,
    "int32": PACK_INT32S,
    "int64": PACK_INT64S,
    "uint16": PACK_UINT16S,
    "uint32": PACK_UINT32S,
    "float64": PACK_FLOAT64S,
}


def write_fixed_array(
    out: bytearray, packer: FixedPacker, values: tuple[Any, ...] | list[Any]
) -> None:
    write_count(out, values)
    if packer is PACK_BOOLS:
        _check_bools(values)
    out += packer.pack(values)


def write_compact_fixed_array(
    out: bytearray, packer: FixedPacker, values: tuple[Any, ...] | list[Any]
) -> None:
    write_compact_count(out, values)
    if packer is PACK_BOOLS:
        _check_bools(values)
    out += packer.pack(values)


def _check_bools(values: tuple[Any, ...] | list[Any]) -> None:
    for value in values:
        BOOL_BYTES[value]  # struct would pack any object by its truthiness


def absent_field(obj: object, attr: str) -> EncodeError:
    """A value in a field this version lacks would be lost without a word: refuse."""
    value = getattr(obj, attr)
    return EncodeError(
        f"this version has no such field, so it must hold its default, not {value!r}",
        attr,
        obj,
    )


def null_field(obj: object, attr: str) -> EncodeError:
    return EncodeError("None in a field that is not nullable at this version", attr, obj)


def tags_in_plain_version(obj: object) -> EncodeError:
    return EncodeError(
        "unknown tagged fields are set, but this version is not flexible",
        "unknown_tagged_fields",
        obj,
    )


# --- tagged fields, from the plans ---------------------------------------------------------


def write_tags(out: bytearray, obj: Any, plan: Plan) -> None:
    """The tagged-field section: the known fields that differ from their defaults or were
    on the wire when ``obj`` was decoded, and the unknown ones, in ascending tag order."""
    known: list[tuple[int, bytes | bytearray]] = []
    if plan.tagged:
        defaults = _defaults(plan)
        on_wire: frozenset[int] = obj.tags_on_wire
        for f in plan.tagged:
            value = getattr(obj, f.attr)
            if f.tag in on_wire or _differs(value, getattr(defaults, f.attr), f):
                part = bytearray()
                write_value(part, value, f)
                known.append((f.tag, part))  # type: ignore[arg-type]
    _write_section(out, known, obj.unknown_tagged_fields)


def write_unknown_tags(out: bytearray, unknown: tuple[RawTaggedField, ...]) -> None:
    """The tagged-field section of a struct with no known tagged fields here."""
    _write_section(out, [], unknown)


def _write_section(
    out: bytearray,
    known: list[tuple[int, bytes | bytearray]],
    unknown: tuple[RawTaggedField, ...],
) -> None:
    """The count, then ``(tag, size, bytes)`` in ascending tag order (``known`` is in tag
    order already); a tag given twice is refused."""
    if not known and not unknown:
        out.append(0)
        return
    fields = known
    if unknown:
        fields = sorted([*known, *((raw.tag, raw.data) for raw in unknown)], key=_tag)
        tags = [tag for tag, _ in fields]
        if len(set(tags)) != len(tags):
            raise ValueError(f"unknown_tagged_fields repeats a tag: {tags}")
    write_uvarint(out, len(fields))
    for tag, data in fields:
        write_uvarint(out, tag)
        write_uvarint(out, len(data))
        out += data


def _tag(field: tuple[int, bytes | bytearray]) -> int:
    return field[0]


_DEFAULTS: dict[Plan, Any] = {}


def _defaults(plan: Plan) -> Any:
    """An instance holding every default of the plan's class (built once, never handed
    out, so never changed)."""
    defaults = _DEFAULTS.get(plan)
    if defaults is None:
        defaults = _DEFAULTS[plan] = plan.cls()
    return defaults


def _differs(value: Any, default: Any, f: FieldPlan) -> bool:
    """Whether a tagged field holds something other than its default, so it must be
    written. A struct whose absence is None is written whenever it is there: constructors
    turn one equal to its default into None, and a decoded one was on the wire."""
    if f.kind.type == "struct" and not f.kind.array and default is None:
        return value is not None
    if f.kind.array and value is not None and default is not None:
        return len(value) != 0
    return bool(value != default)


def write_value(out: bytearray, value: Any, f: FieldPlan) -> None:
    """One field's value by its wire kind (tagged fields: the generated writers handle
    the regular ones)."""
    kind = f.kind
    if kind.array:
        if value is None:
            if kind.compact:
                out.append(0)
            else:
                out += b"\xff\xff\xff\xff"
            return
        if kind.compact:
            write_compact_count(out, value)
        else:
            write_count(out, value)
        for item in value:
            _write_item(out, item, f)
        return
    if kind.type == "struct":
        assert f.child is not None
        if kind.nullable:
            if value is None:
                out.append(0)
                return
            out.append(1)
        f.child.write(value, out)
        return
    _write_primitive(out, value, kind.type, kind.compact, kind.nullable)


def _write_item(out: bytearray, item: Any, f: FieldPlan) -> None:
    if f.child is not None:
        f.child.write(item, out)
    else:
        _write_primitive(out, item, f.kind.type, f.kind.compact, False)


def _write_primitive(
    out: bytearray, value: Any, type_name: str, compact: bool, nullable: bool
) -> None:
    if value is None and not nullable:
        raise TypeError("None in a non-nullable field")
    packer = _PACKERS.get(type_name)
    if packer is PACK_BOOLS:
        out += BOOL_BYTES[value]
    elif packer is not None:
        out += packer.pack((value,))
    elif type_name == "uuid":
        out += value.bytes
    elif type_name == "string":
        if value is None:
            out += b"\x00" if compact else b"\xff\xff"
        elif compact:
            write_compact_string(out, value)
        else:
            write_string(out, value)
    elif value is None:
        out += b"\x00" if compact else b"\xff\xff\xff\xff"
    elif compact:
        write_compact_bytes(out, value)
    else:
        write_bytes(out, value)
