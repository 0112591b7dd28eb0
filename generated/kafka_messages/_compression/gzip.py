# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""gzip, from the standard library (``zlib``): one member or several."""

from __future__ import annotations

import zlib

from ._base import CodecError


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
