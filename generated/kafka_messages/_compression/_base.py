# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""What the codec modules share: the codec numbers, the error, the shape of a backend, and
how an optional package is looked for."""

from __future__ import annotations

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


class CodecError(ValueError):
    """Compressed data that does not decompress, or decompresses to too much."""


# skippable frames (lz4 and zstd): magic 0x184D2A5?, size, data
_SKIPPABLE_LOW = 0x184D2A50
_SKIPPABLE_HIGH = 0x184D2A5F


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
