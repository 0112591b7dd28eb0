"""The package generated from the union of every release (``--release all``).

Generated once per module into a temporary folder from ``union_specs`` over the releases
of ``genpkg.CORPORA`` (2.4.0 ... 4.3.1), with no other spec set:

- it imports and passes ``mypy --strict`` (one run);
- every version of every message round-trips: default, filled and null instances, lists
  of the smallest items, random instances (the sweeps of ``test_corpora``);
- every frame of the golden captures decodes and re-encodes byte-exact, Produce and Fetch
  v1/v2 with the legacy message formats (magic 0 and 1) among them;
- bytes a release's own package writes (filled, null and random instances) decode with
  the union package and re-encode to the same bytes, for Produce, Fetch, ListOffsets,
  OffsetCommit, Metadata, JoinGroup and the ZooKeeper-era APIs 4-7, in every release.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.golden import golden_frames
from kafka_specgen.model import Message
from kafka_specgen.selection import Selection
from tests.generator.test_corpora import Corpus, roundtrip, sweep
from tests.runtime.test_golden import _entries, _record_files, decode, round_trip_problem
from tests.support import genpkg, unionpkg
from tests.support.strategies import all_pairs, filled_instance, instances, message_class

PACKAGE = "kafka_union"
#: The APIs whose release bytes the union must read: Produce, Fetch, ListOffsets, Metadata,
#: LeaderAndIsr, StopReplica, UpdateMetadata, ControlledShutdown, OffsetCommit, JoinGroup.
CROSS_CHECKED = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "11")
RANDOM_PER_RELEASE = 60


@pytest.fixture(scope="module")
def union(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    out_dir = tmp_path_factory.mktemp("union")
    raws = unionpkg.union_raws()
    root = unionpkg.import_package(unionpkg.package_from(raws, PACKAGE), out_dir, PACKAGE)
    messages = unionpkg.messages_of(raws)
    live = [m for m in messages if not m.removed]
    return Corpus("union", PACKAGE, out_dir, root, live, [m for m in messages if m.removed])


def test_every_module_imports(union: Corpus) -> None:
    for path in sorted((union.out_dir / PACKAGE).glob("*.py")):
        importlib.import_module(f"{PACKAGE}.{path.stem}")
    registry = importlib.import_module(f"{PACKAGE}.registry")
    for message in union.messages:
        cls = union.cls(message)
        assert (cls.MIN_VERSION, cls.MAX_VERSION) == (
            message.valid_versions.lo,
            message.valid_versions.hi,
        )
    # the ZooKeeper-era APIs Kafka 4.0 removed are there, with every version they had
    for key, top in [(4, 7), (5, 4), (6, 8), (7, 3)]:
        entry = registry.API_KEYS[key]
        assert (entry.request.MIN_VERSION, entry.request.MAX_VERSION) == (0, top)


def test_the_union_package_passes_mypy_strict(union: Corpus) -> None:
    started = time.monotonic()
    problems = genpkg.mypy_strict(PACKAGE, union.out_dir, union.out_dir / ".mypy_cache")
    print(f"mypy --strict on the union: {time.monotonic() - started:.1f} s")
    assert problems is None, problems


@pytest.mark.parametrize("kind", ["default", "filled", "null", "lists1", "lists2"])
def test_every_version_round_trips(union: Corpus, kind: str) -> None:
    makers = {
        "default": lambda cls, m, v: cls(),
        "filled": lambda cls, m, v: filled_instance(cls, m, v),
        "null": lambda cls, m, v: filled_instance(cls, m, v, nulls=True),
        "lists1": lambda cls, m, v: filled_instance(cls, m, v, list_depth=1, scalars=False),
        "lists2": lambda cls, m, v: filled_instance(cls, m, v, list_depth=2, scalars=False),
    }
    sweep(union, makers[kind])


def test_random_instances_round_trip(union: Corpus) -> None:
    pairs = {(m.name, v): m for m, v in all_pairs(union.messages)}
    keys = sorted(pairs)

    @settings(
        max_examples=300,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.data())
    def check(data: st.DataObject) -> None:
        name, version = data.draw(st.sampled_from(keys), label="message, version")
        message = pairs[(name, version)]
        cls = union.cls(message)
        roundtrip(cls, data.draw(instances(cls, message, version), label=name), version)

    check()


# --- golden captures --------------------------------------------------------------------------


def test_every_golden_frame_round_trips_with_the_union_alone(union: Corpus) -> None:
    registry = importlib.import_module(f"{PACKAGE}.registry")
    problems = []
    checked = 0
    uncovered = set()
    for frame in golden_frames():
        entry = registry.API_KEYS.get(frame.api_key)
        if (
            entry is None
            or not entry.request.MIN_VERSION <= frame.api_version <= entry.request.MAX_VERSION
        ):
            uncovered.add((frame.api_key, frame.api_version))
            continue
        checked += 1
        problem = round_trip_problem(frame, union.root)
        if problem:
            problems.append(problem)
    # the hand-made ApiVersions v5 exchange is a version no Kafka release defines
    assert uncovered == {(18, 5)}
    assert checked >= 1000
    assert not problems, f"{len(problems)} of {checked} frames:\n" + "\n".join(problems[:30])


@pytest.mark.parametrize("name", _record_files("legacy"))
def test_legacy_message_formats_decode_with_the_union(union: Corpus, name: str) -> None:
    """kafka-python pinned to old brokers sends Produce v1 (magic 0) or v2 (magic 1), the
    versions Kafka 4.0 removed: the union reads them, and their message sets, as 3.9 did."""
    magic = int(re.fullmatch(r"kafka_python_magic([01])_\w+\.jsonl", name).group(1))  # type: ignore[union-attr]
    legacy = magic + 1
    seen: dict[tuple[int, str], set[int]] = defaultdict(set)
    for frame in golden_frames():
        if frame.file != name or frame.api_key not in (0, 1):
            continue
        _, body, _ = decode(frame, union.root)
        seen[(frame.api_key, frame.dir)].add(frame.api_version)
        if (frame.api_key, frame.dir, frame.api_version) == (0, "request", legacy):
            records = [p.records for t in body.topic_data for p in t.partition_data]
            assert records and all(e.magic == magic for r in records for e in _entries(r))
    assert legacy in seen[(0, "request")] and seen[(1, "response")] == {legacy}


# --- bytes from each release's own package ----------------------------------------------------


@dataclass
class ReleasePackage:
    name: str
    package: str
    messages: list[Message]


@pytest.fixture(scope="module")
def release_packages(tmp_path_factory: pytest.TempPathFactory) -> list[ReleasePackage]:
    out_dir = tmp_path_factory.mktemp("releases")
    result = []
    for release, raws in unionpkg.release_sets():
        package = "release_" + re.sub(r"\W", "_", release)
        selection = Selection(apis=CROSS_CHECKED)
        unionpkg.import_package(unionpkg.package_from(raws, package, selection), out_dir, package)
        messages = selection.apply(unionpkg.messages_of(raws))
        kept = [m for m in messages if not m.removed and m.type in ("request", "response")]
        result.append(ReleasePackage(release, package, kept))
    return result


def union_class(message: Message) -> Any:
    entry = importlib.import_module(f"{PACKAGE}.registry").API_KEYS[message.api_key]
    return entry.request if message.type == "request" else entry.response


def shift_unknown_tags(obj: Any, by: int = 64) -> Any:
    """Move a random instance's unknown tags out of the way of tags the union knows (the
    release did not know them; the union may, and would read the random bytes as them)."""
    if dataclasses.is_dataclass(obj) and hasattr(obj, "unknown_tagged_fields"):
        raws = obj.unknown_tagged_fields
        obj.unknown_tagged_fields = tuple(type(t)(t.tag + by, t.data) for t in raws)
        for f in dataclasses.fields(obj):
            shift_unknown_tags(getattr(obj, f.name), by)
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            shift_unknown_tags(item, by)
    return obj


def reread(release: ReleasePackage, message: Message, version: int, obj: Any) -> str | None:
    """None when the union reads the release's bytes of ``obj`` and writes them back."""
    data = obj.encode(version)
    try:
        back = union_class(message).decode(data, version)
        again = back.encode(version)
    except Exception as exc:  # noqa: BLE001 (reported with the message and release)
        return f"{message.name} v{version} of {release.name}: {type(exc).__name__}: {exc}"
    if again != data:
        return f"{message.name} v{version} of {release.name}: re-encoded bytes differ"
    return None


def test_release_bytes_read_back_with_the_union(
    union: Corpus, release_packages: list[ReleasePackage]
) -> None:
    problems = []
    checked: set[tuple[str, int, str]] = set()
    for release in release_packages:
        for message, version in all_pairs(release.messages):
            cls = message_class(release.package, message)
            for obj in (
                cls(),
                filled_instance(cls, message, version),
                filled_instance(cls, message, version, nulls=True),
            ):
                problem = reread(release, message, version, obj)
                if problem:
                    problems.append(problem)
            checked.add((message.type, message.api_key or 0, str(version)))
    assert not problems, f"{len(problems)} failures:\n" + "\n".join(problems[:30])
    # the versions Kafka 4.0 removed, read from the releases that had them
    for key, version in [(0, 0), (1, 0), (2, 0), (8, 0), (8, 1), (11, 0), (4, 0), (7, 0)]:
        assert ("request", key, str(version)) in checked
    assert len(release_packages) == len(unionpkg.release_sets()) >= 20


def test_random_release_bytes_read_back_with_the_union(
    union: Corpus, release_packages: list[ReleasePackage]
) -> None:
    for release in release_packages:
        pairs = {(m.name, v): m for m, v in all_pairs(release.messages)}
        keys = sorted(pairs)

        @settings(
            max_examples=RANDOM_PER_RELEASE,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(st.data())
        def check(data: st.DataObject) -> None:
            name, version = data.draw(st.sampled_from(keys), label="message, version")
            message = pairs[(name, version)]
            cls = message_class(release.package, message)
            obj = shift_unknown_tags(data.draw(instances(cls, message, version), label=name))
            problem = reread(release, message, version, obj)
            assert problem is None, problem

        check()
