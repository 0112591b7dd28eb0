"""Benchmark of the generated codecs beside kio 0.6.5 and kafka-python 3.0.12, against the
project's speed and size targets (bench/report.py: TARGETS).

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
in fresh processes, and the wall time of generating the whole trunk corpus as
``make generate`` does, with empty cache folders (and again into the same folder), with the
size of the ``.py`` files it writes.

Writes ``bench/results.json`` and ``bench/RESULTS.md`` (machine noted, each target marked met
or not met) unless told otherwise.

This file is the command (the run's steps, in order); its parts: ``bench/sides.py`` (the
packages under test and their mypyc builds), ``bench/prepared.py`` (cases built and checked
byte for byte), ``bench/timing.py`` (the loops), ``bench/measure.py`` (memory, import,
generation, machine), ``bench/report.py`` (targets, RESULTS.md), ``bench/common.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for p in (str(ROOT / "generated"), str(ROOT)):
    if p not in sys.path:
        sys.path.insert(0, p)

from bench.cases import CASES, Case, FrameSet  # noqa: E402
from bench.common import BENCH, CACHE, IMPLS, LABELS, MEMORY_COUNT, OURS, PEERS, TRUNK  # noqa: E402
from bench.compile import BuildError, mypyc_source, with_imports  # noqa: E402
from bench.measure import generation_time, import_times, machine, memory  # noqa: E402
from bench.prepared import Prepared, PreparedSet, frame_set_entry  # noqa: E402
from bench.prepared import prepare, prepare_set  # noqa: E402
from bench.report import markdown, targets  # noqa: E402
from bench.sides import GENERATED_SIDES, Side, generated_package, mypyc_package  # noqa: E402
from bench.timing import time_case  # noqa: E402
from tests.support.genpkg import SPECS  # noqa: E402
from tests.support.peers import KafkaPython, Kio  # noqa: E402


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
        results["generate"] = generation_time(1, TRUNK)
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
