"""``conformance/``: per api key, direction and version, how many frames decoded and
re-encoded to the same bytes, with a sample of each kind of failure. Request log entries
(no bytes) are not in it."""

from __future__ import annotations

from typing import Any, NamedTuple

from ...capture.columns import Long, OptBytes, OptInt, OptStr
from ..decode import LOGGED
from .table import Staged, Table, read_small, save_small


class ConformanceRow(NamedTuple):
    api_key: OptInt
    api_name: OptStr
    direction: OptStr
    api_version: OptInt
    frames: Long
    decoded: Long
    reencoded_equal: Long
    mismatches: Long
    errors: Long
    sample_first_diff: OptInt  # a mismatch's first differing offset
    sample_frame: OptBytes  # that mismatch's frame
    sample_error: OptStr  # a failure's reason


TABLE = Table("conformance", ConformanceRow, "per api key, direction and version: byte-exact")


def write(staged: Staged) -> list[Any]:
    """Write ``conformance/``; returns its rows."""
    from pyspark.sql import functions as F

    ok = F.col("status") == "decoded"
    mismatch = ok & ~F.col("reencoded_equal")
    bytes_seen = staged.decoded.filter(F.col("status") != LOGGED)
    table = bytes_seen.groupBy("api_key", "api_name", "direction", "api_version").agg(
        F.count(F.lit(1)).alias("frames"),
        F.sum(ok.cast("long")).alias("decoded"),
        F.sum((ok & F.col("reencoded_equal")).cast("long")).alias("reencoded_equal"),
        F.sum(mismatch.cast("long")).alias("mismatches"),
        F.sum((~ok).cast("long")).alias("errors"),
        F.first(F.when(mismatch, F.col("first_diff")), ignorenulls=True).alias("sample_first_diff"),
        F.first(F.when(mismatch, F.col("frame")), ignorenulls=True).alias("sample_frame"),
        F.first(F.when(~ok, F.col("reason")), ignorenulls=True).alias("sample_error"),
    )
    ordered = table.orderBy("api_key", "direction", "api_version")
    save_small(staged, TABLE, ordered)
    return read_small(staged.path(TABLE))
