"""One host, four apps (``tests/support/mixed_fleet.py``): kafka-python pinned to Kafka 0.10
(``legacy-billing``), confluent-kafka (``orders-service``), aiokafka (``inventory``) and a
raw socket client (``raw-metrics``), recorded live through ``kafka-specgen capture`` in
front of Tansu, judged against Kafka 4.0.

Three of the apps report no software: they stay three clients (told apart by client id),
none lends its versions to another, and exactly the pinned client's breaks are flagged,
with a red cross on each of its cells that breaks; the same traffic written as the
broker's request log gives the same verdict.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from kafka_specgen.pipeline.figures import usage_heatmap
from kafka_specgen.pipeline.job import Summary, run_pipeline
from kafka_specgen.pipeline.target import Target
from tests.pipeline.conftest import golden_specs
from tests.support.mixed_fleet import record_mixed_fleet
from tests.support.request_log import log_from_capture

PINNED = "software unknown at 127.0.0.1 ('legacy-billing')"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_mixed_fleet(tmp_path_factory.mktemp("fleet") / "fleet.jsonl")


@pytest.fixture(scope="module")
def judged(
    spark: Any, fleet: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Summary, Path]:
    out = tmp_path_factory.mktemp("fleet-out")
    summary = run_pipeline(
        [fleet],
        out,
        specs=[golden_specs()],
        target_release="4.0",
        spark=spark,
        progress=False,
        report=True,
    )
    return summary, out


def expected_breaks(fleet: Path, client_id: str) -> set[str]:
    """What the client sent that Kafka 4.0 does not accept, read from the capture alone."""
    import json

    target = Target.release("4.0")
    out = set()
    for line in fleet.read_text().splitlines():
        rec = json.loads(line)
        if rec["dir"] != "request" or rec["client_id"] != client_id:
            continue
        name, valid = target.accepted[rec["api_key"]]
        if rec["api_version"] not in valid:
            out.add(f"{name} v{rec['api_version']}")
    return out


def test_four_apps_on_one_host_are_four_clients(judged: tuple[Summary, Path]) -> None:
    summary, out = judged
    assert summary.nothing_lost and summary.errors == 0
    usage = pq.read_table(out / "usage").to_pylist()
    clients = {(u["software_name"], u["address"], tuple(u["client_ids"])) for u in usage}
    assert clients == {
        (None, "127.0.0.1", ("legacy-billing",)),
        (None, "127.0.0.1", ("inventory",)),
        (None, "127.0.0.1", ("raw-metrics",)),
        ("confluent-kafka-python", "127.0.0.1", ("orders-service",)),
    }
    assert {u["source"] for u in usage} == {"bytes"}


def test_exactly_the_pinned_clients_breaks_are_flagged(
    judged: tuple[Summary, Path], fleet: Path
) -> None:
    summary, out = judged
    verdict = summary.readiness
    assert verdict is not None and verdict.state == "breaks" and verdict.clients == 4
    wanted = expected_breaks(fleet, "legacy-billing")
    assert {"Produce v2", "Fetch v2"} <= wanted  # the test's premise
    assert set(verdict.breaking) == {PINNED}
    assert set(verdict.breaking[PINNED]) == wanted | {"message format v1"}
    assert not verdict.gaps, verdict.gaps
    assert summary.exit_status(fail_on_unready=True) == 1
    readiness = pq.read_table(out / "readiness").to_pylist()
    for row in readiness:
        pinned = row["client_ids"] == ["legacy-billing"]
        if not pinned:
            assert row["verdict"] in ("ok", "optional"), row
        elif row["kind"] == "api" and row["api_name"] in ("Produce", "Fetch"):
            # no version borrowed from the other apps: its own Produce v2 and Fetch v2
            assert row["verdict"] == "breaks" and row["will_use"] is None, row
            assert "v2 is the client's newest: the broker offered" in row["reason"], row
    # what to do: the software is unknown, so the versions it must move to
    [fix] = verdict.fixes[PINNED]
    assert fix.startswith("software unknown; it must send Produce v3 or later, Fetch v4 or later")
    assert "kafka-python 2.0.2" in fix


def test_the_heatmap_crosses_exactly_the_pinned_clients_breaking_cells(
    judged: tuple[Summary, Path], fleet: Path
) -> None:
    _, out = judged
    usage = pq.read_table(out / "usage").to_pylist()
    readiness = pq.read_table(out / "readiness").to_pylist()
    figure = usage_heatmap(usage, readiness)
    crosses = [t for t in figure.data if t.type == "scatter" and t.showlegend]
    assert [t.name for t in crosses] == ["not accepted by the target"]
    cells = set(zip(crosses[0].y, crosses[0].x))
    names = {b.split(" v")[0] for b in expected_breaks(fleet, "legacy-billing")}
    assert cells == {
        (PINNED, f"{name} ({key})") for name, key in (("Produce", 0), ("Fetch", 1)) if name in names
    }
    assert (out / "report.html").stat().st_size > 1_000_000


def test_the_request_log_of_the_same_traffic_gives_the_same_verdict(
    spark: Any, judged: tuple[Summary, Path], fleet: Path, tmp_path: Path
) -> None:
    summary, _ = judged
    log = tmp_path / "kafka-request.log"
    lines = log_from_capture(fleet, log, summary.package)
    out = tmp_path / "out"
    from_log = run_pipeline(
        [log], out, specs=[golden_specs()], target_release="4.0", spark=spark, progress=False
    )
    assert from_log.frames_read == from_log.logged == lines and from_log.nothing_lost
    assert from_log.decoded == 0 and from_log.errors == 0
    verdict, bytes_verdict = from_log.readiness, summary.readiness
    assert verdict is not None and bytes_verdict is not None
    # the log has no record batches: the message format of the pinned Produce v2 is unknown
    assert {k: [i for i in v if "format" not in i] for k, v in verdict.breaking.items()} == {
        k: [i for i in v if "format" not in i] for k, v in bytes_verdict.breaking.items()
    }
    assert [g.kind for g in verdict.gaps] == ["no_batches"] and verdict.gaps[0].clients == [PINNED]
    usage = pq.read_table(out / "usage").to_pylist()
    assert {u["source"] for u in usage} == {"request log"}
    assert {(u["software_name"], tuple(u["client_ids"])) for u in usage} == {
        (None, ("legacy-billing",)),
        (None, ("inventory",)),
        (None, ("raw-metrics",)),
        ("confluent-kafka-python", ("orders-service",)),
    }
    readiness = pq.read_table(out / "readiness").to_pylist()
    assert {r["source"] for r in readiness if r["kind"] == "api"} == {"request log"}
    assert not (out / "conformance").exists() or not pq.read_table(out / "conformance").num_rows
