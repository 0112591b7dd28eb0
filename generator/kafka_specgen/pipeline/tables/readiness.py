"""``readiness/``: each version (and message format) a client was seen using, with the
verdict on that client and API against the target (``pipeline.readiness``)."""

from __future__ import annotations

from typing import Any

from ..readiness import ReadinessRow, Target, Verdict, client_of, judge_rows, verdict
from . import CLIENT, Staged, Table

TABLE = Table("readiness", ReadinessRow, "per client and API: the verdict against a target")


def write(staged: Staged, target: Target, records: bool) -> tuple[Verdict, int]:
    """Aggregate requests per client x api key x version (with the broker's newest
    version of the API on the connections they were sent on) and batches per client x
    magic, judge them on the driver (a few hundred rows), write ``readiness/``; returns
    the verdict and the number of rows written."""
    from pyspark.sql import functions as F

    frames = staged.frames
    advertised = frames.filter(F.col("advertised").isNotNull()).select(
        "conn", *CLIENT, F.explode("advertised").alias("a")
    )
    # the broker's newest version of each API on each connection, and over each client's
    # connections (for connections whose ApiVersions exchange the capture does not hold)
    on_conn = advertised.groupBy("conn", F.col("a.api_key").alias("api_key")).agg(
        F.max("a.max_version").alias("conn_newest")
    )
    requests = (
        frames.filter((F.col("direction") == "request") & F.col("api_key").isNotNull())
        .join(on_conn, ["conn", "api_key"], "left")
        .groupBy(*CLIENT, "api_key", "api_version")
        .agg(
            F.first("api_name", ignorenulls=True).alias("api_name"),
            F.count(F.lit(1)).alias("requests"),
            F.min("ts").alias("first_ts"),
            F.max("ts").alias("last_ts"),
            F.max("conn_newest").alias("broker_newest"),
        )
        .collect()
    )
    offered = (
        advertised.groupBy(*CLIENT, F.col("a.api_key").alias("api_key"))
        .agg(F.max("a.max_version").alias("broker_newest"))
        .collect()
    )
    per_client = {(client_of(r.asDict()), r["api_key"]): r["broker_newest"] for r in offered}
    request_rows = []
    for r in requests:
        row = r.asDict()
        if row["broker_newest"] is None:
            row["broker_newest"] = per_client.get((client_of(row), row["api_key"]))
        request_rows.append(row)
    formats: list[Any] = []
    if records:
        formats = (
            staged.spark.read.parquet(str(staged.out / "batches"))
            .groupBy(*CLIENT, "magic")
            .agg(
                F.count(F.lit(1)).alias("batches"),
                F.min("ts").alias("first_ts"),
                F.max("ts").alias("last_ts"),
            )
            .collect()
        )
    rows = judge_rows(target, request_rows, [r.asDict() for r in formats])
    table = staged.spark.createDataFrame([tuple(r) for r in rows], TABLE.ddl)
    table.coalesce(1).write.mode("overwrite").parquet(str(staged.path(TABLE)))
    return verdict(rows, target.label), len(rows)
