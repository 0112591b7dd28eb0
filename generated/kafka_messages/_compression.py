# kafka-specgen runtime, copied verbatim into every generated package — do not edit
"""The record-batch codecs: gzip from the standard library; snappy, lz4 and zstd from
optional packages, found on first use (``cramjam`` covers all three; else ``python-snappy``,
``lz4``, and ``compression.zstd`` or ``zstandard``).

Only the packages' raw primitives are used; the framing Kafka adds is handled here, so every
backend reads the same inputs:

- snappy: a raw block (librdkafka) or xerial framing (the Java client, kafka-python,
  aiokafka), whose version fields are not checked (some writers get them wrong);
- lz4: the LZ4 frame format, one frame or several; for magic 0 the header checksum is not
  checked, because Kafka's old writer computed it over the wrong bytes (and ``compress`` with
  ``broken_checksum`` writes it that way, for old brokers);
- zstd: one frame or several, with or without a content size (librdkafka omits it);
- gzip: one member or several.

``decompress`` never returns more than ``limit`` bytes, and refuses a payload that would
exceed it before decompressing it, from the formats' own sizes: snappy's declared length,
zstd's content size, gzip's output counted as it streams. Where only block sizes are known
(lz4 frames, zstd frames without a content size), a block's output is bounded by the
format's maximum block size, so a frame is decompressed when that bound, less one maximum
block (the last block is usually short), fits; its actual size is checked after. At most
one block (4 MiB for lz4, 128 KiB for zstd) is ever allocated beyond the limit.
``decompress`` raises ``CodecError`` (bad data, or ``MissingCodecError``: no package for
the codec) and nothing else, whatever the input and whichever package does the work;
``compress`` raises ``ModuleNotFoundError`` for a missing codec.
"""

from __future__ import annotations

import zlib
from importlib import import_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    # (data, level, magic) and (data, limit, magic): the magic matters to lz4 only (the
    # header checksum of Kafka's magic-0 writer)
    Compress = Callable[[bytes, int | None, int], bytes]
    Decompress = Callable[[bytes, int, int], bytes]

GZIP = 1
SNAPPY = 2
LZ4 = 3
ZSTD = 4
NAMES = {GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}

# What to install for a missing codec, as the error message says it.
_PACKAGES = {
    SNAPPY: "cramjam (or python-snappy)",
    LZ4: "cramjam (or lz4)",
    ZSTD: "cramjam (or zstandard)",
}


class CodecError(ValueError):
    """Compressed data that does not decompress, or decompresses to too much."""


class MissingCodecError(CodecError):
    """No installed package provides this codec (when decompressing; ``compress`` raises
    ``ModuleNotFoundError``, which mypyc-compiled code cannot subclass)."""

    def __init__(self, codec: int) -> None:
        super().__init__(missing(codec))


def missing(codec: int) -> str:
    """What to say when no installed package provides ``codec``."""
    name = NAMES.get(codec, str(codec))
    return f"{name} compression needs an optional package: pip install {_PACKAGES[codec]}"


# --- gzip ------------------------------------------------------------------------------------


def gzip_compress(data: bytes, level: int | None, magic: int = 2) -> bytes:
    # wbits 31: a gzip member (header and trailer), as Java's GZIPOutputStream writes
    compressor = zlib.compressobj(-1 if level is None else level, zlib.DEFLATED, 31)
    return compressor.compress(data) + compressor.flush()


def gzip_decompress(data: bytes, limit: int, magic: int = 2) -> bytes:
    parts = []
    total = 0
    rest = data
    while True:
        inflater = zlib.decompressobj(31)
        try:
            part = inflater.decompress(rest, limit - total + 1)
        except zlib.error as exc:
            raise CodecError(f"gzip: {exc}") from None
        total += len(part)
        if total > limit:
            raise CodecError(f"gzip data decompresses to more than the limit of {limit} bytes")
        parts.append(part)
        if not inflater.eof:
            raise CodecError("gzip data is truncated")
        rest = inflater.unused_data
        # several members may follow each other; zero padding after the last is tolerated
        # (as Python's gzip module does)
        if not rest.strip(b"\x00"):
            return b"".join(parts)


# --- snappy ----------------------------------------------------------------------------------

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


# --- lz4 -------------------------------------------------------------------------------------

_LZ4_MAGIC = 0x184D2204
_SKIPPABLE_LOW = 0x184D2A50  # skippable frames (lz4 and zstd): magic 0x184D2A5?, size, data
_SKIPPABLE_HIGH = 0x184D2A5F
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


# --- zstd ------------------------------------------------------------------------------------

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


# --- backends --------------------------------------------------------------------------------


class Backend:
    """One package's primitives for one codec, wrapped to the signatures used here."""

    __slots__ = ("name", "compress", "decompress")

    def __init__(self, name: str, compress: Compress, decompress: Decompress) -> None:
        self.name = name
        self.compress = compress
        self.decompress = decompress


def _optional(name: str) -> Any:
    try:
        return import_module(name)
    except ImportError:
        return None


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


def _zstd_backend(name: str, compress_fn: Any, frame: Callable[[bytes, int], bytes]) -> Backend:
    def compress(data: bytes, level: int | None, magic: int) -> bytes:
        # level 3: the Java client's default
        return bytes(compress_fn(data, 3 if level is None else level))

    def decompress(data: bytes, limit: int, magic: int) -> bytes:
        return zstd_decompress(frame, data, limit)

    return Backend(name, compress, decompress)


def _load_snappy(package: str) -> Backend | None:
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


def _load_lz4(package: str) -> Backend | None:
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


def _load_zstd(package: str) -> Backend | None:
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


_LOADERS: dict[int, tuple[Callable[[str], Backend | None], tuple[str, ...]]] = {
    SNAPPY: (_load_snappy, ("cramjam", "python-snappy")),
    LZ4: (_load_lz4, ("cramjam", "lz4")),
    ZSTD: (_load_zstd, ("compression.zstd", "cramjam", "zstandard")),
}

_GZIP = Backend("zlib", gzip_compress, gzip_decompress)

# codec -> the backend in use (None: looked for, none installed); filled on first use
_found: dict[int, Backend | None] = {}
# codec -> the packages to try, when not all of them (tests pick one; () pretends none)
_allowed: dict[int, tuple[str, ...]] = {}


def packages(codec: int) -> tuple[str, ...]:
    """The packages that can provide ``codec``, in the order they are tried."""
    if codec == GZIP:
        return ("zlib",)
    return _LOADERS[codec][1]


def backend(codec: int) -> Backend | None:
    """The backend for ``codec`` (GZIP, SNAPPY, LZ4, ZSTD), or None if no package has it."""
    if codec == GZIP:
        return _GZIP
    if codec not in _found:
        loader, names = _LOADERS[codec]
        found = None
        for name in _allowed.get(codec, names):
            found = loader(name)
            if found is not None:
                break
        _found[codec] = found
    return _found[codec]


def restrict(codec: int, names: tuple[str, ...] | None) -> None:
    """Use only ``names`` (in order) for ``codec``; None: every known package again."""
    if names is None:
        _allowed.pop(codec, None)
    else:
        _allowed[codec] = names
    _found.pop(codec, None)


def compress(codec: int, data: bytes, level: int | None = None, magic: int = 2) -> bytes:
    found = backend(codec)
    if found is None:
        raise ModuleNotFoundError(missing(codec))
    return found.compress(data, level, magic)


def decompress(codec: int, data: bytes, limit: int, magic: int = 2) -> bytes:
    """Decompress ``data``; ``CodecError`` or ``MissingCodecError``, nothing else."""
    found = backend(codec)
    if found is None:
        raise MissingCodecError(codec)
    try:
        return found.decompress(data, limit, magic)
    except CodecError:
        raise
    except Exception as exc:  # a package failing on input it did not expect
        raise CodecError(f"{NAMES[codec]}: {exc!r}") from None
