"""The pipeline on a real Spark standalone cluster: a master and two workers on loopback,
started from pyspark's own ``bin/spark-class`` (``tests/support/spark_cluster.py``), the job
submitted with ``spark-submit generator/kafka_specgen/pipeline/submit.py`` as docs/pipeline.md says.
Its tables must equal those of a local-mode run of the same command over the same input:
nothing lost, the same counts, the same rows.

The input mixes capture files (record batches of every kind: legacy magic 0/1, codecs,
transactions with control batches) and two rotated pcap files that cut TCP streams, so
the TCP-segment shuffle runs across the executors.

A second test runs the pipeline as a user installs it: the wheel in a fresh venv drives
the cluster, whose executors have pyarrow and nothing of kafka-specgen.

This takes about eight minutes on two busy cores (the cluster's JVMs, executors, two venvs
and the runs), so ``make test`` does not collect it (its name does not start with
``test_``); ``make test-cluster`` runs it, and so does ``.ci/run``.
"""

from __future__ import annotations

import json
import subprocess
import shutil
import threading
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.support import genpkg
from tests.support.spark_cluster import spark_submit, standalone_cluster
from tests.support.pcaps import (
    by_conn,
    conversation_packets,
    golden_records,
    rotated_pcaps,
)

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
SUBMIT = ROOT / "generator" / "kafka_specgen" / "pipeline" / "submit.py"
FILES = (
    "kafka_python_magic0_snappy.jsonl",
    "kafka_python_magic1_gzip.jsonl",
    "librdkafka_records_zstd.jsonl",
    "librdkafka_txn_abort.jsonl",
    "aiokafka_records_lz4.jsonl",
    "kafka_python_admin.jsonl",
)
#: Columns filled by ``first()`` over a group: any sample will do, so they may differ.
SAMPLES = {"sample_first_diff", "sample_frame", "sample_error"}


def table_rows(folder: Path) -> list[tuple[Any, ...]]:
    rows = pq.read_table(folder).to_pylist()
    return sorted(
        (tuple((k, repr(v)) for k, v in sorted(r.items()) if k not in SAMPLES) for r in rows)
    )


@pytest.mark.slow
def test_cluster_run_equals_local_run(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    for name in FILES:
        shutil.copy(GOLDEN / name, inputs / name)
    recs = golden_records("aiokafka_producer.jsonl", 60)
    convs = [conversation_packets(rs, 45000 + n) for n, rs in enumerate(by_conn(recs).values())]
    rotated_pcaps(inputs, convs)
    args = [
        "--input",
        str(inputs),
        "--release",  # Kafka 3.9's bundled specs: the newest with the legacy Produce versions
        "3.9",
        "--target-specs",
        str(genpkg.kafka_python_specs()),
        "--report",
        "--quiet",
    ]

    results: dict[str, Any] = {}

    def local() -> None:  # runs while the cluster comes up
        try:
            results["local"] = spark_submit(
                "local[2]",
                SUBMIT,
                [*args, "--out", str(tmp_path / "local")],
                log=tmp_path / "local.log",
            )
        except BaseException as exc:  # re-raised below
            results["local"] = exc

    thread = threading.Thread(target=local)
    thread.start()
    try:
        with standalone_cluster(tmp_path / "cluster", workers=2) as cluster:
            on_cluster = spark_submit(
                cluster.url,
                SUBMIT,
                [*args, "--out", str(tmp_path / "cluster_out")],
                log=tmp_path / "cluster.log",
                conf={"spark.executor.memory": "768m", "spark.cores.max": "2"},
            )
            state = cluster.state()
    finally:
        thread.join(timeout=900)
    local_run = results["local"]
    if isinstance(local_run, BaseException):
        raise local_run
    log = (tmp_path / "cluster.log").read_text()
    assert local_run.returncode == 0, (tmp_path / "local.log").read_text()[-3000:]
    assert on_cluster.returncode == 0, log[-3000:]

    # it really ran on the cluster: the app finished there, with an executor on each worker
    apps = state["completedapps"] + state["activeapps"]  # type: ignore[operator]
    assert len(apps) == 1 and apps[0]["name"] == "kafka-specgen pipeline", apps
    assert log.count("Granted executor ID") >= 2

    # the same summary: nothing lost, the same counts
    def summary(text: str) -> list[str]:
        lines = text.splitlines()
        start = next(
            i for i, line in enumerate(lines) if line.startswith("kafka-specgen pipeline:")
        )
        return [
            line
            for line in lines[start:]
            if not line.lstrip().startswith("tables in")  # paths and timings
        ]

    assert f"(Spark {cluster.url}: start" in on_cluster.stdout
    assert "(Spark local[2]: start" in local_run.stdout
    assert "(nothing lost)" in on_cluster.stdout
    assert summary(on_cluster.stdout) == summary(local_run.stdout)

    # and the same tables, row for row
    local_out, cluster_out = tmp_path / "local", tmp_path / "cluster_out"
    for table in ("usage", "conformance", "errors", "batches", "record_usage", "readiness"):
        a, b = table_rows(local_out / table), table_rows(cluster_out / table)
        assert a == b, table
        assert a or table == "errors", table
    messages = sorted(p.name for p in (local_out / "messages").iterdir())
    assert messages == sorted(p.name for p in (cluster_out / "messages").iterdir())
    for name in messages:
        assert table_rows(local_out / "messages" / name) == table_rows(
            cluster_out / "messages" / name
        ), name
    batches = pq.read_table(cluster_out / "batches").to_pylist()
    assert {b["magic"] for b in batches} == {0, 1, 2}
    assert any(b["is_control"] for b in batches)
    conns = {
        r["conn"].partition("#")[0]
        for name in messages
        for r in pq.read_table(cluster_out / "messages" / name, columns=["conn"]).to_pylist()
    }
    # every capture file, and the pcap connections (named after their first packet, all in
    # cap0.pcap; their streams go on in cap1.pcap)
    assert conns == set(FILES) | {"cap0.pcap"}
    assert (cluster_out / "report.html").stat().st_size > 1_000_000
    assert json.dumps(state).count('"ALIVE"') >= 2  # both workers still up at the end


@pytest.mark.slow
def test_the_wheel_runs_on_the_cluster(tmp_path: Path) -> None:
    """The pipeline as a user installs it, on the master and two workers: the driver is
    ``kafka-specgen`` from a fresh venv holding the wheel (with the ``spark`` extra); the
    executors run a Python that has pyarrow and nothing of kafka-specgen, so every module
    they import comes from what the job ships. It flags the pinned client of a mixed fleet,
    as in local mode."""
    from tests.support.mixed_fleet import record_mixed_fleet
    from tests.support.wheel import build_wheel, clean_env, fresh_venv

    wheel = build_wheel(tmp_path / "wheel")
    driver = fresh_venv(tmp_path / "driver", f"{wheel}[spark]")
    executors = fresh_venv(tmp_path / "executors", "pyarrow>=15")
    python = executors / "bin" / "python"
    probe = subprocess.run([str(python), "-c", "import kafka_specgen"], capture_output=True)
    assert probe.returncode != 0  # the test's premise: nothing installed to fall back on
    fleet = record_mixed_fleet(tmp_path / "fleet.jsonl")
    work = tmp_path / "empty"
    work.mkdir()
    with standalone_cluster(tmp_path / "cluster", workers=2) as cluster:
        env = clean_env(
            tmp_path,
            PYSPARK_PYTHON=str(python),
            SPARK_LOCAL_IP="127.0.0.1",
            PYSPARK_SUBMIT_ARGS="--conf spark.executor.memory=768m --conf spark.cores.max=2 "
            "--conf spark.ui.enabled=false pyspark-shell",
        )
        result = subprocess.run(
            [str(driver / "bin" / "kafka-specgen"), "pipeline", "--master", cluster.url]
            + ["--input", str(fleet), "--out", str(work / "tables"), "--quiet"]
            + ["--target-release", "4.0", "--fail-on-unready"],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        master_log = (tmp_path / "cluster" / "master.log").read_text(errors="replace")
    assert result.returncode == 1, result.stdout + result.stderr[-3000:] + cluster.logs()
    assert f"(Spark {cluster.url}: start" in result.stdout
    assert "readiness: 1 of 4 clients would break on the target (Kafka 4.0" in result.stdout
    assert "software unknown at 127.0.0.1 ('legacy-billing')" in result.stdout
    # the master ran it: the application registered, an executor launched on each worker
    assert master_log.count("Registering app kafka-specgen pipeline") == 1, master_log[-3000:]
    assert master_log.count("Launching executor") >= 2, master_log[-3000:]
    assert "Traceback" not in result.stderr
