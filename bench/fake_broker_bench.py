"""The fake broker beside Tansu, on the same loads in the same run
(``make bench-fake-broker``): what users would start instead, on this machine, so compare
the ratios (a client on this machine limits some figures).

- synchronous round trips/s, one request at a time: Metadata from our blocking client, and
  librdkafka producing one record and flushing (target: 1.5x Tansu or more);
- requests/s with several pipelined clients (target: 20,000/s or more);
- librdkafka's batched produce, records/s;
- consume records/s: our client, kafka-python and aiokafka;
- other clients' p99 latency while 20 Fetches are parked and one peer does not read
  (target: under 50 ms).

Each broker runs in its own process; the machine's load average is recorded with the
figures.

    python bench/fake_broker_bench.py [--quick] [--specs PATH] [--json PATH] [--markdown PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from bench import brokers  # noqa: E402
from bench import fake_broker_loads as loads  # noqa: E402
from bench.common import CORPORA  # noqa: E402
from kafka_specgen.library import GeneratedPackage, generated_package  # noqa: E402

SPECS = CORPORA / "4.1.2"
FULL = {
    "round_trips": 5000,
    "librdkafka_round_trips": 3000,
    "pipelined_clients": 4,
    "pipelined_depth": 32,
    "pipelined_seconds": 5.0,
    "batched_records": 200_000,
    "batched_size": 100,
    "consume_records": 20_000,
    "parked": 20,
    "parked_round_trips": 1000,
}
QUICK = {
    **FULL,
    "round_trips": 200,
    "librdkafka_round_trips": 50,
    "pipelined_clients": 2,
    "pipelined_seconds": 1.0,
    "batched_records": 2000,
    "consume_records": 600,
    "parked_round_trips": 100,
}
SMOKE = {
    **QUICK,
    "round_trips": 20,
    "librdkafka_round_trips": 10,
    "pipelined_clients": 1,
    "pipelined_seconds": 0.5,
    "batched_records": 200,
    "consume_records": 100,
    "parked_round_trips": 20,
}


def run(target: brokers.Target, package: GeneratedPackage, load: dict[str, Any]) -> dict[str, Any]:
    port = target.port
    loads.create_topics(
        package, port, {"rt": 1, "batched": 1, "none": 1, "lz4": 1, "parked": 1, "full": 1}
    )
    loads.fill(package, port, "none", load["consume_records"])
    loads.fill(package, port, "lz4", load["consume_records"], "lz4")
    loads.fill(package, port, "full", 2 * loads.PER_BATCH)
    out: dict[str, Any] = {}
    out["round_trips"] = loads.round_trips(package, port, load["round_trips"])
    out["librdkafka_round_trips"] = loads.librdkafka_round_trips(
        port, load["librdkafka_round_trips"]
    )
    out["pipelined"] = loads.pipelined(
        package,
        port,
        load["pipelined_clients"],
        load["pipelined_depth"],
        load["pipelined_seconds"],
    )
    out["batched_produce"] = loads.batched_produce(
        port, load["batched_records"], load["batched_size"]
    )
    for codec in ("none", "lz4"):
        for name, rate in loads.consume(package, port, codec, load["consume_records"]).items():
            out[f"consume {codec}: {name}"] = rate
    latency = loads.parked_latency(package, port, load["parked"], load["parked_round_trips"])
    out.update({f"parked_{k}": v for k, v in latency.items()})
    return out


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def measure(specs: Path, load: dict[str, Any]) -> dict[str, Any]:
    package = generated_package([specs])
    targets: dict[str, Callable[[], AbstractContextManager[brokers.Target]]] = {
        "fake broker": lambda: brokers.fake_broker_target(specs),
        "Tansu": brokers.tansu,
    }
    result: dict[str, Any] = {"load": load, "load_average_before": load_average()}
    figures: dict[str, dict[str, Any]] = {}
    canned: dict[int, bytes] = {}
    for name, start in targets.items():
        with start() as target:
            time.sleep(0.5)
            figures[name] = run(target, package, load)
            if name == "fake broker":
                canned = loads.canned_answers(package, target.port)
    with loads.canned_server(canned) as server:
        result["canned_round_trips"] = loads.round_trips(package, server.port, load["round_trips"])
    result["figures"] = figures
    result["load_average_after"] = load_average()
    fake, tansu = figures["fake broker"], figures["Tansu"]
    result["ratios"] = {
        key: fake[key] / tansu[key] if not key.startswith("parked") else tansu[key] / fake[key]
        for key in fake
        if tansu.get(key)
    }
    result["targets"] = {
        "round_trips >= 1.5x Tansu": result["ratios"]["round_trips"] >= 1.5,
        "pipelined >= 20,000 requests/s": fake["pipelined"] >= 20_000,
        "parked p99 < 50 ms": fake["parked_p99_ms"] < 50,
    }
    return result


UNITS = {
    "round_trips": "Metadata round trips/s (our blocking client, one at a time)",
    "librdkafka_round_trips": "librdkafka Produce round trips/s (one record + flush)",
    "pipelined": "requests/s, pipelined clients",
    "batched_produce": "librdkafka batched produce, records/s",
    "parked_p50_ms": "other clients' p50 ms, 20 parked Fetches + a non-reader",
    "parked_p99_ms": "other clients' p99 ms, 20 parked Fetches + a non-reader",
    "parked_max_ms": "other clients' max ms, 20 parked Fetches + a non-reader",
}


def markdown(result: dict[str, Any]) -> str:
    load = result["load"]
    fake, tansu = result["figures"]["fake broker"], result["figures"]["Tansu"]
    lines = [
        "# The fake broker beside Tansu",
        "",
        "The same loads against both brokers, each in its own process, in one run "
        "(`make bench-fake-broker`). A client on this machine limits some figures: compare "
        "the ratios. Load average (1, 5, 15 min) before: "
        f"{result['load_average_before']}, after: {result['load_average_after']}.",
        "",
        f"Pipelined: {load['pipelined_clients']} client processes, {load['pipelined_depth']} "
        f"Metadata requests in flight each, {load['pipelined_seconds']:g} s. Batched: "
        f"{load['batched_records']:,} records of {load['batched_size']} B. Consume: "
        f"{load['consume_records']:,} records of 1 KiB from one partition. Latency: "
        f"{load['parked_round_trips']:,} Metadata round trips.",
        "",
        "| load | fake broker | Tansu | fake relative to Tansu |",
        "|---|---|---|---|",
    ]
    for key in fake:
        label = UNITS.get(key, f"{key}, records/s")
        ratio = result["ratios"].get(key)
        better = "" if ratio is None else f"{ratio:.2f}x"
        digits = 1 if key.startswith("parked") else 0
        lines.append(f"| {label} | {fake[key]:,.{digits}f} | {tansu[key]:,.{digits}f} | {better} |")
    lines += [
        "",
        "Latency ratios are Tansu's over the fake broker's (above 1: the fake is faster).",
        "",
        "For scale: a Python server that answers the same Metadata requests with canned bytes "
        f"and does nothing else served {result['canned_round_trips']:,.0f} round trips/s to "
        "the same client in the same run: the most any broker written in Python could give "
        "it, one request at a time.",
        "",
    ]
    lines += ["| target | met |", "|---|---|"]
    lines += [f"| {name} | {'yes' if met else 'NO'} |" for name, met in result["targets"].items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="small loads (figures are noise)")
    size.add_argument("--smoke", action="store_true", help="tiny loads: does every load run?")
    parser.add_argument("--specs", type=Path, default=SPECS, help="spec set (default: 4.1.2)")
    parser.add_argument("--json", type=Path, help="write the figures as JSON here")
    parser.add_argument("--markdown", type=Path, help="write a markdown summary here")
    args = parser.parse_args(argv)
    result = measure(args.specs, SMOKE if args.smoke else QUICK if args.quick else FULL)
    text = markdown(result)
    print(text, end="")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    if args.markdown:
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
