"""``messages/<Message>/``: the decoded bodies of each message (e.g. ``MetadataRequest``),
with nested columns from the Spark schema the generated package's model gives.

Spark writes each table (``from_json`` with that schema, one job per message). Up to
``DRIVER_ROWS`` bodies in all, the driver writes them instead (``driver_tables``: pyarrow,
the same JSON-to-columns rules): one Spark job to collect them instead of one per
message, which is most of the time of a small capture."""

from __future__ import annotations

import base64
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

from ...capture.columns import OptDouble, OptInt, OptStr, Str
from .table import Staged, Table


class MessageRow(NamedTuple):
    """Where a body was seen; the table adds ``body``, a struct of the message's schema."""

    conn: Str
    ts: OptDouble
    api_version: OptInt
    correlation_id: OptInt
    client_id: OptStr


TABLE = Table("messages", MessageRow, "the decoded bodies, one table per message")

#: Rows per Parquet file of a message table.
ROWS_PER_FILE = 500_000
#: Up to this many bodies in all, the driver writes the tables.
DRIVER_ROWS = 20_000


def write(
    staged: Staged, schemas: dict[str, Any], counts: dict[str, int]
) -> tuple[list[str], list[str]]:
    """Write one table per message decoded (eight at a time; ``counts``: the bodies
    decoded per message); returns the tables written and the messages without a schema
    (no table)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    ok = F.col("status") == "decoded"
    missing = sorted(m for m in counts if m not in schemas)
    tables = sorted(m for m in counts if m in schemas)
    if not tables:
        return tables, missing
    if sum(counts[m] for m in tables) <= DRIVER_ROWS:
        rows = staged.decoded.filter(ok & F.col("message").isin(tables)).select(
            "message", *TABLE.columns, "body"
        )
        driver_tables(rows.toArrow(), schemas, staged.path(TABLE))
        staged.say(f"messages/: {len(tables)} tables")
        return tables, missing
    done = [0]
    lock = threading.Lock()

    def write_one(name: str) -> None:
        body = F.from_json("body", StructType.fromJson(schemas[name]), {"mode": "FAILFAST"})
        table = staged.decoded.filter(ok & (F.col("message") == name)).select(
            *TABLE.columns, body.alias("body")
        )
        files = max(1, counts[name] // ROWS_PER_FILE)
        table.coalesce(files).write.mode("overwrite").parquet(str(staged.path(TABLE) / name))
        with lock:
            done[0] += 1
            if done[0] % 10 == 0 or done[0] == len(tables):
                staged.say(f"messages/: {done[0]}/{len(tables)} tables")

    # the jobs are small: most of each is scheduling, which overlaps
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(write_one, tables))
    return tables, missing


def driver_tables(rows: Any, schemas: dict[str, Any], folder: Path) -> None:
    """Write one table per message from an Arrow table of ``message``, the
    ``MessageRow`` columns and ``body`` (JSON), as Spark's ``from_json`` would read it:
    missing keys are nulls, ``binary`` values are base64 text."""
    import pyarrow as pa  # type: ignore[import-untyped]  # no stubs or py.typed
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    from ...capture.columns import arrow_schema

    columns = rows.to_pydict()
    by_message: dict[str, list[int]] = {}
    for n, name in enumerate(columns["message"]):
        by_message.setdefault(name, []).append(n)
    where = arrow_schema(MessageRow)
    for name, picked in by_message.items():
        body_type = _arrow_type(schemas[name])
        arrays = [
            pa.array([columns[field.name][n] for n in picked], type=field.type) for field in where
        ]
        bodies = [_value(json.loads(columns["body"][n]), schemas[name]) for n in picked]
        arrays.append(pa.array(bodies, type=body_type))
        table = pa.Table.from_arrays(arrays, schema=where.append(pa.field("body", body_type)))
        (folder / name).mkdir(parents=True, exist_ok=True)
        pq.write_table(table, folder / name / "part-00000.parquet")


_SCALARS = {
    "string": "string",
    "integer": "int32",
    "long": "int64",
    "short": "int16",
    "byte": "int8",
    "boolean": "bool_",
    "double": "float64",
    "float": "float32",
    "binary": "binary",
}


def _arrow_type(spark_type: Any) -> Any:
    """The Arrow type of a Spark type (its JSON form)."""
    import pyarrow as pa

    if isinstance(spark_type, str):
        return getattr(pa, _SCALARS[spark_type])()
    if spark_type["type"] == "struct":
        return pa.struct(
            [pa.field(f["name"], _arrow_type(f["type"])) for f in spark_type["fields"]]
        )
    if spark_type["type"] == "array":
        return pa.list_(_arrow_type(spark_type["elementType"]))
    raise ValueError(f"no Arrow type for Spark type {spark_type!r}")


def _value(value: Any, spark_type: Any) -> Any:
    """A JSON value as the column of ``spark_type`` holds it."""
    if value is None:
        return None
    if spark_type == "binary":
        return base64.b64decode(value)
    if isinstance(spark_type, dict) and spark_type["type"] == "struct":
        return {f["name"]: _value(value.get(f["name"]), f["type"]) for f in spark_type["fields"]}
    if isinstance(spark_type, dict) and spark_type["type"] == "array":
        return [_value(v, spark_type["elementType"]) for v in value]
    return value
