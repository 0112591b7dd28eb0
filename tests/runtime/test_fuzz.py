"""A fast slice of the decoder fuzzing (tests/support/fuzz.py; ``make fuzz`` runs the long one).

The contract: whatever the bytes, a decoder returns a value or raises the package's
``DecodeError`` with an offset inside the input and a field path; the fast path (the
generated readers) and the checked reader (``_read_checked.read_checked``) agree on every
input, value for value and error for error; and a length or count of 2^31-1 in a small buffer
fails before anything big is allocated, and a failed decode keeps nothing of its input.
"""

from __future__ import annotations

import importlib
import struct
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import fuzz, fuzz_seeds
from tests.support.mutations import MUTATORS, mutate
from tests.support.genpkg import SPECS, load_messages
from tests.support.strategies import instances, message_class

ALLOC_LIMIT = 64 * 1024


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> list[fuzz_seeds.Seed]:
    out = tmp_path_factory.mktemp("fuzz")
    found = fuzz_seeds.repo_seeds(randoms=1)
    found += fuzz_seeds.all_features_seeds(out / "all_features", randoms=1)
    if fuzz_seeds.GOLDEN.is_dir():
        golden, _ = fuzz_seeds.golden_seeds(fuzz_seeds.golden_package(out / "golden"))
        found += golden
    return found


def assert_clean(report: fuzz.Report) -> None:
    assert not report.failures, "\n".join(str(f) for f in report.failures[:5])


def test_every_seed_decodes(seeds: list[fuzz_seeds.Seed]) -> None:
    assert len(seeds) > 300
    assert fuzz.check_seeds(seeds) == []
    names = {s.name.split(":")[0] for s in seeds}
    assert {"kafka_messages", "fuzz_all_features_pkg"} <= names
    # every seed (bodies, frames, golden frames) is also decoded by the checked reader
    for seed in seeds:
        assert seed.checked is not None
        assert fuzz_seeds.wire_state(seed.checked(seed.data)) == fuzz_seeds.wire_state(
            seed.decode(seed.data)
        )


def test_bomb_sweep_small_seeds(seeds: list[fuzz_seeds.Seed]) -> None:
    report = fuzz.fuzz(seeds, 0, sweep_limit=48)
    assert report.cases > 50_000
    assert_clean(report)
    assert sum(report.errors.values()) > report.cases // 2
    assert report.compared > report.cases * 0.9  # the rest: frames with a bombed api key


def test_random_mutations(seeds: list[fuzz_seeds.Seed]) -> None:
    report = fuzz.fuzz(seeds, 150_000, rng_seed=7, sweep=False)
    assert report.cases == 150_000
    assert_clean(report)
    assert report.decoded and report.errors
    assert set(report.mutations) == set(MUTATORS)
    assert report.compared > report.cases * 0.9


def test_mutations_are_deterministic(seeds: list[fuzz_seeds.Seed]) -> None:
    a = fuzz.fuzz(seeds[:50], 2000, rng_seed=3, sweep=False)
    b = fuzz.fuzz(seeds[:50], 2000, rng_seed=3, sweep=False)
    assert (a.decoded, a.errors) == (b.decoded, b.errors)


def test_big_lengths_allocate_nothing(seeds: list[fuzz_seeds.Seed]) -> None:
    """2^31-1 / 2^32-1 / 32767 written over every offset of small seeds: peak < 64 KiB."""
    checked = 0
    for seed in seeds:
        if len(seed.data) > 40 or "golden" in seed.name:
            continue
        for bomb, pos, peak in fuzz.bomb_allocations(seed):
            checked += 1
            assert peak < ALLOC_LIMIT, f"{seed.name}: {bomb} at {pos} allocated {peak}"
    assert checked > 2000


# --- hand-made bombs on the committed package ------------------------------------------


@pytest.fixture(scope="module")
def km() -> ModuleType:
    fuzz_seeds.repo_seeds(randoms=0)  # puts generated/ on sys.path
    return importlib.import_module("kafka_messages")


def decode_error(km: ModuleType, cls: Any, data: bytes, version: int) -> Any:
    errors = importlib.import_module("kafka_messages.errors")
    with pytest.raises(errors.DecodeError) as info:
        cls.decode(data, version)
    exc = info.value
    assert isinstance(exc.offset, int) and 0 <= exc.offset <= len(data)
    assert exc.path
    return exc


def metadata(km: ModuleType) -> ModuleType:
    return importlib.import_module("kafka_messages.metadata")


def test_int32_count_bomb(km: ModuleType) -> None:
    """MetadataRequest v4: Topics count 0x7fffffff with 1 byte behind it."""
    req = metadata(km).MetadataRequest
    data = struct.pack(">i", 0x7FFFFFFF) + b"\x00" + b"\x01"
    peak = fuzz.peak_allocation(lambda d: req.decode(d, 4), data)
    assert peak < ALLOC_LIMIT
    exc = decode_error(km, req, data, 4)
    assert exc.offset == 4 and "topics" in exc.path
    assert "2147483647 items" in exc.reason


def test_negative_counts_and_lengths(km: ModuleType) -> None:
    req = metadata(km).MetadataRequest
    # -1 is null (allowed from v1), -2 is not.
    assert req.decode(struct.pack(">i", -1) + b"\x00", 4).topics is None
    exc = decode_error(km, req, struct.pack(">i", -2) + b"\x00", 4)
    assert "negative count -2" in exc.reason and exc.offset == 0
    # A topic name of length -2 (v0..9 use int16 lengths).
    exc = decode_error(km, req, struct.pack(">ih", 1, -2) + b"\x00", 4)
    assert "-2" in exc.reason and exc.offset == 4 and "name" in exc.path
    # A string length 0x7fff with two bytes behind it.
    exc = decode_error(km, req, struct.pack(">ih", 1, 0x7FFF) + b"ab\x00", 4)
    assert "needs 32767 bytes" in exc.reason


def test_compact_bombs(km: ModuleType) -> None:
    """MetadataRequest v12 (flexible): varint counts of 2^31-1 and over-long varints."""
    req = metadata(km).MetadataRequest
    for varint in (b"\xff\xff\xff\xff\x07", b"\xff\xff\xff\xff\x0f"):
        data = varint + b"\x00\x00\x00"
        assert fuzz.peak_allocation(lambda d: req.decode(d, 12), data) < ALLOC_LIMIT
        exc = decode_error(km, req, data, 12)
        assert "does not fit" in exc.reason
    exc = decode_error(km, req, b"\x80\x80\x80\x80\x80\x01" + b"\x00" * 4, 12)
    assert "longer than 5 bytes" in exc.reason and exc.offset == 0
    exc = decode_error(km, req, b"\xff\xff\xff\xff\x1f" + b"\x00" * 4, 12)  # > 32 bits
    assert "above 32 bits" in exc.reason


def test_tagged_field_size_past_the_end(km: ModuleType) -> None:
    req = metadata(km).MetadataRequest
    good = req().encode(12)
    assert good.endswith(b"\x00")  # empty tagged-field section
    # One unknown tag 5 claiming 2^31-1 bytes, followed by 3 bytes.
    data = good[:-1] + b"\x01\x05" + b"\xff\xff\xff\xff\x07" + b"abc"
    assert fuzz.peak_allocation(lambda d: req.decode(d, 12), data) < ALLOC_LIMIT
    exc = decode_error(km, req, data, 12)
    assert "tagged" in exc.path and "needs 2147483647 bytes" in exc.reason
    # Two tagged fields out of order, and a tag count larger than what follows.
    exc = decode_error(km, req, good[:-1] + b"\x02\x05\x00\x04\x00", 12)
    assert "ascending" in exc.reason
    exc = decode_error(km, req, good[:-1] + b"\x7f", 12)
    assert "tagged" in exc.path


def test_trailing_bytes_are_an_error(km: ModuleType) -> None:
    req = metadata(km).MetadataRequest
    data = req().encode(12) + b"\x00"
    exc = decode_error(km, req, data, 12)
    assert "trailing" in exc.reason and exc.offset == len(data) - 1


def test_failed_decodes_keep_nothing_alive(km: ModuleType) -> None:
    """A decode that fails (fast path, then the checked reader) leaves no reference to its
    input behind: a long-running decoder of bad bytes must not grow."""
    import gc
    import sys

    req = metadata(km).MetadataRequest
    errors = importlib.import_module("kafka_messages.errors")
    # v4: one topic whose name has length -2 (the fast path gives up, the checked reader
    # names it), and v12: a compact count of 2^31-1 (refused before any item is read)
    for data, version in (
        (struct.pack(">ih", 1, -2) + b"x" * 1000, 4),
        (b"\xff\xff\xff\xff\x07" + b"x" * 1000, 12),
        (req(topics=[metadata(km).MetadataRequestTopic(name="t")]).encode(4)[:-1], 4),
    ):
        buf = bytes(data)
        gc.collect()
        before = sys.getrefcount(buf)
        for _ in range(3):
            try:
                req.decode(buf, version)
            except errors.DecodeError:
                pass
            else:
                raise AssertionError("decoded bad bytes")
        gc.collect()
        assert sys.getrefcount(buf) == before, f"v{version}: the input is still referenced"


# --- Hypothesis: random valid instances, then mutated ---------------------------------

REPO_MESSAGES = load_messages(sorted(SPECS.glob("*.json")))
PAIRS = [(m, v) for m in REPO_MESSAGES for v in m.valid_versions]


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), pair=st.sampled_from(PAIRS), rng_seed=st.integers(0, 2**32))
def test_mutated_random_instances(km: ModuleType, data: Any, pair: Any, rng_seed: int) -> None:
    import random

    message, version = pair
    cls = message_class("kafka_messages", message)
    obj = data.draw(instances(cls, message, version))
    body = obj.encode(version)
    error = importlib.import_module("kafka_messages.errors").DecodeError
    seed = fuzz_seeds.Seed(message.name, body, fuzz_seeds.body_decoder(cls, version), error)
    rng = random.Random(rng_seed)
    report = fuzz.Report()
    for _ in range(20):
        mutation, mutated = mutate(rng, body)
        fuzz.run_case(seed, mutation, mutated, report)
    assert_clean(report)


def test_harness_reports_a_foreign_exception() -> None:
    """The harness itself: an exception other than DecodeError is a failure, with bytes."""

    class Boom(Exception):
        pass

    def decode(data: Any) -> Any:
        if len(data) > 2:
            raise KeyError("oops")
        raise Boom

    seed = fuzz_seeds.Seed("toy", b"abcd", decode, Boom)
    report = fuzz.Report()
    fuzz.run_case(seed, "x", b"abcd", report)
    assert len(report.failures) == 1 and "KeyError" in report.failures[0].error
    assert report.failures[0].data == b"abcd"
    # A DecodeError-like exception without offset/path is a failure too.
    fuzz.run_case(seed, "x", b"a", report)
    assert len(report.failures) == 2 and "offset None" in report.failures[1].error


def test_harness_reports_a_disagreement() -> None:
    """The harness itself: a checked reader that returns another value, or raises another
    error (reason, offset or path), is a failure; NotComparable skips the comparison."""

    class Error(Exception):
        def __init__(self, reason: str, offset: int, path: str) -> None:
            super().__init__(reason)
            self.reason, self.offset, self.path = reason, offset, path

    def decode(data: Any) -> Any:
        if data[:1] == b"e":
            raise Error("bad", 0, "X.a")
        return (1.0, [2])

    def checked(data: Any) -> Any:
        if data[:1] == b"n":
            raise fuzz_seeds.NotComparable
        if data[:1] == b"e":
            raise Error("bad", 1 if data[1:2] == b"1" else 0, "X.a")
        return (1.0, (2,)) if data[:1] == b"t" else (1.0, [2])

    seed = fuzz_seeds.Seed("toy", b"v", decode, Error, checked)
    report = fuzz.Report()
    for data in (b"v", b"e0", b"n"):
        fuzz.run_case(seed, "x", data, report)
    assert not report.failures and report.compared == 2
    fuzz.run_case(seed, "x", b"t", report)  # a tuple where decode gave a list
    fuzz.run_case(seed, "x", b"e1", report)  # another offset
    assert [f.data for f in report.failures] == [b"t", b"e1"]
    assert all("disagree" in f.error for f in report.failures)
    # NaN agrees with NaN, 0.0 does not agree with -0.0
    assert fuzz_seeds.wire_state(float("nan")) == fuzz_seeds.wire_state(float("nan"))
    assert fuzz_seeds.wire_state(0.0) != fuzz_seeds.wire_state(-0.0)


def test_seed_files_of_golden_captures(tmp_path: Path) -> None:
    """golden_seeds reads the capture format: JSON lines with dir, api_key/version, frame."""
    if not fuzz_seeds.GOLDEN.is_dir():
        pytest.skip("no tests/golden/")
    assert any(fuzz_seeds.GOLDEN.glob("*.jsonl"))
