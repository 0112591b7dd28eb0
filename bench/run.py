"""Benchmark of the generated codecs beside kio 0.6.5 and kafka-python 3.0.12, against the
decode-speed issue's targets.

    python bench/run.py [--quick] [--cases a,b] [--skip memory,import,generate]
                        [--no-compiled] [--json PATH] [--markdown PATH]

For every case (see ``bench/cases.py``) the same logical message is built in our package, in
kio and in kafka-python (the peers' values come from ours through the adapters in
``tests/support/peers.py``); the three encodings must be byte-identical, and a peer that cannot
express a case, or encodes it differently, is reported and left out of that case's timings.
Encode and decode are timed with warm-up, calibrated loops and many repeats; within every
repeat the implementations run round-robin (rotating who goes first), so the peers and we see
the same machine state. Reported: the median ns/op, ops/s and our speed-up over each peer
(``peer ns / our ns``: 2.0 means we are twice as fast, 0.5 half as fast).

``golden_frames`` is a set of many messages instead of one: the body of every frame captured
in ``tests/golden/`` (headers split off with our header classes and not timed), read with a
package generated from the newest spec corpus. One op is a pass over the whole set. A peer
takes part with the bodies it decodes to our values (decode) and the ones it re-encodes to
the captured bytes (encode); the others are left out for that peer and counted by reason.
The set is cut into parts by which peers take part, each part is timed round-robin like a
case, and a speed-up over a peer sums the parts that peer is in, so it compares the same
bodies on both sides; our own ns/op is over every body.

"ours (mypyc)" is the same generated sources compiled with mypyc, as ``make compiled`` does
(``bench/compile.py``), under another package name (``kafka_messages_mypyc``,
``kp_bench_messages_mypyc``, ``newest_bench_messages_mypyc``) so both builds import side by
side; it is timed in the same round-robin loops, and its bytes and values must equal the
pure-Python build's. The builds are cached under ``build/bench/`` by a hash of their sources;
``--no-compiled`` leaves them out, and a failed build (no C compiler, say) is reported and
the run goes on without it.

Also measured: memory kept by 1,000 decoded MetadataResponse v12 (tracemalloc), the import
time of ``kafka_messages``, ``kafka_messages.metadata`` and ``kafka_messages_mypyc.metadata``
in fresh processes, and the wall time of generating the whole trunk corpus formatted, as
``make generate`` does, with an empty formatting cache (and again with it warm), with the
size of the ``.py`` files it writes.

Writes ``bench/results.json`` and ``bench/RESULTS.md`` (machine noted, each target marked met
or not met) unless told otherwise.
"""

from __future__ import annotations

import argparse
import copy
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
from collections import Counter
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
GENERATED = ROOT / "generated"
CACHE = ROOT / "build" / "bench"
KP_PACKAGE = "kp_bench_messages"

for p in (str(GENERATED), str(ROOT)):
    if p not in sys.path:
        sys.path.insert(0, p)

from bench.cases import CASES, Body, Case, Frames, FrameSet  # noqa: E402
from bench.compile import BuildError, build, mypyc_source, with_imports  # noqa: E402
from tests.support.genpkg import (  # noqa: E402
    CORPORA,
    SPECS,
    kafka_python_specs,
    load_messages,
    full_version_corpus,
)
from tests.support.peers import Inexpressible, KafkaPython, Kio, Unsupported  # noqa: E402

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

# The decode-speed issue's targets, and the generator issue's two (generation time, size).
# Where a row has no case, it is about one figure, else it is checked on every case.
TARGETS = {
    "decode_kafka_python": "pure decode >= 2x kafka-python 3 (stretch: 3x)",
    "decode_kio": "pure decode >= 0.5x kio",
    "decode_compiled_kio": "compiled (mypyc) decode >= 1.5x kio",
    "memory": "memory of 1,000 decoded MetadataResponse v12 <= kio's",
    "encode": "encode stays >= 2x the fastest peer",
    "import": "importing one API module (kafka_messages.metadata) < 15 ms",
    "generate": "cold generation of the whole trunk corpus < 10 s",
    "size": "trunk output <= 4.0 MB of .py",
    "encode_compiled": "compiled (mypyc) encode vs the fastest peer (no target: information)",
}
MAX_OUTPUT_BYTES = 4_000_000  # 4.0 MB (decimal) of generated .py files


# --- the packages under test -------------------------------------------------------------


def kp_corpus() -> Path:
    return KP_SHARED if KP_SHARED.is_dir() else kafka_python_specs()


#: The packages generated for the bench (beside the committed ``generated/kafka_messages``):
#: side label -> (package name, its spec corpus).
GENERATED_SIDES: dict[str, tuple[str, Callable[[], Path]]] = {
    "kp": (KP_PACKAGE, kp_corpus),  # kafka-python 3.0.12's specs: Produce, Fetch
    "newest": ("newest_bench_messages", full_version_corpus),  # reads every golden frame
}


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


def generated_package(label: str, log: Callable[[str], None]) -> str:
    """Generate (once, cached by input hash) side ``label``'s corpus (``GENERATED_SIDES``),
    formatted as users get it, and put it on ``sys.path``; return the package name."""
    package, corpus_of = GENERATED_SIDES[label]
    corpus = corpus_of()
    key = _tree_hash([corpus, ROOT / "generator", ROOT / "templates"])
    out = CACHE / f"{label}-{key}"
    if not (out / package / "__init__.py").is_file():
        from kafka_specgen.library import generate_files
        from kafka_specgen.format import write_package

        log(f"generating {corpus} into {out} (cached for the next runs) ...")
        t0 = time.perf_counter()
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=CACHE, prefix="tmp-gen-"))
        try:
            files = generate_files([corpus], warn=False, formatted=True)
            write_package(files, tmp / package)
            if out.exists():
                shutil.rmtree(out)
            tmp.rename(out)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        log(f"  done in {time.perf_counter() - t0:.1f} s")
        for old in CACHE.glob(f"{label}-*"):
            if old != out:
                shutil.rmtree(old, ignore_errors=True)
    if str(out) not in sys.path:
        sys.path.insert(0, str(out))
    return package


def kp_package(log: Callable[[str], None]) -> str:
    """The kafka-python corpus as ``kp_bench_messages`` (see ``generated_package``)."""
    return generated_package("kp", log)


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
        self._frames: dict[str, Frames] = {}

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

    def frames(self, case: FrameSet) -> Frames:
        """A frame set's bodies as this package reads them (loaded once)."""
        if case.id not in self._frames:
            self._frames[case.id] = case.load(self.package)
        return self._frames[case.id]

    def modules_for(self, case: Case | FrameSet) -> list[str]:
        """The modules (inside the package) a case's messages live in."""
        if isinstance(case, Case):
            return [self.module(case.message)]
        return sorted({self.module(b.cls.__name__) for b in self.frames(case).bodies})


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
    prep.encoders["ours"], prep.decoders["ours"] = ours_codecs(cls, obj, version, ours)
    if side.compiled:
        _, ccls = side.message_class(case.message, side.compiled)
        cobj = case.build(ccls)
        prep.encoders["ours_compiled"], prep.decoders["ours_compiled"] = compiled_codecs(
            case.id, side.compiled, ccls, cobj, obj, version, ours
        )
    for name, kobj in peer_objs.items():
        peer = peers[name]
        theirs = peer.encode(kobj, version)
        prep.identical[name] = theirs == ours
        if theirs != ours:
            prep.excluded[name] = _different_bytes(theirs, ours)
            continue
        problem = decode_problem(peer, obj, cls, message, version, ours)
        if problem is not None:
            prep.excluded[name] = problem
            prep.identical[name] = False
            continue
        prep.encoders[name] = peer_encoder(name, peer, kobj, version)
        prep.decoders[name] = peer_decoder(name, peer, message, version, ours)
    return prep


def _different_bytes(theirs: bytes, ours: bytes) -> str:
    at = next(
        (i for i, (a, b) in enumerate(zip(theirs, ours)) if a != b), min(len(theirs), len(ours))
    )
    return f"different bytes ({len(theirs)} vs our {len(ours)}, first difference at offset {at})"


def decode_problem(
    peer: Any, obj: Any, cls: Any, message: Any, version: int, wire: bytes
) -> str | None:
    """None if the peer decodes ``wire`` to ``obj``'s values, else what went wrong."""
    try:
        back = peer.from_peer(peer.decode(message, version, wire), cls, message, version)
    except Unsupported as exc:
        return f"cannot express it: {exc}"
    except Exception as exc:  # a peer's decode failure is a finding to report
        return f"cannot decode our bytes: {exc!r}"
    return None if back == obj else "decodes our bytes to other values"


def compiled_codecs(
    what: str, package: str, ccls: Any, cobj: Any, obj: Any, version: int, wire: bytes
) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """The mypyc build's codecs for one message, once the build gives exactly what the
    pure-Python build gives: the same bytes for the same values (``cobj`` holds ``obj``'s),
    and the same values back from them. Anything else is a bug in the compiled build, and
    stops the run."""
    theirs = cobj.encode(version)
    if theirs != wire:
        raise SystemExit(
            f"{what}: the mypyc build ({package}) encodes other bytes than the "
            f"pure-Python build ({len(theirs)} vs {len(wire)}): a bug in the compiled build"
        )
    back = ccls.decode(wire, version)
    # The two builds' classes differ, so compare them through their plain-data form.
    if back != cobj or back.to_dict() != obj.to_dict():
        raise SystemExit(
            f"{what}: the mypyc build ({package}) decodes our bytes to other values "
            "than the pure-Python build: a bug in the compiled build"
        )
    return (lambda: cobj.encode(version)), (lambda: ccls.decode(wire, version))


def peer_encoder(name: str, peer: Any, kobj: Any, version: int) -> Callable[[], Any]:
    """The peer's own fastest public encode path, resolved once (not the test adapters)."""
    if name == "kio":
        writer = peer.entity_writer(type(kobj))

        def kio_encode() -> bytes:
            buf = io.BytesIO()
            writer(buf, kobj)
            return buf.getvalue()

        return kio_encode
    return lambda: kobj.encode(version=version)


def peer_decoder(
    name: str, peer: Any, message: Any, version: int, wire: bytes
) -> Callable[[], Any]:
    """The peer's own fastest public decode path, resolved once (not the test adapters)."""
    kcls = peer.lookup(message, version)
    if name == "kio":
        reader = peer.entity_reader(kcls)
        return lambda: reader(wire, 0)
    # ApiMessage.decode, not ApiVersionsResponse's override (which re-reads error responses
    # at v0); for every other class they are the same function.
    decode = peer.ApiMessage.decode.__func__
    return lambda: decode(kcls, wire, version=version)


# --- frame sets: many messages, one pass over them per op ----------------------------------

OPS = ("encode", "decode")


class PreparedSet:
    """A frame set, checked body by body: per op, per implementation, one call per body it
    takes part in (``calls[op][impl]``: body index -> call), and why a peer was left out of
    the others (``left_out[op][peer]``: reason -> how many)."""

    def __init__(self, case: FrameSet, frames: Frames) -> None:
        self.case = case
        self.frames = frames
        self.size = sum(len(b.data) for b in frames.bodies)
        self.calls: dict[str, dict[str, dict[int, Callable[[], Any]]]] = {op: {} for op in OPS}
        self.left_out: dict[str, dict[str, Counter[str]]] = {op: {} for op in OPS}
        self.part_sizes: dict[str, dict[tuple[str, ...], int]] = {}
        self.timed_parts: dict[str, list[dict[str, Any]]] = {}

    def add(self, op: str, impl: str, index: int, call: Callable[[], Any]) -> None:
        self.calls[op].setdefault(impl, {})[index] = call

    def leave_out(self, op: str, peer: str, reason: str) -> None:
        self.left_out[op].setdefault(peer, Counter())[reason] += 1

    def used(self, op: str, impl: str) -> int:
        return len(self.calls[op].get(impl, {}))

    def parts(self, op: str) -> dict[tuple[str, ...], dict[str, Callable[[], None]]]:
        """The bodies cut by which peers take part in ``op`` (peers -> implementation -> a
        pass over that part's bodies): every implementation in a part does the same work."""
        groups: dict[tuple[str, ...], list[int]] = {}
        for i in range(len(self.frames.bodies)):
            key = tuple(p for p in PEERS if i in self.calls[op].get(p, {}))
            groups.setdefault(key, []).append(i)
        self.part_sizes[op] = {key: len(indices) for key, indices in groups.items()}
        return {
            key: {
                impl: _each([calls[i] for i in indices])
                for impl, calls in self.calls[op].items()
                if impl in OURS or impl in key
            }
            for key, indices in sorted(groups.items())
        }


def frame_set_entry(prep: PreparedSet, side: Side) -> dict[str, Any]:
    """results.json's entry for a frame set (its timings are added once timed)."""
    frames = prep.frames
    peers: dict[str, dict[str, Any]] = {}
    for p in PEERS:
        peers[p] = {
            "decode": prep.used("decode", p),
            "encode": prep.used("encode", p),
            "left_out": {op: dict(prep.left_out[op].get(p, {})) for op in OPS},
        }
    return {
        "kind": "frame set",
        "shape": prep.case.shape,
        "package": side.package,
        "compiled": bool(prep.calls["decode"].get("ours_compiled")),
        "bytes": prep.size,
        "identical": {},
        "excluded": {
            p: "takes part in no body" for p, r in peers.items() if not r["decode"] + r["encode"]
        },
        "frames": {
            "captured": frames.total,
            "bodies": len(frames.bodies),
            "left_out": dict(frames.left_out),
            "peers": peers,
        },
    }


def _each(calls: list[Callable[[], Any]]) -> Callable[[], None]:
    def one_pass() -> None:
        for call in calls:
            call()

    return one_pass


def prepare_set(case: FrameSet, side: Side, peers: dict[str, Any]) -> PreparedSet:
    """Check every body of a frame set with every implementation. Ours decodes and
    re-encodes each byte for byte (the loader kept only those); the mypyc build must give
    the same values and bytes; a peer takes part in decoding a body when it decodes it to
    our values, in encoding it when it holds those values (``to_peer``, unchanged) and
    writes the captured bytes."""
    prep = PreparedSet(case, side.frames(case))
    for i, body in enumerate(prep.frames.bodies):
        cls, version, wire = body.cls, body.version, body.data
        obj = cls.decode(wire, version)
        encode, decode = ours_codecs(cls, obj, version, wire)
        prep.add("encode", "ours", i, encode)
        prep.add("decode", "ours", i, decode)
        if side.compiled:
            _, ccls = side.message_class(cls.__name__, side.compiled)
            encode, decode = compiled_codecs(
                f"{case.id} {body.where}",
                side.compiled,
                ccls,
                ccls.decode(wire, version),
                obj,
                version,
                wire,
            )
            prep.add("encode", "ours_compiled", i, encode)
            prep.add("decode", "ours_compiled", i, decode)
        message = side.messages[cls.__name__]
        what = f"{cls.__name__} v{version}"
        for name, peer in peers.items():
            problem = decode_problem(peer, obj, cls, message, version, wire)
            if problem is None:
                prep.add("decode", name, i, peer_decoder(name, peer, message, version, wire))
            else:
                prep.leave_out("decode", name, f"{_reason(problem)}: {what}")
            # to_peer may project values in place: hand it a copy, and compare.
            mine = copy.deepcopy(obj)
            try:
                kobj = peer.to_peer(mine, cls, message, version)
                if mine != obj:
                    raise Inexpressible("values projected")
            except Unsupported:
                prep.leave_out("encode", name, f"not in the peer: {what}")
                continue
            except Inexpressible:
                prep.leave_out("encode", name, f"cannot hold a value: {what}")
                continue
            if peer.encode(kobj, version) != wire:
                prep.leave_out("encode", name, f"writes other bytes: {what}")
                continue
            prep.add("encode", name, i, peer_encoder(name, peer, kobj, version))
    return prep


def ours_codecs(
    cls: Any, obj: Any, version: int, wire: bytes
) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """Our encode of ``obj`` and decode of ``wire``, as the peers' are called (closures)."""
    return (lambda: obj.encode(version)), (lambda: cls.decode(wire, version))


def _reason(problem: str) -> str:
    """``decode_problem``'s answer, short enough to count."""
    if problem.startswith("cannot express it: "):  # Unsupported: no such message or version
        return "not in the peer"
    if problem.startswith("cannot decode"):
        return "fails to decode"
    return "decodes to other values"


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


def time_case(prep: Prepared | PreparedSet, repeats: int, target_ns: float) -> dict[str, Any]:
    # The set-up's long-lived objects (every case's messages, the peers' modules) would make
    # each full collection during timing slow for whichever codec triggers it: freeze them,
    # so each codec pays for collecting its own garbage only.
    gc.collect()
    gc.freeze()
    try:
        if isinstance(prep, PreparedSet):
            return {op: _time_set(prep, op, repeats, target_ns) for op in OPS}
        return {
            "encode": time_op(prep.encoders, repeats, target_ns),
            "decode": time_op(prep.decoders, repeats, target_ns),
        }
    finally:
        gc.unfreeze()


def time_op(fns: dict[str, Callable[[], Any]], repeats: int, target_ns: float) -> dict[str, Any]:
    """Median ns per call of each implementation's ``fns[impl]``, timed round-robin."""
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
    mine = {me: res[me]["ns_per_op"] for me in OURS if me in res}
    _speedups(res, {p: (mine, res[p]["ns_per_op"]) for p in PEERS if p in res})
    return res


def _speedups(res: dict[str, Any], vs: dict[str, tuple[dict[str, float], float]]) -> None:
    """Our speed-ups: ``vs[peer]`` = (our ns on that peer's work, the peer's ns)."""
    for p, (mine, theirs) in vs.items():
        for me, ns in mine.items():
            res[me][f"speedup_vs_{p}"] = round(theirs / ns, 3)
    if "ours_compiled" in res:
        res["ours_compiled"]["speedup_vs_ours"] = round(
            res["ours"]["ns_per_op"] / res["ours_compiled"]["ns_per_op"], 3
        )


def _time_set(prep: PreparedSet, op: str, repeats: int, target_ns: float) -> dict[str, Any]:
    """One op of a frame set: each part (by which peers take part) timed like a case; an
    implementation's ns/op is the sum over the parts it is in (ours: all of them), and our
    speed-up over a peer compares the sums over that peer's parts only."""
    parts = [(peers, time_op(fns, repeats, target_ns)) for peers, fns in prep.parts(op).items()]
    prep.timed_parts[op] = [
        {
            "peers": list(peers),
            "bodies": prep.part_sizes[op][peers],
            "ns_per_op": {i: r[i]["ns_per_op"] for i in r},
        }
        for peers, r in parts
    ]
    res: dict[str, Any] = {}
    for impl in IMPLS:
        its = [r[impl] for _, r in parts if impl in r]
        if not its:
            continue
        med = sum(r["ns_per_op"] for r in its)
        res[impl] = {
            "ns_per_op": round(med, 1),
            "ops_per_s": round(1e9 / med, 1),
            "min_ns": round(sum(r["min_ns"] for r in its), 1),
            "max_ns": round(sum(r["max_ns"] for r in its), 1),
            "bodies": prep.used(op, impl),
            "repeats": repeats,
        }
    vs = {}
    for p in PEERS:
        theirs = [r for peers, r in parts if p in peers]
        if theirs:
            mine = {me: sum(r[me]["ns_per_op"] for r in theirs) for me in OURS if me in res}
            vs[p] = (mine, sum(r[p]["ns_per_op"] for r in theirs))
    _speedups(res, vs)
    return res


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
    """Wall time of generating the trunk corpus in a fresh process: cold (an empty
    formatting cache, the number the target is about) and warm (the same specs again, into
    the same folder), and the size of the ``.py`` files written.

    The formatting cache (black's output per input, ``KAFKA_SPECGEN_CACHE``) is a new empty
    folder per run, and ``XDG_CACHE_HOME`` too, so no user-level cache can answer; the run
    checks that the folder was empty before the cold run and that the cold run filled it (if
    not, the generator did not use it, and ``cold_cache`` says so)."""
    if not TRUNK.is_dir():
        return {"skipped": f"{TRUNK} not found"}
    cold: list[float] = []
    warm: list[float] = []
    files = py_bytes = 0
    checks: list[dict[str, Any]] = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, "-m", "kafka_specgen.cli", "generate", "--specs", str(TRUNK)]
            cmd += ["--out", tmp, "--package", "kafka_messages"]
            cache = Path(tmp, "format-cache")
            env = {
                **os.environ,
                "KAFKA_SPECGEN_CACHE": str(cache),
                "XDG_CACHE_HOME": str(Path(tmp, "xdg-cache")),
            }
            before = _entries(cache)
            for samples in (cold, warm):
                t0 = time.perf_counter()
                subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, env=env)
                samples.append(time.perf_counter() - t0)
                if samples is cold:
                    checks.append({"entries_before": before, "entries_after": _entries(cache)})
            written = [
                f for f in Path(tmp, "kafka_messages").rglob("*.py") if "__pycache__" not in f.parts
            ]
            files, py_bytes = len(written), sum(f.stat().st_size for f in written)
    return {
        "corpus": os.path.relpath(TRUNK, ROOT),
        "formatted": True,
        "modules": files,
        "py_bytes": py_bytes,
        "median_s": round(statistics.median(cold), 2),
        "samples_s": [round(s, 2) for s in cold],
        "warm_median_s": round(statistics.median(warm), 2),
        "cold_cache": {
            "ok": all(c["entries_before"] == 0 and c["entries_after"] > 0 for c in checks),
            "runs": checks,
        },
    }


def _entries(folder: Path) -> int:
    return sum(1 for f in folder.rglob("*") if f.is_file()) if folder.is_dir() else 0


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
    """One row per target and case (or per target, for a single figure): ``met`` is True,
    False, or None (not a target, or not measurable); ``ratio`` is the figure the verdict
    compares, for the summary's worst case."""
    rows: list[dict[str, Any]] = []

    def row(key: str, case: str, value: str, met: bool | None, ratio: float | None) -> None:
        rows.append(
            {
                "key": key,
                "target": TARGETS[key],
                "case": case,
                "value": value,
                "met": met,
                "ratio": ratio,
            }
        )

    timed = {cid: c["timings"] for cid, c in results["cases"].items() if c.get("timings")}

    def decode_vs(me: str, peer: str) -> list[tuple[str, float]]:
        return [
            (cid, t["decode"][me][f"speedup_vs_{peer}"])
            for cid, t in timed.items()
            if me in t["decode"] and f"speedup_vs_{peer}" in t["decode"][me]
        ]

    def encode_vs_fastest(me: str) -> list[tuple[str, float, str]]:
        out = []
        for cid, t in timed.items():
            mine = t["encode"].get(me, {})
            vs = {p: mine[f"speedup_vs_{p}"] for p in PEERS if f"speedup_vs_{p}" in mine}
            if vs:  # the fastest peer is the one we are least faster than
                fastest = min(vs, key=lambda p: vs[p])
                out.append((cid, vs[fastest], fastest))
        return out

    for cid, s in decode_vs("ours", "kafka_python"):
        stretch = "met" if s >= 3.0 else "not met"
        row("decode_kafka_python", cid, f"{s:.2f}x (stretch 3x: {stretch})", s >= 2.0, s)
    for cid, s in decode_vs("ours", "kio"):
        row("decode_kio", cid, f"{s:.2f}x", s >= 0.5, s)
    for cid, s in decode_vs("ours_compiled", "kio"):
        row("decode_compiled_kio", cid, f"{s:.2f}x", s >= 1.5, s)
    mem = results.get("memory") or {}
    if "ours" in mem and "kio" in mem:
        ours, kio = mem["ours"]["kept_bytes"], mem["kio"]["kept_bytes"]
        extra = (
            f"; mypyc {mem['ours_compiled']['kept_bytes']:,} B" if "ours_compiled" in mem else ""
        )
        row(
            "memory",
            "metadata_response_v12",
            f"{ours:,} B vs kio {kio:,} B{extra}",
            ours <= kio,
            kio / ours,
        )
    for cid, s, fastest in encode_vs_fastest("ours"):
        row("encode", cid, f"{s:.2f}x vs {LABELS[fastest]}", s >= 2.0, s)
    imp = (results.get("import") or {}).get("kafka_messages.metadata")
    if imp and "median_ms" in imp:
        ms = imp["median_ms"]
        row("import", "-", f"{ms:.1f} ms", ms < 15, 15 / ms)
    gen = results.get("generate") or {}
    if "median_s" in gen:
        cold = gen.get("cold_cache", {}).get("ok", False)
        value = f"{gen['median_s']:.1f} s cold ({gen['warm_median_s']:.1f} s warm)"
        if not cold:
            value += "; the formatting cache was not empty or not used: not a cold run"
        row("generate", "-", value, gen["median_s"] < 10 if cold else None, 10 / gen["median_s"])
        size = gen["py_bytes"]
        row(
            "size",
            "-",
            f"{size:,} bytes ({size / 1e6:.2f} MB) in {gen['modules']} .py files",
            size <= MAX_OUTPUT_BYTES,
            MAX_OUTPUT_BYTES / size,
        )
    for cid, s, fastest in encode_vs_fastest("ours_compiled"):
        row("encode_compiled", cid, f"{s:.2f}x vs {LABELS[fastest]}", None, s)
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


TARGETS_INTRO = [
    "Targets of the decode-speed issue (the last two from the generator issue), each checked",
    "under [Targets](#targets) from this run's figures:",
    "",
    "- pure-Python decode >= 2x kafka-python 3 on every case (stretch: 3x), and >= 0.5x kio;",
    "- compiled (mypyc flavour) decode >= 1.5x kio on every case;",
    "- memory of 1,000 decoded MetadataResponse v12 <= kio's;",
    "- encode stays >= 2x the fastest peer on every case;",
    "- importing one API module stays < 15 ms;",
    "- cold generation of the whole trunk corpus < 10 s on this machine, and trunk output",
    "  <= 4.0 MB of `.py`.",
]


def _verdict(rows: list[dict[str, Any]]) -> tuple[str, str]:
    """A target's verdict over its rows (every case must meet it), and its worst row."""
    judged = [r for r in rows if r["met"] is not None]
    worst = min(rows, key=lambda r: r["ratio"] if r["ratio"] is not None else float("inf"))
    where = f"{worst['case']}: {worst['value']}" if worst["case"] != "-" else worst["value"]
    if not judged:
        return "-", where
    met = sum(1 for r in judged if r["met"])
    verdict = "met" if met == len(judged) else "**not met**"
    if len(judged) > 1:
        verdict += f" ({met} of {len(judged)} cases)"
    return verdict, where


def _left_out(reasons: dict[str, int]) -> str:
    """``{"not in the peer: FetchRequest v1": 27, ...}`` -> "not in the peer: FetchRequest
    v1 x27, ..." (reasons grouped, most frequent first)."""
    groups: dict[str, list[tuple[str, int]]] = {}
    for reason, n in reasons.items():
        why, _, what = reason.partition(": ")
        groups.setdefault(why, []).append((what, n))
    parts = []
    for why, items in sorted(groups.items(), key=lambda g: -sum(n for _, n in g[1])):
        items.sort(key=lambda item: (-item[1], item[0]))
        parts.append(f"{why}: " + ", ".join(f"{what} x{n}" for what, n in items))
    return "; ".join(parts)


def _frame_set_notes(cid: str, c: dict[str, Any]) -> list[str]:
    f = c["frames"]
    n = f["bodies"]
    lines = [
        f"- {cid}: {n:,} of {f['captured']:,} captured frames are read by `{c['package']}`"
        + (f" (left out: {_left_out(f['left_out'])})" if f["left_out"] else "")
        + "; only their bodies are timed, one op being a pass over all of them."
    ]
    for p in PEERS:
        r = f["peers"].get(p)
        if r is None:
            continue
        for op, verb in (("decode", "decodes to our values"), ("encode", "re-encodes identically")):
            left = r["left_out"].get(op) or {}
            lines.append(
                f"  - {LABELS[p]} {verb} {r[op]:,} of {n:,}"
                + (f" (left out: {_left_out(left)})" if left else "")
            )
    return lines


def markdown(results: dict[str, Any]) -> str:
    m = results["machine"]
    # The compiled build's columns only when some case has its numbers.
    compiled = any(
        "ours_compiled" in c.get("timings", {}).get("decode", {}) for c in results["cases"].values()
    )
    mine = list(OURS) if compiled else ["ours"]
    sets = {cid: c for cid, c in results["cases"].items() if "frames" in c}
    lines = [
        "# Benchmark results",
        "",
        *TARGETS_INTRO,
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
        "## Targets",
        "",
        "The pure-Python build, except where a target names the compiled build (mypyc); a",
        "target on every case is met when every case meets it (per case: the last table).",
        "",
        "| target | verdict | worst |",
        "|---|---|---|",
    ]
    by_target: dict[str, list[dict[str, Any]]] = {}
    for row in results["targets"]:
        by_target.setdefault(row["target"], []).append(row)
    for target, rows in by_target.items():
        verdict, worst = _verdict(rows)
        lines.append(f"| {target} | {verdict} | {worst} |")
    lines += [
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
            elif cid in sets:
                r, n = c["frames"]["peers"][p], c["frames"]["bodies"]
                cells.append(f"decode {r['decode']:,} / encode {r['encode']:,} of {n:,}")
            else:
                cells.append("identical")
        lines.append(f"| {cid} | {c['shape']} | {c['bytes']:,} | " + " | ".join(cells) + " |")
    if sets:
        lines.append("")
        for cid, c in sets.items():
            lines += _frame_set_notes(cid, c)
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
        for cid, c in sets.items():
            t = c.get("timings", {}).get(op, {})
            if "ours" in t:
                counts = ", ".join(
                    f"{LABELS[i]} {t[i]['bodies']:,}" for i in [*mine, *PEERS] if i in t
                )
                lines += [
                    "",
                    f"{cid}: ns per pass over the bodies each implementation takes part in "
                    f"({counts}); a speed-up compares the same bodies on both sides.",
                ]
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
        runs = gen["cold_cache"]["runs"]
        cold = (
            f"with an empty formatting cache (checked: empty before, {runs[0]['entries_after']} "
            "entries after)"
            if gen["cold_cache"]["ok"]
            else f"**not cold**: the formatting cache was not empty or not used ({runs})"
        )
        lines.append(
            f"`kafka-specgen generate --specs {gen['corpus']}` (formatted, fresh process): "
            f"{gen['median_s']:.1f} s {cold} (runs: {gen['samples_s']}); "
            f"{gen['warm_median_s']:.1f} s again with the cache warm (a regeneration after a "
            f"spec bump re-formats only what changed). Output: {gen['modules']} `.py` files, "
            f"{gen['py_bytes']:,} bytes."
        )
    else:
        lines.append(f"skipped: {gen.get('skipped', '')}")
    lines += [
        "",
        "## Targets per case",
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
        # per side ("repo", "kp", "newest"): the mypyc build's package and modules, or its error
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
                specs = [GENERATED_SIDES[which][1]()]
                s = Side(generated_package(which, log), specs)
                # A whole corpus is ~100-170 modules: compile only what this side's cases
                # import (all of them, not just the chosen ones, so that one cached build
                # serves every run).
                needed = [m for c in CASES.values() if c.package == which for m in s.modules_for(c)]
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

    preps: dict[str, Prepared | PreparedSet] = {}
    identity_ok = True
    for cid in chosen:
        case = CASES[cid]
        if isinstance(case, FrameSet):
            log(f"{cid}: checking every body with every implementation ...")
            preps[cid] = sprep = prepare_set(case, side(case.package), peers)
            results["cases"][cid] = frame_set_entry(sprep, side(case.package))
            frames = results["cases"][cid]["frames"]
            log(
                f"{cid}: {frames['bodies']:,} of {frames['captured']:,} frames, "
                f"{sprep.size:,} body bytes; "
                + ", ".join(
                    f"{p} decodes {r['decode']:,}, re-encodes {r['encode']:,}"
                    for p, r in frames["peers"].items()
                )
            )
            continue
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
        "note": "passed = no peer that expressed a case gave other bytes (a frame set's "
        "bodies that a peer re-encodes differently are counted, and left out of its encode)",
    }

    for cid in chosen:
        log(f"timing {cid} ...")
        timed = preps[cid]
        t = time_case(timed, repeats, target_ns)
        results["cases"][cid]["timings"] = t
        if isinstance(timed, PreparedSet):
            results["cases"][cid]["frames"]["parts"] = timed.timed_parts
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
        mcase = CASES["metadata_response_v12"]
        assert isinstance(mcase, Case)
        mprep = preps.get(mcase.id) or prepare(mcase, side("repo"), peers)
        assert isinstance(mprep, Prepared)
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
