"""The PySpark pipeline end to end, on one session-scoped local SparkSession (the JVM start
costs seconds: these tests are few; the plain-Python parts are tested in
tests/capture, test_decoder.py, test_readiness.py and test_report.py).

One run over every golden capture (``golden``: decoded with the newest spec corpus, judged
against kafka-python's Kafka 4.x-era specs, with the report) serves:

- row counts per table, usage rows for the clients that made the captures, 100 %
  conformance of what decodes, errors exactly what the plain decoder refuses, decoded
  values equal the non-Spark decoder's;
- batches/ equal to what the package's records module reads in a plain loop (and the
  golden README's counts of legacy message sets), record_usage/ its sums, reconciliation;
- readiness/ flags exactly the legacy Produce v1/v2 (and Fetch v1/v2) traffic, the message
  formats it carries and the APIs the target set lacks;
- the report in headless Chromium: no console errors, nothing fetched, a screenshot.

Besides: a pcap of known frames (split over segments, out of order, retransmitted) read by
``read_frames`` decodes to the same rows as the capture file of the frames, and so do
rotated pcap files that cut a TCP stream (reassembled across the files); damaged input
(frames and record batches) lands in ``errors/`` and nothing is lost.
"""

from __future__ import annotations

import base64
import importlib
import json
import os
import shutil
import struct
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

# `make test` installs the spark extra and .ci/run installs Java: a missing piece is a
# failure to see, not a reason to skip.
if (
    shutil.which("java") is None
    or subprocess.run(["java", "-version"], capture_output=True, check=False).returncode != 0
):
    raise RuntimeError("PySpark needs Java 17+ on PATH (docs/pipeline.md, 'Set-up')")

import pyarrow.parquet as pq  # noqa: E402

from kafka_specgen.capture import frames as fr  # noqa: E402
from kafka_specgen.capture import pcap  # noqa: E402
from kafka_specgen.pipeline.datasource import KafkaCaptureDataSource, read_frames  # noqa: E402
from kafka_specgen.capture.inputs import input_files  # noqa: E402
from kafka_specgen.pipeline.decode import (
    DECODED_DDL,
    Decoder,
    decode_batches,
)  # noqa: E402
from kafka_specgen.pipeline.decode import decode_rows  # noqa: E402
from kafka_specgen.library import SpecSet  # noqa: E402
from kafka_specgen.pipeline.job import Summary, run_pipeline  # noqa: E402
from kafka_specgen.pipeline.spark_schema import spark_schemas  # noqa: E402
from tests.support import genpkg  # noqa: E402
from tests.support.chromium import load_page  # noqa: E402
from tests.support.pcaps import (  # noqa: E402
    build_pcap,
    by_conn,
    conversation_packets,
    golden_records,
    rotated_pcaps,
)

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


from tests.pipeline.conftest import golden_specs  # noqa: E402


def spark_to_dict(value: Any, spark_type: Any) -> Any:
    """A messages/ row's body (as pyarrow gives it) -> the ``to_dict()`` form."""
    if value is None:
        return None
    if isinstance(spark_type, dict) and spark_type["type"] == "struct":
        out = {}
        for field in spark_type["fields"]:
            item = value.get(field["name"])
            if field["name"] == "unknown_tagged_fields" and item is None:
                continue
            out[field["name"]] = spark_to_dict(item, field["type"])
        return out
    if isinstance(spark_type, dict) and spark_type["type"] == "array":
        return [spark_to_dict(v, spark_type["elementType"]) for v in value]
    if spark_type == "binary":
        return base64.b64encode(value).decode("ascii")
    return value


@dataclass
class GoldenRun:
    summary: Summary
    out: Path
    package: str
    rows: list[fr.Row]  # the frames, read without Spark
    plain: list[dict[str, Any]]  # the plain decoder's rows (decode.DecodedRow)


@pytest.fixture(scope="module")
def golden(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> GoldenRun:
    tmp = tmp_path_factory.mktemp("golden")
    out = tmp / "out"
    summary = run_pipeline(
        [GOLDEN],
        out,
        specs=[golden_specs()],
        target_specs=[genpkg.kafka_python_specs()],
        report=True,
        spark=spark,
        workdir=tmp / "work",
        progress=False,
    )
    package = summary.package
    rows = [r for path, _ in input_files([str(GOLDEN)]) for r in fr.capture_rows(path)]
    plain = [r._asdict() for r in decode_rows(rows, package)]
    return GoldenRun(summary, out, package, rows, plain)


def test_golden_captures_through_the_pipeline(golden: GoldenRun) -> None:
    summary, out, package, rows, plain = (
        golden.summary,
        golden.out,
        golden.package,
        golden.rows,
        golden.plain,
    )
    plain_errors = [p for p in plain if p["status"] == "error"]
    assert summary.nothing_lost
    assert summary.frames_read == len(rows) == summary.decoded + summary.errors
    assert summary.errors == len(plain_errors)
    assert summary.mismatches == 0 and summary.reencoded_equal == summary.decoded

    # errors/: exactly the frames the plain decoder refuses (broker/client protocol quirks)
    errors = [e for e in pq.read_table(out / "errors").to_pylist() if e["kind"] == "frame"]
    assert sorted(
        (e["conn"], e["direction"], e["correlation_id"], e["reason"]) for e in errors
    ) == sorted((p["conn"], p["direction"], p["correlation_id"], p["reason"]) for p in plain_errors)
    assert all(e["frame"] for e in errors)
    assert any("trailing bytes" in e["reason"] for e in errors)  # librdkafka's MetadataRequest

    # conformance/: one row per api key, direction and version seen; 100 % byte-exact
    conformance = pq.read_table(out / "conformance").to_pylist()
    seen = Counter((r.api_key, r.direction, r.api_version) for r in rows)
    assert {
        (c["api_key"], c["direction"], c["api_version"]): c["frames"] for c in conformance
    } == dict(seen)
    assert all(c["reencoded_equal"] == c["decoded"] and c["mismatches"] == 0 for c in conformance)
    assert sum(c["frames"] for c in conformance) == len(rows)

    # usage/: the clients that made the captures
    usage = pq.read_table(out / "usage").to_pylist()
    software = {u["software_name"] for u in usage}
    assert {"confluent-kafka-python", "kafka-python"} <= software
    assert any(
        u["software_name"] is None
        and u["address"] is None
        and len(u["client_ids"]) == 1
        and u["client_ids"][0].startswith("golden-aio")
        for u in usage
    )  # aiokafka speaks ApiVersions v0: no software name
    assert sum(u["frames"] for u in usage) == sum(r.api_key is not None for r in rows)
    kp = [u for u in usage if u["software_name"] == "kafka-python"]
    assert {u["api_name"] for u in kp} >= {"ApiVersions", "Produce", "Metadata"}
    assert all(u["first_ts"] <= u["last_ts"] for u in usage)

    # messages/<Message>/: one table per decoded message, values equal the plain decoder's
    decoded = [p for p in plain if p["status"] == "decoded"]
    per_message = Counter(p["message"] for p in decoded)
    assert sorted(p.name for p in (out / "messages").iterdir()) == sorted(per_message)
    schemas = spark_schemas(genpkg.load_messages([golden_specs()]))
    registry = __import__(f"{package}.registry", fromlist=["API_KEYS"])
    by_key = {(p["conn"], p["direction"], p["correlation_id"], p["ts"]): p for p in decoded}
    compared = 0
    for name, count in per_message.items():
        table = pq.read_table(out / "messages" / name).to_pylist()
        assert len(table) == count, name
        direction = "request" if name.endswith("Request") else "response"
        for row in table:
            p = by_key[(row["conn"], direction, row["correlation_id"], row["ts"])]
            body = spark_to_dict(row["body"], schemas[name])
            entry = registry.API_KEYS[p["api_key"]]
            cls = entry.request if direction == "request" else entry.response
            assert cls.from_dict(body).to_dict() == json.loads(p["body"]), (name, row["conn"])
            compared += 1
    assert compared == len(decoded)


#: Top-level legacy messages in the Produce requests of the pinned kafka-python files, as
#: the golden README tabulates them (read there with kafka-python's own classes): magic and
#: codec -> count. Every compressed wrapper holds one batch of 5 records.
LEGACY = {
    "kafka_python_magic0_gzip.jsonl": {(0, "gzip"): 3},
    "kafka_python_magic0_none.jsonl": {(0, "none"): 15},
    "kafka_python_magic0_snappy.jsonl": {(0, "snappy"): 3},
    "kafka_python_magic1_gzip.jsonl": {(1, "gzip"): 3},
    "kafka_python_magic1_lz4.jsonl": {(1, "lz4"): 3},
    "kafka_python_magic1_none.jsonl": {(1, "none"): 15},
    "kafka_python_magic1_snappy.jsonl": {(1, "snappy"): 3},
}


def plain_batches(package: str, rows: list[fr.Row]) -> list[tuple[Any, ...]]:
    """Every record batch of the Produce requests and Fetch responses, read in a plain loop
    with the package's framing and records modules (not the pipeline's decoder)."""
    framing = importlib.import_module(f"{package}.framing")
    records = importlib.import_module(f"{package}.records")
    out = []
    for row in rows:
        if row.error is not None or (row.api_key, row.direction) not in (
            (0, "request"),
            (1, "response"),
        ):
            continue
        try:
            if row.direction == "request":
                body = framing.decode_request(row.frame)[1]
                topics = [(t.name, t.partition_data) for t in body.topic_data]
                partitions = [(t, p.index, p.records) for t, ps in topics for p in ps]
            else:
                body = framing.decode_response(row.frame, row.api_key, row.api_version)[1]
                topics = [(t.topic or None, t.partitions) for t in body.responses]
                partitions = [(t, p.partition_index, p.records) for t, ps in topics for p in ps]
        except Exception:
            continue  # not decodable: in errors/ as a frame
        for topic, partition, data in partitions:
            for index, batch in enumerate(records.iter_batches(data)):
                count = batch.record_count
                if count is None:  # a legacy compressed wrapper: count what it holds
                    count = sum(1 for _ in batch.records())
                out.append(
                    (
                        row.conn,
                        row.direction,
                        row.correlation_id,
                        topic,
                        partition,
                        index,
                        batch.magic,
                        batch.compression.name.lower(),
                        count,
                        batch.size,
                        bool(batch.is_control),
                    )
                )
    return out


def test_batches_are_what_the_records_module_reads(golden: GoldenRun) -> None:
    summary, out = golden.summary, golden.out
    expected = plain_batches(golden.package, golden.rows)
    batches = pq.read_table(out / "batches").to_pylist()
    got = [
        (
            b["conn"],
            b["direction"],
            b["correlation_id"],
            b["topic"],
            b["partition"],
            b["batch_index"],
            b["magic"],
            b["compression"],
            b["record_count"],
            b["size_bytes"],
            b["is_control"] or False,
        )
        for b in batches
    ]
    assert len(expected) > 1000 and sorted(got) == sorted(expected)
    # reconciliation: every batch read is a row of batches/ or an error row
    batch_errors = [e for e in pq.read_table(out / "errors").to_pylist() if e["kind"] == "batch"]
    assert summary.batches == len(batches) and summary.batch_errors == len(batch_errors)
    assert summary.batches_read == len(batches) + len(batch_errors)
    assert batch_errors == []  # the golden record data is all readable
    assert all(b["crc_ok"] for b in batches)

    # the legacy message sets, as the golden README counts them
    for name, kinds in LEGACY.items():
        legacy = Counter(
            (b["magic"], b["compression"])
            for b in batches
            if b["conn"].startswith(name) and b["magic"] < 2 and b["direction"] == "request"
        )
        assert dict(legacy) == kinds, name
        counts = {
            b["record_count"] for b in batches if b["conn"].startswith(name) and b["magic"] < 2
        }
        assert counts == ({1} if ("none" in name) else {5}), name
    # magic 2: read from the header; transactions with their control batches
    txn = [b for b in batches if b["conn"].startswith("kafka_python_txn_abort.jsonl")]
    fetched = [b for b in txn if b["direction"] == "response"]
    assert len(fetched) == 12 and sum(b["is_control"] for b in fetched) == 6
    assert all(b["is_transactional"] and b["producer_id"] >= 0 for b in fetched)
    zstd = [b for b in batches if b["compression"] == "zstd"]
    assert zstd and all(b["uncompressed_bytes"] is None and b["magic"] == 2 for b in zstd)
    plain_v2 = [b for b in batches if b["compression"] == "none" and b["magic"] == 2]
    assert all(b["uncompressed_bytes"] == b["size_bytes"] for b in plain_v2)
    legacy_gzip = [b for b in batches if b["magic"] < 2 and b["compression"] == "gzip"]
    assert all(b["uncompressed_bytes"] > 0 for b in legacy_gzip)

    # record_usage/: the sums of batches/ per client, direction, magic and codec
    usage = pq.read_table(out / "record_usage").to_pylist()
    sums: dict[tuple[Any, ...], list[int]] = {}
    for b in batches:
        key = (
            b["software_name"],
            b["software_version"],
            b["address"],
            tuple(b["client_ids"]),
            b["direction"],
            b["magic"],
            b["compression"],
        )
        total = sums.setdefault(key, [0, 0, 0])
        total[0] += 1
        total[1] += b["record_count"]
        total[2] += b["size_bytes"]
    assert {
        (
            u["software_name"],
            u["software_version"],
            u["address"],
            tuple(u["client_ids"]),
            u["direction"],
            u["magic"],
            u["compression"],
        ): [u["batches"], u["records"], u["bytes"]]
        for u in usage
    } == sums


#: What kafka-python's 4.x-era spec set lacks of the golden traffic: Produce v1/v2 and
#: Fetch v1/v2 (the versions Kafka 4.0 removed) from the kafka-python clients pinned to
#: 0.9/0.10, and two APIs the set does not have at all (librdkafka's).
# Not (71, 0): GetTelemetrySubscriptions, which kafka-python's spec set lacks, is optional
# (librdkafka sends it only to a broker that advertises it).
UNSUPPORTED = {(0, 1), (0, 2), (1, 1), (1, 2), (69, 0)}


def test_readiness_flags_exactly_the_legacy_traffic(golden: GoldenRun) -> None:
    readiness = pq.read_table(golden.out / "readiness").to_pylist()
    api_rows = [r for r in readiness if r["kind"] == "api"]
    formats = [r for r in readiness if r["kind"] == "message_format"]
    # one api row per client x api key x version that sent requests (from the capture files)
    # (a capture file has no addresses: the client id names the client)
    requests = Counter(
        (r.client_id, r.api_key, r.api_version)
        for r in golden.rows
        if r.direction == "request" and r.api_key is not None
    )
    assert all(r["address"] is None and len(r["client_ids"]) <= 1 for r in api_rows + formats)
    assert (
        Counter(
            {
                ((r["client_ids"] or [None])[0], r["api_key"], r["api_version"]): r["requests"]
                for r in api_rows
            }
        )
        == requests
    )
    flagged = {(r["api_key"], r["api_version"]) for r in api_rows if not r["supported_by_target"]}
    assert flagged == UNSUPPORTED
    assert all(
        r["supported_by_target"]
        for r in api_rows
        if (r["api_key"], r["api_version"]) not in UNSUPPORTED
    )
    # the clients that sent Produce v1/v2 are exactly the pinned producers, and their
    # message formats (magic 0 and 1) are flagged on rows of their own
    legacy_producers = {c for c, k, v in requests if k == 0 and v in (1, 2)}
    assert legacy_producers == {
        f"golden-kp-magic{m}-{c}"
        for m, c in (
            (0, "gzip"),
            (0, "none"),
            (0, "snappy"),
            (1, "gzip"),
            (1, "lz4"),
            (1, "none"),
            (1, "snappy"),
        )
    }
    unsupported_formats = {
        (r["client_ids"][0], r["magic"]) for r in formats if not r["supported_by_target"]
    }
    assert unsupported_formats == {(c, int(c[len("golden-kp-magic")])) for c in legacy_producers}
    assert all(r["supported_by_target"] for r in formats if r["magic"] == 2)
    assert all(
        "Kafka 4.0 removed message formats v0 and v1" in r["reason"]
        for r in formats
        if not r["supported_by_target"]
    )
    produce_v1 = next(r for r in api_rows if (r["api_key"], r["api_version"]) == (0, 1))
    assert produce_v1["target_versions"] == "3-13" and "is not accepted" in produce_v1["reason"]
    # the verdict and --fail-on-unready
    verdict = golden.summary.readiness
    assert verdict is not None and not verdict.ready
    breaking = set(verdict.breaking)
    assert len(breaking) == len({c for c, k, v in requests if (k, v) in UNSUPPORTED})
    assert verdict.text().splitlines()[0].startswith(f"{len(breaking)} of ")
    assert golden.summary.exit_status(fail_on_unready=True) == 1
    assert golden.summary.exit_status(fail_on_unready=False) == 0


def test_the_golden_report_in_chromium(golden: GoldenRun, tmp_path: Path) -> None:
    page = golden.out / "report.html"
    assert golden.summary.report == str(page)
    shot = tmp_path / "golden_report.png"
    result = load_page(
        page,
        shot,
        ready_js="document.querySelectorAll('.js-plotly-plot .main-svg').length >= 3",
        facts_js="""({
          plots: document.querySelectorAll('.js-plotly-plot').length,
          heatmapRows: document.getElementById('usage-heatmap').data[0].y.length,
          recordsBars: document.getElementById('records-chart').data.length,
          verdict: document.getElementById('verdict').innerText,
        })""",
    )
    assert result.ready and result.console_errors == []
    assert all(u.startswith(("file:", "data:")) for u in result.requests), result.requests
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 100_000
    width, height = struct.unpack(">II", data[16:24])
    assert width == 1400 and height > 3000
    usage = pq.read_table(golden.out / "usage").to_pylist()
    clients = {
        (u["software_name"], u["software_version"], u["address"], tuple(u["client_ids"]))
        for u in usage
        if u["requests"]
    }
    facts = result.facts
    assert facts["plots"] == 3 and facts["heatmapRows"] == len(clients)
    assert facts["recordsBars"] == len(
        {
            (u["magic"], u["compression"])
            for u in pq.read_table(golden.out / "record_usage").to_pylist()
        }
    )
    # the page's verdict box is the summary's first line (without the colon that leads
    # into the list the page shows as a table)
    assert golden.summary.readiness is not None
    headline = golden.summary.readiness.text().splitlines()[0].rstrip(":")
    assert facts["verdict"].strip() == headline


def test_pcap_decodes_to_the_capture_files_rows(
    spark: Any, golden: GoldenRun, tmp_path: Path
) -> None:
    recs = golden_records("librdkafka_producer.jsonl", 80)
    convs = [
        conversation_packets(rs, 42000 + n, mss=60) for n, rs in enumerate(by_conn(recs).values())
    ]
    build_pcap(tmp_path / "traffic.pcapng", convs, ng=True)
    (tmp_path / "traffic.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    df = read_frames(spark, [tmp_path])
    package = golden.package  # generated and shipped to the executors by the golden run
    decoded = df.mapInArrow(lambda it: decode_batches(it, package), DECODED_DDL)
    rows = [r.asDict() for r in decoded.collect()]

    def comparable(source: str) -> list[tuple[Any, ...]]:
        return sorted(
            tuple(v for k, v in r.items() if k not in ("conn", "src", "dst", "source"))
            for r in rows
            if r["conn"].startswith(source)
        )

    from_pcap, from_capture = comparable("traffic.pcapng#"), comparable("traffic.jsonl#")
    assert len(from_capture) == len(recs) and from_pcap == from_capture
    assert sum(r["status"] == "decoded" for r in rows) >= 4  # ApiVersions and Metadata
    # and the same values as the plain decoder
    decoder = Decoder(package)
    for r in rows:
        if r["status"] == "decoded":
            rec = next(
                x
                for x in recs
                if x["correlation_id"] == r["correlation_id"]
                and x["dir"] == r["direction"]
                and abs(x["ts"] - r["ts"]) < 1e-6
            )
            plain = decoder.decode(
                rec["dir"], rec["api_key"], rec["api_version"], bytes.fromhex(rec["frame"])
            )
            assert plain.body == r["body"]


def test_rotated_pcap_files_give_the_capture_files_rows(spark: Any, tmp_path: Path) -> None:
    """A TCP stream cut between two rotated files: reassembled across them, in Spark."""
    recs = golden_records("aiokafka_producer.jsonl", 60)
    convs = [conversation_packets(rs, 44000 + n) for n, rs in enumerate(by_conn(recs).values())]
    files = rotated_pcaps(tmp_path, convs)
    capture = tmp_path / "frames.jsonl"
    capture.write_text("".join(json.dumps(r) + "\n" for r in recs))
    segments = (
        spark.read.format("kafka-capture").option("rows", "segments").load([str(f) for f in files])
    )
    assert segments.rdd.getNumPartitions() == 2  # the files are read in parallel
    with pytest.raises(Exception, match="read_frames"):  # frames of pcaps only via read_frames
        spark.read.format("kafka-capture").load([str(tmp_path)]).collect()
    rows = read_frames(spark, [tmp_path]).collect()

    def comparable(source: str) -> list[tuple[Any, ...]]:
        return sorted(
            tuple(v for k, v in r.asDict().items() if k not in ("conn", "src", "dst", "source"))
            for r in rows
            if r["conn"].startswith(source)
        )

    from_capture = comparable("frames.jsonl#")
    assert len(from_capture) == len(recs) and comparable("cap") == from_capture
    # the very rows of the plain reassembly (names and addresses too)
    plain = pcap.pcap_rows([str(f) for f in files])
    assert sorted(tuple(r) for r in rows if r["conn"].startswith("cap")) == sorted(plain)
    assert len({r.conn for r in plain}) == len(convs)


def test_damaged_input_lands_in_errors_and_nothing_is_lost(spark: Any, tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    recs = golden_records("handmade_requests.jsonl", 8)
    request = next(r for r in recs if r["dir"] == "request")
    lines = [json.dumps(r) for r in recs]
    lines += [
        "{this is not json",
        json.dumps({**request, "frame": "zz"}),  # not hex
        json.dumps({**request, "frame": request["frame"][:-6]}),  # a cut frame
        json.dumps({**request, "dir": "response", "api_key": None, "api_version": None}),
    ]
    (inputs / "damaged.jsonl").write_text("\n".join(lines) + "\n")
    # a pcap whose capture missed a segment in the middle of a frame
    big = next(
        rs
        for rs in by_conn(golden_records("aiokafka_producer.jsonl", 40)).values()
        if any(len(r["frame"]) > 700 for r in rs)
    )
    packets = conversation_packets(big, 43000, mess=False)
    sizes = [len(bytes(p["TCP"].payload)) for p in packets]
    del packets[
        next(
            i
            for i in range(1, len(packets) - 1)
            if sizes[i] == 100 and sizes[i - 1] == 100 and sizes[i + 1] > 0
        )
    ]
    build_pcap(inputs / "gap.pcap", [packets])
    (inputs / "README.md").write_text("not an input")  # ignored: neither pcap nor .jsonl
    # record data that cannot be read: a magic-2 batch with an unknown magic (the rest of
    # that partition's data is lost to it), a legacy gzip wrapper whose deflate stream is
    # broken (that message alone); the frames themselves decode and re-encode
    produce = next(
        r
        for r in golden_records("kafka_python_records_gzip.jsonl")
        if (r["dir"], r["api_key"]) == ("request", 0)
    )
    frame = bytes.fromhex(produce["frame"])
    start = next(
        i for i in range(len(frame) - 17) if frame[i : i + 8] == bytes(8) and frame[i + 16] == 2
    )
    bad_magic = frame[: start + 16] + b"\x07" + frame[start + 17 :]
    legacy = next(
        r
        for r in golden_records("kafka_python_magic0_gzip.jsonl")
        if (r["dir"], r["api_key"]) == ("request", 0)
    )
    frame = bytes.fromhex(legacy["frame"])
    deflate = frame.index(b"\x1f\x8b\x08") + 10  # after the gzip member's header
    bad_gzip = (
        frame[:deflate]
        + bytes(b ^ 0xFF for b in frame[deflate : deflate + 8])
        + frame[deflate + 8 :]
    )
    (inputs / "records.jsonl").write_text(
        json.dumps({**produce, "frame": bad_magic.hex()})
        + "\n"
        + json.dumps({**legacy, "frame": bad_gzip.hex()})
        + "\n"
    )

    out = tmp_path / "out"
    # decoded with a bundled release's specs (--release 3.9): the last with Produce v0-2
    summary = run_pipeline(
        [inputs], out, specs=SpecSet.of_release("3.9"), spark=spark, progress=False
    )
    assert summary.spec_set == "Kafka 3.9.0"
    assert "  decoded with: Kafka 3.9.0\n" in summary.text()
    errors = pq.read_table(out / "errors").to_pylist()
    frame_errors = [e for e in errors if e["kind"] == "frame"]
    assert summary.nothing_lost
    assert summary.frames_read == len(lines) + len(big) + 2
    assert summary.errors == len(frame_errors)
    reasons = [e["reason"] for e in frame_errors]
    assert sum("not a capture record" in r for r in reasons) == 2
    assert any("capture gap" in r for r in reasons)
    assert any("request is not in the capture" in r for r in reasons)
    assert any(
        r.startswith("DecodeError") and e["correlation_id"] == request["correlation_id"]
        for r, e in zip(reasons, frame_errors)
    )
    assert summary.decoded + summary.errors == summary.frames_read
    # the unreadable record data: one error row each, counted in the reconciliation
    batch_errors = sorted((e for e in errors if e["kind"] == "batch"), key=lambda e: e["conn"])
    assert summary.batch_errors == len(batch_errors) == 2
    assert summary.batches_read == summary.batches + 2
    magic, gzip = sorted(batch_errors, key=lambda e: "legacy" in e["reason"])
    assert (
        "unknown magic 7" in magic["reason"]
        and magic["frame"] == bad_magic[start:][: len(magic["frame"])]
    )
    assert magic["topic"] and magic["partition"] == 0 and magic["api_name"] == "Produce"
    assert (
        "legacy gzip message (magic 0)" in gzip["reason"]
        and "cannot be decompressed" in gzip["reason"]
    )
    batches = pq.read_table(out / "batches").to_pylist()
    legacy_rows = [b for b in batches if b["conn"].startswith("records.jsonl") and b["magic"] == 0]
    assert len(legacy_rows) == 0 or all(b["record_count"] == 5 for b in legacy_rows)


def test_a_process_with_three_producers_is_one_client(spark: Any, tmp_path: Path) -> None:
    """Three kafka-python producers of one process, recorded by the fake broker (a capture
    with addresses), are one client: kafka-python at 127.0.0.1 with three client ids. Its
    newest versions are inferred from the broker's ApiVersions answer (KIP-35): below the
    broker's newest, so its own."""
    from kafka import KafkaProducer

    from kafka_specgen.fake_broker import FakeCluster

    newest = genpkg.CORPORA / "4.3.1"
    capture = tmp_path / "session.jsonl"
    with FakeCluster(newest, release="4.3", topics={"t": 1}, record=capture) as cluster:
        for n in range(3):
            producer = KafkaProducer(
                bootstrap_servers=cluster.bootstrap, client_id=f"app-{n}", max_block_ms=5000
            )
            try:
                producer.send("t", b"x").get(timeout=5)
            finally:
                producer.close(timeout=5)
        broker_produce = cluster.package.module("releases").BROKER_RELEASES["4.3.0"][0][1]
    produce_sent = max(
        r.api_version
        for r in fr.capture_rows(str(capture))
        if r.api_key == 0 and r.direction == "request"
    )
    assert produce_sent < broker_produce  # the test's premise: kafka-python stops below

    out = tmp_path / "out"
    summary = run_pipeline(
        [capture], out, specs=[newest], target_release="4.0", spark=spark, progress=False
    )
    assert summary.nothing_lost and summary.readiness is not None
    usage = pq.read_table(out / "usage").to_pylist()
    assert {(u["software_name"], u["address"], tuple(u["client_ids"])) for u in usage} == {
        ("kafka-python", "127.0.0.1", ("app-0", "app-1", "app-2"))
    }
    readiness = pq.read_table(out / "readiness").to_pylist()
    produce = [r for r in readiness if r["api_key"] == 0]
    assert {r["client_newest"] for r in produce} == {
        f"v{produce_sent} (below the broker's v{broker_produce})"
    }
    assert {(r["verdict"], r["will_use"], r["target"]) for r in produce} == {
        ("ok", produce_sent, "Kafka 4.0.0")
    }
    assert summary.readiness.clients == 1 and summary.readiness.ready


def test_every_capture_survives(spark: Any, tmp_path: Path) -> None:
    """Each kind of damage beside good input: bad lines and out-of-range numbers in a
    capture file, a pcapng whose section header is damaged, a truncated pcap, a pcap
    record that claims 2 GiB, a request log line that is not JSON. Every damaged part is a
    counted error row; every good file is read whole."""
    from tests.support.request_log import entry_line

    inputs = tmp_path / "in"
    inputs.mkdir()
    shutil.copy(GOLDEN / "librdkafka_producer.jsonl", inputs / "good.jsonl")
    good_rows = list(fr.capture_rows(str(inputs / "good.jsonl")))
    request = json.loads((inputs / "good.jsonl").read_text().splitlines()[0])
    (inputs / "numbers.jsonl").write_text(
        "\n".join(
            [
                json.dumps({**request, "correlation_id": 2**40}),
                json.dumps({**request, "api_key": -(2**20)}),
                json.dumps({**request, "src": 12}),
                json.dumps({**request, "ts": "soon"}),
                "[" * 50_000 + "]" * 50_000,
                json.dumps(request),
            ]
        )
        + "\n"
    )
    recs = next(iter(by_conn(golden_records("librdkafka_producer.jsonl", 30)).values()))
    build_pcap(inputs / "fine.pcap", [conversation_packets(recs, 46000)])
    for name, port in (("cut.pcap", 46100), ("bomb.pcap", 46200)):  # connections of their own
        build_pcap(inputs / name, [conversation_packets(recs, port)])
    cut = (inputs / "cut.pcap").read_bytes()
    (inputs / "cut.pcap").write_bytes(cut[: len(cut) - 9])
    fine = (inputs / "bomb.pcap").read_bytes()
    bomb = bytearray(fine)
    first = struct.unpack_from("<I", fine, 24 + 8)[0]
    bomb[24 + 16 + first + 8 : 24 + 16 + first + 12] = struct.pack("<I", 2**31 - 1)
    (inputs / "bomb.pcap").write_bytes(bytes(bomb))
    build_pcap(inputs / "header.pcapng", [conversation_packets(recs, 47000)], ng=True)
    ng = bytearray((inputs / "header.pcapng").read_bytes())
    ng[8:12] = b"\x00\x00\x00\x00"  # the section header's byte-order magic
    (inputs / "header.pcapng").write_bytes(bytes(ng))
    log = entry_line(
        1.0,
        {
            "requestApiKey": 3,
            "requestApiVersion": 12,
            "correlationId": 1,
            "clientId": "a",
            "requestApiKeyName": "METADATA",
        },
        {},
        {},
        "10.0.0.2:9092-10.0.0.7:5000-0",
        None,
    )
    (inputs / "kafka-request.log").write_text(
        log + "[2025-01-01 00:00:00,000] DEBUG Completed request:{oops (kafka.request.logger)\n"
    )

    summary = run_pipeline(
        [inputs], tmp_path / "out", specs=[golden_specs()], spark=spark, progress=False
    )
    assert summary.nothing_lost
    errors = pq.read_table(tmp_path / "out" / "errors").to_pylist()
    reasons = [e["reason"] for e in errors if e["kind"] == "frame"]
    for needle in (
        "correlation_id 1099511627776 outside",
        "api_key -1048576 outside",
        "src is int 12, not text",
        "ts is str 'soon'",
        "RecursionError",
        "cut.pcap: file ends",
        "bomb.pcap: packet 2 claims 2147483647 bytes",
        "header.pcapng: damaged section header",
        "not a request log entry",
    ):
        assert sum(needle in r for r in reasons) >= 1, needle
    conformance = pq.read_table(tmp_path / "out" / "conformance").to_pylist()
    usage = pq.read_table(tmp_path / "out" / "usage").to_pylist()
    assert summary.logged == 1 and {u["source"] for u in usage} == {"bytes", "request log"}
    # the good capture file, and the good pcap, are read whole
    messages = tmp_path / "out" / "messages"
    conns = {
        r["conn"].partition("#")[0]
        for table in messages.iterdir()
        for r in pq.read_table(table, columns=["conn"]).to_pylist()
    }
    assert {"good.jsonl", "fine.pcap", "numbers.jsonl"} <= conns
    decoded_good = sum(
        1
        for table in messages.iterdir()
        for r in pq.read_table(table, columns=["conn"]).to_pylist()
        if r["conn"].startswith("good.jsonl#")
    )
    plain = [d for d in decode_rows(good_rows, summary.package) if d.status == "decoded"]
    assert decoded_good == len(plain)
    assert sum(c["frames"] for c in conformance) == summary.decoded + summary.errors


def test_message_tables_written_by_spark_equal_the_drivers(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Small inputs have their messages/ tables written on the driver: the same rows as
    Spark's own writer (``from_json``) gives, for every message of captures that hold
    bytes fields, nested arrays, nulls and record data."""
    from kafka_specgen.pipeline.tables import messages

    inputs = tmp_path / "in"
    inputs.mkdir()
    for name in (
        "librdkafka_txn_abort.jsonl",
        "kafka_python_admin.jsonl",
        "aiokafka_consumer.jsonl",
    ):
        shutil.copy(GOLDEN / name, inputs / name)
    driver = run_pipeline(
        [inputs], tmp_path / "driver", specs=[golden_specs()], spark=spark, progress=False
    )
    monkeypatch.setattr(messages, "DRIVER_ROWS", 0)
    by_spark = run_pipeline(
        [inputs], tmp_path / "spark", specs=[golden_specs()], spark=spark, progress=False
    )
    assert driver.message_tables == by_spark.message_tables and len(driver.message_tables) > 10

    def rows(folder: Path) -> list[str]:
        return sorted(
            json.dumps(r, sort_keys=True, default=repr) for r in pq.read_table(folder).to_pylist()
        )

    for name in driver.message_tables:
        assert rows(tmp_path / "driver" / "messages" / name) == rows(
            tmp_path / "spark" / "messages" / name
        ), name


def test_small_input_read_by_the_driver_gives_the_data_sources_tables(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Small input in local mode is read by the driver and its tables written by the
    driver: every table holds the rows the Python data source, the TCP shuffle and
    Spark's writers give (capture files, rotated pcap files that cut a stream, a pcap
    with a capture gap, record batches)."""
    from kafka_specgen.pipeline import stage

    inputs = tmp_path / "in"
    inputs.mkdir()
    for name in ("kafka_python_records_gzip.jsonl", "librdkafka_txn_abort.jsonl"):
        shutil.copy(GOLDEN / name, inputs / name)
    recs = golden_records("aiokafka_producer.jsonl", 60)
    convs = [conversation_packets(rs, 44000 + n) for n, rs in enumerate(by_conn(recs).values())]
    rotated_pcaps(inputs, convs)
    packets = conversation_packets(golden_records("kafka_python_admin.jsonl", 30), 45000)
    del packets[len(packets) // 2]
    build_pcap(inputs / "gap.pcap", [packets])

    def tables(out: Path) -> dict[str, list[str]]:
        return {
            str(folder.relative_to(out)): sorted(
                json.dumps(r, sort_keys=True, default=repr)
                for r in pq.read_table(folder).to_pylist()
            )
            for folder in sorted(out.rglob("*"))
            if folder.is_dir() and any(folder.glob("*.parquet"))
        }

    def run(out: Path) -> Summary:
        return run_pipeline(
            [inputs],
            out,
            specs=[golden_specs()],
            target_release="4.0",
            spark=spark,
            progress=False,
        )

    assert stage.reads_on_driver(spark, [inputs])
    by_driver = run(tmp_path / "driver")
    monkeypatch.setattr(stage, "SMALL_INPUT", -1)
    assert not stage.reads_on_driver(spark, [inputs])
    by_spark = run(tmp_path / "spark")
    assert by_driver.nothing_lost and by_spark.nothing_lost
    assert by_driver.errors > 0 and by_driver.batches > 0
    driver_tables, spark_tables = tables(tmp_path / "driver"), tables(tmp_path / "spark")
    assert {"errors", "batches", "usage", "readiness"} <= set(driver_tables)
    assert driver_tables == spark_tables
    # Spark wrote errors/ and batches/ in the one run, the driver in the other
    assert not list((tmp_path / "driver" / "errors").glob("_SUCCESS"))
    assert list((tmp_path / "spark" / "errors").glob("_SUCCESS"))
