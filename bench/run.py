"""Benchmark of the generated codecs beside kio 0.6.5 and kafka-python 3.0.12, against the
project's speed and size targets (bench/report.py: TARGETS).

    python bench/run.py [--quick] [--cases a,b] [--skip memory,import,generate]
                        [--no-compiled] [--json PATH] [--markdown PATH]

For every case (see ``bench/cases.py``) the same logical message is built in our package, in
kio and in kafka-python (the peers' values come from ours through the adapters in
``bench/peers.py``); the three encodings must be byte-identical, and a peer that cannot
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
in fresh processes, and the wall time of generating the whole trunk corpus as
``make generate`` does, with empty cache folders (and again into the same folder), with the
size of the ``.py`` files it writes.

Writes ``bench/results.json`` and ``bench/RESULTS.md`` (machine noted, each target marked met
or not met) unless told otherwise.

This file is the command (the run's steps, in order, in ``main``); its parts:
``bench/sides.py`` (the packages under test and their mypyc builds), ``bench/prepared.py``
(cases built and checked byte for byte), ``bench/peers.py`` (the peers' adapters),
``bench/timing.py`` (the loops), ``bench/measure.py`` (memory, import, generation, machine),
``bench/report.py`` (targets, RESULTS.md), ``bench/common.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
for p in (str(ROOT / "generated"), str(ROOT)):
    if p not in sys.path:
        sys.path.insert(0, p)

from bench.cases import CASES, Case, FrameSet  # noqa: E402
from bench.common import BENCH, CACHE, IMPLS, LABELS, MEMORY_COUNT, OURS, PEERS, TRUNK  # noqa: E402
from bench.compile import BuildError, mypyc_source, with_imports  # noqa: E402
from bench.measure import generation_time, import_times, machine, memory  # noqa: E402
from bench.peers import KafkaPython, Kio  # noqa: E402
from bench.prepared import Prepared, PreparedSet, frame_set_entry  # noqa: E402
from bench.prepared import prepare, prepare_set  # noqa: E402
from bench.report import markdown, targets  # noqa: E402
from bench.sides import Side, mypyc_package, open_side  # noqa: E402
from bench.timing import time_case  # noqa: E402

#: The parts measured beside the cases, each of which ``--skip`` can leave out.
PARTS = ("memory", "import", "generate")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The options, checked; ``cases`` and ``skip`` become lists and sets."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="few repeats (a smoke test)")
    ap.add_argument(
        "--cases", default="all", help=f"comma-separated case ids or 'all': {', '.join(CASES)}"
    )
    ap.add_argument("--skip", default="", help=f"comma-separated parts to skip: {', '.join(PARTS)}")
    ap.add_argument("--repeats", type=int, help="repeats per measurement (default 25; quick 3)")
    ap.add_argument(
        "--no-compiled",
        action="store_true",
        help="leave out the mypyc build (e.g. without a C compiler)",
    )
    ap.add_argument("--json", type=Path, default=BENCH / "results.json")
    ap.add_argument("--markdown", type=Path, default=BENCH / "RESULTS.md")
    args = ap.parse_args(argv)
    args.cases = list(CASES) if args.cases == "all" else [c.strip() for c in args.cases.split(",")]
    unknown = [c for c in args.cases if c not in CASES]
    if unknown:
        ap.error(f"unknown case(s) {unknown}; known: {', '.join(CASES)}")
    args.skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    bad = args.skip - set(PARTS)
    if bad:
        ap.error(f"unknown --skip part(s) {sorted(bad)}")
    args.repeats = args.repeats or (3 if args.quick else 25)
    args.target_ns = 2e6 if args.quick else 20e6
    return args


def new_results(args: argparse.Namespace) -> dict[str, Any]:
    """results.json before anything is measured: the machine and the options."""
    return {
        "machine": machine(),
        "options": {
            "quick": args.quick,
            "repeats": args.repeats,
            "cases": args.cases,
            "skip": sorted(args.skip),
            "compiled": not args.no_compiled,
            "target_ms_per_repeat": args.target_ns / 1e6,
        },
        # per side ("repo", "kp", "newest"): the mypyc build's package and modules, or its error
        "compiled": {"skipped": "--no-compiled"} if args.no_compiled else {},
        "cases": {},
    }


class Sides:
    """The packages under test, each opened (and its mypyc build made) the first time a
    case asks for it; what each build is, or why it failed, goes to ``compiled``."""

    def __init__(self, with_compiled: bool, compiled: dict[str, Any]) -> None:
        self.with_compiled = with_compiled
        self.compiled = compiled
        self._sides: dict[str, Side] = {}

    def __call__(self, which: str) -> Side:
        if which not in self._sides:
            side, specs = open_side(which, log)
            if self.with_compiled:
                self.compiled[which] = self._compile(which, side, specs)
            self._sides[which] = side
        return self._sides[which]

    def _compile(self, which: str, side: Side, specs: list[Path]) -> dict[str, Any]:
        """The mypyc flavour of the same specs, from the same templates; sets
        ``side.compiled`` unless the build fails (the run goes on without it)."""
        modules = None  # the repo's whole package, as `make compiled` builds it
        if which != "repo":
            # A whole corpus is ~100-170 modules: compile only what this side's cases
            # import (all of them, not just the chosen ones, so that one cached build
            # serves every run).
            needed = [m for c in CASES.values() if c.package == which for m in side.modules_for(c)]
            modules = with_imports(side.source, needed)
        try:
            source = mypyc_source(specs, CACHE / f"mypyc-src-{which}", side.source.name)
            info = mypyc_package(which, source, modules, log)
        except BuildError as exc:
            log(f"mypyc build of {side.source} failed; going on without it:\n{exc}")
            return {"error": str(exc)}
        side.compiled = info["package"]
        return info


def check_frame_set(
    case: FrameSet, side: Side, peers: dict[str, Any]
) -> tuple[PreparedSet, dict[str, Any]]:
    """A frame set checked body by body, and its results.json entry."""
    log(f"{case.id}: checking every body with every implementation ...")
    prep = prepare_set(case, side, peers)
    entry = frame_set_entry(prep, side)
    frames = entry["frames"]
    log(
        f"{case.id}: {frames['bodies']:,} of {frames['captured']:,} frames, "
        f"{prep.size:,} body bytes; "
        + ", ".join(
            f"{p} decodes {r['decode']:,}, re-encodes {r['encode']:,}"
            for p, r in frames["peers"].items()
        )
    )
    return prep, entry


def check_case(case: Case, side: Side, peers: dict[str, Any]) -> tuple[Prepared, dict[str, Any]]:
    """A case built in every implementation and checked byte for byte, and its
    results.json entry."""
    prep = prepare(case, side, peers)
    entry = {
        "message": case.message,
        "version": case.version,
        "shape": case.shape,
        "package": side.package,
        "compiled": "ours_compiled" in prep.decoders,
        "bytes": prep.size,
        "identical": prep.identical,
        "excluded": prep.excluded,
    }
    log(
        f"{case.id}: {prep.size:,} bytes; identical: {prep.identical}"
        + (f"; excluded: {prep.excluded}" if prep.excluded else "")
    )
    return prep, entry


def check_cases(
    chosen: list[str], sides: Sides, peers: dict[str, Any], results: dict[str, Any]
) -> dict[str, Prepared | PreparedSet]:
    """Every chosen case made ready to time (entries into ``results["cases"]``), and
    ``results["identity"]``: whether every peer that expressed a case gave our bytes."""
    preps: dict[str, Prepared | PreparedSet] = {}
    identity_ok = True
    for cid in chosen:
        case = CASES[cid]
        if isinstance(case, FrameSet):
            preps[cid], results["cases"][cid] = check_frame_set(case, sides(case.package), peers)
        else:
            prep, results["cases"][cid] = check_case(case, sides(case.package), peers)
            identity_ok &= all(prep.identical.values())
            preps[cid] = prep
    results["identity"] = {
        "passed": identity_ok,
        "note": "passed = no peer that expressed a case gave other bytes (a frame set's "
        "bodies that a peer re-encodes differently are counted, and left out of its encode)",
    }
    return preps


def time_cases(
    preps: dict[str, Prepared | PreparedSet], args: argparse.Namespace, results: dict[str, Any]
) -> None:
    """Every prepared case timed; the timings go into its results.json entry."""
    for cid, prep in preps.items():
        log(f"timing {cid} ...")
        timings = time_case(prep, args.repeats, args.target_ns)
        results["cases"][cid]["timings"] = timings
        if isinstance(prep, PreparedSet):
            results["cases"][cid]["frames"]["parts"] = prep.timed_parts
        for op in ("encode", "decode"):
            log(f"  {op:6} ns/op: " + ", ".join(timing_summary(timings[op])))


def timing_summary(timings: dict[str, Any]) -> list[str]:
    """Per implementation: its ns/op, and ours with the speed-up over each peer."""
    return [
        f"{LABELS[i]} {timings[i]['ns_per_op']:,.0f}"
        + "".join(
            f" (x{timings[i][f'speedup_vs_{p}']:.2f} vs {p})"
            for p in PEERS
            if p in timings and i in OURS
        )
        for i in IMPLS
        if i in timings
    ]


def measure_memory(
    quick: bool, preps: dict[str, Prepared | PreparedSet], sides: Sides, peers: dict[str, Any]
) -> dict[str, Any]:
    """Memory kept by decoded MetadataResponse v12, per implementation."""
    log("memory ...")
    case = CASES["metadata_response_v12"]
    assert isinstance(case, Case)
    prep = preps.get(case.id) or prepare(case, sides("repo"), peers)
    assert isinstance(prep, Prepared)
    counts = (
        {i: 10 for i in IMPLS}
        if quick
        else {i: MEMORY_COUNT for i in IMPLS} | {"kafka_python": 100}
    )
    found = memory(prep, counts)
    for impl, r in found.items():
        log(f"  {impl}: {r['kept_bytes_per_message']:,} B per message (measured on {r['count']})")
    return found


def measure_imports(quick: bool, sides: Sides, compiled: dict[str, Any]) -> dict[str, Any]:
    """Import times of ``kafka_messages`` and its mypyc build, in fresh processes."""
    log("import times ...")
    repo = sides("repo")
    compiled_dir = ROOT / compiled["repo"]["dir"] if repo.compiled is not None else None
    found = import_times(3 if quick else 15, compiled_dir)
    for label, r in found.items():
        log(f"  {label}: {r.get('median_ms', r.get('error'))} ms")
    return found


def measure_generation() -> dict[str, Any]:
    """Wall time of generating the whole trunk corpus, as ``make generate`` does."""
    log(f"generating {TRUNK} ...")
    found = generation_time(1, TRUNK)
    log(f"  {found}")
    return found


def write_results(args: argparse.Namespace, results: dict[str, Any]) -> None:
    """results.json and RESULTS.md, with the targets met or not."""
    results["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    results["targets"] = targets(results)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    md = markdown(results)
    args.markdown.write_text(md)
    print(md)
    log(f"wrote {args.json} and {args.markdown}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    results = new_results(args)
    start = results["machine"]
    log(f"machine: {start['cpu']}, {start['cores']} cores, load {start['load_average_start']}")
    peers = {"kio": Kio(), "kafka_python": KafkaPython()}
    sides = Sides(not args.no_compiled, results["compiled"])
    preps = check_cases(args.cases, sides, peers, results)
    time_cases(preps, args, results)
    parts: dict[str, Callable[[], dict[str, Any]]] = {
        "memory": lambda: measure_memory(args.quick, preps, sides, peers),
        "import": lambda: measure_imports(args.quick, sides, results["compiled"]),
        "generate": measure_generation,
    }
    for part, measure in parts.items():
        results[part] = {"skipped": f"--skip {part}"} if part in args.skip else measure()
    write_results(args, results)
    return 0 if results["identity"]["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
