"""What every table module writes with: ``Table`` (a table's folder and row type),
``Staged`` (the decoded frames every table is written from), the client columns, and the
helpers that save and read them back.

A table is written by Spark (one job, files per partition), or by the driver (pyarrow, one
``part-00000.parquet``) where it is small: always for aggregates (``save_small``), and
for every table where the input was (``Staged.small``). Spark's writes cost a job each,
most of the run on small input; the rows are the same."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ...capture.columns import arrow_schema, ddl


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
    """What every table is written from: the decoded frames (``decode.DecodedRow``, kept
    once: ``decoded``), and the same with each connection's client (``CLIENT`` columns)
    joined on (``frames``: tables per client use these)."""

    spark: Any
    decoded: Any
    frames: Any
    out: Path
    say: Callable[[str], None]
    small: bool = False  # the driver read the input: every table fits on the driver

    def path(self, table: Table) -> Path:
        return self.out / table.name


#: The columns that name a client, in every table that is per client.
CLIENT = ("software_name", "software_version", "address", "client_ids")


def save(staged: Staged, table: Table, frame: Any, files: int | None = 1) -> int:
    """Write ``frame``'s columns of ``table`` (in its order): on the driver for small input,
    else by Spark (``files``: at most that many files, or as Spark partitioned it);
    returns the rows written (from the files' footers: no Spark job)."""
    if staged.small:
        return save_small(staged, table, frame)
    path = staged.path(table)
    selected = frame.select(*table.columns)
    if files is not None:
        selected = selected.coalesce(files)
    selected.write.mode("overwrite").parquet(str(path))
    return rows_in(path)


def save_small(staged: Staged, table: Table, frame: Any) -> int:
    """Write a table that is small whatever the input (an aggregate) from the driver:
    its rows collected in one job, written with pyarrow; returns the rows written."""
    path = staged.path(table)
    write_arrow(path, frame.select(*table.columns).toArrow().cast(arrow_schema(table.row)))
    return rows_in(path)


def write_arrow(folder: Path, rows: Any) -> None:
    """Write an Arrow table as the one file of a table folder (replacing the folder)."""
    import shutil

    import pyarrow.parquet as pq  # type: ignore[import-untyped]  # no stubs or py.typed

    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    pq.write_table(rows, folder / "part-00000.parquet")


def rows_in(folder: Path) -> int:
    """The rows of the Parquet files of a table folder, from their footers."""
    import pyarrow.parquet as pq

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


def evidence_of(source: Any) -> Any:
    """``source`` of a frame -> what a table row rests on: ``bytes`` (capture files, pcap)
    or ``request log`` (no bytes: usage and readiness only)."""
    from pyspark.sql import functions as F

    from ...capture.frames import REQUEST_LOG

    return F.when(source == REQUEST_LOG, F.lit(REQUEST_LOG)).otherwise(F.lit("bytes"))
