# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""snappy: a raw block (librdkafka) or xerial framing (the Java client, kafka-python,
aiokafka), whose version fields are not checked (some writers get them wrong). The raw
primitives come from ``cramjam`` or ``python-snappy``."""

from __future__ import annotations

from ._base import Backend, CodecError, _optional

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

#: The packages that can provide snappy, in the order they are tried.
PACKAGES = ("cramjam", "python-snappy")
#: What to install when none is, as the error message says it.
INSTALL = "cramjam (or python-snappy)"


_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = _XERIAL_MAGIC + b"\x00\x00\x00\x01\x00\x00\x00\x01"  # version 1, compatible 1
_XERIAL_BLOCK = 32 * 1024  # what the Java client's xerial stream puts in each block


def _snappy_length(block: bytes) -> int:
    """The uncompressed length a raw snappy block declares (a varint of up to 32 bits)."""
    value = 0
    for i in range(5):
        if i >= len(block):
            break
        byte = block[i]
        value |= (byte & 0x7F) << (7 * i)
        if byte < 0x80:
            if value > 0xFFFFFFFF:
                break
            return value
    raise CodecError("snappy block has no valid length")


def snappy_compress(raw: Callable[[bytes], bytes], data: bytes) -> bytes:
    parts = [_XERIAL_HEADER]
    view = memoryview(data)
    for start in range(0, len(data), _XERIAL_BLOCK):
        block = raw(bytes(view[start : start + _XERIAL_BLOCK]))
        parts.append(len(block).to_bytes(4, "big"))
        parts.append(block)
    return b"".join(parts)


def snappy_decompress(raw: Callable[[bytes], bytes], data: bytes, limit: int) -> bytes:
    if len(data) < 16 or data[:8] != _XERIAL_MAGIC:
        size = _snappy_length(data)
        if size > limit:
            raise CodecError(f"snappy block declares {size} bytes, over the limit of {limit}")
        return _snappy_block(raw, data, size)
    # xerial framing: 16-byte header (version fields not checked), then (int32 size, block)*
    parts = []
    total = 0
    pos = 16
    end = len(data)
    while pos < end:
        if end - pos < 4:
            raise CodecError(f"xerial snappy stream ends inside a block size at byte {pos}")
        size = int.from_bytes(data[pos : pos + 4], "big")
        pos += 4
        if size > end - pos:
            raise CodecError(f"xerial snappy block of {size} bytes runs past the end")
        block = data[pos : pos + size]
        pos += size
        length = _snappy_length(block)
        total += length
        if total > limit:
            raise CodecError(f"snappy data decompresses to more than the limit of {limit} bytes")
        parts.append(_snappy_block(raw, block, length))
    return b"".join(parts)


def _snappy_block(raw: Callable[[bytes], bytes], block: bytes, length: int) -> bytes:
    try:
        out = raw(block)
    except Exception as exc:  # the packages raise their own types; all mean bad data
        raise CodecError(f"snappy: {exc}") from None
    if len(out) != length:
        raise CodecError(f"snappy block decompressed to {len(out)} bytes, not {length}")
    return out


def _snappy_backend(name: str, compress_raw: Any, decompress_raw: Any) -> Backend:
    def raw_compress(data: bytes) -> bytes:
        return bytes(compress_raw(data))

    def raw_decompress(data: bytes) -> bytes:
        return bytes(decompress_raw(data))

    def compress(data: bytes, level: int | None, magic: int) -> bytes:
        return snappy_compress(raw_compress, data)

    def decompress(data: bytes, limit: int, magic: int) -> bytes:
        return snappy_decompress(raw_decompress, data, limit)

    return Backend(name, compress, decompress)


def load(package: str) -> Backend | None:
    if package == "cramjam":
        cramjam = _optional("cramjam")
        if cramjam is not None:
            return _snappy_backend(
                "cramjam", cramjam.snappy.compress_raw, cramjam.snappy.decompress_raw
            )
    elif package == "python-snappy":
        snappy = _optional("snappy")
        # python-snappy's module is ``snappy``; make sure that is what was found
        if snappy is not None and callable(getattr(snappy, "compress", None)):
            return _snappy_backend("python-snappy", snappy.compress, snappy.decompress)
    return None
