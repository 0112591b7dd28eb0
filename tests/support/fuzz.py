"""A reusable mutation-fuzz harness for generated decoders.

Seeds are valid encodings (frames or bodies) of generated messages: the default instance,
an instance with every field filled, one with every nullable field null, and a few random
instances built from the generator's model, for every message and version of a package;
plus every captured frame in ``tests/golden/`` when that folder exists. Each case mutates
one seed and decodes it. The contract under test: the only exception that escapes a
decoder is the package's ``DecodeError``, with an ``offset`` inside the input and a
non-empty field ``path``. And the two readers agree: generated readers are a fast path,
and the runtime's checked reader (``_read_checked.read_checked``, walking the plans)
decodes the same bytes again whenever the fast path fails. So every case is also decoded by the
checked reader alone: where ``decode`` returns a value, the checked reader returns the
same value (the same types, float bits and ``tags_on_wire``, all the way down); where
``decode`` raises a ``DecodeError``, the checked reader raises one with the same
``(reason, offset, path)``.

Mutations (``tests.support.mutations``): bit flips, interesting bytes, insertions,
deletions, duplications, truncations, and length bombs written over (or inserted at) any
offset: int32 counts and lengths of 0x7fffffff / 0x80000000 / negative values other than
-1, int16 string lengths, unsigned varints of 2^31-1 and 2^32-1, over-long varints (6+
bytes), which also make tagged-field sizes run past the end.

Run ``python -m tests.support.fuzz --cases 1000000`` (``make fuzz``) for the long campaign; the
test suite runs a small slice (tests/runtime/test_fuzz.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import re
import sys
import time
import traceback
import tracemalloc
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence


from tests.support.fuzz_seeds import (
    Decoder,
    NotComparable,
    Seed,
    all_features_seeds,
    golden_package,
    golden_seeds,
    repo_seeds,
    wire_state,
)
from tests.support.mutations import BOMBS, bomb_sweep, mutate, overwrite


@dataclass
class Failure:
    seed: str
    mutation: str
    data: bytes
    error: str
    trace: str

    def __str__(self) -> str:
        return (
            f"{self.seed} [{self.mutation}]: {self.error}\n  input: {self.data.hex()}\n"
            f"{self.trace}"
        )


@dataclass
class Report:
    cases: int = 0
    decoded: int = 0
    compared: int = 0
    """Cases the checked reader decoded too, and agreed on."""
    errors: Counter[str] = field(default_factory=Counter)
    failures: list[Failure] = field(default_factory=list)
    mutations: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    slowest: float = 0.0

    def merge(self, other: Report) -> None:
        self.cases += other.cases
        self.decoded += other.decoded
        self.compared += other.compared
        self.errors.update(other.errors)
        self.failures.extend(other.failures)
        self.mutations.update(other.mutations)
        self.seconds += other.seconds
        self.slowest = max(self.slowest, other.slowest)

    def summary(self, top: int = 25) -> str:
        lines = [
            f"cases: {self.cases:,}",
            f"successful decodes: {self.decoded:,}",
            f"decode errors: {sum(self.errors.values()):,} " f"({len(self.errors)} kinds)",
            f"fast path and checked reader agreed: {self.compared:,}",
            f"failures (other exceptions, disagreements: bugs): {len(self.failures):,}",
            f"time: {self.seconds:.1f} s ({self.cases / max(self.seconds, 1e-9):,.0f} cases/s),"
            f" slowest case {self.slowest * 1000:.1f} ms",
            "decode errors by kind:",
        ]
        for kind, count in self.errors.most_common(top):
            lines.append(f"  {count:>10,}  {kind}")
        if len(self.errors) > top:
            rest = sum(c for _, c in self.errors.most_common()[top:])
            lines.append(f"  {rest:>10,}  ({len(self.errors) - top} more kinds)")
        lines.append("cases by mutation:")
        for kind, count in sorted(self.mutations.items()):
            lines.append(f"  {count:>10,}  {kind}")
        for failure in self.failures[:10]:
            lines.append(f"FAILURE {failure}")
        return "\n".join(lines)


# --- running --------------------------------------------------------------------------

_DIGITS = re.compile(r"(?<![\w-])-?\d+")


def error_kind(reason: str) -> str:
    """A DecodeError reason with its numbers blanked: the counting key."""
    return _DIGITS.sub("N", reason.replace("UTF-8", "UTF8"))[:90]


def run_case(seed: Seed, mutation: str, data: bytes, report: Report, view: bool = False) -> None:
    report.cases += 1
    report.mutations[mutation] += 1
    started = time.perf_counter()
    outcome: tuple[str, Any] | None = None  # ("value", v) or ("error", (reason, offset, path))
    try:
        value = seed.decode(memoryview(data) if view else data)
    except seed.error as exc:
        offset, path = getattr(exc, "offset", None), getattr(exc, "path", None)
        if not (isinstance(offset, int) and 0 <= offset <= len(data)) or not (
            isinstance(path, str) and path
        ):
            report.failures.append(
                Failure(
                    seed.name,
                    mutation,
                    data,
                    f"DecodeError with offset {offset!r} " f"and path {path!r}: {exc}",
                    "",
                )
            )
        report.errors[error_kind(getattr(exc, "reason", str(exc)))] += 1
        outcome = ("error", (getattr(exc, "reason", None), offset, path))
    except Exception as exc:  # noqa: BLE001 - that is what we are looking for
        report.failures.append(
            Failure(
                seed.name,
                mutation,
                data,
                f"{type(exc).__name__}: {exc}",
                traceback.format_exc(limit=-4),
            )
        )
    else:
        report.decoded += 1
        outcome = ("value", value)
    elapsed = time.perf_counter() - started
    if elapsed > report.slowest:
        report.slowest = elapsed
    if seed.checked is not None and outcome is not None:
        compare_checked(seed, mutation, data, outcome, report)


def compare_checked(
    seed: Seed, mutation: str, data: bytes, outcome: tuple[str, Any], report: Report
) -> None:
    """Decode ``data`` with the checked reader alone and compare with ``outcome``."""
    assert seed.checked is not None
    try:
        checked: tuple[str, Any] = ("value", seed.checked(data))
    except NotComparable:
        return
    except seed.error as exc:
        checked = ("error", (exc.reason, exc.offset, exc.path))  # type: ignore[attr-defined]
    except Exception as exc:  # noqa: BLE001 - the checked reader raises DecodeError only
        report.failures.append(
            Failure(
                seed.name,
                mutation,
                data,
                f"checked reader raised {type(exc).__name__}: {exc}",
                traceback.format_exc(limit=-4),
            )
        )
        return
    if outcome[0] == checked[0] == "value":
        same = wire_state(outcome[1]) == wire_state(checked[1])
    else:
        same = outcome == checked
    if same:
        report.compared += 1
        return
    report.failures.append(
        Failure(
            seed.name,
            mutation,
            data,
            "fast path and checked reader disagree:\n"
            f"  decode:         {_describe(outcome)}\n  checked reader: {_describe(checked)}",
            "",
        )
    )


def _describe(outcome: tuple[str, Any]) -> str:
    kind, what = outcome
    if kind == "error":
        reason, offset, path = what
        return f"DecodeError({reason!r}, offset {offset}, path {path!r})"
    return repr(what)[:600] + f" [tags_on_wire: {_tags(what)}]"


def _tags(value: Any) -> list[Any]:
    """Every non-empty ``tags_on_wire`` in ``value`` (for failure messages)."""
    found: list[Any] = []
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        tags = getattr(value, "tags_on_wire", None)
        if tags:
            found.append((type(value).__name__, sorted(tags)))
        for f in dataclasses.fields(value):
            found += _tags(getattr(value, f.name))
    elif isinstance(value, (tuple, list)):
        for item in value:
            found += _tags(item)
    return found


def sweep_size(seeds: Sequence[Seed], sweep_limit: int | None = None) -> int:
    """How many cases ``bomb_sweep`` makes over ``seeds``."""
    return sum(
        len(s.data) * (len(BOMBS) + 1)
        for s in seeds
        if sweep_limit is None or len(s.data) <= sweep_limit
    )


def fuzz(
    seeds: Sequence[Seed],
    cases: int,
    *,
    rng_seed: int = 1,
    sweep: bool = True,
    sweep_limit: int | None = None,
    progress: Callable[[Report], None] | None = None,
) -> Report:
    """At least ``cases`` cases: the whole bomb sweep of every seed (up to ``sweep_limit``
    bytes long, when ``sweep``), then random stacked mutations of random seeds, at least
    half of ``cases`` and enough to reach ``cases`` in all."""
    report = Report()
    started = time.perf_counter()
    rng = random.Random(rng_seed)
    if sweep:
        for seed in seeds:
            if sweep_limit is not None and len(seed.data) > sweep_limit:
                continue
            for mutation, data in bomb_sweep(seed.data):
                run_case(seed, mutation, data, report)
                if progress is not None and report.cases % 100_000 == 0:
                    progress(report)
    target = report.cases + max(cases - report.cases, cases // 2)
    while report.cases < target:
        seed = rng.choice(seeds)
        mutation, data = mutate(rng, seed.data)
        run_case(seed, mutation, data, report, view=report.cases % 7 == 0)
        if progress is not None and report.cases % 100_000 == 0:
            progress(report)
    report.seconds = time.perf_counter() - started
    return report


def check_seeds(seeds: Iterable[Seed]) -> list[str]:
    """Every seed must decode as it is (else it is no seed, or the codec is wrong)."""
    bad = []
    for seed in seeds:
        try:
            seed.decode(seed.data)
        except Exception as exc:  # noqa: BLE001
            bad.append(f"{seed.name}: {type(exc).__name__}: {exc}")
    return bad


def peak_allocation(decode: Decoder, data: bytes) -> int:
    """The peak of memory traced while ``decode(data)`` runs (exceptions swallowed)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        try:
            decode(data)
        except Exception:  # noqa: BLE001
            pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def bomb_allocations(seed: Seed) -> Iterator[tuple[str, int, int]]:
    """(bomb, offset, peak bytes) for every 2^31-1 / 2^32-1 bomb at every offset."""
    big = [
        (n, p)
        for n, p in BOMBS
        if n in ("int32 0x7fffffff", "uvarint ffffffff07", "uvarint ffffffff0f", "int16 0x7fff")
    ]
    for pos in range(len(seed.data)):
        for name, patch in big:
            yield name, pos, peak_allocation(seed.decode, overwrite(seed.data, pos, patch))


def main(argv: Sequence[str] | None = None) -> int:
    from tests.support.genpkg import stale_generated

    stale = stale_generated()  # the seeds come from the committed package
    if stale is not None:
        print(stale, file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1, help="random seed of the campaign")
    parser.add_argument(
        "--randoms",
        type=int,
        default=3,
        help="random instances per message version (besides the fixed ones)",
    )
    parser.add_argument(
        "--alloc-limit",
        type=int,
        default=64 * 1024,
        help="peak bytes a bombed small input may allocate (0: skip the check)",
    )
    parser.add_argument(
        "--alloc-seed-size",
        type=int,
        default=400,
        help="check allocations on seeds up to this many bytes",
    )
    args = parser.parse_args(argv)
    import tempfile

    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        seeds = repo_seeds(args.randoms)
        seeds += all_features_seeds(Path(tmp), args.randoms)
        golden, skipped = golden_seeds(golden_package(Path(tmp) / "golden"))
        seeds += golden
        bad = check_seeds(seeds)
        print(
            f"seeds: {len(seeds)} ({len(golden)} golden frames, {skipped} skipped), "
            f"{sum(len(s.data) for s in seeds):,} bytes; built in "
            f"{time.perf_counter() - started:.1f} s",
            flush=True,
        )
        for line in bad:
            print(f"BAD SEED {line}")

        def progress(report: Report) -> None:
            elapsed = time.perf_counter() - started
            print(
                f"  {report.cases:,} cases, {len(report.failures)} failures, " f"{elapsed:.0f} s",
                flush=True,
            )

        report = fuzz(seeds, args.cases, rng_seed=args.seed, progress=progress)
        print(report.summary(), flush=True)
        over: list[str] = []
        if args.alloc_limit:
            alloc_started = time.perf_counter()
            checked = worst = 0
            for seed in seeds:
                if len(seed.data) > args.alloc_seed_size:
                    continue
                for bomb, pos, peak in bomb_allocations(seed):
                    checked += 1
                    worst = max(worst, peak)
                    if peak > args.alloc_limit:
                        over.append(f"{seed.name}: {bomb} at {pos}: peak {peak:,} bytes")
            print(
                f"allocation check: {checked:,} big-length bombs (2^31-1, 2^32-1, 32767) in "
                f"seeds up to {args.alloc_seed_size} bytes; worst peak {worst:,} bytes "
                f"(limit {args.alloc_limit:,}); {len(over)} over the limit; "
                f"{time.perf_counter() - alloc_started:.1f} s"
            )
            for line in over[:20]:
                print(f"ALLOCATION {line}")
    return 1 if report.failures or bad or over else 0


if __name__ == "__main__":
    sys.exit(main())
