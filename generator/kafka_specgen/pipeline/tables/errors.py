"""``errors/``: every frame that could not be decoded and every record batch that could
not be read, with where it was, why, and its bytes: what nothing-lost counts rest on."""

from __future__ import annotations

from typing import Any, NamedTuple

from ...capture.columns import Bytes, OptDouble, OptInt, OptStr, Str
from ...capture.tls import NEEDS_KEYS
from .table import Staged, Table, save


class ErrorRow(NamedTuple):
    kind: Str  # "frame" or "batch"
    conn: Str
    ts: OptDouble
    src: OptStr
    dst: OptStr
    direction: OptStr
    api_key: OptInt
    api_name: OptStr
    api_version: OptInt
    correlation_id: OptInt
    client_id: OptStr
    topic: OptStr  # batch errors: where the unreadable data was
    partition: OptInt
    batch_index: OptInt
    reason: Str
    frame: Bytes  # the frame, or the unreadable record data from there on


TABLE = Table("errors", ErrorRow, "frames that did not decode and record batches not read")


def write(staged: Staged, entries: Any) -> dict[str, int]:
    """Write ``errors/`` from the frames that did not decode and the batch ``entries`` with
    an error; returns the rows per kind and how many frames were of unknown API keys."""
    from pyspark.sql import functions as F

    frame_errors = (
        staged.frames.filter(F.col("status") == "error")
        .withColumn("kind", F.lit("frame"))
        .withColumn("topic", F.lit(None).cast("string"))
        .withColumn("partition", F.lit(None).cast("int"))
        .withColumn("batch_index", F.lit(None).cast("int"))
        .select(*TABLE.columns)
    )
    batch_errors = (
        entries.filter(F.col("error").isNotNull())
        .withColumn("kind", F.lit("batch"))
        .withColumn("reason", F.col("error"))
        .withColumn("frame", F.col("data"))
        .select(*TABLE.columns)
    )
    save(staged, TABLE, frame_errors.unionByName(batch_errors))
    written = staged.spark.read.parquet(str(staged.path(TABLE)))
    frame = F.col("kind") == "frame"

    def count(condition: Any) -> Any:
        return F.sum(condition.cast("long"))

    [row] = written.agg(
        count(frame).alias("frame"),
        count(F.col("kind") == "batch").alias("batch"),
        count(frame & F.col("reason").contains("unknown api key")).alias("unknown_api"),
        count(frame & F.col("reason").contains(NEEDS_KEYS)).alias("tls_without_keys"),
    ).collect()
    return {key: int(value or 0) for key, value in row.asDict().items()}
