# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""The record-batch codecs, one module each: ``gzip`` from the standard library; ``snappy``,
``lz4`` and ``zstd`` from optional packages, found on first use (``cramjam`` covers all three;
else ``python-snappy``, ``lz4``, and ``compression.zstd`` or ``zstandard``). Here: which
package serves each codec, and the dispatch to it.

Only the packages' raw primitives are used; the framing Kafka adds is handled in the codec
modules (each says which framings it reads), so every backend reads the same inputs.

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

from . import lz4, snappy, zstd
from ._base import GZIP, LZ4, NAMES, SNAPPY, ZSTD, Backend, CodecError
from .gzip import gzip_compress, gzip_decompress
from .lz4 import lz4_compress, lz4_decompress, xxh32
from .snappy import snappy_compress, snappy_decompress
from .zstd import zstd_decompress

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "GZIP",
    "LZ4",
    "NAMES",
    "SNAPPY",
    "ZSTD",
    "Backend",
    "CodecError",
    "MissingCodecError",
    "backend",
    "compress",
    "decompress",
    "gzip_compress",
    "gzip_decompress",
    "lz4_compress",
    "lz4_decompress",
    "missing",
    "packages",
    "restrict",
    "snappy_compress",
    "snappy_decompress",
    "xxh32",
    "zstd_decompress",
]

# What to install for a missing codec, as the error message says it.
_PACKAGES = {SNAPPY: snappy.INSTALL, LZ4: lz4.INSTALL, ZSTD: zstd.INSTALL}


class MissingCodecError(CodecError):
    """No installed package provides this codec (when decompressing; ``compress`` raises
    ``ModuleNotFoundError``, which mypyc-compiled code cannot subclass)."""

    def __init__(self, codec: int) -> None:
        super().__init__(missing(codec))


def missing(codec: int) -> str:
    """What to say when no installed package provides ``codec``."""
    name = NAMES.get(codec, str(codec))
    return f"{name} compression needs an optional package: pip install {_PACKAGES[codec]}"


# codec -> (its module's loader of one package, the packages in the order they are tried)
_LOADERS: dict[int, tuple[Callable[[str], Backend | None], tuple[str, ...]]] = {
    SNAPPY: (snappy.load, snappy.PACKAGES),
    LZ4: (lz4.load, lz4.PACKAGES),
    ZSTD: (zstd.load, zstd.PACKAGES),
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
