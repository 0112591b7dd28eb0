"""Benchmark of the generated codecs beside kio 0.6.5 and kafka-python 3.0.12 (issue 6).

    python bench/run.py [--quick] [--cases a,b] [--skip memory,import,generate]
                        [--no-compiled] [--json PATH] [--markdown PATH]

For every case (see ``bench/cases.py``) the same logical message is built in our package, in
kio and in kafka-python (the peers' values come from ours through the adapters in
``tests/peers.py``); the three encodings must be byte-identical, and a peer that cannot
express a case, or encodes it differently, is reported and left out of that case's timings.
Encode and decode are timed with warm-up, calibrated loops and many repeats; within every
repeat the implementations run round-robin (rotating who goes first), so the peers and we see
the same machine state. Reported: the median ns/op, ops/s and our speed-up over each peer
(``peer ns / our ns``: 2.0 means we are twice as fast, 0.5 half as fast).

"ours (mypyc)" is the same generated sources compiled with mypyc, as ``make compiled`` does
(``bench/compile.py``), under another package name (``kafka_messages_mypyc``,
``kp_bench_messages_mypyc``) so both builds import side by side; it is timed in the same
round-robin loops, and its bytes must equal the pure-Python build's. The builds are cached
under ``build/bench/`` by a hash of their sources; ``--no-compiled`` leaves them out, and a
failed build (no C compiler, say) is reported and the run goes on without it.

Also measured: memory kept by 1,000 decoded MetadataResponse v12 (tracemalloc), the import
time of ``kafka_messages``, ``kafka_messages.metadata`` and ``kafka_messages_mypyc.metadata``
in fresh processes, and the wall time of generating the whole trunk corpus formatted, as
``make generate`` does.

Writes ``bench/results.json`` and ``bench/RESULTS.md`` (machine noted) unless told otherwise.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib
import io
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
GENERATED = ROOT / "generated"
CACHE = ROOT / "build" / "bench"
KP_PACKAGE = "kp_bench_messages"

for p in (str(GENERATED), str(ROOT)):
    if p not in sys.path:
        sys.path.insert(0, p)

from bench.cases import CASES, Case  # noqa: E402
from bench.compile import BuildError, build, mypyc_source, with_imports  # noqa: E402
from tests.genpkg import CORPORA, SPECS, kafka_python_specs, load_messages  # noqa: E402
from tests.peers import Inexpressible, KafkaPython, Kio, Unsupported  # noqa: E402

TRUNK = CORPORA / "trunk-2024-10"
KP_SHARED = CORPORA / "kafka-python-3.0.12" / "message"

IMPLS = ("ours", "ours_compiled", "kio", "kafka_python")
OURS = ("ours", "ours_compiled")
PEERS = ("kio", "kafka_python")
LABELS = {
    "ours": "ours",
    "ours_compiled": "ours (mypyc)",
    "kio": "kio",
    "kafka_python": "kafka-python",
}
COMPILED_SUFFIX = "_mypyc"  # the compiled build's package name: kafka_messages_mypyc, ...
MEMORY_COUNT = 1000

TARGETS = {
    "encode": "encode >= 2x faster than the fastest peer",
    "decode_kafka_python": "decode >= 3x faster than kafka-python 3",
    "decode_kio": "decode within 1.5x of kio (speed-up >= 0.667)",
    "memory": "memory of 1,000 decoded MetadataResponse v12 <= kio's",
    "import": "one API module (kafka_messages.metadata) imports in < 15 ms",
    "generate": "whole trunk corpus generates in < 10 s",
    "decode_compiled_kio": "compiled build (mypyc) decodes faster than kio",
    "encode_compiled": "compiled build (mypyc): encode vs the fastest peer (for information)",
}


# --- the packages under test -------------------------------------------------------------


def kp_corpus() -> Path:
    return KP_SHARED if KP_SHARED.is_dir() else kafka_python_specs()


def _tree_hash(paths: list[Path], extra: str = "") -> str:
    h = hashlib.sha256(extra.encode())
    for root in paths:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for f in files:
            if "__pycache__" in f.parts:
                continue
            h.update(str(f.relative_to(root.parent)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def kp_package(log: Callable[[str], None]) -> str:
    """Generate (once, cached by input hash) the kafka-python corpus as ``kp_bench_messages``,
    formatted as users get it, and put it on ``sys.path``."""
    corpus = kp_corpus()
    key = _tree_hash([corpus, ROOT / "generator", ROOT / "templates"])
    out = CACHE / f"kp-{key}"
    if not (out / KP_PACKAGE / "__init__.py").is_file():
        from kafka_specgen.library import generate_files
        from kafka_specgen.format import write_package

        log(f"generating {corpus} into {out} (cached for the next runs) ...")
        t0 = time.perf_counter()
        tmp = Path(tempfile.mkdtemp(dir=CACHE.parent if CACHE.parent.is_dir() else None))
        try:
            files = generate_files([corpus], warn=False, formatted=True)
            write_package(files, tmp / KP_PACKAGE)
            if out.exists():
                shutil.rmtree(out)
            out.parent.mkdir(parents=True, exist_ok=True)
            tmp.rename(out)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        log(f"  done in {time.perf_counter() - t0:.1f} s")
        for old in CACHE.glob("kp-*"):
            if old != out:
                shutil.rmtree(old, ignore_errors=True)
    if str(out) not in sys.path:
        sys.path.insert(0, str(out))
    return KP_PACKAGE


def mypyc_package(
    label: str, source: Path, modules: list[str] | None, log: Callable[[str], None]
) -> dict[str, Any]:
    """Compile the generated package folder ``source`` with mypyc as ``<name>_mypyc`` (once,
    cached by a hash of its sources, bench/compile.py and the toolchain), put it on
    ``sys.path`` and return what results.json records of it. Raises ``BuildError``."""
    from importlib.metadata import PackageNotFoundError, version

    package = source.name + COMPILED_SUFFIX
    try:
        mypy_version = version("mypy")
    except PackageNotFoundError:
        mypy_version = "none"  # build() then fails with mypyc's own message
    # The extensions are tied to the interpreter and to mypyc's runtime: both in the key.
    key = _tree_hash(
        [source, BENCH / "compile.py"], extra=f"{sys.version} mypy {mypy_version} {modules}"
    )
    out = CACHE / f"mypyc-{label}-{key}"
    manifest = out / "BUILD.json"
    if manifest.is_file():
        info: dict[str, Any] = json.loads(manifest.read_text())
        info["cached"] = True
    else:
        count = len(modules) if modules is not None else len(list(source.glob("*.py")))
        log(f"compiling {package} ({count} modules) with mypyc (cached for the next runs) ...")
        t0 = time.perf_counter()
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=CACHE, prefix="tmp-mypyc-"))
        try:
            compiled = build(source, tmp, package, modules)
            info = {
                "package": package,
                "source": os.path.relpath(source, ROOT),
                "modules": compiled,
                "compile_s": round(time.perf_counter() - t0, 1),
            }
            (tmp / "BUILD.json").write_text(json.dumps(info, indent=2) + "\n")
            if out.exists():
                shutil.rmtree(out)
            tmp.rename(out)  # the build does not depend on its folder's name
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        log(f"  done in {info['compile_s']:.1f} s")
        info["cached"] = False
        for old in CACHE.glob(f"mypyc-{label}-*"):
            if old != out:
                shutil.rmtree(old, ignore_errors=True)
    if str(out) not in sys.path:
        sys.path.insert(0, str(out))
    return {**info, "dir": os.path.relpath(out, ROOT)}


class Side:
    """One package under test: its name, the generator model of its messages, and the name
    of its mypyc build (``compiled``) once that is built."""

    def __init__(self, package: str, spec_paths: list[Path]) -> None:
        from kafka_specgen.render import module_name

        self.package = package
        self.compiled: str | None = None
        self.messages = {m.name: m for m in load_messages(spec_paths)}
        self._module_name = module_name

    @property
    def source(self) -> Path:
        """The package's folder."""
        return Path(importlib.import_module(self.package).__path__[0])

    def module(self, name: str) -> str:
        """The module (inside the package) that holds message ``name``."""
        return str(self._module_name(self.messages[name]))

    def message_class(self, name: str, package: str | None = None) -> tuple[Any, Any]:
        module = importlib.import_module(f"{package or self.package}.{self.module(name)}")
        return self.messages[name], getattr(module, name)


# --- building the cases and checking byte identity ----------------------------------------


class Prepared:
    def __init__(self, case: Case) -> None:
        self.case = case
        self.encoders: dict[str, Callable[[], Any]] = {}
        self.decoders: dict[str, Callable[[], Any]] = {}
        self.excluded: dict[str, str] = {}
        self.identical: dict[str, bool] = {}
        self.size = 0
        self.wire = b""


def prepare(case: Case, side: Side, peers: dict[str, Any]) -> Prepared:
    prep = Prepared(case)
    message, cls = side.message_class(case.message)
    version = case.version
    obj = case.build(cls)
    peer_objs: dict[str, Any] = {}
    for name, peer in peers.items():
        try:
            peer_objs[name] = peer.to_peer(obj, cls, message, version)
        except (Unsupported, Inexpressible) as exc:
            prep.excluded[name] = f"cannot express it: {exc}"
    ours = obj.encode(version)  # after to_peer, which may project values in place
    if cls.decode(ours, version) != obj:
        raise SystemExit(f"{case.id}: our own decode does not give the message back")
    prep.wire, prep.size = ours, len(ours)
    prep.encoders["ours"] = lambda: obj.encode(version)
    prep.decoders["ours"] = lambda: cls.decode(ours, version)
    if side.compiled:
        add_compiled(prep, side, obj)
    for name, kobj in peer_objs.items():
        peer = peers[name]
        theirs = peer.encode(kobj, version)
        prep.identical[name] = theirs == ours
        if theirs != ours:
            prep.excluded[name] = (
                f"different bytes ({len(theirs)} vs our {len(ours)}, first difference at "
                f"offset {next((i for i, (a, b) in enumerate(zip(theirs, ours)) if a != b), min(len(theirs), len(ours)))})"
            )
            continue
        try:
            back = peer.from_peer(peer.decode(message, version, ours), cls, message, version)
            if back != obj:
                prep.excluded[name] = "decodes our bytes to other values"
                prep.identical[name] = False
                continue
        except Exception as exc:  # a peer's decode failure is a finding to report
            prep.excluded[name] = f"cannot decode our bytes: {exc!r}"
            prep.identical[name] = False
            continue
        prep.encoders[name], prep.decoders[name] = peer_codecs(
            name, peer, kobj, message, version, ours
        )
    return prep


def add_compiled(prep: Prepared, side: Side, obj: Any) -> None:
    """Register the mypyc build's codecs, once it gives exactly what the pure-Python build
    gives: the same bytes for the same case, and the same values back from them."""
    case, version, ours = prep.case, prep.case.version, prep.wire
    _, ccls = side.message_class(case.message, side.compiled)
    cobj = case.build(ccls)
    theirs = cobj.encode(version)
    if theirs != ours:
        raise SystemExit(
            f"{case.id}: the mypyc build ({side.compiled}) encodes other bytes than the "
            f"pure-Python build ({len(theirs)} vs {len(ours)}): a bug in the compiled build"
        )
    back = ccls.decode(ours, version)
    # The two builds' classes differ, so compare them through their plain-data form.
    if back != cobj or back.to_dict() != obj.to_dict():
        raise SystemExit(
            f"{case.id}: the mypyc build ({side.compiled}) decodes our bytes to other values "
            "than the pure-Python build: a bug in the compiled build"
        )
    prep.encoders["ours_compiled"] = lambda: cobj.encode(version)
    prep.decoders["ours_compiled"] = lambda: ccls.decode(ours, version)


def peer_codecs(
    name: str, peer: Any, kobj: Any, message: Any, version: int, wire: bytes
) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """The peers' own fastest public paths, resolved once (not the test adapters)."""
    if name == "kio":
        writer = peer.entity_writer(type(kobj))
        reader = peer.entity_reader(type(kobj))

        def kio_encode() -> bytes:
            buf = io.BytesIO()
            writer(buf, kobj)
            return buf.getvalue()

        return kio_encode, lambda: reader(wire, 0)
    kcls = peer.lookup(message, version)
    # ApiMessage.decode, not ApiVersionsResponse's override (which re-reads error responses
    # at v0); for every other class they are the same function.
    decode = peer.ApiMessage.decode.__func__
    return (lambda: kobj.encode(version=version), lambda: decode(kcls, wire, version=version))


# --- timing ----------------------------------------------------------------------------------


def loop(fn: Callable[[], Any], n: int) -> float:
    """ns per call of ``fn`` over ``n`` calls."""
    r = range(n)
    t0 = time.perf_counter_ns()
    for _ in r:
        fn()
    return (time.perf_counter_ns() - t0) / n


def calibrate(fn: Callable[[], Any], target_ns: float) -> int:
    """Loops per repeat so that one repeat takes about ``target_ns`` (also the warm-up)."""
    n = 1
    while True:
        per = loop(fn, n)
        if per * n >= target_ns / 10 or n >= 1 << 20:
            return max(1, int(target_ns / max(per, 1.0)))
        n *= 4


def time_case(prep: Prepared, repeats: int, target_ns: float) -> dict[str, Any]:
    # The set-up's long-lived objects (every case's messages, the peers' modules) would make
    # each full collection during timing slow for whichever codec triggers it: freeze them,
    # so each codec pays for collecting its own garbage only.
    gc.collect()
    gc.freeze()
    try:
        return _time_case(prep, repeats, target_ns)
    finally:
        gc.unfreeze()


def _time_case(prep: Prepared, repeats: int, target_ns: float) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for op, fns in (("encode", prep.encoders), ("decode", prep.decoders)):
        impls = [i for i in IMPLS if i in fns]
        loops = {i: calibrate(fns[i], target_ns) for i in impls}
        for i in impls:  # a second warm-up at the calibrated size
            loop(fns[i], loops[i])
        samples: dict[str, list[float]] = {i: [] for i in impls}
        for r in range(repeats):
            order = impls[r % len(impls) :] + impls[: r % len(impls)]
            for i in order:
                samples[i].append(loop(fns[i], loops[i]))
        res: dict[str, Any] = {}
        for i in impls:
            s = sorted(samples[i])
            med = statistics.median(s)
            res[i] = {
                "ns_per_op": round(med, 1),
                "ops_per_s": round(1e9 / med, 1),
                "min_ns": round(s[0], 1),
                "max_ns": round(s[-1], 1),
                "loops": loops[i],
                "repeats": repeats,
            }
        for me in OURS:
            if me not in res:
                continue
            ns = res[me]["ns_per_op"]
            for p in PEERS:
                if p in res:
                    res[me][f"speedup_vs_{p}"] = round(res[p]["ns_per_op"] / ns, 3)
        if "ours_compiled" in res:
            res["ours_compiled"]["speedup_vs_ours"] = round(
                res["ours"]["ns_per_op"] / res["ours_compiled"]["ns_per_op"], 3
            )
        out[op] = res
    return out


# --- memory, import, generation ---------------------------------------------------------------


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


def generation_time(runs: int) -> dict[str, Any]:
    """Wall time of generating the trunk corpus in a fresh process: cold (an empty black
    cache, the number the target is about) and warm (the same specs again)."""
    if not TRUNK.is_dir():
        return {"skipped": f"{TRUNK} not found"}
    cold: list[float] = []
    warm: list[float] = []
    files = 0
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, "-m", "kafka_specgen.cli", "generate", "--specs", str(TRUNK)]
            cmd += ["--out", tmp, "--package", "kafka_messages"]
            env = {**os.environ, "KAFKA_SPECGEN_CACHE": str(Path(tmp, "black-cache"))}
            for samples in (cold, warm):
                t0 = time.perf_counter()
                subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, env=env)
                samples.append(time.perf_counter() - t0)
            files = sum(1 for _ in Path(tmp, "kafka_messages").glob("*.py"))
    return {
        "corpus": os.path.relpath(TRUNK, ROOT),
        "formatted": True,
        "modules": files,
        "median_s": round(statistics.median(cold), 2),
        "samples_s": [round(s, 2) for s in cold],
        "warm_median_s": round(statistics.median(warm), 2),
    }


# --- machine, targets, report ------------------------------------------------------------------


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


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for cid, case in results["cases"].items():
        t = case.get("timings")
        if not t:
            continue
        ours_e = t["encode"]["ours"]
        peers_e = {p: t["encode"][p]["ns_per_op"] for p in PEERS if p in t["encode"]}
        if peers_e:
            fastest = min(peers_e, key=lambda p: peers_e[p])
            s = round(peers_e[fastest] / ours_e["ns_per_op"], 2)
            rows.append(
                {
                    "target": TARGETS["encode"],
                    "case": cid,
                    "value": f"{s}x vs {fastest}",
                    "met": s >= 2.0,
                }
            )
        ours_d = t["decode"]["ours"]
        if "kafka_python" in t["decode"]:
            s = ours_d["speedup_vs_kafka_python"]
            rows.append(
                {
                    "target": TARGETS["decode_kafka_python"],
                    "case": cid,
                    "value": f"{s:.2f}x",
                    "met": s >= 3.0,
                }
            )
        if "kio" in t["decode"]:
            s = ours_d["speedup_vs_kio"]
            rows.append(
                {
                    "target": TARGETS["decode_kio"],
                    "case": cid,
                    "value": f"{s:.2f}x",
                    "met": s >= 1 / 1.5,
                }
            )
    # The compiled build's rows after all the pure-Python ones, so those read as before.
    for cid, case in results["cases"].items():
        t = case.get("timings")
        if not t or "ours_compiled" not in t["decode"]:
            continue
        if "kio" in t["decode"]:
            s = t["decode"]["ours_compiled"]["speedup_vs_kio"]
            rows.append(
                {
                    "target": TARGETS["decode_compiled_kio"],
                    "case": cid,
                    "value": f"{s:.2f}x",
                    "met": s > 1.0,
                }
            )
        peers_e = {p: t["encode"][p]["ns_per_op"] for p in PEERS if p in t["encode"]}
        if peers_e:
            fastest = min(peers_e, key=lambda p: peers_e[p])
            s = round(peers_e[fastest] / t["encode"]["ours_compiled"]["ns_per_op"], 2)
            # No target was set for it: reported, neither met nor missed.
            rows.append(
                {
                    "target": TARGETS["encode_compiled"],
                    "case": cid,
                    "value": f"{s}x vs {fastest}",
                    "met": None,
                }
            )
    mem = results.get("memory") or {}
    if "ours" in mem and "kio" in mem:
        rows.append(
            {
                "target": TARGETS["memory"],
                "case": "metadata_response_v12",
                "value": f"{mem['ours']['kept_bytes']:,} B vs kio {mem['kio']['kept_bytes']:,} B",
                "met": mem["ours"]["kept_bytes"] <= mem["kio"]["kept_bytes"],
            }
        )
    imp = (results.get("import") or {}).get("kafka_messages.metadata")
    if imp and "median_ms" in imp:
        rows.append(
            {
                "target": TARGETS["import"],
                "case": "-",
                "value": f"{imp['median_ms']:.1f} ms",
                "met": imp["median_ms"] < 15,
            }
        )
    gen = results.get("generate") or {}
    if "median_s" in gen:
        rows.append(
            {
                "target": TARGETS["generate"],
                "case": "-",
                "value": f"{gen['median_s']:.1f} s cold ({gen['warm_median_s']:.1f} s warm)",
                "met": gen["median_s"] < 10,
            }
        )
    return rows


def _ns(v: float) -> str:
    return f"{v:,.0f}"


def _first_error(output: str) -> str:
    """The line of a failed build's output that says why: mypy's ``file:line: error: ...``
    or setuptools' ``error: command 'gcc' failed ...`` (not a compiler flag like -Werror)."""
    lines = output.strip().splitlines()
    return next((line for line in lines if re.search(r"(^|: )error:", line)), lines[0])


def _compiled_note(results: dict[str, Any]) -> str:
    comp = results.get("compiled") or {}
    if "skipped" in comp:
        return f"- ours (mypyc): not measured ({comp['skipped']})"
    built = {w: c for w, c in comp.items() if "package" in c}
    failed = {w: _first_error(c["error"]) for w, c in comp.items() if "error" in c}
    parts = [
        f"`{c['package']}` ({len(c['modules'])} modules compiled"
        + (f" in {c['compile_s']:.0f} s" if "compile_s" in c else "")
        + ")"
        for c in built.values()
    ]
    parts += [f"{w}: mypyc build failed ({reason})" for w, reason in failed.items()]
    return (
        "- ours (mypyc): `make compiled`'s build (`bench/compile.py`, mypyc) of the same "
        "generated sources, timed in the same loops: " + ("; ".join(parts) or "not needed")
    )


def markdown(results: dict[str, Any]) -> str:
    m = results["machine"]
    # The compiled build's columns only when some case has its numbers.
    compiled = any(
        "ours_compiled" in c.get("timings", {}).get("decode", {}) for c in results["cases"].values()
    )
    mine = list(OURS) if compiled else ["ours"]
    lines = [
        "# Benchmark results",
        "",
        "Written by `make bench` (`bench/run.py`); regenerate rather than edit. Speed-ups are",
        "`peer ns / our ns` from the same run (2.0x: we are twice as fast; 0.5x: half as fast).",
        "",
        _compiled_note(results),
        f"- Machine: {m['cpu']}, {m['cores']} cores, {m['platform']}",
        f"- Python {m['python']} ({m['implementation']}); kio {m['kio']}, "
        f"kafka-python {m['kafka_python']}",
        f"- Load average at start: {', '.join(map(str, m['load_average_start']))}; "
        f"at end: {', '.join(map(str, results.get('load_average_end', [])))}",
        f"- Run: {m['date']}, commit {m['git_commit']}, "
        f"{'quick' if results['options']['quick'] else 'full'} mode, "
        f"{results['options']['repeats']} repeats per measurement (median shown)",
        "",
        "## Byte identity",
        "",
        "| case | shape | bytes | " + " | ".join(LABELS[i] for i in [*mine[1:], *PEERS]) + " |",
        "|---|---|---:|" + "---|" * (len(mine) - 1 + len(PEERS)),
    ]
    for cid, c in results["cases"].items():
        cells = []
        if compiled:  # prepare() stops the run if the compiled build's bytes differ
            cells.append("identical" if c.get("compiled") else "not built")
        for p in PEERS:
            if p in c["excluded"]:
                cells.append(f"excluded: {c['excluded'][p]}")
            else:
                cells.append("identical")
        lines.append(f"| {cid} | {c['shape']} | {c['bytes']:,} | " + " | ".join(cells) + " |")
    for op in ("encode", "decode"):
        impls = [*mine, *PEERS]
        vs = [(me, p) for me in mine for p in PEERS]
        lines += [
            "",
            f"## {op.capitalize()} (ns/op, median)",
            "",
            "| case | "
            + " | ".join(LABELS[i] for i in impls)
            + " | "
            + " | ".join(f"{LABELS[me]} vs {LABELS[p]}" for me, p in vs)
            + " |",
            "|---|" + "---:|" * (len(impls) + len(vs)),
        ]
        for cid, c in results["cases"].items():
            t = c.get("timings", {}).get(op, {})
            if "ours" not in t:
                continue
            cells = [_ns(t[i]["ns_per_op"]) if i in t else "-" for i in impls]
            cells += [
                f"{t[me][f'speedup_vs_{p}']:.2f}x" if me in t and p in t else "-" for me, p in vs
            ]
            lines.append(f"| {cid} | " + " | ".join(cells) + " |")
    mem = results.get("memory")
    lines += ["", "## Memory: 1,000 decoded MetadataResponse v12 kept in a list (tracemalloc)", ""]
    if mem and "skipped" not in mem:
        lines += [
            "| implementation | kept by 1,000 | per message | measured on |",
            "|---|---:|---:|---:|",
        ]
        for impl, r in mem.items():
            scaled = " (scaled)" if r["scaled"] else ""
            lines.append(
                f"| {LABELS[impl]} | {r['kept_bytes']:,} B{scaled} | "
                f"{r['kept_bytes_per_message']:,} B | {r['count']:,} messages |"
            )
    else:
        lines.append(f"skipped{': ' + mem['skipped'] if mem else ''}")
    imp = results.get("import")
    lines += ["", "## Import time (fresh interpreter, bytecode cached, median)", ""]
    if imp and "skipped" not in imp:
        lines += ["| import | median | min | runs |", "|---|---:|---:|---:|"]
        for label, r in imp.items():
            if "median_ms" in r:
                lines.append(
                    f"| `{r['statement']}` | {r['median_ms']:.1f} ms | "
                    f"{r['min_ms']:.1f} ms | {r['runs']} |"
                )
            else:
                lines.append(f"| {label} | error: {r.get('error')} | | |")
    else:
        lines.append("skipped")
    gen = results.get("generate") or {}
    lines += ["", "## Generating the whole trunk corpus", ""]
    if "median_s" in gen:
        lines.append(
            f"`kafka-specgen generate --specs {gen['corpus']}` (formatted, "
            f"{gen['modules']} modules, fresh process): {gen['median_s']:.1f} s with an empty "
            f"black cache (runs: {gen['samples_s']}); {gen['warm_median_s']:.1f} s again with "
            "the cache warm (a regeneration after a spec bump re-formats only what changed)"
        )
    else:
        lines.append(f"skipped: {gen.get('skipped', '')}")
    lines += [
        "",
        "## Targets (issue 6)",
        "",
        "For the pure-Python build, except the rows that name the compiled build (mypyc).",
        "",
        "| target | case | value | met |",
        "|---|---|---|---|",
    ]
    for row in results["targets"]:
        met = "-" if row["met"] is None else "met" if row["met"] else "**not met**"
        lines.append(f"| {row['target']} | {row['case']} | {row['value']} | {met} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="few repeats (a smoke test)")
    ap.add_argument(
        "--cases", default="all", help=f"comma-separated case ids or 'all': {', '.join(CASES)}"
    )
    ap.add_argument(
        "--skip", default="", help="comma-separated parts to skip: memory, import, generate"
    )
    ap.add_argument("--repeats", type=int, help="repeats per measurement (default 25; quick 3)")
    ap.add_argument(
        "--no-compiled",
        action="store_true",
        help="leave out the mypyc build (e.g. without a C compiler)",
    )
    ap.add_argument("--json", type=Path, default=BENCH / "results.json")
    ap.add_argument("--markdown", type=Path, default=BENCH / "RESULTS.md")
    args = ap.parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    chosen = list(CASES) if args.cases == "all" else [c.strip() for c in args.cases.split(",")]
    unknown = [c for c in chosen if c not in CASES]
    if unknown:
        ap.error(f"unknown case(s) {unknown}; known: {', '.join(CASES)}")
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    bad = skip - {"memory", "import", "generate"}
    if bad:
        ap.error(f"unknown --skip part(s) {sorted(bad)}")
    repeats = args.repeats or (3 if args.quick else 25)
    target_ns = 2e6 if args.quick else 20e6

    results: dict[str, Any] = {
        "machine": machine(),
        "options": {
            "quick": args.quick,
            "repeats": repeats,
            "cases": chosen,
            "skip": sorted(skip),
            "compiled": not args.no_compiled,
            "target_ms_per_repeat": target_ns / 1e6,
        },
        # per side ("repo", "kp"): the mypyc build's package and modules, or its error
        "compiled": {"skipped": "--no-compiled"} if args.no_compiled else {},
        "cases": {},
    }
    log(
        f"machine: {results['machine']['cpu']}, {results['machine']['cores']} cores, "
        f"load {results['machine']['load_average_start']}"
    )

    peers = {"kio": Kio(), "kafka_python": KafkaPython()}
    sides: dict[str, Side] = {}

    def side(which: str) -> Side:
        if which not in sides:
            if which == "repo":
                specs = [SPECS]
                s = Side("kafka_messages", sorted(SPECS.glob("*.json")))
                modules = None  # the whole package, as `make compiled` builds it
            else:
                specs = [kp_corpus()]
                s = Side(kp_package(log), specs)
                # ~100 modules: compile only what the kp cases import (all of them, not just
                # the chosen ones, so that one cached build serves every run).
                needed = [s.module(c.message) for c in CASES.values() if c.package == "kp"]
                modules = with_imports(s.source, needed)
            if not args.no_compiled:
                try:
                    # The mypyc flavour of the same specs, from the same templates.
                    source = mypyc_source(specs, CACHE / f"mypyc-src-{which}", s.source.name)
                    info = mypyc_package(which, source, modules, log)
                    s.compiled = info["package"]
                except BuildError as exc:
                    log(f"mypyc build of {s.source} failed; going on without it:\n{exc}")
                    info = {"error": str(exc)}
                results["compiled"][which] = info
            sides[which] = s
        return sides[which]

    preps: dict[str, Prepared] = {}
    identity_ok = True
    for cid in chosen:
        case = CASES[cid]
        prep = preps[cid] = prepare(case, side(case.package), peers)
        mismatches = [p for p, same in prep.identical.items() if not same]
        identity_ok &= not mismatches
        results["cases"][cid] = {
            "message": case.message,
            "version": case.version,
            "shape": case.shape,
            "package": side(case.package).package,
            "compiled": "ours_compiled" in prep.decoders,
            "bytes": prep.size,
            "identical": prep.identical,
            "excluded": prep.excluded,
        }
        log(
            f"{cid}: {prep.size:,} bytes; identical: {prep.identical}"
            + (f"; excluded: {prep.excluded}" if prep.excluded else "")
        )
    results["identity"] = {
        "passed": identity_ok,
        "note": "passed = no peer that expressed a case gave other bytes",
    }

    for cid in chosen:
        log(f"timing {cid} ...")
        t = time_case(preps[cid], repeats, target_ns)
        results["cases"][cid]["timings"] = t
        for op in ("encode", "decode"):
            parts = [
                f"{LABELS[i]} {t[op][i]['ns_per_op']:,.0f}"
                + "".join(
                    f" (x{t[op][i][f'speedup_vs_{p}']:.2f} vs {p})"
                    for p in PEERS
                    if p in t[op] and i in OURS
                )
                for i in IMPLS
                if i in t[op]
            ]
            log(f"  {op:6} ns/op: " + ", ".join(parts))

    if "memory" in skip:
        results["memory"] = {"skipped": "--skip memory"}
    else:
        log("memory ...")
        mprep = preps.get("metadata_response_v12") or prepare(
            CASES["metadata_response_v12"], side("repo"), peers
        )
        counts = (
            {i: 10 for i in IMPLS}
            if args.quick
            else {i: MEMORY_COUNT for i in IMPLS} | {"kafka_python": 100}
        )
        results["memory"] = memory(mprep, counts)
        for impl, r in results["memory"].items():
            log(
                f"  {impl}: {r['kept_bytes_per_message']:,} B per message "
                f"(measured on {r['count']})"
            )
    if "import" in skip:
        results["import"] = {"skipped": "--skip import"}
    else:
        log("import times ...")
        repo = side("repo")
        compiled_dir = (
            ROOT / results["compiled"]["repo"]["dir"] if repo.compiled is not None else None
        )
        results["import"] = import_times(3 if args.quick else 15, compiled_dir)
        for label, r in results["import"].items():
            log(f"  {label}: {r.get('median_ms', r.get('error'))} ms")
    if "generate" in skip:
        results["generate"] = {"skipped": "--skip generate"}
    else:
        log(f"generating {TRUNK} ...")
        results["generate"] = generation_time(1)
        log(f"  {results['generate']}")

    results["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    results["targets"] = targets(results)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    md = markdown(results)
    args.markdown.write_text(md)
    print(md)
    log(f"wrote {args.json} and {args.markdown}")
    return 0 if identity_ok else 1


if __name__ == "__main__":
    sys.exit(main())
