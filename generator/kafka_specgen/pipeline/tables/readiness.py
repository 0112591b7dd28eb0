"""``readiness/``: each version (and message format) a client was seen using with its
verdict against the target (``pipeline.readiness``), what to do about a break and the
known bugs that bite (``pipeline.advice``), and what the capture did not show
(``pipeline.verdict``, rows of kind ``gap``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from ...api_keys import ApiKey
from ..advice import with_advice
from ...capture.columns import arrow_schema
from ..readiness import (
    BYTES,
    LEGACY_FORMAT_PRODUCE,
    REQUEST_LOG,
    ReadinessRow,
    client_of,
    judge_rows,
)
from ..target import Target
from ..verdict import Evidence, Verdict, gap_rows, verdict
from .table import CLIENT, Staged, Table, collect_together, write_arrow

TABLE = Table(
    "readiness",
    ReadinessRow,
    "per client and API: the verdict against a target, what to do, what was not observed",
)


def write(
    staged: Staged, target: Target, batches: Any | None, undecoded: int
) -> tuple[Verdict, int]:
    """Aggregate requests per client x api key x version (with the broker's newest
    version of the API on the connections they were sent on) and ``batches`` (the rows of
    ``batches/``; None: record batches were not read) per client x magic, find the gaps,
    judge on the driver (a few hundred rows), write ``readiness/``; returns the verdict
    and the number of rows written. ``undecoded``: the frames that did not decode."""
    from pyspark.sql import functions as F

    frames = staged.frames
    records = batches is not None
    requests = frames.filter((F.col("direction") == "request") & F.col("api_key").isNotNull())
    queries = {**_request_queries(frames, requests), **_evidence_queries(frames, requests)}
    if batches is not None:
        queries["formats"] = batches.groupBy(*CLIENT, "magic").agg(
            F.count(F.lit(1)).alias("batches"),
            F.min("ts").alias("first_ts"),
            F.max("ts").alias("last_ts"),
        )
    got = collect_together(queries)
    request_rows = _request_rows(got["requests"], got["offered"])
    formats = [r.asDict() for r in got.get("formats", [])]
    judged = judge_rows(target, request_rows, formats)
    rows = with_advice(judged, target)
    evidence = _evidence(got["per_client"], got["seen"], judged, undecoded, records)
    rows += gap_rows(evidence, target.label)
    write_rows(staged.path(TABLE), rows)
    return verdict(rows, target.label), len(rows)


def write_rows(folder: Path, rows: list[ReadinessRow]) -> None:
    """Write the table from the driver (a few hundred rows: no Spark job)."""
    import pyarrow as pa  # type: ignore[import-untyped]  # no stubs or py.typed

    schema = arrow_schema(ReadinessRow)
    write_arrow(folder, pa.Table.from_pylist([r._asdict() for r in rows], schema=schema))


def _request_queries(frames: Any, requests: Any) -> dict[str, Any]:
    """Per client, api key and version: counts, times, what the rows rest on, and the
    broker's newest version of the API on the connections it was sent on; per client and
    api key, the broker's newest on any of its connections (``offered``)."""
    from pyspark.sql import functions as F

    advertised = frames.filter(F.col("advertised").isNotNull()).select(
        "conn", *CLIENT, F.explode("advertised").alias("a")
    )
    on_conn = advertised.groupBy("conn", F.col("a.api_key").alias("api_key")).agg(
        F.max("a.max_version").alias("conn_newest")
    )
    logged = (F.col("source") == REQUEST_LOG).cast("int")
    per_version = (
        requests.join(on_conn, ["conn", "api_key"], "left")
        .groupBy(*CLIENT, "api_key", "api_version")
        .agg(
            F.first("api_name", ignorenulls=True).alias("api_name"),
            F.count(F.lit(1)).alias("requests"),
            F.min("ts").alias("first_ts"),
            F.max("ts").alias("last_ts"),
            F.max("conn_newest").alias("broker_newest"),
            F.min(logged).alias("all_logged"),
        )
    )
    offered = advertised.groupBy(*CLIENT, F.col("a.api_key").alias("api_key")).agg(
        F.max("a.max_version").alias("broker_newest")
    )
    return {"requests": per_version, "offered": offered}


def _request_rows(per_version: list[Any], offered: list[Any]) -> list[dict[str, Any]]:
    """The rows ``judge_rows`` takes: where a version's own connections had no ApiVersions
    answer, the broker's newest on the same client's other connections."""
    per_client = {(client_of(r.asDict()), r["api_key"]): r["broker_newest"] for r in offered}
    out = []
    for r in per_version:
        row = r.asDict()
        if row["broker_newest"] is None:
            row["broker_newest"] = per_client.get((client_of(row), row["api_key"]))
        row["source"] = REQUEST_LOG if row.pop("all_logged") else BYTES
        out.append(row)
    return out


def _evidence_queries(frames: Any, requests: Any) -> dict[str, Any]:
    """Per client: any Produce or Fetch, any Produce v0-v2, record batches in Produce;
    the brokers Metadata named and the endpoints requests went to (``seen``)."""
    from pyspark.sql import functions as F

    # plain ints for Spark: py4j writes a value by its str(), an enum member's name on 3.10
    produce, fetch = int(ApiKey.PRODUCE), int(ApiKey.FETCH)
    batches = F.when(F.col("batches").isNull(), 0).otherwise(F.size("batches"))
    legacy_version = F.col("api_version") <= LEGACY_FORMAT_PRODUCE.hi
    legacy = (F.col("api_key") == produce) & legacy_version
    per_client = requests.groupBy(*CLIENT).agg(
        F.max(F.col("api_key").isin(produce, fetch).cast("int")).alias("data"),
        F.max(legacy.cast("int")).alias("legacy"),
        F.sum(F.when(F.col("api_key") == produce, batches).otherwise(0)).alias("batches"),
    )
    # only where the capture says where traffic went (capture files before 0.2.0 do not)
    named_brokers = frames.filter(
        F.col("named_brokers").isNotNull() & F.col("src").isNotNull()
    ).select(F.lit("named").alias("kind"), F.explode("named_brokers").alias("endpoint"))
    traffic = requests.filter(F.col("dst").isNotNull()).select(
        F.lit("traffic").alias("kind"), F.col("dst").alias("endpoint")
    )
    return {"per_client": per_client, "seen": named_brokers.unionByName(traffic).distinct()}


def _evidence(
    per_client: list[Any],
    seen: list[Any],
    judged: list[ReadinessRow],
    undecoded: int,
    records: bool,
) -> Evidence:
    without_data = {client_of(r.asDict()) for r in per_client if not r["data"]}
    unread = {
        client_of(r.asDict())
        for r in per_client
        if r["legacy"] and (not records or not r["batches"])
    }
    named = {r["endpoint"] for r in seen if r["kind"] == "named"}
    endpoints = {r["endpoint"] for r in seen if r["kind"] == "traffic"}
    api_rows = [r for r in judged if r.kind == "api"]
    return Evidence(
        undecoded=undecoded,
        legacy_produce_without_batches=[r for r in api_rows if _key(r) in unread],
        without_data=[r for r in api_rows if _key(r) in without_data],
        unseen_brokers=unseen_brokers(named, endpoints),
    )


def _key(row: ReadinessRow) -> Any:
    return (row.software_name, row.software_version, row.address, tuple(row.client_ids or ()))


_LOOPBACK = {"localhost", "127.0.0.1", "::1", "0:0:0:0:0:0:0:1"}


def _endpoint(text: str) -> tuple[str, str]:
    host, _, port = text.rpartition(":")
    host = host.strip("[]").lower()
    return ("127.0.0.1" if host in _LOOPBACK else host), port


def unseen_brokers(named: Iterable[str], endpoints: Iterable[str]) -> list[str]:
    """The brokers (``host:port``) Metadata named that no request went to. A name that
    matches no address exactly may be one of the addresses that match no name (a host
    name for an IP address, or a proxy in front of the broker): those count as seen, as
    many as there are such addresses; the rest are unseen."""
    named_set, seen = set(named), {_endpoint(e) for e in endpoints}
    unmatched = sorted(b for b in named_set if _endpoint(b) not in seen)
    names = {_endpoint(b) for b in named_set}
    unclaimed = [e for e in seen if e not in names]
    return unmatched if len(unmatched) > len(unclaimed) else []
