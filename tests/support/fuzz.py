"""A reusable mutation-fuzz harness for generated decoders.

Seeds are valid encodings (frames or bodies) of generated messages: the default instance,
an instance with every field filled, one with every nullable field null, and a few random
instances built from the generator's model, for every message and version of a package;
plus every captured frame in ``tests/golden/`` when that folder exists. Each case mutates
one seed and decodes it. The contract under test: the only exception that escapes a
decoder is the package's ``DecodeError``, with an ``offset`` inside the input and a
non-empty field ``path``. And the two readers agree: generated readers are a fast path,
and the runtime's checked reader (``_read.read_checked``, walking the plans) decodes the
same bytes again whenever the fast path fails. So every case is also decoded by the
checked reader alone: where ``decode`` returns a value, the checked reader returns the
same value (the same types, float bits and ``tags_on_wire``, all the way down); where
``decode`` raises a ``DecodeError``, the checked reader raises one with the same
``(reason, offset, path)``.

Mutations: bit flips, interesting bytes, insertions, deletions, duplications,
truncations, and length bombs written over (or inserted at) any offset: int32 counts and
lengths of 0x7fffffff / 0x80000000 / negative values other than -1, int16 string lengths,
unsigned varints of 2^31-1 and 2^32-1, over-long varints (6+ bytes), which also make
tagged-field sizes run past the end. ``bomb_sweep`` writes every bomb at every offset of
a seed (systematic); ``mutate`` stacks one to three random mutations (random).

Run ``python -m tests.support.fuzz --cases 1000000`` (``make fuzz``) for the long campaign; the
test suite runs a small slice (tests/runtime/test_fuzz.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import random
import re
import struct
import sys
import time
import traceback
import tracemalloc
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterable, Iterator, Sequence

from kafka_specgen.model import Field, FieldType, Message, Struct
from kafka_specgen.wiretypes import INT_RANGES

from tests.support.strategies import filled_instance, message_class, struct_class

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
ALL_FEATURES = ROOT / "tests" / "specs" / "all_features"

Decoder = Callable[[Any], Any]


class NotComparable(Exception):
    """Raised by a checked decoder for an input it has no counterpart for (a frame whose
    api key or version the framing refuses before any struct is read)."""


@dataclass(frozen=True)
class Seed:
    """One valid input and the decoder that must accept it (and survive its mutants)."""

    name: str
    data: bytes
    decode: Decoder
    error: type[BaseException]
    """The package's DecodeError: the only exception the decoder may raise."""
    checked: Decoder | None = None
    """The same decode by the checked reader alone (``_read.read_checked``), which must
    agree with ``decode``; None: no agreement check."""


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


# --- seeds ----------------------------------------------------------------------------


def random_instance(cls: type, message: Message, version: int, rng: random.Random) -> Any:
    """A random instance legal at ``version``, built from the model (like strategies.py)."""
    module = importlib.import_module(cls.__module__)
    raw_tag = importlib.import_module(f"{module.__name__.rpartition('.')[0]}._plan").RawTaggedField
    flexible = version in message.flexible_versions

    def build(s: Struct, depth: int) -> Any:
        kwargs: dict[str, Any] = {}
        for f in s.fields:
            if version not in f.versions:
                continue
            absent_tag = f.type.is_struct and version in f.tagged_versions
            if (version in f.nullable_versions or absent_tag) and rng.random() < 0.2:
                kwargs[f.attr] = None  # null, or an absent tagged struct
            else:
                kwargs[f.attr] = value(f, f.type, depth)
        if flexible and rng.random() < 0.3:
            first = max((f.tag for f in s.fields if f.tag is not None), default=-1) + 1
            tags = sorted(rng.sample(range(first, first + 30), rng.randint(1, 2)))
            kwargs["unknown_tagged_fields"] = tuple(
                raw_tag(t, rng.randbytes(rng.randint(0, 6))) for t in tags
            )
        return struct_class(cls, message, s)(**kwargs)

    def value(f: Field, ftype: FieldType, depth: int) -> Any:
        if ftype.is_array:
            assert ftype.element is not None
            n = rng.randint(0, 3 if depth < 2 else 1)
            return [value(f, ftype.element, depth + 1) for _ in range(n)]
        if ftype.is_struct:
            assert f.struct is not None
            return build(f.struct, depth)
        kind = ftype.text
        if kind in INT_RANGES:
            lo, hi = INT_RANGES[kind]
            return rng.choice([lo, hi, max(lo, -1), 0, 1, rng.randint(lo, hi)])
        if kind == "bool":
            return rng.random() < 0.5
        if kind == "float64":
            return rng.choice([0.0, -1.5, 1e300, rng.random()])
        if kind == "string":
            return "".join(rng.choice("ab✓é\x00zZ9") for _ in range(rng.randint(0, 12)))
        if kind in ("bytes", "records"):
            return rng.randbytes(rng.randint(0, 16))
        if kind == "uuid":
            return uuid.UUID(int=rng.getrandbits(128))
        raise AssertionError(kind)

    return build(message.root, 0)


def instances_of(
    cls: type, message: Message, version: int, rng: random.Random, randoms: int
) -> Iterator[tuple[str, Any]]:
    yield "default", cls()
    yield "filled", filled_instance(cls, message, version)
    yield "nulls", filled_instance(cls, message, version, nulls=True)
    yield "shallow", filled_instance(cls, message, version, list_depth=1, scalars=False)
    for i in range(randoms):
        yield f"random{i}", random_instance(cls, message, version, rng)


def package_seeds(
    package: ModuleType | str,
    messages: Sequence[Message],
    *,
    randoms: int = 2,
    frames: bool = True,
    bodies: bool = True,
    rng_seed: int = 0,
    only: Callable[[Message], bool] | None = None,
) -> list[Seed]:
    """Seeds for every message and version of a generated package.

    ``bodies``: each encoding decoded by ``Message.decode``. ``frames``: requests and
    responses (of APIs in the package's registry) also as whole frames with a header,
    decoded by ``framing.decode_request`` / ``decode_response``.
    """
    name = package if isinstance(package, str) else package.__name__
    errors = importlib.import_module(f"{name}.errors")
    error = errors.DecodeError
    framing = registry = headers = None
    if frames:
        try:
            framing = importlib.import_module(f"{name}.framing")
            registry = importlib.import_module(f"{name}.registry")
            headers = importlib.import_module(f"{name}.headers")
        except ImportError:
            framing = None
    rng = random.Random(rng_seed)
    seeds: list[Seed] = []
    seen: set[tuple[str, int, str, bytes]] = set()
    for message in messages:
        if only is not None and not only(message):
            continue
        cls = message_class(name, message)
        for version in message.valid_versions:
            for label, obj in instances_of(cls, message, version, rng, randoms):
                body = obj.encode(version)
                seed_name = f"{name}:{message.name} v{version} {label}"
                if bodies and (message.name, version, "body", body) not in seen:
                    seen.add((message.name, version, "body", body))
                    seeds.append(
                        Seed(
                            seed_name,
                            body,
                            body_decoder(cls, version),
                            error,
                            checked_body_decoder(cls, version),
                        )
                    )
                in_registry = registry is not None and message.api_key in registry.API_KEYS
                if (
                    framing is None
                    or not in_registry
                    or message.type
                    not in (
                        "request",
                        "response",
                    )
                ):
                    continue
                assert headers is not None
                if (message.name, version, "frame", body) in seen:
                    continue
                seen.add((message.name, version, "frame", body))
                if message.type == "request":
                    header = headers.RequestHeader(
                        request_api_key=message.api_key,
                        request_api_version=version,
                        correlation_id=rng.randint(0, 2**31 - 1),
                        client_id="fuzz",
                    )
                    frame = framing.encode_request(header, obj)
                    decode: Decoder = framing.decode_request
                    checked = checked_frame_decoder(name)
                else:
                    header = headers.ResponseHeader(correlation_id=rng.randint(0, 2**31 - 1))
                    frame = framing.encode_response(header, obj, message.api_key, version)
                    assert message.api_key is not None
                    decode = response_decoder(framing, message.api_key, version)
                    checked = checked_frame_decoder(name, message.api_key, version)
                seeds.append(Seed(seed_name + " frame", frame, decode, error, checked))
    return seeds


def body_decoder(cls: type, version: int) -> Decoder:
    def decode(data: Any) -> Any:
        return cls.decode(data, version)  # type: ignore[attr-defined]

    return decode


def response_decoder(framing: ModuleType, api_key: int, version: int) -> Decoder:
    def decode(data: Any) -> Any:
        return framing.decode_response(data, api_key, version)

    return decode


def _runtime(cls: type) -> tuple[ModuleType, Any, type[BaseException]]:
    """``(_read, the class's Codec, DecodeError)`` of the package that ``cls`` is from."""
    package = cls.__module__.rpartition(".")[0]
    read = importlib.import_module(f"{package}._read")
    codec = importlib.import_module(f"{package}._codec").CODECS[cls]
    return read, codec, importlib.import_module(f"{package}.errors").DecodeError


def _checked_at(cls: type, version: int, buf: bytes, pos: int) -> tuple[Any, int]:
    """``cls`` at ``version`` from ``buf[pos:]`` by the checked reader alone."""
    read, codec, _ = _runtime(cls)
    result: tuple[Any, int] = read.read_checked(buf, pos, codec.plans[version], codec.name)
    return result


def checked_body_decoder(cls: type, version: int) -> Decoder:
    """What ``cls.decode(data, version)`` must return or raise, computed by the checked
    reader alone: ``read_checked(buf, 0, plan, name)``, and the end of the value must be
    the end of the buffer (the whole-buffer rule of ``decode``)."""
    _, codec, error = _runtime(cls)

    def decode(data: Any) -> Any:
        buf = bytes(data)
        obj, end = _checked_at(cls, version, buf, 0)
        if end != len(buf):
            raise error(f"{len(buf) - end} trailing bytes after the body", end, codec.name)
        return obj

    return decode


def checked_frame_decoder(
    package: str, api_key: int | None = None, api_version: int | None = None
) -> Decoder:
    """The checked-reader counterpart of ``framing.decode_request`` (no ``api_key``) or
    ``decode_response``: the header, then the body, each by ``read_checked``, then the
    end-of-frame rule. A frame whose api key or version the framing refuses before it
    reads any struct raises ``NotComparable``."""
    registry = importlib.import_module(f"{package}.registry")
    headers = importlib.import_module(f"{package}.headers")
    error = importlib.import_module(f"{package}.errors").DecodeError

    def decode(data: Any) -> Any:
        buf = bytes(data)
        if api_key is None:
            if len(buf) < 4:
                raise NotComparable
            key, version = struct.unpack_from(">hh", buf)
            header_cls, side = headers.RequestHeader, "request"
        else:
            key, version = api_key, api_version
            header_cls, side = headers.ResponseHeader, "response"
        entry = registry.API_KEYS.get(key)
        if entry is None or not entry.min_version <= version <= entry.max_version:
            raise NotComparable
        header_version = (
            registry.request_header_version(key, version)
            if side == "request"
            else registry.response_header_version(key, version)
        )
        body_cls = entry.request if side == "request" else entry.response
        header, pos = _checked_at(header_cls, header_version, buf, 0)
        body, end = _checked_at(body_cls, version, buf, pos)
        if end != len(buf):
            raise error(f"{len(buf) - end} trailing bytes after the body", end, body_cls.__name__)
        return header, body

    return decode


def wire_state(value: Any) -> Any:
    """``value`` as nested tuples that compare equal only if two decodes agree exactly:
    types, float bits (NaN equals itself, 0.0 differs from -0.0) and ``tags_on_wire``
    (which ``==`` leaves out) included."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (
            type(value).__name__,
            tuple((f.name, wire_state(getattr(value, f.name))) for f in dataclasses.fields(value)),
        )
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(wire_state(item) for item in value))
    if isinstance(value, frozenset):
        return ("frozenset", tuple(sorted(value)))
    if isinstance(value, float):
        return ("float", struct.pack(">d", value))
    return (type(value).__name__, value)


def golden_seeds(package: str, folder: Path = GOLDEN) -> tuple[list[Seed], int]:
    """Captured frames under ``tests/golden/*.jsonl`` that ``package`` decodes as they are.

    One JSON object per line with ``dir`` (request/response), ``api_key``,
    ``api_version`` and ``frame`` (hex, without the size prefix). Returns the seeds and
    how many frames were skipped (APIs the package lacks, or frames it cannot decode:
    those are the golden tests' business, not the fuzzer's).
    """
    if not folder.is_dir():
        return [], 0
    import json

    framing = importlib.import_module(f"{package}.framing")
    error = importlib.import_module(f"{package}.errors").DecodeError
    seeds: list[Seed] = []
    skipped = 0
    for path in sorted(folder.glob("*.jsonl")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            try:
                record = json.loads(line)
                data = bytes.fromhex(record["frame"])
                if record["dir"] == "request":
                    decode: Decoder = framing.decode_request
                    checked = checked_frame_decoder(package)
                else:
                    key, version = int(record["api_key"]), int(record["api_version"])
                    decode = response_decoder(framing, key, version)
                    checked = checked_frame_decoder(package, key, version)
                decode(data)
            except Exception:  # noqa: BLE001 - not a seed for this package
                skipped += 1
                continue
            seeds.append(Seed(f"golden:{path.name}:{number}", data, decode, error, checked))
    return seeds, skipped


def golden_package(out_dir: Path) -> str:
    """A package that knows every API of the captures: the newest Kafka corpus, or the
    kafka-python wheel's specs without ../shared."""
    from tests.support.genpkg import CORPORA, generate_package, kafka_python_specs

    trunk = CORPORA / "trunk-2024-10"
    specs = trunk if trunk.is_dir() else kafka_python_specs()
    package = "fuzz_golden_pkg"
    generate_package([specs], out_dir, package)
    return package


def all_features_seeds(out_dir: Path, randoms: int = 2) -> list[Seed]:
    """Seeds from the all-features test spec, generated into ``out_dir``."""
    from tests.support.genpkg import generate_package, load_messages

    package = "fuzz_all_features_pkg"
    generate_package([ALL_FEATURES], out_dir, package)
    return package_seeds(package, load_messages([ALL_FEATURES]), randoms=randoms)


def repo_seeds(randoms: int = 2) -> list[Seed]:
    """Seeds from the committed package ``kafka_messages`` (generated from specs/)."""
    from tests.support.genpkg import SPECS, load_messages

    if str(ROOT / "generated") not in sys.path:
        sys.path.insert(0, str(ROOT / "generated"))
    # The spec files directly in specs/ (sub-folders hold other data).
    messages = load_messages(sorted(SPECS.glob("*.json")))
    return package_seeds("kafka_messages", messages, randoms=randoms)


# --- mutations ------------------------------------------------------------------------

INT32_BOMBS = [0x7FFFFFFF, -0x80000000, -2, -100, 0x10000000, 0xFFFF]
INT16_BOMBS = [0x7FFF, -2, -0x8000, 0x100]
VARINT_BOMBS = [
    b"\xff\xff\xff\xff\x07",  # 2^31-1
    b"\xff\xff\xff\xff\x0f",  # 2^32-1
    b"\x80\x80\x80\x80\x80\x00",  # over-long: 6 bytes
    b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",  # 10 bytes (a 64-bit varint)
    b"\xff\xff\xff\x7f",  # 2^28-1
    b"\x80\x01",  # 128
]
INTERESTING = [0x00, 0x01, 0x7F, 0x80, 0xFF, 0xFE, 0x02, 0x03]


def bombs() -> list[tuple[str, bytes]]:
    """Every length bomb, as (name, bytes)."""
    out = [(f"int32 {n:#x}", struct.pack(">i", n)) for n in INT32_BOMBS]
    out += [(f"int16 {n:#x}", struct.pack(">h", n)) for n in INT16_BOMBS]
    out += [(f"uvarint {b.hex()}", b) for b in VARINT_BOMBS]
    return out


BOMBS = bombs()


def overwrite(data: bytes, pos: int, patch: bytes) -> bytes:
    return data[:pos] + patch + data[pos + len(patch) :]


def bomb_sweep(data: bytes) -> Iterator[tuple[str, bytes]]:
    """Every bomb written over every offset, plus every truncation: systematic cases."""
    for pos in range(len(data)):
        for name, patch in BOMBS:
            yield f"bomb {name.split()[0]} overwrite", overwrite(data, pos, patch)
        yield "truncate", data[:pos]


def _flip(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return b"\x00"
    pos = rng.randrange(len(data))
    return overwrite(data, pos, bytes([data[pos] ^ (1 << rng.randrange(8))]))


def _byte(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return bytes([rng.choice(INTERESTING)])
    return overwrite(data, rng.randrange(len(data)), bytes([rng.choice(INTERESTING)]))


def _insert(rng: random.Random, data: bytes) -> bytes:
    pos = rng.randint(0, len(data))
    return data[:pos] + rng.randbytes(rng.randint(1, 8)) + data[pos:]


def _delete(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return data
    pos = rng.randrange(len(data))
    return data[:pos] + data[pos + rng.randint(1, 8) :]


def _duplicate(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return data
    pos = rng.randrange(len(data))
    chunk = data[pos : pos + rng.randint(1, 16)]
    return data[:pos] + chunk + data[pos:]


def _truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randint(0, max(len(data) - 1, 0))]


def _append(rng: random.Random, data: bytes) -> bytes:
    return data + rng.randbytes(rng.randint(1, 4))


def _bomb_overwrite(rng: random.Random, data: bytes) -> bytes:
    _, patch = rng.choice(BOMBS)
    return overwrite(data, rng.randint(0, max(len(data) - 1, 0)), patch)


def _bomb_insert(rng: random.Random, data: bytes) -> bytes:
    _, patch = rng.choice(BOMBS)
    pos = rng.randint(0, len(data))
    return data[:pos] + patch + data[pos:]


MUTATORS: dict[str, Callable[[random.Random, bytes], bytes]] = {
    "flip": _flip,
    "byte": _byte,
    "insert": _insert,
    "delete": _delete,
    "duplicate": _duplicate,
    "truncate": _truncate,
    "append": _append,
    "bomb overwrite": _bomb_overwrite,
    "bomb insert": _bomb_insert,
}
_MUTATOR_ITEMS = list(MUTATORS.items())


def mutate(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    """One to three stacked random mutations; returns (name of the first, bytes)."""
    name, fn = rng.choice(_MUTATOR_ITEMS)
    data = fn(rng, data)
    for _ in range(rng.choice((0, 0, 1, 2))):
        data = rng.choice(_MUTATOR_ITEMS)[1](rng, data)
    return name, data


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
