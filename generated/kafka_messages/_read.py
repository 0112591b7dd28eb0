# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""Reading: the helpers generated readers call, and ``decode``, which falls back on the
checked reader (``_read_checked``) behind them.

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

from ._plan import Plan
from ._read_checked import read_checked, read_tag_section
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
