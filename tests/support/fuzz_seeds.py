"""Seeds for the decoder fuzzer (``tests.support.fuzz``): valid encodings (frames or
bodies) of generated messages, each with the decoder that must accept it and the checked
reader that must agree with it. Per message and version: the default instance, one with
every field filled, one with every nullable field null, and a few random instances built
from the generator's model; plus every captured frame in ``tests/golden/``."""

from __future__ import annotations

import dataclasses
import importlib
import random
import struct
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterator, Sequence

from bench.peers import struct_class
from kafka_specgen.model import Field, FieldType, Message, Struct
from kafka_specgen.wiretypes import INT_RANGES

from tests.support.strategies import filled_instance, message_class

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
    """The same decode by the checked reader alone (``_read_checked.read_checked``), which
    must agree with ``decode``; None: no agreement check."""


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
    """``(_read_checked, the class's Codec, DecodeError)`` of the package that ``cls`` is
    from."""
    package = cls.__module__.rpartition(".")[0]
    read = importlib.import_module(f"{package}._read_checked")
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
    """A package that knows every API of the captures: Kafka trunk of 2024-10."""
    from tests.support.genpkg import full_version_corpus, generate_package

    package = "fuzz_golden_pkg"
    generate_package([full_version_corpus()], out_dir, package)
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
