# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""zstd: one frame or several, with or without a content size (librdkafka omits it). The
primitives come from the standard library's ``compression.zstd`` (Python 3.14+),
``cramjam`` or ``zstandard``."""

from __future__ import annotations

from ._base import _SKIPPABLE_HIGH, _SKIPPABLE_LOW, Backend, CodecError, _optional

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

#: The packages that can provide zstd, in the order they are tried.
PACKAGES = ("compression.zstd", "cramjam", "zstandard")
#: What to install when none is, as the error message says it.
INSTALL = "cramjam (or zstandard)"


_ZSTD_MAGIC = 0xFD2FB528
_ZSTD_BLOCK_MAX = 128 * 1024


def zstd_decompress(
    frame_decompress: Callable[[bytes, int], bytes], data: bytes, limit: int
) -> bytes:
    parts = []
    total = 0
    pos = 0
    end = len(data)
    if end == 0:
        raise CodecError("zstd data is empty")
    while pos < end:
        if end - pos < 4:
            raise CodecError(f"zstd data ends inside a frame header at byte {pos}")
        frame_magic = int.from_bytes(data[pos : pos + 4], "little")
        if _SKIPPABLE_LOW <= frame_magic <= _SKIPPABLE_HIGH:
            if end - pos < 8:
                raise CodecError("zstd data ends inside a skippable frame")
            pos += 8 + int.from_bytes(data[pos + 4 : pos + 8], "little")
            if pos > end:
                raise CodecError("zstd skippable frame runs past the end")
            continue
        if frame_magic != _ZSTD_MAGIC:
            raise CodecError(f"no zstd frame at byte {pos} (magic 0x{frame_magic:08x})")
        start = pos
        content_size, pos, bound, block_max = _zstd_frame(data, pos + 4)
        if total + (bound - block_max if content_size < 0 else content_size) > limit:
            raise CodecError(f"zstd data decompresses to more than the limit of {limit} bytes")
        try:
            out = frame_decompress(data[start:pos], bound if content_size < 0 else content_size)
        except Exception as exc:  # the packages raise their own types; all mean bad data
            raise CodecError(f"zstd: {exc}") from None
        if len(out) > bound or (content_size >= 0 and len(out) != content_size):
            raise CodecError("zstd frame decompressed to a size its header does not allow")
        total += len(out)
        if total > limit:
            raise CodecError(f"zstd data decompresses to more than the limit of {limit} bytes")
        parts.append(out)
    return b"".join(parts)


def _zstd_frame(data: bytes, pos: int) -> tuple[int, int, int, int]:
    """Walk one zstd frame from its header descriptor: (content size or -1, end, output
    bound, block maximum). The bound counts raw and RLE blocks exactly, compressed ones at
    the block maximum."""
    end = len(data)
    if pos >= end:
        raise CodecError("zstd data ends inside a frame header")
    descriptor = data[pos]
    pos += 1
    if descriptor & 0x08:
        raise CodecError("zstd frame header has its reserved bit set")
    single_segment = descriptor & 0x20
    window = 0
    if not single_segment:
        if pos >= end:
            raise CodecError("zstd data ends inside a frame header")
        exponent = 10 + (data[pos] >> 3)
        window = (1 << exponent) + ((1 << exponent) >> 3) * (data[pos] & 7)
        pos += 1
    pos += (0, 1, 2, 4)[descriptor & 3]  # dictionary id
    size_bytes = (1 if single_segment else 0, 2, 4, 8)[descriptor >> 6]
    if pos + size_bytes > end:
        raise CodecError("zstd data ends inside a frame header")
    content_size = -1
    if size_bytes:
        content_size = int.from_bytes(data[pos : pos + size_bytes], "little")
        if size_bytes == 2:
            content_size += 256
        pos += size_bytes
    if single_segment:
        window = content_size
    block_max = min(window, _ZSTD_BLOCK_MAX)
    bound = 0
    while True:
        if end - pos < 3:
            raise CodecError("zstd data ends inside a block header")
        header = int.from_bytes(data[pos : pos + 3], "little")
        pos += 3
        kind = header >> 1 & 3
        size = header >> 3
        if kind == 0:  # raw
            bound += size
            pos += size
        elif kind == 1:  # RLE: one byte repeated ``size`` times
            bound += size
            pos += 1
        elif kind == 2:  # compressed
            if size > block_max:
                raise CodecError(f"zstd block of {size} bytes is over the maximum {block_max}")
            bound += block_max
            pos += size
        else:
            raise CodecError("zstd block type 3 is reserved")
        if pos > end:
            raise CodecError("zstd data ends inside a block")
        if header & 1:
            break
    if descriptor & 0x04:
        pos += 4
        if pos > end:
            raise CodecError("zstd data ends inside the content checksum")
    if content_size > bound:
        raise CodecError(f"zstd frame declares {content_size} bytes, more than its blocks hold")
    return content_size, pos, bound, block_max


def _zstd_backend(name: str, compress_fn: Any, frame: Callable[[bytes, int], bytes]) -> Backend:
    def compress(data: bytes, level: int | None, magic: int) -> bytes:
        # level 3: the Java client's default
        return bytes(compress_fn(data, 3 if level is None else level))

    def decompress(data: bytes, limit: int, magic: int) -> bytes:
        return zstd_decompress(frame, data, limit)

    return Backend(name, compress, decompress)


def load(package: str) -> Backend | None:
    if package == "compression.zstd":  # the standard library, Python 3.14+
        zstd = _optional("compression.zstd")
        if zstd is not None:
            stdlib_decompress = zstd.decompress

            def stdlib_frame(data: bytes, size: int) -> bytes:
                return bytes(stdlib_decompress(data))

            return _zstd_backend("compression.zstd", zstd.compress, stdlib_frame)
    elif package == "cramjam":
        cramjam = _optional("cramjam")
        if cramjam is not None:
            cramjam_decompress = cramjam.zstd.decompress
            cramjam_compress = cramjam.zstd.compress

            def cramjam_frame(data: bytes, size: int) -> bytes:
                return bytes(cramjam_decompress(data))

            def cramjam_zstd_compress(data: bytes, level: int) -> bytes:
                return bytes(cramjam_compress(data, level=level))

            return _zstd_backend("cramjam", cramjam_zstd_compress, cramjam_frame)
    elif package == "zstandard":
        zstandard = _optional("zstandard")
        if zstandard is not None:
            decompressor = zstandard.ZstdDecompressor

            def zstandard_frame(data: bytes, size: int) -> bytes:
                # a decompressobj needs no content size in the frame (librdkafka's has none)
                return bytes(decompressor().decompressobj().decompress(data))

            def zstandard_compress(data: bytes, level: int) -> bytes:
                return bytes(zstandard.ZstdCompressor(level=level).compress(data))

            return _zstd_backend("zstandard", zstandard_compress, zstandard_frame)
    return None
