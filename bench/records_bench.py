"""Benchmark of the record-batch runtime (``templates/runtime/records/``).

    python bench/records_bench.py [--quick] [--repeats N] [--no-compiled]
                                  [--json PATH] [--markdown PATH]

Records per second, decoding and building the same magic-2 batches (2,000 records of a
16-byte key and a 100-byte value, one in ten with a header, 100 records per batch), per
codec, for:

- ours (pure): no optional package: the pure-Python CRC-32C, gzip only among the codecs;
- ours (+accel): the same code with ``crc32c`` and ``cramjam`` installed;
- ours (mypyc +accel): the same sources compiled with mypyc (as the package ships),
  with the accelerators; cached under ``build/records_bench/`` by a hash of the sources;
- kafka-python 3.0.12 (pure): its pure-Python reader and builder, with its pure-Python
  CRC-32C (it uses the ``crc32c`` package when installed; that is switched off here);
- kafka-python 3.0.12 (+crc32c): the same with the ``crc32c`` package, for reference;
- aiokafka 0.14 (Cython): its compiled reader and builder.

Decoding means: every batch, its CRC checked, every record's offset, timestamp, key, value
and headers read. Building means: from (offset, timestamp, key, value, headers) tuples to
the batch bytes. Within each repeat the implementations run round-robin (rotating who goes
first); the tables show medians. Also: CRC-32C MB/s at 100 B, 1 KiB and 1 MiB, pure and
accelerated. Before timing, every implementation's output is checked against ours.

Writes ``bench/records_results.json`` and ``bench/RECORDS.md`` unless told otherwise.

This file is the run; its parts: ``bench/records_impls.py`` (the implementations, the mypyc
build) and ``bench/records_report.py`` (the targets, RECORDS.md).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT, ROOT / "generated"):  # the bench's modules, the committed kafka_messages
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from bench.records_impls import CODECS, Impl, Tuples, aiokafka, compiled_runtime  # noqa: E402
from bench.records_impls import kafka_python, ours  # noqa: E402
from bench.records_report import markdown, table_text, targets  # noqa: E402
from kafka_messages import _crc32c  # noqa: E402
from kafka_messages import records as R  # noqa: E402

RECORDS = 2000
PER_BATCH = 100


# --- inputs ----------------------------------------------------------------------------------


def workload() -> Tuples:
    rng = random.Random(13)
    out: Tuples = []
    for i in range(RECORDS):
        headers = [("trace", rng.randbytes(16))] if i % 10 == 0 else []
        out.append((i, 1_700_000_000_000 + i * 3, b"key-%011d" % i, rng.randbytes(100), headers))
    return out


def batches_of(records: Tuples) -> list[Tuples]:
    return [records[i : i + PER_BATCH] for i in range(0, len(records), PER_BATCH)]


# --- timing ----------------------------------------------------------------------------------


def per_call(fn: Callable[[], Any], budget: float) -> tuple[int, float]:
    """(calls per sample, seconds per call) with a sample of about ``budget`` seconds."""
    fn()
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        took = time.perf_counter() - start
        if took >= budget / 4 or number >= 1 << 20:
            return max(1, int(number * budget / max(took, 1e-9))), took / number
        number *= 4


def round_robin(
    jobs: dict[str, tuple[Callable[[], Any], Callable[[], None], Callable[[], None]]],
    repeats: int,
    budget: float,
) -> dict[str, float]:
    """Median seconds per call of each job, timed round-robin (rotating the first)."""
    numbers = {}
    for name, (fn, enter, leave) in jobs.items():
        enter()
        try:
            numbers[name] = per_call(fn, budget)[0]
        finally:
            leave()
    samples: dict[str, list[float]] = {name: [] for name in jobs}
    names = list(jobs)
    for repeat in range(repeats):
        order = names[repeat % len(names) :] + names[: repeat % len(names)]
        for name in order:
            fn, enter, leave = jobs[name]
            enter()
            try:
                start = time.perf_counter()
                for _ in range(numbers[name]):
                    fn()
                samples[name].append((time.perf_counter() - start) / numbers[name])
            finally:
                leave()
    return {name: statistics.median(values) for name, values in samples.items()}


# --- the run ---------------------------------------------------------------------------------


def check(impls: list[Impl], fields: dict[str, bytes], batches: list[Tuples]) -> list[str]:
    """Every implementation reads every field as ours does, and what it builds reads back
    as the records it was given. Returns the problems (none expected)."""
    problems = []
    reference = {codec: ours_tuples(data) for codec, data in fields.items()}
    for impl in impls:
        impl.enter()
        try:
            for codec in impl.codecs:
                got = [(o, t, k, v, tuple(h)) for o, t, k, v, h in impl.decode(fields[codec])]
                if got != reference[codec]:
                    problems.append(f"{impl.name} reads {codec} differently")
                built = b"".join(impl.build(b, CODECS.index(codec)) for b in batches)
                if ours_tuples(built) != reference["none"]:
                    problems.append(f"{impl.name} builds {codec} differently")
        finally:
            impl.leave()
    return problems


def ours_tuples(data: bytes) -> list[Any]:
    return [
        (r.offset, r.timestamp, r.key, r.value, r.headers)
        for b in R.iter_batches(data)
        for r in b.records()
    ]


def crc_table(repeats: int, budget: float) -> dict[str, dict[str, float]]:
    import crc32c as accelerated
    from aiokafka.record._crecords.cutil import crc32c_cython
    from kafka.record._crc32c import crc as kafka_python_crc

    rng = random.Random(3)
    out: dict[str, dict[str, float]] = {}
    for label, size in (("100 B", 100), ("1 KiB", 1024), ("1 MiB", 1 << 20)):
        data = rng.randbytes(size)
        jobs: dict[str, Callable[[], Any]] = {
            "ours pure": lambda: _crc32c.crc32c_pure(data, 0),
            "ours pure: fold": lambda: _crc32c.crc32c_fold(data, 0),
            "ours pure: slicing-by-16": lambda: _crc32c.crc32c_slicing(data, 0),
            "crc32c package": lambda: accelerated.crc32c(data),
            "aiokafka (Cython)": lambda: crc32c_cython(data),
        }
        jobs["kafka-python (pure)"] = lambda: kafka_python_crc(data)
        expected = accelerated.crc32c(data)
        assert all(fn() == expected for fn in jobs.values()), "a CRC-32C disagrees"
        nothing = lambda: None  # noqa: E731
        times = round_robin(
            {name: (fn, nothing, nothing) for name, fn in jobs.items()}, repeats, budget
        )
        out[label] = {name: size / seconds / 1e6 for name, seconds in times.items()}
    return out


def encoded(batches: list[Tuples]) -> dict[str, bytes]:
    """Per codec: the batches, built by our runtime, back to back."""
    return {
        codec: b"".join(
            R.build_batch(
                [R.Record(o, t, k, v, tuple(h)) for o, t, k, v, h in b],
                compression=CODECS.index(codec),
            )
            for b in batches
        )
        for codec in CODECS
    }


def implementations(no_compiled: bool) -> tuple[list[Impl], str]:
    """Every implementation to time, and a note on the mypyc build (built, or why not)."""
    impls = [ours(R, "ours (pure)", True), ours(R, "ours (+accel)", False)]
    compiled_note = "not measured (--no-compiled)"
    if not no_compiled:
        module, compiled_note = compiled_runtime()
        if module is not None:
            impls.append(ours(module, "ours (mypyc +accel)", False))
    impls += [kafka_python(), kafka_python(pure=False), aiokafka()]
    return impls, compiled_note


def records_per_s(
    impls: list[Impl],
    fields: dict[str, bytes],
    batches: list[Tuples],
    args: argparse.Namespace,
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """Per codec and implementation: records/s decoding, and records/s building."""
    decode: dict[str, dict[str, float]] = {}
    build: dict[str, dict[str, float]] = {}
    for codec in CODECS:
        data = fields[codec]
        jobs = {
            impl.name: ((lambda impl=impl: impl.decode(data)), impl.enter, impl.leave)
            for impl in impls
            if codec in impl.codecs
        }
        times = round_robin(jobs, args.repeats, args.budget)
        decode[codec] = {name: RECORDS / seconds for name, seconds in times.items()}
        number = CODECS.index(codec)
        jobs = {
            impl.name: (
                (lambda impl=impl: [impl.build(b, number) for b in batches]),
                impl.enter,
                impl.leave,
            )
            for impl in impls
            if codec in impl.codecs
        }
        times = round_robin(jobs, args.repeats, args.budget)
        build[codec] = {name: RECORDS / seconds for name, seconds in times.items()}
        print(f"  {codec}: done", flush=True)
    return decode, build


def run(args: argparse.Namespace) -> dict[str, Any]:
    started = time.time()
    load_start = os.getloadavg()
    batches = batches_of(workload())
    fields = encoded(batches)
    impls, compiled_note = implementations(args.no_compiled)
    problems = check(impls, fields, batches)
    if problems:
        raise SystemExit("outputs differ:\n" + "\n".join(problems))
    decode, build = records_per_s(impls, fields, batches, args)
    crc = crc_table(args.repeats, args.budget)
    return {
        "machine": {
            "python": platform.python_version(),
            "implementation": platform.python_implementation(),
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(),
            "load_average_start": [round(x, 2) for x in load_start],
            "load_average_end": [round(x, 2) for x in os.getloadavg()],
        },
        "run": {
            "when": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(started)),
            "seconds": round(time.time() - started, 1),
            "repeats": args.repeats,
            "records": RECORDS,
            "records_per_batch": PER_BATCH,
            "compiled": compiled_note,
            "codec_packages": {c.name.lower(): p for c, p in R.codec_packages().items()},
            "crc32c_backend": _crc32c.BACKEND,
        },
        "decode_records_per_s": decode,
        "build_records_per_s": build,
        "crc32c_mb_per_s": crc,
        "targets": targets(decode, build, crc),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, shorter samples")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--no-compiled", action="store_true", help="leave the mypyc build out")
    parser.add_argument("--json", type=Path, default=ROOT / "bench" / "records_results.json")
    parser.add_argument("--markdown", type=Path, default=ROOT / "bench" / "RECORDS.md")
    parser.add_argument(
        "--render", type=Path, help="only write the markdown from this results file"
    )
    args = parser.parse_args(argv)
    if args.render:
        args.markdown.write_text(
            markdown(json.loads(args.render.read_text(encoding="utf-8"))), encoding="utf-8"
        )
        return 0
    if args.repeats is None:
        args.repeats = 3 if args.quick else 7
    args.budget = 0.01 if args.quick else 0.04
    results = run(args)
    print(table_text(results))
    args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    args.markdown.write_text(markdown(results), encoding="utf-8")
    print(f"wrote {args.json} and {args.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
