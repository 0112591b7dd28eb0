"""``messages/<Message>/``: the decoded bodies of each message (e.g. ``MetadataRequest``),
with nested columns from the Spark schema the generated package's model gives."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

from ..columns import OptDouble, OptInt, OptStr, Str
from . import Staged, Table


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


def write(staged: Staged, schemas: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Write one table per message decoded (eight at a time); returns the tables written
    and the messages without a schema (no table)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    ok = F.col("status") == "decoded"
    counts = {
        r["message"]: r["count"]
        for r in staged.frames.filter(ok).groupBy("message").count().collect()
    }
    missing = sorted(m for m in counts if m not in schemas)
    tables = sorted(m for m in counts if m in schemas)
    done = [0]
    lock = threading.Lock()

    def write_one(name: str) -> None:
        body = F.from_json("body", StructType.fromJson(schemas[name]), {"mode": "FAILFAST"})
        table = staged.frames.filter(ok & (F.col("message") == name)).select(
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
