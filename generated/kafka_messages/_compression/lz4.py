# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""lz4: the LZ4 frame format, one frame or several; for magic 0 the header checksum is
not checked, because Kafka's old writer computed it over the wrong bytes (and ``compress``
with ``broken_checksum`` writes it that way, for old brokers). The block and frame
primitives come from ``cramjam`` or ``lz4``."""

from __future__ import annotations

from ._base import _SKIPPABLE_HIGH, _SKIPPABLE_LOW, Backend, CodecError, _optional

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

#: The packages that can provide lz4, in the order they are tried.
PACKAGES = ("cramjam", "lz4")
#: What to install when none is, as the error message says it.
INSTALL = "cramjam (or lz4)"


_LZ4_MAGIC = 0x184D2204
# Kafka's writer: version 01, independent blocks, no checksums, no content size (FLG 0x60);
# 64 KiB blocks (BD 0x40)
_LZ4_FLG = 0x60
_LZ4_BD = 0x40
_LZ4_BLOCK = 64 * 1024
_LZ4_BLOCK_SIZES = {4: 64 * 1024, 5: 256 * 1024, 6: 1024 * 1024, 7: 4 * 1024 * 1024}

_P1 = 2654435761
_P2 = 2246822519
_P3 = 3266489917
_P4 = 668265263
_P5 = 374761393
_M32 = 0xFFFFFFFF


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & _M32


def xxh32(data: bytes, seed: int = 0) -> int:
    """XXH32 (lz4's frame header checksum is its second byte); inputs here are a few bytes."""
    size = len(data)
    pos = 0
    if size >= 16:
        v1 = (seed + _P1 + _P2) & _M32
        v2 = (seed + _P2) & _M32
        v3 = seed & _M32
        v4 = (seed - _P1) & _M32
        while pos <= size - 16:
            v1 = _rotl((v1 + int.from_bytes(data[pos : pos + 4], "little") * _P2) & _M32, 13)
            v1 = v1 * _P1 & _M32
            v2 = _rotl((v2 + int.from_bytes(data[pos + 4 : pos + 8], "little") * _P2) & _M32, 13)
            v2 = v2 * _P1 & _M32
            v3 = _rotl((v3 + int.from_bytes(data[pos + 8 : pos + 12], "little") * _P2) & _M32, 13)
            v3 = v3 * _P1 & _M32
            v4 = _rotl((v4 + int.from_bytes(data[pos + 12 : pos + 16], "little") * _P2) & _M32, 13)
            v4 = v4 * _P1 & _M32
            pos += 16
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _M32
    else:
        h = (seed + _P5) & _M32
    h = (h + size) & _M32
    while pos + 4 <= size:
        h = _rotl((h + int.from_bytes(data[pos : pos + 4], "little") * _P3) & _M32, 17) * _P4
        h &= _M32
        pos += 4
    while pos < size:
        h = _rotl((h + data[pos] * _P5) & _M32, 11) * _P1 & _M32
        pos += 1
    h ^= h >> 15
    h = h * _P2 & _M32
    h ^= h >> 13
    h = h * _P3 & _M32
    return h ^ (h >> 16)


def lz4_compress(
    block: Callable[[bytes, int | None], bytes],
    data: bytes,
    level: int | None,
    broken_checksum: bool = False,
) -> bytes:
    """One LZ4 frame laid out as Kafka's Java writer lays it out (``broken_checksum``: the
    header checksum of Kafka's magic-0 writer, computed over the magic number too)."""
    magic = _LZ4_MAGIC.to_bytes(4, "little")
    descriptor = bytes((_LZ4_FLG, _LZ4_BD))
    checked = magic + descriptor if broken_checksum else descriptor
    parts = [magic, descriptor, bytes((xxh32(checked) >> 8 & 0xFF,))]
    view = memoryview(data)
    for start in range(0, len(data), _LZ4_BLOCK):
        chunk = bytes(view[start : start + _LZ4_BLOCK])
        packed = block(chunk, level)
        if len(packed) >= len(chunk):
            # incompressible: stored as is, flagged by the size's high bit
            parts.append((len(chunk) | 0x80000000).to_bytes(4, "little"))
            parts.append(chunk)
        else:
            parts.append(len(packed).to_bytes(4, "little"))
            parts.append(packed)
    parts.append(b"\x00\x00\x00\x00")  # end mark
    return b"".join(parts)


def lz4_decompress(
    frame_decompress: Callable[[bytes], bytes], data: bytes, limit: int, magic: int
) -> bytes:
    parts = []
    total = 0
    pos = 0
    end = len(data)
    if end == 0:
        raise CodecError("lz4 data is empty")
    while pos < end:
        if end - pos < 7:
            raise CodecError(f"lz4 data ends inside a frame header at byte {pos}")
        frame_magic = int.from_bytes(data[pos : pos + 4], "little")
        if _SKIPPABLE_LOW <= frame_magic <= _SKIPPABLE_HIGH:
            pos += 8 + int.from_bytes(data[pos + 4 : pos + 8], "little")
            if pos > end:
                raise CodecError("lz4 skippable frame runs past the end")
            continue
        if frame_magic != _LZ4_MAGIC:
            raise CodecError(f"no lz4 frame at byte {pos} (magic 0x{frame_magic:08x})")
        flg = data[pos + 4]
        bd = data[pos + 5]
        if flg >> 6 != 1 or flg & 0x02 or bd & 0x8F:
            raise CodecError(f"lz4 frame descriptor 0x{flg:02x} 0x{bd:02x} is not version 1")
        block_max = _LZ4_BLOCK_SIZES.get(bd >> 4 & 7)
        if block_max is None:
            raise CodecError(f"lz4 frame block size code {bd >> 4 & 7} is invalid")
        header_end = pos + 6 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)
        if header_end >= end:
            raise CodecError("lz4 data ends inside a frame header")
        content_size = -1
        if flg & 0x08:
            content_size = int.from_bytes(data[pos + 6 : pos + 14], "little")
        checksum = xxh32(data[pos + 4 : header_end]) >> 8 & 0xFF
        frame_head = data[pos:header_end] + bytes((checksum,))
        if data[header_end] != checksum and magic != 0:
            raise CodecError("lz4 frame header checksum does not match")
        # magic 0: Kafka's old writers computed the checksum over the wrong bytes; the
        # frame goes to the decompressor with the right one (as the Java reader ignores it)
        pos = header_end + 1
        bound = 0
        block_checksum = 4 if flg & 0x10 else 0
        while True:
            if end - pos < 4:
                raise CodecError("lz4 data ends inside a frame")
            word = int.from_bytes(data[pos : pos + 4], "little")
            pos += 4
            if word == 0:
                break
            size = word & 0x7FFFFFFF
            if size > block_max:
                raise CodecError(f"lz4 block of {size} bytes is over the frame's {block_max}")
            bound += size if word >> 31 else block_max
            pos += size + block_checksum
            if pos > end:
                raise CodecError("lz4 data ends inside a block")
        if flg & 0x04:
            pos += 4
            if pos > end:
                raise CodecError("lz4 data ends inside the content checksum")
        if content_size > bound:
            raise CodecError(f"lz4 frame declares {content_size} bytes, more than its blocks hold")
        if total + (bound - block_max if content_size < 0 else content_size) > limit:
            raise CodecError(f"lz4 data decompresses to more than the limit of {limit} bytes")
        try:
            out = frame_decompress(frame_head + data[header_end + 1 : pos])
        except Exception as exc:  # the packages raise their own types; all mean bad data
            raise CodecError(f"lz4: {exc}") from None
        if len(out) > bound or (content_size >= 0 and len(out) != content_size):
            raise CodecError("lz4 frame decompressed to a size its header does not allow")
        total += len(out)
        if total > limit:
            raise CodecError(f"lz4 data decompresses to more than the limit of {limit} bytes")
        parts.append(out)
    return b"".join(parts)


def _lz4_backend(name: str, block: Callable[[bytes, int | None], bytes], frame: Any) -> Backend:
    def frame_decompress(data: bytes) -> bytes:
        return bytes(frame(data))

    def compress(data: bytes, level: int | None, magic: int) -> bytes:
        return lz4_compress(block, data, level, broken_checksum=magic == 0)

    def decompress(data: bytes, limit: int, magic: int) -> bytes:
        return lz4_decompress(frame_decompress, data, limit, magic)

    return Backend(name, compress, decompress)


def _cramjam_lz4_block(cramjam: Any) -> Callable[[bytes, int | None], bytes]:
    compress_block = cramjam.lz4.compress_block

    def block(data: bytes, level: int | None) -> bytes:
        if level is None:
            return bytes(compress_block(data, store_size=False))
        return bytes(
            compress_block(data, store_size=False, mode="high_compression", compression=level)
        )

    return block


def _lz4_block(lz4_block: Any) -> Callable[[bytes, int | None], bytes]:
    compress = lz4_block.compress

    def block(data: bytes, level: int | None) -> bytes:
        if level is None:
            return bytes(compress(data, store_size=False))
        return bytes(compress(data, store_size=False, mode="high_compression", compression=level))

    return block


def load(package: str) -> Backend | None:
    if package == "cramjam":
        cramjam = _optional("cramjam")
        if cramjam is not None:
            return _lz4_backend("cramjam", _cramjam_lz4_block(cramjam), cramjam.lz4.decompress)
    elif package == "lz4":
        block = _optional("lz4.block")
        frame = _optional("lz4.frame")
        if block is not None and frame is not None:
            return _lz4_backend("lz4", _lz4_block(block), frame.decompress)
    return None
