"""Smoke test of the benchmark (``make bench``): it runs and reports, nothing is timed here.

Runs ``bench/run.py --quick --no-compiled`` on one small case in a subprocess (writing to a
temp folder, not over ``bench/results.json``) and checks the report's shape and that our bytes
and both peers' bytes were identical. The mypyc build of the whole package takes ~40 s, too
long here: the compiled path is checked with a build of two small modules instead (~6 s),
through ``bench/compile.py``'s ``build`` and ``bench/run.py``'s own functions. No assertion
looks at a timing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench import run
from bench.compile import BuildError, build, with_imports

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "generated" / "kafka_messages"


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
            "--no-compiled",
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
    assert results["compiled"] == {"skipped": "--no-compiled"}
    assert case["compiled"] is False
    assert any(row["case"] == "api_versions_request_v3" for row in results["targets"])
    markdown = out_md.read_text()
    assert "## Targets" in markdown and "| api_versions_request_v3 |" in markdown


def test_with_imports_follows_relative_imports() -> None:
    # metadata imports the runtime's codec modules, which import errors; every module comes
    # with the package's __init__.
    assert with_imports(SOURCE, ["metadata"]) == [
        "__init__",
        "_codec",
        "_diagnose",
        "_json",
        "_plan",
        "_read",
        "_write",
        "errors",
        "metadata",
    ]
    assert with_imports(SOURCE, ["errors"]) == ["__init__", "errors"]


def test_compiled_build_is_benchmarked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Two small modules compiled, under another package name; the rest, api_versions with
    # the case's class included, stays .py: still another package, so the same path.
    package = "kafka_messages_smoke_mypyc"
    assert build(SOURCE, tmp_path, package, ["__init__", "errors"]) == ["__init__", "errors"]
    assert not (tmp_path / "build").exists()
    assert list((tmp_path / package).glob("errors.*.so"))
    monkeypatch.syspath_prepend(str(tmp_path))

    # run.py's path for the compiled build: checked against the pure-Python build, timed
    # in the same loops, reported in the targets and the tables.
    side = run.Side("kafka_messages", sorted(run.SPECS.glob("*.json")))
    side.compiled = package
    case = run.CASES["api_versions_request_v3"]
    prep = run.prepare(case, side, {})
    assert set(prep.decoders) == {"ours", "ours_compiled"}
    assert prep.decoders["ours_compiled"]().to_dict() == prep.decoders["ours"]().to_dict()
    timings = run.time_case(prep, repeats=1, target_ns=1e5)
    compiled = timings["decode"]["ours_compiled"]
    assert "speedup_vs_ours" in compiled and "speedup_vs_kio" not in compiled
    results = {
        "machine": run.machine(),
        "options": {"quick": True, "repeats": 1},
        "compiled": {"repo": {"package": package, "modules": ["__init__", "errors"]}},
        "cases": {
            case.id: {
                "shape": case.shape,
                "bytes": prep.size,
                "excluded": {"kio": "left out", "kafka_python": "left out"},
                "compiled": True,
                "timings": timings,
            }
        },
    }
    results["targets"] = run.targets(results)
    markdown = run.markdown(results)
    assert "| case | ours | ours (mypyc) | kio |" in markdown
    assert f"`{package}` (2 modules compiled)" in markdown


def test_compiled_build_failure_is_reported(tmp_path: Path) -> None:
    source = tmp_path / "broken"
    source.mkdir()
    (source / "__init__.py").write_text('count: int = "not a number"\n')
    with pytest.raises(BuildError, match="mypyc failed"):
        build(source, tmp_path / "out", "broken_mypyc")
    with pytest.raises(BuildError, match="no module"):
        build(SOURCE, tmp_path / "out", "x_mypyc", ["no_such_module"])
