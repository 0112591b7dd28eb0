"""The one table of what the generator knows about each primitive wire type.

The model checks types, nullability and defaults against it; the views take struct codes,
sizes and Python types from it; the Spark schemas take their column types from it. The
runtime of a generated package implements the same types in code (``_read``, ``_write``);
``tests/runtime/test_wiretypes.py`` holds the two sides to each other.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class WireType:
    """One primitive type of the spec language (``int32``, ``string``, ...)."""

    name: str
    python: str
    """The Python type of a value, as written in annotations."""
    default: Any
    """The value of a field with no ``default`` in its spec (nullable ``records``: None)."""
    spark: str
    """The Spark SQL column type (Spark has no unsigned or UUID types: widened or text)."""
    json: str
    """How ``to_dict`` writes a value (the runtime's ``_json`` kinds): ``value`` (as is),
    ``bytes`` (base64 text) or ``uuid`` (Kafka's base64 text of the 16 bytes)."""
    struct_code: str | None = None
    """The ``struct`` format letter of a fixed-size type (big-endian); None if variable."""
    size: int = 0
    """Bytes of a fixed-size value; 0 for variable-size types."""
    classic_min: int = 0
    """Fewest bytes of one non-null value in a classic (non-flexible) version."""
    compact_min: int = 0
    """Fewest bytes of one non-null value in a compact (flexible) version."""
    nullable: bool = False
    """Whether a field of this type may be nullable."""
    int_range: tuple[int, int] | None = None
    """The value range of an integer type."""
    items: str | None = None
    """Of a fixed-size type: the runtime's reader of an array of it (``_read.INT32S``)."""
    packer: str | None = None
    """Of a fixed-size type: the runtime's writer of an array of it (``_write.PACK_INT32S``)."""
    native_read: str | None = None
    """Of a fixed-size type, the mypyc flavour's read of one value at ``{at}`` of ``buf``."""
    native_import: str | None = None
    """The ``librt.strings`` function ``native_read`` calls, if any."""

    @property
    def fixed(self) -> bool:
        return self.struct_code is not None

    def min_size(self, compact: bool) -> int:
        return self.compact_min if compact else self.classic_min


def _int(
    name: str,
    code: str,
    size: int,
    lo: int,
    hi: int,
    spark: str,
    arrays: tuple[str, str],
    read: str,
    librt: str | None,
) -> WireType:
    return WireType(
        name,
        "int",
        0,
        spark,
        "value",
        code,
        size,
        size,
        size,
        int_range=(lo, hi),
        items=arrays[0],
        packer=arrays[1],
        native_read=read,
        native_import=librt,
    )


# fmt: off
WIRE_TYPES: dict[str, WireType] = {
    t.name: t
    for t in (
        WireType("bool", "bool", False, "boolean", "value", "?", 1, 1, 1,
                 items="BOOLS", packer="PACK_BOOLS", native_read="buf[{at}] != 0"),
        _int("int8", "b", 1, -(2**7), 2**7 - 1, "byte", ("INT8S", "PACK_INT8S"),
             "(buf[{at}] ^ 0x80) - 0x80", None),
        _int("int16", "h", 2, -(2**15), 2**15 - 1, "short", ("INT16S", "PACK_INT16S"),
             "read_i16_be(buf, {at})", "read_i16_be"),
        _int("int32", "i", 4, -(2**31), 2**31 - 1, "integer", ("INT32S", "PACK_INT32S"),
             "read_i32_be(buf, {at})", "read_i32_be"),
        _int("int64", "q", 8, -(2**63), 2**63 - 1, "long", ("INT64S", "PACK_INT64S"),
             "read_i64_be(buf, {at})", "read_i64_be"),
        # librt reads signed: the unsigned value is the low bits
        _int("uint16", "H", 2, 0, 2**16 - 1, "integer", ("UINT16S", "PACK_UINT16S"),
             "int(read_i16_be(buf, {at})) & 0xFFFF", "read_i16_be"),
        _int("uint32", "I", 4, 0, 2**32 - 1, "long", ("UINT32S", "PACK_UINT32S"),
             "int(read_i32_be(buf, {at})) & 0xFFFFFFFF", "read_i32_be"),
        WireType("float64", "float", 0.0, "double", "value", "d", 8, 8, 8,
                 items="FLOAT64S", packer="PACK_FLOAT64S", native_read="read_f64_be(buf, {at})",
                 native_import="read_f64_be"),
        # A length (int16 / uvarint) and UTF-8 bytes.
        WireType("string", "str", "", "string", "value", None, 0, 2, 1, nullable=True),
        # A length (int32 / uvarint) and raw bytes; ``records`` holds record batches.
        WireType("bytes", "bytes", b"", "binary", "bytes", None, 0, 4, 1, nullable=True),
        WireType("records", "bytes", b"", "binary", "bytes", None, 0, 4, 1, nullable=True),
        WireType("uuid", "UUID", uuid.UUID(int=0), "string", "uuid", None, 16, 16, 16),
    )
}
# fmt: on
"""Primitive type name -> its facts. Anything else in a spec is an array or a struct."""

INT_RANGES: dict[str, tuple[int, int]] = {
    name: t.int_range for name, t in WIRE_TYPES.items() if t.int_range is not None
}
#: An array's count: int32 (classic) or uvarint (compact); also its fewest bytes.
ARRAY_MIN_SIZE = {False: 4, True: 1}
