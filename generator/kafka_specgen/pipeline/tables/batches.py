"""``batches/``: one row per record batch (legacy: top-level message) in Produce requests
and Fetch responses; ``record_usage/``: their sums per client, direction, message format
and codec."""

from __future__ import annotations

from typing import Any, NamedTuple

from ...capture.columns import (
    Long,
    OptBool,
    OptDouble,
    OptInt,
    OptLong,
    OptStr,
    OptStrs,
    Str,
)
from .table import CLIENT, Staged, Table, save, save_small


class BatchRow(NamedTuple):
    conn: Str
    ts: OptDouble
    direction: OptStr
    api_key: OptInt
    api_name: OptStr
    api_version: OptInt
    correlation_id: OptInt
    client_id: OptStr
    software_name: OptStr
    software_version: OptStr
    address: OptStr
    client_ids: OptStrs
    topic: OptStr
    topic_id: OptStr
    partition: OptInt
    batch_index: OptInt
    base_offset: OptLong
    magic: OptInt
    compression: OptStr
    record_count: OptInt
    size_bytes: OptInt
    uncompressed_bytes: OptLong
    producer_id: OptLong
    producer_epoch: OptInt
    is_transactional: OptBool
    is_control: OptBool
    crc_ok: OptBool


class RecordUsageRow(NamedTuple):
    software_name: OptStr
    software_version: OptStr
    address: OptStr
    client_ids: OptStrs
    direction: OptStr
    magic: OptInt
    compression: OptStr
    batches: Long
    records: OptLong
    bytes: OptLong  # on the wire
    uncompressed_bytes: OptLong
    batches_without_uncompressed_size: Long
    control_batches: OptLong
    transactional_batches: OptLong
    crc_failures: OptLong


TABLE = Table("batches", BatchRow, "one row per record batch in Produce and Fetch")
RECORD_USAGE = Table(
    "record_usage", RecordUsageRow, "per client, direction, magic and codec: batches, bytes"
)


def entries(staged: Staged) -> Any:
    """One row per record batch entry of the decoded frames, read or not (``error``)."""
    from pyspark.sql import functions as F

    frame_columns = BatchRow._fields[: BatchRow._fields.index("topic")]
    return (
        staged.frames.filter(F.col("batches").isNotNull())
        .select(*frame_columns, "src", "dst", F.explode("batches").alias("b"))
        .select("*", "b.*")
        .drop("b")
    )


def read(batch_entries: Any) -> Any:
    """The entries that were read: the rows of ``batches/``."""
    from pyspark.sql import functions as F

    return batch_entries.filter(F.col("error").isNull())


def write(staged: Staged, batch_entries: Any) -> int:
    """Write ``batches/`` from the entries that were read; returns its row count."""
    return save(staged, TABLE, read(batch_entries), None)


def write_record_usage(staged: Staged, batch_entries: Any) -> int:
    """Write ``record_usage/`` (the sums of ``batches/``); returns its row count."""
    from pyspark.sql import functions as F

    batches = read(batch_entries)
    table = (
        batches.groupBy(*CLIENT, "direction", "magic", "compression")
        .agg(
            F.count(F.lit(1)).alias("batches"),
            F.sum("record_count").alias("records"),
            F.sum("size_bytes").alias("bytes"),
            F.sum("uncompressed_bytes").alias("uncompressed_bytes"),
            F.sum(F.col("uncompressed_bytes").isNull().cast("long")).alias(
                "batches_without_uncompressed_size"
            ),
            F.sum(F.col("is_control").cast("long")).alias("control_batches"),
            F.sum(F.col("is_transactional").cast("long")).alias("transactional_batches"),
            F.sum((~F.col("crc_ok")).cast("long")).alias("crc_failures"),
        )
        .orderBy(*CLIENT, "direction", "magic", "compression")
    )
    return save_small(staged, RECORD_USAGE, table)
