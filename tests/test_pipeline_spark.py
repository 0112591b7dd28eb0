"""The PySpark pipeline end to end, on one session-scoped local SparkSession (the JVM start
costs seconds: these tests are few; the plain-Python parts are tested in
test_pipeline_reassembly.py).

- the golden captures through ``run_pipeline``: row counts per table, usage rows for the
  clients that made them, 100 % conformance of what decodes, errors exactly what the plain
  decoder refuses, decoded values equal the non-Spark decoder's;
- a pcap of known frames (split over segments, out of order, retransmitted) read by
  ``read_frames`` decodes to the same rows as the capture file of the frames, and so do
  rotated pcap files that cut a TCP stream (reassembled across the files);
- damaged input lands in ``errors/`` and nothing is lost.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

import pytest

# `make test` installs the spark extra and .ci/run installs Java: a missing piece is a
# failure to see, not a reason to skip.
if (
    shutil.which("java") is None
    or subprocess.run(["java", "-version"], capture_output=True, check=False).returncode != 0
):
    raise RuntimeError("PySpark needs Java 17+ on PATH (see README: the pipeline)")

import pyarrow.parquet as pq  # noqa: E402

from kafka_specgen.pipeline import frames as fr  # noqa: E402
from kafka_specgen.pipeline import pcap  # noqa: E402
from kafka_specgen.pipeline.datasource import (
    KafkaCaptureDataSource,
    input_files,
    read_frames,
)  # noqa: E402
from kafka_specgen.pipeline.decode import (
    DECODED_COLUMNS,
    DECODED_DDL,
    Decoder,
    decode_batches,
)  # noqa: E402
from kafka_specgen.pipeline.decode import decode_rows  # noqa: E402
from kafka_specgen.pipeline.job import run_pipeline, spark_session  # noqa: E402
from tests import genpkg  # noqa: E402
from tests.test_pipeline_reassembly import (  # noqa: E402
    build_pcap,
    by_conn,
    conversation_packets,
    golden_records,
    rotated_pcaps,
)

GOLDEN = Path(__file__).resolve().parent / "golden"


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    session = spark_session(
        "local[2]",
        quick_jvm=True,
        conf={
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.driver.memory": "1g",
        },
    )
    session.sparkContext.setLogLevel("ERROR")
    session.dataSource.register(KafkaCaptureDataSource)
    yield session
    session.stop()


def golden_specs() -> Path:
    """The newest full corpus: Kafka trunk (../shared), else the kafka-python wheel's specs."""
    trunk = genpkg.CORPORA / "trunk-2024-10" / "message"
    return trunk if trunk.is_dir() else genpkg.kafka_python_specs()


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


def test_golden_captures_through_the_pipeline(spark: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = run_pipeline(
        [GOLDEN],
        out,
        specs=[golden_specs()],
        spark=spark,
        workdir=tmp_path / "work",
        progress=False,
    )
    package = summary["package"]

    # the plain loop over the same frames, same package
    rows = [r for path, _ in input_files([str(GOLDEN)]) for r in fr.capture_rows(path)]
    plain = [dict(zip(DECODED_COLUMNS, r)) for r in decode_rows(rows, package)]
    plain_errors = [p for p in plain if p["status"] == "error"]
    assert summary["nothing_lost"]
    assert summary["frames_read"] == len(rows) == summary["decoded"] + summary["errors"]
    assert summary["errors"] == len(plain_errors)
    assert summary["mismatches"] == 0 and summary["reencoded_equal"] == summary["decoded"]

    # errors/: exactly the frames the plain decoder refuses (broker/client protocol quirks)
    errors = pq.read_table(out / "errors").to_pylist()
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
        and (u["client_id"] or "").startswith("aiokafka")
        or u["software_name"] is None
        for u in usage
    )  # aiokafka speaks ApiVersions v0
    assert sum(u["frames"] for u in usage) == sum(r.api_key is not None for r in rows)
    kp = [u for u in usage if u["software_name"] == "kafka-python"]
    assert {u["api_name"] for u in kp} >= {"ApiVersions", "Produce", "Metadata"}
    assert all(u["first_ts"] <= u["last_ts"] for u in usage)

    # messages/<Message>/: one table per decoded message, values equal the plain decoder's
    decoded = [p for p in plain if p["status"] == "decoded"]
    per_message = Counter(p["message"] for p in decoded)
    assert sorted(p.name for p in (out / "messages").iterdir()) == sorted(per_message)
    schemas = __import__(f"{package}.spark_schemas", fromlist=["SCHEMAS"]).SCHEMAS
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


def test_pcap_decodes_to_the_capture_files_rows(spark: Any, tmp_path: Path) -> None:
    recs = golden_records("librdkafka_producer.jsonl", 80)
    convs = [
        conversation_packets(rs, 42000 + n, mss=60) for n, rs in enumerate(by_conn(recs).values())
    ]
    build_pcap(tmp_path / "traffic.pcapng", convs, ng=True)
    (tmp_path / "traffic.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    df = read_frames(spark, [tmp_path])
    decoded = df.mapInArrow(lambda it: decode_batches(it, "kafka_messages"), DECODED_DDL)
    rows = [r.asDict() for r in decoded.collect()]

    def comparable(source: str) -> list[tuple[Any, ...]]:
        return sorted(
            tuple(v for k, v in r.items() if k not in ("conn", "src", "dst"))
            for r in rows
            if r["conn"].startswith(source)
        )

    from_pcap, from_capture = comparable("traffic.pcapng#"), comparable("traffic.jsonl#")
    assert len(from_capture) == len(recs) and from_pcap == from_capture
    assert sum(r["status"] == "decoded" for r in rows) >= 4  # ApiVersions and Metadata
    # and the same values as the plain decoder
    decoder = Decoder("kafka_messages")
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
            tuple(v for k, v in r.asDict().items() if k not in ("conn", "src", "dst"))
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

    out = tmp_path / "out"
    summary = run_pipeline([inputs], out, spark=spark, progress=False)
    errors = pq.read_table(out / "errors").to_pylist()
    assert summary["nothing_lost"]
    assert summary["frames_read"] == len(lines) + len(big)
    assert summary["errors"] == len(errors)
    reasons = [e["reason"] for e in errors]
    assert sum("not a capture record" in r for r in reasons) == 2
    assert any("capture gap" in r for r in reasons)
    assert any("request is not in the capture" in r for r in reasons)
    assert any(
        r.startswith("DecodeError") and e["correlation_id"] == request["correlation_id"]
        for r, e in zip(reasons, errors)
    )
    assert summary["decoded"] + summary["errors"] == summary["frames_read"]
