"""The record-batch implementations ``records_bench`` compares, each as one ``Impl``: its
decode, its build, the codecs it has and how to switch it into its mode (ours pure or with
the accelerators, kafka-python with or without the ``crc32c`` package); and the mypyc
build of our runtime's record modules."""

from __future__ import annotations

import hashlib
import importlib
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = ROOT / "templates" / "runtime"
CACHE = ROOT / "build" / "records_bench"
#: The runtime modules and subpackages the records need (``templates/runtime/<name>``).
MODULES = ("__init__", "errors", "records", "_compression", "_crc32c")
COMPILED_PACKAGE = "records_bench_mypyc"

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
PURE_CODECS = ("none", "gzip")  # the standard library's

Tuples = list[tuple[int, int, bytes, bytes, list[tuple[str, bytes]]]]


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


def _peer_codec(
    label: str, memory_records: Any, builder: Any
) -> tuple[Callable[[bytes], list[Any]], Callable[[Tuples, int], bytes]]:
    """Decode and build through a peer's ``MemoryRecords`` and ``DefaultRecordBatchBuilder``
    (kafka-python's and aiokafka's have the same interface)."""

    def decode(data: bytes) -> list[Any]:
        out = []
        records = memory_records(data)
        while records.has_next():
            batch = records.next_batch()
            if not batch.validate_crc():
                raise AssertionError(f"{label}: bad CRC")
            for r in batch:
                out.append((r.offset, r.timestamp, r.key, r.value, r.headers))
        return out

    def build(records: Tuples, codec: int) -> bytes:
        batch = builder(2, codec, 0, -1, -1, -1, 1 << 30)
        for o, t, k, v, h in records:
            batch.append(o, t, k, v, h)
        return bytes(batch.build())

    return decode, build


def kafka_python(pure: bool = True) -> Impl:
    import kafka.record.default_records as kdr
    from kafka.record._crc32c import crc as crc32c_py
    from kafka.record.memory_records import MemoryRecords

    accelerated = kdr.calc_crc32c
    decode, build = _peer_codec("kafka-python", MemoryRecords, kdr.DefaultRecordBatchBuilder)

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

    decode, build = _peer_codec("aiokafka", MemoryRecords, DefaultRecordBatchBuilder)
    return Impl("aiokafka (Cython)", decode, build, CODECS)
