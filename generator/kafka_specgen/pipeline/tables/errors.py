"""``errors/``: every frame that could not be decoded and every record batch that could
not be read, with where it was, why, and its bytes: what nothing-lost counts rest on."""

from __future__ import annotations

from typing import Any, NamedTuple

from ...capture.columns import Bytes, OptDouble, OptInt, OptStr, Str
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


def write(staged: Staged, entries: Any) -> int:
    """Write ``errors/`` from the frames that did not decode and the batch ``entries`` with
    an error; returns its row count."""
    from pyspark.sql import functions as F

    frame_errors = (
        staged.decoded.filter(F.col("status") == "error")
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
    return save(staged, TABLE, frame_errors.unionByName(batch_errors))
