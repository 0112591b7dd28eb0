"""A mutation fuzzer for the record-batch reader (``templates/runtime/records/``).

Seeds are valid records fields: every batch kind ``tests/support/records_corpus.py`` builds (each
codec, magic 0/1/2, control, empty and LogAppendTime batches) and the records field of
every Produce request and Fetch response in ``tests/golden/``. Each case mutates one seed
and reads it the way a client would: every batch, its CRC check, ``validate()``, every
record, and ``decode_control`` on control records. The contract under test: the only
exception that escapes is ``CorruptRecordError``, with an offset inside the input and a
path.

Mutations: bit flips, interesting bytes, insertions, deletions, duplications, truncations,
int32 length/count bombs (2^31-1, -2^31, -2, 0, 1 ...) and zigzag varint bombs (over-long,
2^31-1, -2, out-of-range 5th byte) written over any offset, and, for a compressed batch,
the same mutations applied to its *decompressed* records, recompressed with the batch's
codec, so that the record parser behind every codec is reached too.

Run ``make fuzz-records`` (``FUZZ_CASES``, default 200,000), or from the repository's root
``.venv/bin/python -m tests.support.fuzz_records --cases 200000``; exit status 1 if anything
but ``CorruptRecordError`` escaped. Golden frames of versions no spec set here has are left
out, with a count. ``tests/runtime/test_records.py`` runs a small slice.
"""

from __future__ import annotations

import argparse
import random
import re
import struct
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

# Run as a command, not under pytest: the committed package is not on the path yet.
_GENERATED = str(Path(__file__).resolve().parents[2] / "generated")
if _GENERATED not in sys.path:
    sys.path.insert(0, _GENERATED)

from kafka_messages import _compression  # noqa: E402 (needs the path above)
from kafka_messages import records as R  # noqa: E402
from kafka_messages.records._builder import _put_message  # noqa: E402
from tests.support import records_corpus  # noqa: E402

LIMIT = 1 << 20  # decompression cap while fuzzing: a mutant may not blow up memory


@dataclass(frozen=True)
class Seed:
    name: str
    data: bytes


@dataclass
class Failure:
    seed: str
    mutation: str
    data: bytes
    error: str
    trace: str

    def __str__(self) -> str:
        return (
            f"{self.seed} [{self.mutation}]: {self.error}\n  input: {self.data.hex()}\n{self.trace}"
        )


@dataclass
class Report:
    cases: int = 0
    clean: int = 0
    records: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    mutations: Counter[str] = field(default_factory=Counter)
    failures: list[Failure] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self, top: int = 20) -> str:
        lines = [
            f"cases: {self.cases:,}",
            f"read without error: {self.clean:,} ({self.records:,} records)",
            f"CorruptRecordError: {sum(self.errors.values()):,} ({len(self.errors)} kinds)",
            f"other exceptions (bugs): {len(self.failures):,}",
            f"time: {self.seconds:.1f} s ({self.cases / max(self.seconds, 1e-9):,.0f} cases/s)",
            "errors by kind:",
        ]
        for kind, count in self.errors.most_common(top):
            lines.append(f"  {count:>9,}  {kind}")
        if len(self.errors) > top:
            rest = sum(c for _, c in self.errors.most_common()[top:])
            lines.append(f"  {rest:>9,}  ({len(self.errors) - top} more kinds)")
        lines.append("cases by mutation:")
        for kind, count in sorted(self.mutations.items()):
            lines.append(f"  {count:>9,}  {kind}")
        for failure in self.failures[:10]:
            lines.append(f"FAILURE {failure}")
        return "\n".join(lines)


# --- seeds -----------------------------------------------------------------------------------


def built_seeds() -> list[Seed]:
    """Our sample batches, and the peers' writers' batches (their own codec framing:
    kafka-python's xerial snappy and lz4 frames with a content size, aiokafka's cramjam)."""
    from aiokafka.record.default_records import DefaultRecordBatchBuilder as ABuilder
    from kafka.record.default_records import DefaultRecordBatchBuilder as KBuilder
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    seeds = [Seed(name, data) for name, data in records_corpus.sample_batches()]
    records = records_corpus.sample_records(6)
    for codec in range(5):
        for peer, builder_cls in (("kafka_python", KBuilder), ("aiokafka", ABuilder)):
            builder = builder_cls(2, codec, 0, -1, -1, -1, 1 << 30)
            for r in records:
                builder.append(r.offset, r.timestamp, r.key, r.value, list(r.headers))
            seeds.append(Seed(f"{peer}_v2_codec{codec}", bytes(builder.build())))
    for magic, codec in ((0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (1, 3)):
        legacy = LegacyRecordBatchBuilder(magic, codec, 1 << 30)
        for r in records:
            legacy.append(r.offset, r.timestamp, r.key, r.value)
        seeds.append(Seed(f"kafka_python_v{magic}_codec{codec}", bytes(legacy.build())))
    return seeds


def golden_seeds(tmp: Path, limit: int = 0, missing: list[str] | None = None) -> list[Seed]:
    """The golden records fields, distinct ones only (``limit``: at most that many);
    ``missing``: as for ``records_corpus.golden_fields``."""
    seen: set[bytes] = set()
    seeds = []
    for gf in records_corpus.golden_fields(tmp, missing):
        if gf.data and gf.data not in seen:
            seen.add(gf.data)
            seeds.append(Seed(f"golden:{gf.where}", gf.data))
    return seeds[:limit] if limit else seeds


# --- the code under test ---------------------------------------------------------------------


def read_all(data: bytes) -> int:
    """Read ``data`` as a client would; the number of records read."""
    count = 0
    batches = R.iter_batches(data, max_decompressed_size=LIMIT)
    for batch in batches:
        repr(batch)
        batch.compression, batch.timestamp_type, batch.is_control, batch.last_sequence
        batch.crc_ok()
        try:
            batch.validate()
        except R.CorruptRecordError:
            pass
        for record in batch.records():
            count += 1
            if batch.is_control:
                try:
                    R.decode_control(record)
                except R.CorruptRecordError:
                    pass
    return count


def kind_of(exc: R.CorruptRecordError) -> str:
    """The error's reason with its numbers taken out: one kind per message shape."""
    return re.sub(r"0x[0-9a-f]+|-?\d+", "N", exc.reason)[:90]


# --- mutations -------------------------------------------------------------------------------

INTERESTING = (0x00, 0x01, 0x7F, 0x80, 0xFF, 0xFE, 0x02, 0x40)
INT32_BOMBS = (0x7FFFFFFF, -(1 << 31), -2, -1, 0, 1, 13, 48, 49, 1 << 24)
VARINT_BOMBS = (
    b"\xfe\xff\xff\xff\x0f",  # zigzag 2^31-1
    b"\x03",  # -2
    b"\x01",  # -1 (null)
    b"\xff\xff\xff\xff\xff\x01",  # six bytes: too long for a varint
    b"\xff\xff\xff\xff\x7f",  # fifth byte out of range
    b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",  # eleven bytes: too long for a varlong
    b"\x80",  # cut short
)


def mutate_bytes(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    buf = bytearray(data)
    n = len(buf)
    kind = rng.choice(
        ("flip", "byte", "insert", "delete", "duplicate", "truncate", "int32", "varint")
    )
    if n == 0:
        kind = "insert"
    pos = rng.randrange(n) if n else 0
    if kind == "flip":
        buf[pos] ^= 1 << rng.randrange(8)
    elif kind == "byte":
        buf[pos] = rng.choice(INTERESTING) if rng.random() < 0.7 else rng.randrange(256)
    elif kind == "insert":
        buf[pos:pos] = rng.randbytes(rng.randint(1, 8))
    elif kind == "delete":
        del buf[pos : pos + rng.randint(1, 8)]
    elif kind == "duplicate":
        piece = buf[pos : pos + rng.randint(1, 64)]
        at = rng.randrange(n + 1)
        buf[at:at] = piece
    elif kind == "truncate":
        del buf[pos:]
    elif kind == "int32":
        buf[pos : pos + 4] = struct.pack(">i", rng.choice(INT32_BOMBS))
    else:
        bomb = rng.choice(VARINT_BOMBS)
        if rng.random() < 0.5:
            buf[pos : pos + len(bomb)] = bomb
        else:
            buf[pos:pos] = bomb
    return bytes(buf), kind


def mutate_inside(data: bytes, rng: random.Random) -> tuple[bytes, str] | None:
    """Mutate the decompressed contents of the first batch of ``data`` if it is compressed,
    and recompress them (None if it is not)."""
    try:
        batch = next(iter(R.iter_batches(data)))
    except (StopIteration, R.CorruptRecordError):
        return None
    if batch.compression is R.Compression.NONE:
        return None
    if isinstance(batch, R.LegacyBatch):
        return mutate_inside_legacy(data, batch, rng)
    start = batch.offset_in_data + 61
    end = batch.offset_in_data + batch.size
    codec = batch.compression
    try:
        plain = _compression.decompress(codec, data[start:end], LIMIT)
    except (_compression.CodecError, ImportError):
        return None
    mutated, kind = mutate_bytes(plain, rng)
    packed = _compression.compress(codec, mutated)
    header = bytearray(data[batch.offset_in_data : start])
    struct.pack_into(">i", header, 8, 49 + len(packed))
    return bytes(header) + packed + data[end:], f"inside-{codec.name.lower()}-{kind}"


def mutate_inside_legacy(
    data: bytes, batch: R.LegacyBatch, rng: random.Random
) -> tuple[bytes, str] | None:
    """The same for a compressed magic 0/1 wrapper: its inner message set."""
    value = batch.raw[batch._value_at - batch.offset_in_data + 4 :]
    codec = batch.compression
    try:
        plain = _compression.decompress(codec, value, LIMIT, batch.magic)
    except (_compression.CodecError, ImportError):
        return None
    mutated, kind = mutate_bytes(plain, rng)
    wrapper = bytearray()
    _put_message(
        wrapper,
        batch.magic,
        batch.base_offset,
        batch.attributes,
        batch.timestamp,
        None,
        _compression.compress(codec, mutated, magic=batch.magic),
    )
    rest = data[batch.offset_in_data + batch.size :]
    return bytes(wrapper) + rest, f"inside-v{batch.magic}-{codec.name.lower()}-{kind}"


def mutate(seed: Seed, rng: random.Random) -> tuple[bytes, str]:
    if rng.random() < 0.25:
        inside = mutate_inside(seed.data, rng)
        if inside is not None:
            return inside
    data, kind = mutate_bytes(seed.data, rng)
    if rng.random() < 0.2:  # stack a second mutation now and then
        data, more = mutate_bytes(data, rng)
        kind = f"{kind}+{more}"
    return data, kind


# --- the campaign ----------------------------------------------------------------------------


def run_case(report: Report, seed: str, mutation: str, data: bytes) -> None:
    report.cases += 1
    try:
        report.records += read_all(data)
        report.clean += 1
    except R.CorruptRecordError as exc:
        report.errors[kind_of(exc)] += 1
        if not (0 <= exc.offset <= len(data)) or not exc.path:
            report.failures.append(
                Failure(seed, mutation, data, f"bad error position: {exc!r}", "")
            )
    except Exception as exc:  # noqa: BLE001 - every other exception is the bug we look for
        report.failures.append(
            Failure(seed, mutation, data, repr(exc), traceback.format_exc(limit=4))
        )


def fuzz(
    seeds: Sequence[Seed],
    cases: int,
    rng_seed: int = 1,
    progress: Callable[[Report], None] | None = None,
) -> Report:
    rng = random.Random(rng_seed)
    report = Report()
    started = time.perf_counter()
    for seed in seeds:  # the seeds themselves must read cleanly
        run_case(report, seed.name, "none", seed.data)
        report.mutations["none"] += 1
    # the built seeds (every codec and format) get as many cases as the golden ones
    built = [s for s in seeds if not s.name.startswith("golden:")]
    golden = [s for s in seeds if s.name.startswith("golden:")]
    for i in range(cases):
        seed = rng.choice(built if built and (not golden or rng.random() < 0.5) else golden)
        data, kind = mutate(seed, rng)
        report.mutations[kind.split("+")[0]] += 1
        run_case(report, seed.name, kind, data)
        if progress is not None and i and i % 50_000 == 0:
            report.seconds = time.perf_counter() - started
            progress(report)
    report.seconds = time.perf_counter() - started
    return report


def main(argv: Sequence[str] | None = None) -> int:
    from tests.support.genpkg import stale_generated

    stale = stale_generated()  # the seeds come from the committed package
    if stale is not None:
        print(stale, file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=1, help="random seed of the campaign")
    parser.add_argument("--no-golden", action="store_true", help="built seeds only")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    seeds = built_seeds()
    golden = 0
    missing: list[str] = []
    if not args.no_golden:
        with tempfile.TemporaryDirectory() as tmp:
            found = golden_seeds(Path(tmp), missing=missing)
        golden = len(found)
        seeds += found
    if missing:
        print(
            f"left out {len(missing)} golden frames (first: {missing[0]}): no spec set here has "
            "their version (KAFKA_SPECGEN_CORPORA names a folder of Kafka's releases)",
            flush=True,
        )
    print(
        f"seeds: {len(seeds)} ({golden} golden records fields), "
        f"{sum(len(s.data) for s in seeds):,} bytes; codecs: {R.codec_packages()}; "
        f"built in {time.perf_counter() - started:.1f} s",
        flush=True,
    )

    def progress(report: Report) -> None:
        print(
            f"  {report.cases:,} cases, {len(report.failures)} failures, "
            f"{report.seconds:.0f} s",
            flush=True,
        )

    report = fuzz(seeds, args.cases, args.seed, progress)
    print(report.summary())
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
