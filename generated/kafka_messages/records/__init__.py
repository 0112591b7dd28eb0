# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""Record batches: the bytes of a Produce request's or a Fetch response's ``records`` field.

Reading::

    for batch in records.iter_batches(partition.records):
        batch.validate()                      # CRC and size; raises CorruptRecordError
        for record in batch.records():        # decompresses if needed
            record.offset, record.timestamp, record.key, record.value, record.headers

``iter_batches`` yields a ``RecordBatch`` per magic-2 batch and a ``LegacyBatch`` per
top-level magic 0/1 message (a compressed wrapper expands in ``records()``). A batch cut
short at the end of the data (which a Fetch response may legally end with) ends the
iteration quietly; the iterator's ``incomplete_size`` then says how big it was going to be.

Writing::

    data = records.build_batch([records.Record(0, now_ms, b"key", b"value")],
                               compression=records.Compression.LZ4)

lays a magic-2 batch out as Kafka's own writer does; ``build_legacy`` writes magic 0/1
message sets. Control batches' records (transaction markers) decode with
``decode_control``.

Every malformed input raises ``CorruptRecordError`` (a ``DecodeError``, with the byte offset
in the data given to ``iter_batches``); nothing else escapes, whatever the bytes.
Decompression is capped (``max_decompressed_size``, 128 MiB by default) against
decompression bombs. gzip comes from the standard library; snappy, lz4 and zstd from an
optional package (``cramjam`` covers them all), found on first use; a batch that needs a
missing one raises a ``CorruptRecordError`` naming the package to install.
``register_codec`` plugs in your own. CRC-32C uses the ``crc32c`` or ``google-crc32c``
package when importable, else a pure-Python implementation.

Everything public is imported from here; the modules behind it: ``_format`` (what all parts
share: ``Record``, the enums, the wire layout, varints and headers), ``_batch`` (magic 2),
``_legacy`` (magic 0/1), ``_reader`` (``iter_batches``), ``_control`` (control records),
``_codecs`` (``register_codec``, over the package's ``_compression``) and ``_builder``.
"""

from __future__ import annotations

from ._batch import RecordBatch
from ._builder import build_batch, build_legacy
from ._codecs import codec_packages, register_codec
from ._control import ControlRecord, ControlType, decode_control, encode_control
from ._format import (
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    Compression,
    CorruptRecordError,
    Record,
    TimestampType,
    crc32c,
)
from ._legacy import LegacyBatch
from ._reader import BatchIterator, iter_batches

__all__ = [
    "DEFAULT_MAX_DECOMPRESSED_SIZE",
    "BatchIterator",
    "Compression",
    "ControlRecord",
    "ControlType",
    "CorruptRecordError",
    "LegacyBatch",
    "Record",
    "RecordBatch",
    "TimestampType",
    "build_batch",
    "build_legacy",
    "codec_packages",
    "crc32c",
    "decode_control",
    "encode_control",
    "iter_batches",
    "register_codec",
]
