"""What every table module writes with: ``Table`` (a table's folder and row type),
``Staged`` (the decoded frames every table is written from), the client columns, and the
helpers that save, read back and join them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ...capture.columns import ddl


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


def save(staged: Staged, table: Table, frame: Any, files: int | None = 1) -> int:
    """Write ``frame``'s columns of ``table`` (in its order; ``files``: at most that many
    files, or as Spark partitioned it); returns the rows written (from the files' footers:
    no Spark job)."""
    path = staged.path(table)
    selected = frame.select(*table.columns)
    if files is not None:
        selected = selected.coalesce(files)
    selected.write.mode("overwrite").parquet(str(path))
    return rows_in(path)


def rows_in(folder: Path) -> int:
    """The rows of the Parquet files of a table folder, from their footers."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]  # no stubs or py.typed

    return sum(pq.ParquetFile(f).metadata.num_rows for f in sorted(folder.glob("*.parquet")))


def collect_together(queries: dict[str, Any]) -> dict[str, list[Any]]:
    """``collect()`` of several small queries, submitted together: Spark overlaps their
    scheduling."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(1, len(queries))) as pool:
        futures = {name: pool.submit(query.collect) for name, query in queries.items()}
        return {name: future.result() for name, future in futures.items()}


def read_small(folder: Path) -> list[dict[str, Any]]:
    """The rows of a small table folder, read on the driver (pyarrow, no Spark job)."""
    import pyarrow.parquet as pq

    rows: list[dict[str, Any]] = pq.read_table(folder).to_pylist() if folder.is_dir() else []
    return rows


def with_clients(frames: Any) -> Any:
    """Decoded frames with their connection's client (``CLIENT``): the software its
    connection reported first (an ApiVersionsRequest v3+, or the request log's client
    information), its address (the client's host), and the client ids of that client
    (sorted). Apps that report their software are one client per software, version and
    host (a process with five producers is one client); the others are one client per
    host and client id: two apps without a software name are never merged.

    The clients are worked out on a small table (one row per connection and client id)
    and joined back by broadcast: the frames themselves are not shuffled."""
    from pyspark.sql import functions as F

    client_end = F.when(F.col("direction") == "request", F.col("src")).otherwise(F.col("dst"))
    id_of = F.coalesce(F.col("client_id"), F.lit(""))
    reported = F.when(F.col("software_name").isNotNull(), F.col("ts"))
    per_id = frames.groupBy("conn", id_of.alias("id")).agg(
        F.min_by(F.struct("software_name", "software_version"), reported).alias("sw"),
        F.min(reported).alias("sw_ts"),
        F.first(F.regexp_replace(client_end, r":\d+$", ""), ignorenulls=True).alias("host"),
        F.first("client_id", ignorenulls=True).alias("client_id"),
    )
    # the software a connection reported first (its ApiVersionsRequest v3+)
    per_conn = per_id.groupBy("conn").agg(
        F.min_by("sw", "sw_ts").alias("sw"),
        F.first("host", ignorenulls=True).alias("address"),
    )
    ids = per_id.select("conn", "id", "client_id").join(per_conn, "conn")
    ids = ids.select(
        "conn",
        "id",
        "client_id",
        "address",
        F.col("sw.software_name").alias("software_name"),
        F.col("sw.software_version").alias("software_version"),
    )
    by_id = F.col("software_name").isNull() | F.col("address").isNull()
    ids = ids.withColumn("key", F.when(by_id, F.col("id")).otherwise(F.lit("*")))
    key = ["software_name", "software_version", "address", "key"]
    client_ids = ids.groupBy(*key).agg(F.array_sort(F.collect_set("client_id")).alias("client_ids"))
    # aliases of their own: later selects of "x.*" must not find them
    a, b = ids.alias("_client_of_id"), client_ids.alias("_ids_of_client")
    same = [F.col(f"_client_of_id.{k}").eqNullSafe(F.col(f"_ids_of_client.{k}")) for k in key]
    clients = a.join(b, same).select(
        *(f"_client_of_id.{c}" for c in ("conn", "id", "software_name", "software_version")),
        "_client_of_id.address",
        "_ids_of_client.client_ids",
    )
    return (
        frames.drop("software_name", "software_version")
        .withColumn("id", id_of)
        .join(F.broadcast(clients.cache()), ["conn", "id"], "left")
        .drop("id")
    )


def evidence_of(source: Any) -> Any:
    """``source`` of a frame -> what a table row rests on: ``bytes`` (capture files, pcap)
    or ``request log`` (no bytes: usage and readiness only)."""
    from pyspark.sql import functions as F

    from ...capture.frames import REQUEST_LOG

    return F.when(source == REQUEST_LOG, F.lit(REQUEST_LOG)).otherwise(F.lit("bytes"))
