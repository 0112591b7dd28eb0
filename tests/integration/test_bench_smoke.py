"""Smoke test of the benchmark (``make bench``): it runs and reports, nothing is timed here.

Runs ``bench/run.py --quick --no-compiled`` on a small case, FetchResponse v16 and the golden
frame set in a subprocess (writing to a temp folder, not over ``bench/results.json``) and
checks the report's shape, that our bytes and both peers' bytes were identical, and how the
golden bodies were shared out among the peers. The mypyc build of the whole package takes
~40 s, too long here: the compiled path is checked with a build of two small modules instead
(~6 s), through ``bench/compile.py``'s ``build`` and the functions ``bench/run.py`` calls, and a
frame set's compiled path with a copy of the package under another name. The generation
timing runs on the repo's three specs (the trunk corpus takes ~30 s) to check that its cold
run really starts from an empty formatting cache. No assertion looks at a timing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench import common, measure, prepared, report, sides, timing
from bench.cases import CASES, FrameSet, Frames
from bench.compile import BuildError, build, package_modules, with_imports
from tests.support.genpkg import SPECS, full_version_corpus
from bench.peers import KafkaPython, Kio

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "generated" / "kafka_messages"


def test_bench_quick_runs_and_checks_bytes(tmp_path: Path) -> None:
    out_json, out_md = tmp_path / "results.json", tmp_path / "RESULTS.md"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "run.py"),
            "--quick",
            "--cases",
            "api_versions_request_v3,fetch_response_v16,golden_frames",
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
        timeout=600,
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
    assert "issue" not in markdown.lower()  # the sheet speaks for itself

    # FetchResponse v16 (topic ids) is expressed by both peers, byte for byte.
    fetch = results["cases"]["fetch_response_v16"]
    assert fetch["package"] == common.KP_PACKAGE
    assert fetch["identical"] == {"kio": True, "kafka_python": True}
    assert set(fetch["timings"]["decode"]) == {"ours", "kio", "kafka_python"}

    # The golden frame set: most bodies for every peer, the rest counted with a reason.
    golden = results["cases"]["golden_frames"]
    frames = golden["frames"]
    bodies = frames["bodies"]
    assert bodies + sum(frames["left_out"].values()) == frames["captured"]
    # the newest full corpus reads all but the three odd frames
    assert bodies >= 2000 and sum(frames["left_out"].values()) == 3
    for peer in ("kio", "kafka_python"):
        counts = frames["peers"][peer]
        for op in ("decode", "encode"):
            left = sum(counts["left_out"][op].values())
            assert counts[op] + left == bodies
            assert counts[op] >= bodies // 2, (peer, op, counts["left_out"][op])
            timing = golden["timings"][op][peer]
            assert timing["bodies"] == counts[op]
            # its parts: every body once, each part timed for ours and the peers in it
            parts = frames["parts"][op]
            assert sum(p["bodies"] for p in parts) == bodies
            assert sum(p["bodies"] for p in parts if peer in p["peers"]) == counts[op]
            assert all(set(p["ns_per_op"]) == {"ours", *p["peers"]} for p in parts)
            assert {"ns_per_op", "speedup_vs_kio", "speedup_vs_kafka_python"} <= golden["timings"][
                op
            ]["ours"].keys()
    assert golden["timings"]["decode"]["ours"]["bodies"] == bodies
    assert golden["excluded"] == {}
    rows = {(row["key"], row["case"]) for row in results["targets"]}
    for key in ("decode_kafka_python", "decode_kio", "encode"):
        assert {(key, c) for c in ("fetch_response_v16", "golden_frames")} <= rows
    assert "| golden_frames |" in markdown and "decodes to our values" in markdown


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
        "_read_checked",
        "_write",
        "errors",
        "metadata",
    ]
    assert with_imports(SOURCE, ["errors"]) == ["__init__", "errors"]
    # a module of a runtime subpackage brings its package's __init__, its siblings it
    # imports, and what it imports from the package above (from .. import _compression)
    records = with_imports(SOURCE, ["records._batch"])
    assert {"records", "records._format", "records._codecs", "_compression"} <= set(records)
    assert {"_compression.lz4", "_compression.zstd", "_crc32c", "errors"} <= set(records)
    assert "records._builder" in records  # records/__init__ imports every part
    assert "metadata" not in records
    assert package_modules(SOURCE) == sorted(package_modules(SOURCE))
    assert {"records", "records._batch", "_compression.gzip"} <= set(package_modules(SOURCE))


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
    side = sides.Side("kafka_messages", sorted(SPECS.glob("*.json")))
    side.compiled = package
    case = CASES["api_versions_request_v3"]
    prep = prepared.prepare(case, side, {})
    assert set(prep.decoders) == {"ours", "ours_compiled"}
    assert prep.decoders["ours_compiled"]().to_dict() == prep.decoders["ours"]().to_dict()
    timings = timing.time_case(prep, repeats=1, target_ns=1e5)
    compiled = timings["decode"]["ours_compiled"]
    assert "speedup_vs_ours" in compiled and "speedup_vs_kio" not in compiled
    results = {
        "machine": measure.machine(),
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
    results["targets"] = report.targets(results)
    markdown = report.markdown(results)
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


def test_frame_set_compiled_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A frame set with the newest corpus's package, a slice of the golden bodies, and a copy
    # of the package under another name in the compiled build's place: run.py's path for
    # it (checked body by body, timed in the same loops, reported).
    side = sides.Side(sides.generated_package("newest", print), [full_version_corpus()])
    stand_in = "newest_bench_messages_smoke_copy"
    shutil.copytree(side.source, tmp_path / stand_in, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.syspath_prepend(str(tmp_path))
    side.compiled = stand_in
    golden = CASES["golden_frames"]
    assert isinstance(golden, FrameSet)
    every = side.frames(golden)
    case = FrameSet("golden_slice", "newest", lambda _: Frames(every.bodies[::10], 0), "slice")
    prep = prepared.prepare_set(case, side, {"kio": Kio(), "kafka_python": KafkaPython()})
    n = len(prep.frames.bodies)
    assert prep.used("decode", "ours") == prep.used("decode", "ours_compiled") == n
    assert prep.used("encode", "ours_compiled") == n
    timings = timing.time_case(prep, repeats=1, target_ns=1e5)
    for op in prepared.OPS:
        compiled = timings[op]["ours_compiled"]
        assert compiled["bodies"] == n
        assert {"speedup_vs_ours", "speedup_vs_kio", "speedup_vs_kafka_python"} <= compiled.keys()
    entry = prepared.frame_set_entry(prep, side)
    entry["timings"] = timings
    entry["frames"]["parts"] = prep.timed_parts
    results = {
        "machine": measure.machine(),
        "options": {"quick": True, "repeats": 1},
        "compiled": {"newest": {"package": stand_in, "modules": []}},
        "cases": {case.id: entry},
    }
    results["targets"] = report.targets(results)
    assert {row["key"] for row in results["targets"]} >= {"decode_compiled_kio", "encode"}
    markdown = report.markdown(results)
    assert "| golden_slice | slice |" in markdown and "ours (mypyc) vs kio" in markdown


def test_generation_is_timed_cold_and_sized() -> None:
    # The repo's three specs stand in for the trunk corpus (the same command, ~1 s).
    gen = measure.generation_time(1, SPECS)
    assert gen["modules"] > 5 and gen["median_s"] > 0 and len(gen["samples_s"]) == 1
    assert gen["py_bytes"] > 50_000
    rows = {row["key"]: row for row in report.targets({"cases": {}, "generate": gen})}
    assert rows["size"]["met"] is True and f"{gen['py_bytes']:,} bytes" in rows["size"]["value"]
    assert rows["generate"]["met"] is not None


def test_connection_bench_measures_three_sides() -> None:
    from bench import connection_bench

    result = connection_bench.measure(requests=20, repeats=1)
    assert set(result["us_per_round_trip"]) == set(connection_bench.SIDES)
    assert set(result["ours_vs"]) == set(connection_bench.SIDES) - {"ClientConnection"}
    assert all(value > 0 for value in result["us_per_round_trip"].values())
    assert "| kafka-python KafkaProtocol |" in connection_bench.markdown(result)


def test_fake_broker_bench_runs_every_load_on_both_brokers(tmp_path: Path) -> None:
    from bench import fake_broker_bench, fake_broker_loads

    out = tmp_path / "fb.json"
    assert fake_broker_bench.main(["--smoke", "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    fake, tansu = result["figures"]["fake broker"], result["figures"]["Tansu"]
    consumers = {f"consume {c}: {n}" for c in ("none", "lz4") for n in fake_broker_loads.CONSUMERS}
    assert set(fake) == set(tansu) >= consumers | {"round_trips", "pipelined", "parked_p99_ms"}
    assert all(value > 0 for value in [*fake.values(), *tansu.values()])
    assert set(result["targets"]) == {
        "round_trips >= 1.5x Tansu",
        "pipelined >= 20,000 requests/s",
        "parked p99 < 50 ms",
    }
    assert len(result["load_average_before"]) == 3 and result["canned_round_trips"] > 0
