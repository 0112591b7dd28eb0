"""Each connection's client (``CLIENT`` columns), joined onto the decoded frames.

A client is an app: the software its connection reported first (an ApiVersionsRequest
v3+, or the request log's client information), its address (the client's host), and the
client ids of that client (sorted). Apps that report their software are one client per
software, version and host (a process with five producers is one client); the others are
one client per host and client id: two apps without a software name are never merged.

Spark reduces the frames to one row per connection and client id (``connection_ids``);
the driver works the clients out from those rows (``client_rows``, plain Python) and
Spark joins them back by broadcast: the frames are not shuffled, and the clients are
worked out once for every table.
"""

from __future__ import annotations

from typing import Any, Iterable, NamedTuple

from ...capture.columns import OptStr, OptStrs, Str, arrow_schema


class ClientOf(NamedTuple):
    """The client of the frames of one connection with one client id."""

    conn: Str
    id: Str  # the client id, "" for none
    software_name: OptStr
    software_version: OptStr
    address: OptStr
    client_ids: OptStrs


def with_clients(frames: Any) -> Any:
    """Decoded frames with their connection's client (``CLIENT`` columns; the frames'
    own ``software_name`` and ``software_version`` are replaced by the client's)."""
    from pyspark.sql import functions as F

    rows = connection_ids(frames).toArrow().to_pylist()
    table = _arrow_table(client_rows(rows))
    known = frames.sparkSession.createDataFrame(table)
    return (
        frames.drop("software_name", "software_version")
        .withColumn("id", _id_of())
        .join(F.broadcast(known), ["conn", "id"], "left")
        .drop("id")
    )


def _id_of() -> Any:
    from pyspark.sql import functions as F

    return F.coalesce(F.col("client_id"), F.lit(""))


def connection_ids(frames: Any) -> Any:
    """Per connection and client id: the software first reported (``software_name``,
    ``software_version``, ``reported``: when), the client's host and client id."""
    from pyspark.sql import functions as F

    client_end = F.when(F.col("direction") == "request", F.col("src")).otherwise(F.col("dst"))
    reported = F.when(F.col("software_name").isNotNull(), F.col("ts"))
    sw = F.min_by(F.struct("software_name", "software_version"), reported)
    return frames.groupBy("conn", _id_of().alias("id")).agg(
        sw["software_name"].alias("software_name"),
        sw["software_version"].alias("software_version"),
        F.min(reported).alias("reported"),
        F.first(F.regexp_replace(client_end, r":\d+$", ""), ignorenulls=True).alias("host"),
        F.first("client_id", ignorenulls=True).alias("client_id"),
    )


def client_rows(ids: Iterable[dict[str, Any]]) -> list[ClientOf]:
    """The client of every connection and client id (rows of ``connection_ids``): a
    connection's software is the one it reported first, its address the host of any of
    its rows; apps without software (or address) are told apart by their client id."""
    ids = sorted(ids, key=lambda r: (r["conn"], r["id"]))
    software: dict[str, tuple[Any, ...]] = {}  # conn -> (reported, name, version)
    address: dict[str, str | None] = {}
    for r in ids:
        if r["reported"] is not None:
            seen = (r["reported"], r["software_name"] or "", r["software_version"] or "")
            if r["conn"] not in software or seen < software[r["conn"]][:3]:
                software[r["conn"]] = (*seen, r["software_name"], r["software_version"])
        if address.get(r["conn"]) is None:
            address[r["conn"]] = r["host"]
    keyed = []
    client_ids: dict[tuple[Any, ...], set[str]] = {}
    for r in ids:
        name, version = software.get(r["conn"], (None,) * 5)[3:]
        host = address[r["conn"]]
        key = (name, version, host, r["id"] if name is None or host is None else "*")
        keyed.append((r, key))
        if r["client_id"] is not None:
            client_ids.setdefault(key, set()).add(r["client_id"])
        else:
            client_ids.setdefault(key, set())
    return [
        ClientOf(r["conn"], r["id"], key[0], key[1], key[2], sorted(client_ids[key]))
        for r, key in keyed
    ]


def _arrow_table(rows: list[ClientOf]) -> Any:
    import pyarrow as pa  # type: ignore[import-untyped]  # no stubs or py.typed

    schema = arrow_schema(ClientOf)
    columns = list(zip(*rows)) if rows else [() for _ in schema]
    return pa.Table.from_arrays(
        [pa.array(list(c), type=f.type) for c, f in zip(columns, schema)], schema=schema
    )
