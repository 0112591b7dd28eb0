"""``usage/``: per client, api key and version, the frames and requests seen and when."""

from __future__ import annotations

from typing import NamedTuple

from ...capture.columns import Long, OptDouble, OptInt, OptStr, OptStrs, Str
from .table import CLIENT, Staged, Table, evidence_of, save_small


class UsageRow(NamedTuple):
    software_name: OptStr  # from the connection's ApiVersionsRequest v3+
    software_version: OptStr
    address: OptStr  # the host the client connects from
    client_ids: OptStrs
    api_key: OptInt
    api_name: OptStr
    api_version: OptInt
    frames: Long
    requests: Long
    first_ts: OptDouble
    last_ts: OptDouble
    source: Str  # "bytes" (capture files, pcap) or "request log" (no bytes were captured)


TABLE = Table("usage", UsageRow, "per client, api key and version: frames, requests, when")


def write(staged: Staged) -> int:
    """Write ``usage/``; returns its row count."""
    from pyspark.sql import functions as F

    table = (
        staged.frames.filter(F.col("api_key").isNotNull())
        .withColumn("source", evidence_of(F.col("source")))
        .groupBy(*CLIENT, "api_key", "api_name", "api_version", "source")
        .agg(
            F.count(F.lit(1)).alias("frames"),
            F.sum((F.col("direction") == "request").cast("long")).alias("requests"),
            F.min("ts").alias("first_ts"),
            F.max("ts").alias("last_ts"),
        )
        .orderBy(*CLIENT, "api_key", "api_version")
    )
    return save_small(staged, TABLE, table)
