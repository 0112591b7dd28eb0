"""Smoke test of the benchmark (``make bench``): it runs and reports, nothing is timed here.

Runs ``bench/run.py --quick`` on one small case in a subprocess (writing to a temp folder,
not over ``bench/results.json``) and checks the report's shape and that our bytes and both
peers' bytes were identical. No assertion looks at a timing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_quick_runs_and_checks_bytes(tmp_path: Path) -> None:
    out_json, out_md = tmp_path / "results.json", tmp_path / "RESULTS.md"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "run.py"),
            "--quick",
            "--cases",
            "api_versions_request_v3",
            "--skip",
            "generate",
            "--json",
            str(out_json),
            "--markdown",
            str(out_md),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(out_json.read_text())
    assert {
        "machine",
        "options",
        "cases",
        "identity",
        "memory",
        "import",
        "generate",
        "targets",
        "load_average_end",
    } <= results.keys()
    assert {"cpu", "cores", "python", "load_average_start"} <= results["machine"].keys()
    assert results["identity"]["passed"] is True
    case = results["cases"]["api_versions_request_v3"]
    assert case["identical"] == {"kio": True, "kafka_python": True}
    assert case["excluded"] == {}
    for op in ("encode", "decode"):
        timings = case["timings"][op]
        assert set(timings) == {"ours", "kio", "kafka_python"}
        assert {"ns_per_op", "ops_per_s", "speedup_vs_kio", "speedup_vs_kafka_python"} <= timings[
            "ours"
        ].keys()
    assert {"ours", "kio", "kafka_python"} <= results["memory"].keys()
    assert "median_ms" in results["import"]["kafka_messages.metadata"]
    assert "skipped" in results["generate"]
    assert any(row["case"] == "api_versions_request_v3" for row in results["targets"])
    markdown = out_md.read_text()
    assert "## Targets" in markdown and "| api_versions_request_v3 |" in markdown
