"""What the bench measures beside the codecs' speed: memory kept by decoded messages,
import times in fresh interpreters, the generation of a whole corpus, and the machine."""

from __future__ import annotations

import gc
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from bench.common import COMPILED_SUFFIX, GENERATED, IMPLS, MEMORY_COUNT, ROOT
from bench.prepared import Prepared


def memory(prep: Prepared, counts: dict[str, int]) -> dict[str, Any]:
    """Bytes kept by ``count`` decoded messages in a list, per implementation (tracemalloc).

    Every object the decoders build goes through Python's allocator (kio's values are plain
    Python dataclasses built by its Rust reader), so tracemalloc sees them all. The cyclic
    GC is paused while decoding (it frees nothing here: the messages are kept) because its
    full passes over millions of tracked objects would dominate the run. kafka-python runs
    ~50x slower under tracemalloc, so it may be given fewer messages; every message of a case
    is the same object graph, so the total is scaled to ``MEMORY_COUNT`` (marked ``scaled``).
    """
    res: dict[str, Any] = {}
    for impl in IMPLS:
        if impl not in prep.decoders:
            continue
        fn, count = prep.decoders[impl], counts[impl]
        fn()  # caches (compiled codecs, readers) built before measuring
        gc.collect()
        gc.disable()
        try:
            tracemalloc.start()
            base, _ = tracemalloc.get_traced_memory()
            kept = [fn() for _ in range(count)]
            current, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            del kept
        finally:
            gc.enable()
        gc.collect()
        per = (current - base) / count
        res[impl] = {
            "count": count,
            "kept_bytes": round(per * MEMORY_COUNT),
            "scaled": count != MEMORY_COUNT,
            "measured_kept_bytes": current - base,
            "peak_bytes_while_decoding": peak - base,
            "kept_bytes_per_message": round(per),
        }
    return res


def _fresh_import_ns(statement: str, pythonpath: list[str]) -> int:
    code = (
        "import time\n"
        "t0 = time.perf_counter_ns()\n"
        f"{statement}\n"
        "print(time.perf_counter_ns() - t0)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(pythonpath))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return int(out.stdout.strip().splitlines()[-1])


def import_times(runs: int, compiled_dir: Path | None) -> dict[str, Any]:
    """Median wall time of one import statement in fresh interpreters (after one warm-up run
    that writes the bytecode caches, as an installed package has them). ``compiled_dir``:
    the folder holding the mypyc build of the repo's package, if built."""
    site = [str(GENERATED)]
    cases = {
        "kafka_messages": ("import kafka_messages", site),
        "kafka_messages.metadata": ("import kafka_messages.metadata", site),
    }
    if compiled_dir is not None:
        cases[f"kafka_messages{COMPILED_SUFFIX}.metadata"] = (
            f"import kafka_messages{COMPILED_SUFFIX}.metadata",
            [str(compiled_dir)],
        )
    cases |= {
        "kio metadata v12 response": ("import kio.schema.metadata.v12.response", []),
        "kafka-python kafka.protocol.metadata": ("import kafka.protocol.metadata", []),
    }
    res: dict[str, Any] = {}
    for label, (stmt, path) in cases.items():
        try:
            _fresh_import_ns(stmt, path)
            samples = sorted(_fresh_import_ns(stmt, path) for _ in range(runs))
        except subprocess.CalledProcessError as exc:
            res[label] = {"error": exc.stderr.strip().splitlines()[-1:]}
            continue
        res[label] = {
            "statement": stmt,
            "median_ms": round(statistics.median(samples) / 1e6, 3),
            "min_ms": round(samples[0] / 1e6, 3),
            "runs": runs,
        }
    return res


def generation_time(runs: int, corpus: Path) -> dict[str, Any]:
    """Wall time of generating ``corpus`` (the trunk's) in a fresh process, as a user runs
    it (no black): cold (empty cache folders, a new output folder) and warm (the same specs
    again, into the same folder), and the size of the ``.py`` files written."""
    if not corpus.is_dir():
        return {"skipped": f"{corpus} not found"}
    cold: list[float] = []
    warm: list[float] = []
    files = py_bytes = 0
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, "-m", "kafka_specgen.cli", "generate", "--specs", str(corpus)]
            cmd += ["--out", tmp, "--package", "kafka_messages"]
            env = {
                **os.environ,
                "KAFKA_SPECGEN_CACHE": str(Path(tmp, "cache")),
                "XDG_CACHE_HOME": str(Path(tmp, "xdg-cache")),
            }
            for samples in (cold, warm):
                t0 = time.perf_counter()
                subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, env=env)
                samples.append(time.perf_counter() - t0)
            written = [
                f for f in Path(tmp, "kafka_messages").rglob("*.py") if "__pycache__" not in f.parts
            ]
            files, py_bytes = len(written), sum(f.stat().st_size for f in written)
    return {
        "corpus": os.path.relpath(corpus, ROOT),
        "modules": files,
        "py_bytes": py_bytes,
        "median_s": round(statistics.median(cold), 2),
        "samples_s": [round(s, 2) for s in cold],
        "warm_median_s": round(statistics.median(warm), 2),
    }


def _entries(folder: Path) -> int:
    return sum(1 for f in folder.rglob("*") if f.is_file()) if folder.is_dir() else 0


def machine() -> dict[str, Any]:
    model = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    from importlib.metadata import version

    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        dirty = bool(
            subprocess.run(
                ["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True
            ).stdout.strip()
        )
    except OSError:
        commit, dirty = "", False
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "load_average_start": [round(x, 2) for x in os.getloadavg()],
        "kio": version("kio"),
        "kafka_python": version("kafka-python"),
        "git_commit": commit + ("+dirty" if dirty else ""),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }
