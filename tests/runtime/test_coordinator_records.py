"""``coordinator_records``: the records of ``__consumer_offsets``, ``__share_group_state`` and
``__transaction_state``, in a package generated from Kafka 4.3.1's specs.

The expected bytes are written out here by hand from the layout Kafka documents for these
topics (an int16 record type id, then the key at version 0; an int16 version, then the
value), not taken from the code under test. Neither kafka-python nor kio reads these records,
so there is no independent reader to compare with.
"""

from __future__ import annotations

import struct
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support import genpkg

CORPUS = genpkg.CORPORA / "4.3.1"


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    out = tmp_path_factory.mktemp("coordinator")
    return genpkg.generate_package([CORPUS], out, "coordinator_431")


def module(package: ModuleType, name: str) -> Any:
    return genpkg.import_module(package.__name__, name)


def string(text: str) -> bytes:
    return struct.pack(">h", len(text)) + text.encode()


def test_every_coordinator_has_its_table(package: ModuleType) -> None:
    tables = module(package, "registry").COORDINATOR_RECORDS
    assert sorted(tables) == ["group", "share", "transaction"]
    # group-coordinator/ holds 22 key/value pairs in 4.3.1: record types 0 to 23 but 9
    # and 18 (the apiKey of each *Key.json file there).
    assert sorted(tables["group"]) == [n for n in range(24) if n not in (9, 18)]
    assert tables["group"][1].key.__name__ == "OffsetCommitKey"
    assert tables["group"][1].value.__name__ == "OffsetCommitValue"
    assert tables["transaction"][0].name == "TransactionLog"
    assert sorted(tables["share"]) == [0, 1]


def test_offset_commit_record_bytes(package: ModuleType) -> None:
    records = module(package, "coordinator_records")
    key_cls = module(package, "offset_commit_key").OffsetCommitKey
    value_cls = module(package, "offset_commit_value").OffsetCommitValue
    key = key_cls(group="g1", topic="orders", partition=7)
    value = value_cls(offset_=42, leader_epoch=5, metadata="m", commit_timestamp=1000)
    key_bytes, value_bytes = records.encode_record("__consumer_offsets", key, value, 3)
    # OffsetCommitKey: record type 1, group, topic, partition.
    assert key_bytes == struct.pack(">h", 1) + string("g1") + string("orders") + struct.pack(
        ">i", 7
    )
    # OffsetCommitValue v3: offset, leaderEpoch, metadata, commitTimestamp.
    assert value_bytes == (struct.pack(">hqi", 3, 42, 5) + string("m") + struct.pack(">q", 1000))
    record = records.decode_record("__consumer_offsets", key_bytes, value_bytes)
    assert (record.coordinator, record.record_type, record.name) == ("group", 1, "OffsetCommit")
    assert (record.key, record.value, record.value_version) == (key, value, 3)
    assert not record.tombstone


def test_tombstone_and_transaction_log(package: ModuleType) -> None:
    records = module(package, "coordinator_records")
    raw_key = struct.pack(">h", 0) + string("txn-1")  # TransactionLogKey, record type 0
    record = records.decode_record("__transaction_state", raw_key, None)
    assert record.tombstone and record.value_version is None
    assert record.key.transactional_id == "txn-1" and record.name == "TransactionLog"
    assert records.encode_record("transaction", record.key, None, 0) == (raw_key, None)


def test_bad_records_raise_decode_error(package: ModuleType) -> None:
    records = module(package, "coordinator_records")
    errors = module(package, "errors")
    good_key = struct.pack(">h", 0) + string("txn-1")
    cases = [
        ("transaction", b"\x00", None, "a key needs its int16 record type"),
        ("transaction", struct.pack(">h", 99) + b"x", None, "unknown transaction coordinator"),
        ("nope", good_key, None, "unknown coordinator 'nope'"),
        ("transaction", good_key + b"\x00", None, "1 bytes left after the body"),
        ("transaction", good_key, b"\x00", "a value needs its int16 version"),
        ("transaction", good_key, struct.pack(">h", 99), "has no version 99"),
        ("transaction", good_key, struct.pack(">h", 0) + b"\x00\x00\x00", "TransactionLogValue"),
    ]
    for coordinator, key, value, phrase in cases:
        with pytest.raises(errors.DecodeError) as caught:
            records.decode_record(coordinator, key, value)
        assert phrase in str(caught.value), (key, value, str(caught.value))


def test_encode_refuses_a_mismatched_value(package: ModuleType) -> None:
    records = module(package, "coordinator_records")
    errors = module(package, "errors")
    key = module(package, "offset_commit_key").OffsetCommitKey()
    wrong = module(package, "group_metadata_value").GroupMetadataValue()
    with pytest.raises(errors.EncodeError, match="needs a OffsetCommitValue value"):
        records.encode_record("group", key, wrong, 0)
    with pytest.raises(errors.EncodeError, match="not a key of the 'share' coordinator"):
        records.encode_record("share", key, None, 0)


def test_committed_package_has_an_empty_table() -> None:
    from kafka_messages import coordinator_records, errors, registry

    assert registry.COORDINATOR_RECORDS == {}
    with pytest.raises(
        errors.DecodeError, match="unknown coordinator '__consumer_offsets' \\(known: none\\)"
    ):
        coordinator_records.decode_record("__consumer_offsets", b"\x00\x01", None)
    assert Path(coordinator_records.__file__).name == "coordinator_records.py"
