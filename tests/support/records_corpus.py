"""Inputs for the record-batch tests and fuzzer: the records fields of the golden captures,
hand-built batches of every kind, and the two peers' readers.

- ``golden_fields(tmp)``: every Produce request's and Fetch response's ``records`` bytes in
  every ``tests/golden/*.jsonl`` present, decoded with a package generated from the newest
  spec corpus that covers the frame's version (``tests/support/genpkg.py``), found by walking the
  decoded body for attributes named ``records``;
- ``sample_batches()``: built batches covering each codec, magic 0/1/2, control and empty
  batches, LogAppendTime, null keys, values and header values;
- ``kafka_python_read`` / ``aiokafka_read``: what each peer's reader makes of a records
  field, as comparable tuples ``(offset, timestamp, key, value, headers)``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator

from kafka_messages import records as R
from tests.support import genpkg

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
PRODUCE, FETCH = 0, 1

RecordTuple = tuple[
    int, int, "bytes | None", "bytes | None", tuple[tuple[str, "bytes | None"], ...]
]


@dataclass(frozen=True)
class GoldenField:
    file: str
    line: int
    api_key: int
    api_version: int
    direction: str
    data: bytes

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


# --- golden captures -------------------------------------------------------------------------


def _corpora() -> list[Path]:
    """Spec folders, newest first (trunk before kafka-python's, which is newer but has
    dropped the oldest versions)."""
    found = [
        genpkg.CORPORA / "trunk-2024-10" / "message",
        genpkg.CORPORA / genpkg.KAFKA_PYTHON_SET / "message",
        *(p / "message" for p in reversed(genpkg.corpus_folders())),
    ]
    return [p for p in found if p.is_dir()]


def _versions(folder: Path, name: str) -> tuple[int, int]:
    spec = (folder / f"{name}.json").read_text(encoding="utf-8")
    spec = re.sub(r"//.*", "", spec)  # the spec files carry // comments
    low, _, high = str(json.loads(spec)["validVersions"]).partition("-")
    return int(low), int(high or low)


class _Packages:
    """Generated packages, one per corpus folder, made when first needed."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.made: dict[Path, ModuleType] = {}
        self.corpora = _corpora()

    def framing_for(self, api_key: int, version: int) -> ModuleType | None:
        name = "ProduceRequest" if api_key == PRODUCE else "FetchRequest"
        for folder in self.corpora:
            low, high = _versions(folder, name)
            if low <= version <= high:
                if folder not in self.made:
                    package = f"records_golden_{len(self.made)}"
                    genpkg.generate_package([folder], self.tmp, package)
                    self.made[folder] = genpkg.import_module(package, "framing")
                return self.made[folder]
        return None


def records_values(obj: Any) -> Iterator[bytes]:
    """Every non-null attribute named ``records`` anywhere inside a decoded message."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for field in dataclasses.fields(obj):
            value = getattr(obj, field.name)
            if field.name == "records" and isinstance(value, (bytes, bytearray, memoryview)):
                yield bytes(value)
            else:
                yield from records_values(value)
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from records_values(item)


def golden_fields(tmp: Path, missing: list[str] | None = None) -> list[GoldenField]:
    """The records fields of every Produce request and Fetch response in tests/golden/.
    A frame whose version no spec set here has is an error, or, given ``missing``, is
    listed there (``file:line``) and left out."""
    packages = _Packages(tmp)
    fields = []
    for path in sorted(GOLDEN.glob("*.jsonl")):
        with path.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                frame = json.loads(line)
                key, version, direction = frame["api_key"], frame["api_version"], frame["dir"]
                if (key, direction) not in ((PRODUCE, "request"), (FETCH, "response")):
                    continue
                framing = packages.framing_for(key, version)
                if framing is None and missing is not None:
                    missing.append(f"{path.name}:{number}")
                    continue
                if framing is None:
                    raise AssertionError(f"{path.name}:{number}: no spec corpus has v{version}")
                data = bytes.fromhex(frame["frame"])
                if direction == "request":
                    _, body = framing.decode_request(data)
                else:
                    _, body = framing.decode_response(data, key, version)
                for value in records_values(body):
                    fields.append(GoldenField(path.name, number, key, version, direction, value))
    return fields


# --- our reader, as tuples -------------------------------------------------------------------


def ours_read(data: bytes) -> list[RecordTuple]:
    return [
        (r.offset, r.timestamp, r.key, r.value, r.headers)
        for batch in R.iter_batches(data)
        for r in batch.records()
    ]


# --- the peers -------------------------------------------------------------------------------


def kafka_python_read(data: bytes) -> list[RecordTuple]:
    """kafka-python 3.0.12's reader (pure Python). Magic 0 timestamps read as None there;
    they are mapped to -1 (Kafka's NO_TIMESTAMP, what we return)."""
    from kafka.record.memory_records import MemoryRecords

    out: list[RecordTuple] = []
    records = MemoryRecords(data)
    while records.has_next():
        batch = records.next_batch()
        for r in batch:
            timestamp = -1 if r.timestamp is None else r.timestamp
            out.append((r.offset, timestamp, r.key, r.value, tuple(r.headers)))
    return out


def aiokafka_read(data: bytes) -> list[RecordTuple]:
    """aiokafka 0.14's reader (its Cython build when compiled; see ``aiokafka_is_cython``)."""
    from aiokafka.record.memory_records import MemoryRecords

    out: list[RecordTuple] = []
    records = MemoryRecords(data)
    while records.has_next():
        batch = records.next_batch()
        assert batch is not None
        for r in batch:
            timestamp = -1 if r.timestamp is None else r.timestamp
            out.append((r.offset, timestamp, r.key, r.value, tuple(r.headers)))
    return out


def aiokafka_is_cython() -> bool:
    from aiokafka.record.default_records import DefaultRecordBatch

    return str(DefaultRecordBatch.__module__).endswith("_crecords.default_records")


# --- built batches ---------------------------------------------------------------------------

T0 = 1_700_000_000_000


def sample_records(n: int = 5, *, offset: int = 0, headers: bool = True) -> list[R.Record]:
    out = []
    for i in range(n):
        hdrs: tuple[tuple[str, bytes | None], ...] = ()
        if headers and i % 2:
            hdrs = (("trace", b"id-%d" % i), ("empty", None), ("ü", b""))
        out.append(
            R.Record(
                offset + i,
                T0 + 37 * i,
                None if i % 3 == 1 else b"key-%d" % i,
                None if i % 4 == 2 else b"value-%d " % i * (i + 1),
                hdrs,
            )
        )
    return out


def sample_batches() -> list[tuple[str, bytes]]:
    """(name, records field) pairs: every codec our environment has, magic 0/1/2."""
    out: list[tuple[str, bytes]] = []
    codecs = [c for c, pkg in R.codec_packages().items() if pkg is not None]
    for codec in [R.Compression.NONE, *codecs]:
        name = codec.name.lower()
        out.append((f"v2_{name}", R.build_batch(sample_records(), compression=codec)))
        out.append(
            (
                f"v2_{name}_transactional",
                R.build_batch(
                    sample_records(3, offset=100),
                    compression=codec,
                    base_offset=100,
                    producer_id=4242,
                    producer_epoch=3,
                    base_sequence=(1 << 31) - 2,
                    is_transactional=True,
                    partition_leader_epoch=7,
                ),
            )
        )
        if codec is not R.Compression.ZSTD:
            for magic in (0, 1):
                legacy = R.build_legacy(
                    sample_records(4, offset=10, headers=False), magic=magic, compression=codec
                )
                out.append((f"v{magic}_{name}", legacy))
    out.append(
        (
            "v2_log_append_time",
            R.build_batch(
                sample_records(3),
                timestamp_type=R.TimestampType.LOG_APPEND_TIME,
                max_timestamp=T0 + 99_999,
            ),
        )
    )
    out.append(
        (
            "v2_empty_after_compaction",
            R.build_batch(
                [],
                base_offset=50,
                last_offset_delta=9,
                base_timestamp=T0,
                max_timestamp=T0 + 5,
                producer_id=7,
                producer_epoch=1,
                base_sequence=20,
            ),
        )
    )
    markers = []
    for i, control in enumerate(
        (
            R.ControlRecord(R.ControlType.COMMIT, coordinator_epoch=5),
            R.ControlRecord(R.ControlType.ABORT, coordinator_epoch=6),
            R.ControlRecord(42, value=b"\x00\x01unknown"),
        )
    ):
        key, value = R.encode_control(control)
        markers.append(R.Record(200 + i, T0 + i, key, value))
    out.append(
        (
            "v2_control",
            R.build_batch(
                markers,
                base_offset=200,
                producer_id=9,
                producer_epoch=0,
                is_transactional=True,
                is_control=True,
            ),
        )
    )
    # several batches in one field, as a Fetch response carries them
    out.append(("v2_three_batches", b"".join(data for _, data in out[:3] if data[16] == 2)))
    return out
