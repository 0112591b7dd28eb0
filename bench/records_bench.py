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
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = ROOT / "templates" / "runtime"
CACHE = ROOT / "build" / "records_bench"
#: The runtime modules and subpackages the records need (``templates/runtime/<name>``).
MODULES = ("__init__", "errors", "records", "_compression", "_crc32c")
COMPILED_PACKAGE = "records_bench_mypyc"

for _path in (ROOT, ROOT / "generated"):  # tests' helpers, the committed kafka_messages
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from kafka_messages import _crc32c  # noqa: E402
from kafka_messages import records as R  # noqa: E402

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
PURE_CODECS = ("none", "gzip")  # the standard library's
RECORDS = 2000
PER_BATCH = 100
TARGET_PURE = 1.5  # pure decode and build vs kafka-python's pure reader and builder
TARGET_ACCEL = 0.5  # decode with accelerators vs aiokafka's Cython
TARGET_CRC = 100.0  # MB/s, pure, 1 MiB

Tuples = list[tuple[int, int, bytes, bytes, list[tuple[str, bytes]]]]


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


# --- the mypyc build -------------------------------------------------------------------------


def runtime_sources() -> list[Path]:
    """The files of ``MODULES`` (a module's, or each of a subpackage's) in templates/runtime."""
    files = []
    for name in MODULES:
        folder = RUNTIME / name
        if folder.is_dir():
            files += sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)
        else:
            files.append(RUNTIME / f"{name}.py")
    return files


def compiled_runtime() -> tuple[ModuleType | None, str]:
    """The runtime modules compiled with mypyc (all but ``__init__``), under another package
    name: (records module, note). Cached by a hash of the sources; None and why when it
    cannot be built."""
    from bench.compile import BuildError, build, package_modules

    sources = runtime_sources()
    digest = hashlib.sha256()
    for path in sources:
        digest.update(path.relative_to(RUNTIME).as_posix().encode())
        digest.update(path.read_bytes())
    out = CACHE / digest.hexdigest()[:16]
    if not (out / ".built").exists():
        with tempfile.TemporaryDirectory() as tmp:
            stage = Path(tmp) / COMPILED_PACKAGE
            for path in sources:
                copy = stage / path.relative_to(RUNTIME)
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(path, copy)
            names = [m for m in package_modules(stage) if m != "__init__"]
            try:
                build(stage, out, COMPILED_PACKAGE, names)
            except BuildError as exc:
                return None, "mypyc build failed: " + str(exc)[-300:]
        (out / ".built").touch()
    sys.path.insert(0, str(out))
    module = importlib.import_module(f"{COMPILED_PACKAGE}.records")
    if not str(module.__file__).endswith((".so", ".pyd")):
        return None, "the mypyc build did not import as an extension"
    return module, f"built in {out.relative_to(ROOT)}"


# --- implementations -------------------------------------------------------------------------


class Impl:
    """One implementation's decode and build, and how to put it in its mode."""

    def __init__(
        self,
        name: str,
        decode: Callable[[bytes], list[Any]],
        build: Callable[[Tuples, int], bytes],
        codecs: tuple[str, ...],
        enter: Callable[[], None] = lambda: None,
        leave: Callable[[], None] = lambda: None,
    ) -> None:
        self.name = name
        self.decode = decode
        self.build = build
        self.codecs = codecs
        self.enter = enter
        self.leave = leave


def ours(module: Any, name: str, pure: bool) -> Impl:
    crc_module = sys.modules[module.__name__.rsplit(".", 1)[0] + "._crc32c"]
    accelerated = module.crc32c

    def decode(data: bytes) -> list[Any]:
        out = []
        for batch in module.iter_batches(data):
            batch.validate()
            for r in batch.records():
                out.append((r.offset, r.timestamp, r.key, r.value, r.headers))
        return out

    record = module.Record

    def build(records: Tuples, codec: int) -> bytes:
        return bytes(
            module.build_batch(
                [record(o, t, k, v, tuple(h)) for o, t, k, v, h in records], compression=codec
            )
        )

    def enter() -> None:
        module.crc32c = crc_module.crc32c_pure if pure else accelerated

    def leave() -> None:
        module.crc32c = accelerated

    return Impl(name, decode, build, PURE_CODECS if pure else CODECS, enter, leave)


def kafka_python(pure: bool = True) -> Impl:
    import kafka.record.default_records as kdr
    from kafka.record._crc32c import crc as crc32c_py
    from kafka.record.memory_records import MemoryRecords

    accelerated = kdr.calc_crc32c

    def decode(data: bytes) -> list[Any]:
        out = []
        records = MemoryRecords(data)
        while records.has_next():
            batch = records.next_batch()
            if not batch.validate_crc():
                raise AssertionError("kafka-python: bad CRC")
            for r in batch:
                out.append((r.offset, r.timestamp, r.key, r.value, r.headers))
        return out

    def build(records: Tuples, codec: int) -> bytes:
        builder = kdr.DefaultRecordBatchBuilder(2, codec, 0, -1, -1, -1, 1 << 30)
        for o, t, k, v, h in records:
            builder.append(o, t, k, v, h)
        return bytes(builder.build())

    def enter() -> None:
        # its reader's CRC without the crc32c package: its own pure-Python one
        if pure:
            kdr.calc_crc32c = lambda view: crc32c_py(view)

    def leave() -> None:
        kdr.calc_crc32c = accelerated

    name = "kafka-python (pure)" if pure else "kafka-python (+crc32c)"
    return Impl(name, decode, build, CODECS, enter, leave)


def aiokafka() -> Impl:
    from aiokafka.record.default_records import DefaultRecordBatchBuilder
    from aiokafka.record.memory_records import MemoryRecords

    def decode(data: bytes) -> list[Any]:
        out = []
        records = MemoryRecords(data)
        while records.has_next():
            batch = records.next_batch()
            if not batch.validate_crc():
                raise AssertionError("aiokafka: bad CRC")
            for r in batch:
                out.append((r.offset, r.timestamp, r.key, r.value, r.headers))
        return out

    def build(records: Tuples, codec: int) -> bytes:
        builder = DefaultRecordBatchBuilder(2, codec, 0, -1, -1, -1, 1 << 30)
        for o, t, k, v, h in records:
            builder.append(o, t, k, v, h)
        return bytes(builder.build())

    return Impl("aiokafka (Cython)", decode, build, CODECS)


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


def run(args: argparse.Namespace) -> dict[str, Any]:
    started = time.time()
    load_start = os.getloadavg()
    records = workload()
    batches = batches_of(records)
    fields = {
        codec: b"".join(
            R.build_batch(
                [R.Record(o, t, k, v, tuple(h)) for o, t, k, v, h in b],
                compression=CODECS.index(codec),
            )
            for b in batches
        )
        for codec in CODECS
    }
    impls = [ours(R, "ours (pure)", True), ours(R, "ours (+accel)", False)]
    compiled_note = "not measured (--no-compiled)"
    if not args.no_compiled:
        module, compiled_note = compiled_runtime()
        if module is not None:
            impls.append(ours(module, "ours (mypyc +accel)", False))
    impls += [kafka_python(), kafka_python(pure=False), aiokafka()]
    problems = check(impls, fields, batches)
    if problems:
        raise SystemExit("outputs differ:\n" + "\n".join(problems))

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


def ratio(table: dict[str, dict[str, float]], codec: str, ours: str, peer: str) -> float | None:
    row = table.get(codec, {})
    if ours not in row or peer not in row:
        return None
    return row[ours] / row[peer]


def targets(
    decode: dict[str, dict[str, float]],
    build: dict[str, dict[str, float]],
    crc: dict[str, dict[str, float]],
) -> list[dict[str, Any]]:
    kp, ai = "kafka-python (pure)", "aiokafka (Cython)"
    out = []
    for what, table in (("decode", decode), ("build", build)):
        for codec in PURE_CODECS:
            value = ratio(table, codec, "ours (pure)", kp)
            out.append(
                {
                    "target": f"pure {what} >= {TARGET_PURE}x kafka-python's pure ({codec})",
                    "value": value,
                    "unit": "x",
                    "met": value is not None and value >= TARGET_PURE,
                }
            )
    mb = crc["1 MiB"]["ours pure"]
    out.append(
        {
            "target": f"pure CRC-32C >= {TARGET_CRC:.0f} MB/s (1 MiB)",
            "value": mb,
            "unit": "MB/s",
            "met": mb >= TARGET_CRC,
        }
    )
    for name in ("ours (+accel)", "ours (mypyc +accel)"):
        for codec in CODECS:
            value = ratio(decode, codec, name, ai)
            if value is None:
                continue
            out.append(
                {
                    "target": f"{name} decode >= {TARGET_ACCEL}x aiokafka's Cython ({codec})",
                    "value": value,
                    "unit": "x",
                    "met": value >= TARGET_ACCEL,
                }
            )
    return out


# --- reports ---------------------------------------------------------------------------------


def markdown(results: dict[str, Any]) -> str:
    m, r = results["machine"], results["run"]
    kp, ai = "kafka-python (pure)", "aiokafka (Cython)"
    lines = [
        "## Record batches",
        "",
        "Written by `make bench-records` (`bench/records_bench.py`); regenerate rather than "
        "edit. Ratios are ours / peer in records/s from the same run (2.00x: twice as fast).",
        "",
        f"- Workload: {r['records']:,} records (16-byte key, 100-byte value, one in ten with a "
        f"header), {r['records_per_batch']} per batch; decode checks each batch's CRC",
        f"- Machine: {m['processor']}, {m['cpus']} cores, {m['platform']}; Python "
        f"{m['python']} ({m['implementation']})",
        f"- Load average at start: {', '.join(map(str, m['load_average_start']))}; at end: "
        f"{', '.join(map(str, m['load_average_end']))} (a shared machine: the ratios, measured "
        "round-robin, hold better than the absolute figures)",
        f"- Run: {r['when']}, {r['seconds']} s, {r['repeats']} repeats per figure (median)",
        f"- ours (mypyc +accel): {r['compiled']}",
        f"- Packages: CRC-32C {r['crc32c_backend']}; codecs {r['codec_packages']}",
        "",
    ]
    for title, key in (("Decode", "decode_records_per_s"), ("Build", "build_records_per_s")):
        table = results[key]
        names = [n for n in next(iter(table.values()))]
        lines += [
            f"### {title} (records/s, median)",
            "",
            "| codec | " + " | ".join(names) + " | pure vs kafka-python | +accel vs aiokafka "
            "| mypyc vs aiokafka | pure vs kafka-python (+crc32c) |",
            "|---|" + "---:|" * (len(names) + 4),
        ]
        for codec, row in table.items():
            cells = [f"{row[n]:,.0f}" if n in row else "n/a" for n in names]
            ratios = [
                ratio(table, codec, "ours (pure)", kp),
                ratio(table, codec, "ours (+accel)", ai),
                ratio(table, codec, "ours (mypyc +accel)", ai),
                ratio(table, codec, "ours (pure)", "kafka-python (+crc32c)"),
            ]
            cells += ["n/a" if x is None else f"{x:.2f}x" for x in ratios]
            lines.append(f"| {codec} | " + " | ".join(cells) + " |")
        lines += ["", "ours (pure) has gzip only among the codecs (the standard library's).", ""]
    crc = results["crc32c_mb_per_s"]
    names = list(next(iter(crc.values())))
    lines += [
        "### CRC-32C (MB/s, median)",
        "",
        "| size | " + " | ".join(names) + " |",
        "|---|" + "---:|" * len(names),
    ]
    for size, row in crc.items():
        lines.append(f"| {size} | " + " | ".join(f"{row[n]:,.1f}" for n in names) + " |")
    lines += ["", "### Targets", "", "| target | value | met |", "|---|---:|---|"]
    for t in results["targets"]:
        value = t["value"]
        if value is None:
            shown = "n/a"
        elif t["unit"] == "x":
            shown = f"{value:.2f}x"
        else:
            shown = f"{value:,.1f} {t['unit']}"
        lines.append(f"| {t['target']} | {shown} | {'met' if t['met'] else 'NOT met'} |")
    lines += ["", NOTES]
    return "\n".join(lines) + "\n"


NOTES = """\
Where the time goes. The interpreted reader spends about a microsecond per record in
bytecode: five zigzag varints (decoded inline, one- and two-byte forms), two slices for key
and value, one `Record`. aiokafka does the same in C, so with the accelerators alone
(which speed up the CRC and the codecs, not the per-record work) the interpreted reader
stays at a quarter to a half of aiokafka's speed. The same source compiled with mypyc, as the
package ships, does the per-record work natively and passes aiokafka. kafka-python's pure
reader is held back mostly by its byte-at-a-time CRC-32C (about 6 MB/s); beside
kafka-python with the `crc32c` package our pure reader is still the faster one."""


def table_text(results: dict[str, Any]) -> str:
    out = []
    for title, key in (("decode", "decode_records_per_s"), ("build", "build_records_per_s")):
        out.append(f"{title} (records/s):")
        for codec, row in results[key].items():
            cells = "  ".join(f"{name} {value:>12,.0f}" for name, value in row.items())
            out.append(f"  {codec:<6} {cells}")
    out.append("CRC-32C (MB/s):")
    for size, row in results["crc32c_mb_per_s"].items():
        out.append(f"  {size:<6} " + "  ".join(f"{n} {v:,.1f}" for n, v in row.items()))
    out.append("targets:")
    for t in results["targets"]:
        value = "n/a" if t["value"] is None else f"{t['value']:.2f}"
        out.append(f"  {'met    ' if t['met'] else 'NOT MET'}  {t['target']}: {value}")
    return "\n".join(out)


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
