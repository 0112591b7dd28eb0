"""Whole corpora: every spec of every corpus generates, imports, type-checks and round-trips.

Corpora are the spec sets of the tool's bundle (Kafka 2.4.0 ... 4.3.1, trunk of 2024-10 and
the kafka-python 3.0.12 set), extracted as folders (``genpkg.CORPORA``). Code generated
from a corpus lives only in a temporary folder.

Round trips, at every valid version of every message:
- the default instance, an instance with every field filled, one with every nullable
  field null (deterministic, so each (message, version) is covered on every run);
- random instances drawn by Hypothesis from the model (tests/support/strategies.py).
Each checks ``decode(encode(x, v), v) == x``, that re-encoding gives the same bytes,
that decoding a memoryview gives the same value, and ``from_dict(to_dict(x)) == x``
through JSON text.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_specgen.model import Message
from kafka_specgen.catalog import module_name

from tests.support import genpkg
from tests.support.strategies import (
    all_pairs,
    filled_instance,
    instances,
    message_class,
    struct_class,
)

ROOT = Path(__file__).resolve().parents[2]
RANDOM_EXAMPLES = int(os.environ.get("CORPUS_EXAMPLES", "300"))
#: Modules every generated package has: the runtime (templates/runtime) and the registry.
RUNTIME_MODULES = (
    "_plan",
    "_read",
    "_read_checked",
    "_write",
    "_diagnose",
    "_json",
    "_codec",
    "_registry",
    "errors",
    "negotiation",
    "registry",
)


def corpus_id(path: Path) -> str:
    return path.name


CORPORA = genpkg.corpus_folders()


@dataclass
class Corpus:
    name: str
    package: str
    out_dir: Path
    root: ModuleType
    messages: list[Message]
    """The messages that have classes."""
    removed: list[Message]
    """APIs removed upstream (validVersions "none"): names only."""

    def cls(self, message: Message) -> Any:
        return message_class(self.package, message)


@pytest.fixture(scope="module", params=CORPORA, ids=[corpus_id(p) for p in CORPORA])
def corpus(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    path: Path = request.param
    name = corpus_id(path)
    package = "corpus_" + re.sub(r"\W", "_", name)
    out_dir = tmp_path_factory.mktemp(package)
    root = genpkg.generate_package([path], out_dir, package)
    messages = genpkg.load_messages([path])
    assert messages, f"corpus {name} has no specs"
    live = [m for m in messages if not m.removed]
    return Corpus(name, package, out_dir, root, live, [m for m in messages if m.removed])


def roundtrip(cls: Any, obj: Any, version: int) -> None:
    data = obj.encode(version)
    assert isinstance(data, bytes)
    back = cls.decode(data, version)
    assert back == obj, f"decode(encode(x)) != x at v{version}"
    assert back.encode(version) == data, f"re-encoding changed the bytes at v{version}"
    assert cls.decode(memoryview(data), version) == obj, "memoryview decode differs"
    text = json.dumps(obj.to_dict())
    assert cls.from_dict(json.loads(text)) == obj, "from_dict(to_dict(x)) != x"


def sweep(corpus: Corpus, make: Callable[[Any, Message, int], Any]) -> None:
    """Round-trip ``make(cls, message, version)`` at every version; report all failures."""
    failures: list[str] = []
    count = 0
    for message, version in all_pairs(corpus.messages):
        cls = corpus.cls(message)
        try:
            roundtrip(cls, make(cls, message, version), version)
        except Exception as exc:  # collect them all: one broken message must not hide others
            failures.append(f"{message.name} v{version}: {type(exc).__name__}: {exc}"[:400])
        count += 1
    assert count > 0
    assert not failures, f"{len(failures)} of {count} round trips failed:\n" + "\n".join(
        failures[:25]
    )


def test_every_module_imports_and_every_class_exists(corpus: Corpus) -> None:
    modules = sorted({module_name(m) for m in corpus.messages})
    for name in modules:
        importlib.import_module(f"{corpus.package}.{name}")
    for runtime in RUNTIME_MODULES:
        importlib.import_module(f"{corpus.package}.{runtime}")
    # and every other module the package has (framing, headers, error_codes when present)
    for path in sorted((corpus.out_dir / corpus.package).glob("*.py")):
        if path.stem != "__init__":
            importlib.import_module(f"{corpus.package}.{path.stem}")
    registry = importlib.import_module(f"{corpus.package}.registry")
    for message in corpus.removed:
        # validVersions "none": no class, but the name stays known.
        assert message.api_key not in registry.API_KEYS, message.name
        assert registry.API_NAMES[message.api_key] == message.api_name, message.name
        assert not hasattr(importlib.import_module(corpus.package), module_name(message))
    for message in corpus.messages:
        cls = corpus.cls(message)
        assert cls.__name__ == message.name
        assert cls.MIN_VERSION == message.valid_versions.lo, message.name
        assert cls.MAX_VERSION == message.valid_versions.hi, message.name
        assert cls.API_KEY == message.api_key, message.name
        for struct in (message.root, *message.structs):
            nested = struct_class(cls, message, struct)
            assert isinstance(nested, type) and nested.__name__ == message.class_name(struct)
            assert nested.__module__ == cls.__module__
            attrs = {f.attr for f in struct.fields}
            declared = {f.name for f in dataclasses.fields(nested)}
            assert attrs <= declared, (message.name, struct.name, attrs - declared)


def test_default_instances_roundtrip_at_every_version(corpus: Corpus) -> None:
    sweep(corpus, lambda cls, message, version: cls())


def test_filled_instances_roundtrip_at_every_version(corpus: Corpus) -> None:
    sweep(corpus, lambda cls, message, version: filled_instance(cls, message, version))


def test_null_instances_roundtrip_at_every_version(corpus: Corpus) -> None:
    sweep(corpus, lambda cls, message, version: filled_instance(cls, message, version, nulls=True))


@pytest.mark.parametrize("depth", [1, 2])
def test_lists_of_smallest_items_roundtrip(corpus: Corpus, depth: int) -> None:
    """Lists whose items are as small as legal: default scalars, empty inner lists.

    Catches a decoder whose minimum item size for a list is too big (it would reject
    valid input as "does not fit in the bytes left").
    """
    sweep(
        corpus,
        lambda cls, message, version: filled_instance(
            cls, message, version, list_depth=depth, scalars=False
        ),
    )


def test_filled_instances_are_not_defaults(corpus: Corpus) -> None:
    """Guards the sweep above: a filled instance must differ from the default somewhere."""
    for message in corpus.messages:
        cls = corpus.cls(message)
        version = message.valid_versions.hi
        if any(version in f.versions for f in message.root.fields):
            assert filled_instance(cls, message, version) != cls(), message.name


def test_random_instances_roundtrip(corpus: Corpus) -> None:
    pairs = {(m.name, v): m for m, v in all_pairs(corpus.messages)}
    keys = sorted(pairs)

    @settings(
        max_examples=RANDOM_EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.data())
    def check(data: st.DataObject) -> None:
        name, version = data.draw(st.sampled_from(keys), label="message, version")
        message = pairs[(name, version)]
        cls = corpus.cls(message)
        obj = data.draw(instances(cls, message, version), label=name)
        roundtrip(cls, obj, version)

    check()


def test_generated_corpus_passes_mypy_strict(corpus: Corpus) -> None:
    """Every corpus's package type-checks strictly."""
    started = time.monotonic()
    problems = genpkg.mypy_strict(corpus.package, corpus.out_dir, corpus.out_dir / ".mypy_cache")
    elapsed = time.monotonic() - started
    print(f"mypy --strict on {corpus.name}: {elapsed:.1f} s")
    assert problems is None, f"mypy --strict failed on {corpus.name}:\n{problems}"


def test_committed_package_passes_mypy_strict(tmp_path: Path) -> None:
    problems = genpkg.mypy_strict("kafka_messages", ROOT / "generated", tmp_path / ".mypy_cache")
    assert problems is None, problems
