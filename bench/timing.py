"""The timing loops: calibrated, warmed up, repeated round-robin over the implementations;
medians, and our speed-ups over the peers."""

from __future__ import annotations

import gc
import statistics
import time
from typing import Any, Callable

from bench.common import IMPLS, OURS, PEERS
from bench.prepared import OPS, Prepared, PreparedSet


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
