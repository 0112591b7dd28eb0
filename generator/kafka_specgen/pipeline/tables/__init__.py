"""The pipeline's output tables, one module per table (``batches`` writes two).

Each module declares its rows (a ``NamedTuple`` of ``pipeline.columns`` types: the
names, Spark DDL and Arrow schema of its columns) as a ``Table``, and has the one function
that writes it from the decoded frames (``Staged``). The job (``pipeline.job``) calls them
in order; ``all_tables()`` lists them all.

=====================  =============================================================
``errors/``            ``errors``: frames that did not decode, batches not read
``conformance/``       ``conformance``: per api key, direction and version
``usage/``             ``usage``: per client, api key and version
``batches/``           ``batches``: one row per record batch
``record_usage/``      ``batches``: per client, direction, magic and codec
``readiness/``         ``readiness``: per client and API, judged against a target
``messages/<Name>/``   ``messages``: the decoded bodies, one table per message
=====================  =============================================================

A client is an app: its software's name and version (KIP-511) and its address (the host
it connects from); an app that reports no software is told apart by its client id as well,
so two such apps on one host are never one client. Where a capture gives no address
(capture files from before 0.2.0), the client id stands in for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..columns import ddl


@dataclass(frozen=True)
class Table:
    """An output table: its folder under ``--out`` and its row type."""

    name: str
    row: type
    about: str

    @property
    def columns(self) -> tuple[str, ...]:
        fields: tuple[str, ...] = getattr(self.row, "_fields")
        return fields

    @property
    def ddl(self) -> str:
        return ddl(self.row)


@dataclass
class Staged:
    """What every table is written from: the decoded frames (``decode.DecodedRow``,
    cached), with each connection's client (``CLIENT`` columns) joined on."""

    spark: Any
    frames: Any
    out: Path
    say: Callable[[str], None]

    def path(self, table: Table) -> Path:
        return self.out / table.name


#: The columns that name a client, in every table that is per client.
CLIENT = ("software_name", "software_version", "address", "client_ids")


def save(staged: Staged, table: Table, frame: Any, files: int | None = 1) -> Any:
    """Write ``frame``'s columns of ``table`` (in its order; ``files``: at most that many
    files, or as Spark partitioned it) and read them back."""
    path = str(staged.path(table))
    selected = frame.select(*table.columns)
    if files is not None:
        selected = selected.coalesce(files)
    selected.write.mode("overwrite").parquet(path)
    return staged.spark.read.parquet(path)


def with_clients(frames: Any) -> Any:
    """Decoded frames with their connection's client (``CLIENT``): the software its
    connection reported first (an ApiVersionsRequest v3+, or the request log's client
    information), its address (the client's host), and the client ids of that client
    (sorted). Apps that report their software are one client per software, version and
    host (a process with five producers is one client); the others are one client per
    host and client id: two apps without a software name are never merged."""
    from pyspark.sql import functions as F
    from pyspark.sql.window import Window

    client_end = F.when(F.col("direction") == "request", F.col("src")).otherwise(F.col("dst"))
    per_conn = frames.groupBy("conn").agg(
        F.min_by(
            F.struct("software_name", "software_version"),
            F.when(F.col("software_name").isNotNull(), F.col("ts")),
        ).alias("sw"),
        F.first(F.regexp_replace(client_end, r":\d+$", ""), ignorenulls=True).alias("address"),
    )
    clients = per_conn.select(
        "conn",
        F.col("sw.software_name").alias("software_name"),
        F.col("sw.software_version").alias("software_version"),
        "address",
    )
    by_id = F.col("software_name").isNull() | F.col("address").isNull()
    id_key = F.when(by_id, F.coalesce(F.col("client_id"), F.lit(""))).otherwise(F.lit("*"))
    same_client = Window.partitionBy("software_name", "software_version", "address", "id_key")
    return (
        frames.drop("software_name", "software_version")
        .join(clients, "conn", "left")
        .withColumn("id_key", id_key)
        .withColumn("client_ids", F.array_sort(F.collect_set("client_id").over(same_client)))
        .drop("id_key")
    )


def evidence_of(source: Any) -> Any:
    """``source`` of a frame -> what a table row rests on: ``bytes`` (capture files, pcap)
    or ``request log`` (no bytes: usage and readiness only)."""
    from pyspark.sql import functions as F

    from ..frames import REQUEST_LOG

    return F.when(source == REQUEST_LOG, F.lit(REQUEST_LOG)).otherwise(F.lit("bytes"))


def all_tables() -> tuple[Table, ...]:
    from . import batches, conformance, errors, messages, readiness, usage

    return (
        usage.TABLE,
        conformance.TABLE,
        messages.TABLE,
        errors.TABLE,
        batches.TABLE,
        batches.RECORD_USAGE,
        readiness.TABLE,
    )
