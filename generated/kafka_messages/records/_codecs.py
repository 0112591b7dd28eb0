# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""The codecs as record batches use them: your own (``register_codec``) before the
built-in ones (``_compression``), and every decompression failure as a
``CorruptRecordError``."""

from __future__ import annotations

from .. import _compression
from ._format import Compression, CorruptRecordError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


# codec -> (compress(data, level), decompress(data, limit)) registered by the user
_registered: dict[
    int, tuple[Callable[[bytes, int | None], bytes] | None, Callable[[bytes, int], bytes] | None]
] = {}


def register_codec(
    compression: Compression | int,
    compress: Callable[[bytes, int | None], bytes] | None = None,
    decompress: Callable[[bytes, int], bytes] | None = None,
) -> None:
    """Use your own functions for a codec, in place of the built-in ones.

    ``compress(data, level)`` returns the compressed records (``level`` is None unless the
    caller of ``build_batch`` gave one); ``decompress(data, max_size)`` returns at most
    ``max_size`` bytes (longer results are refused). Either may be None to keep the
    built-in direction; passing both as None unregisters the codec. Whatever exception
    ``decompress`` raises becomes a ``CorruptRecordError``.
    """
    codec = Compression(compression)
    if codec is Compression.NONE:
        raise ValueError("Compression.NONE has no codec to register")
    if compress is None and decompress is None:
        _registered.pop(codec, None)
    else:
        _registered[codec] = (compress, decompress)


def codec_packages() -> dict[Compression, str | None]:
    """Which package serves each codec here (``"registered"`` for your own; None: none
    installed). Looks for the optional packages if that was not done yet."""
    found: dict[Compression, str | None] = {}
    for codec in (Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD):
        if codec in _registered:
            found[codec] = "registered"
        else:
            backend = _compression.backend(codec)
            found[codec] = None if backend is None else backend.name
    return found


def _compress(codec: int, data: bytes, level: int | None, magic: int) -> bytes:
    own = _registered.get(codec)
    if own is not None and own[0] is not None:
        return bytes(own[0](data, level))
    return _compression.compress(codec, data, level, magic)


def _decompress(codec: int, data: bytes, limit: int, magic: int, offset: int, path: str) -> bytes:
    """Decompressed ``data`` (at ``offset``), or a CorruptRecordError: nothing else."""
    own = _registered.get(codec)
    try:
        if own is not None and own[1] is not None:
            try:
                out = bytes(own[1](data, limit))
            except Exception as exc:  # the user's code: whatever it raises means bad data
                raise _compression.CodecError(f"{Compression(codec).name.lower()}: {exc!r}")
            if len(out) > limit:
                raise _compression.CodecError(
                    f"decompressed to {len(out)} bytes, over the limit of {limit}"
                )
            return out
        return _compression.decompress(codec, data, limit, magic)
    except _compression.CodecError as exc:  # MissingCodecError too
        raise CorruptRecordError(str(exc), offset, path) from None
