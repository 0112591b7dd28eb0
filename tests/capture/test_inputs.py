"""Every capture survives, read without Spark: damaged capture lines, out-of-range numbers,
line and length bombs, damaged, truncated and oversized pcap/pcapng parts become error rows
and reading goes on; and the broker's request log is read as written. The same inputs
through the Spark job: test_pipeline_spark.py."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from kafka_specgen.capture import frames as fr
from kafka_specgen.capture import pcap
from kafka_specgen.capture.inputs import input_files
from kafka_specgen.capture.pcapfile import Damage, Packet, read_packets
from kafka_specgen.capture.requestlog import entry_row, log_rows, timestamp
from tests.support.pcaps import (
    build_pcap,
    by_conn,
    conversation_packets,
    golden_records,
)
from tests.support.request_log import entry_line

GOOD = {
    "ts": 1.5,
    "conn": 1,
    "dir": "request",
    "api_key": 18,
    "api_version": 3,
    "correlation_id": 1,
    "client_id": "c",
    "frame": "0012000300000001000163",
}


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"correlation_id": 2**40}, "correlation_id 1099511627776 outside -2147483648..2147483647"),
        ({"api_key": 40000}, "api_key 40000 outside -32768..32767"),
        ({"api_version": "3"}, "api_version is str '3', not an integer"),
        ({"api_version": True}, "api_version is bool True, not an integer"),
        ({"conn": 1.5}, "conn is float 1.5, not an integer"),
        ({"ts": "yesterday"}, "ts is str 'yesterday', not a finite number"),
        ({"src": 10}, "src is int 10, not text"),
        ({"client_id": ["a"]}, "client_id is list ['a'], not text"),
        ({"frame": 12}, "frame is int 12, not hex text"),
        ({"frame": "zz"}, "ValueError: non-hexadecimal number"),
        ({"dir": "sideways"}, "dir 'sideways': request or response"),
    ],
)
def test_a_damaged_capture_line_is_an_error_row(change: dict[str, Any], reason: str) -> None:
    line = json.dumps({**GOOD, **change}).encode()
    row = fr.capture_line_row(line, "c.jsonl", 7)
    assert row.error is not None and row.error.startswith("c.jsonl line 7: not a capture record")
    assert reason in row.error, row.error
    assert row.conn == "c.jsonl#line7" and row.frame == line and row.source == fr.CAPTURE
    assert fr.capture_line_row(json.dumps(GOOD).encode(), "c.jsonl", 7).error is None


@pytest.mark.parametrize(
    "line",
    [b"[" * 100_000 + b"]" * 100_000, b"[1, 2]", b'"text"', b"{", b"\xff\xfe", b"1e999"],
)
def test_lines_that_are_no_record_at_all(line: bytes) -> None:
    row = fr.capture_line_row(line, "c.jsonl", 1)
    assert row.error is not None and "not a capture record" in row.error
    assert len(row.frame) <= fr.KEPT_BYTES


def test_a_line_bomb_is_skipped_without_reading_it_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fr, "MAX_LINE", 4096)
    path = tmp_path / "bomb.jsonl"
    good = json.dumps(GOOD)
    path.write_text(good + "\n" + "x" * 100_000 + "\n" + good + "\n")
    rows = list(fr.capture_rows(str(path)))
    assert [r.error is None for r in rows] == [True, False, True]
    assert "a line of 100001 bytes, more than 4096" in (rows[1].error or "")
    assert rows[1].frame == b"x" * 4097  # what was read of it, at most KEPT_BYTES
    # split reading still reads every line once
    size = path.stat().st_size
    parts = [
        r for start in range(0, size, 1000) for r in fr.capture_rows(str(path), start, start + 1000)
    ]
    assert [r.conn for r in parts] == [r.conn for r in rows]


# --- pcap and pcapng ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def conversation() -> list[Any]:
    recs = next(iter(by_conn(golden_records("librdkafka_producer.jsonl", 30)).values()))
    return conversation_packets(recs, 41000, mess=False)


def pcapng(packets: list[bytes], order: str = "<") -> list[bytes]:
    """The blocks of a pcapng file: section header, interface (Ethernet), one enhanced
    packet block per packet."""

    def block(kind: int, body: bytes) -> bytes:
        body += b"\0" * (-len(body) % 4)
        return (
            struct.pack(order + "II", kind, len(body) + 12)
            + body
            + struct.pack(order + "I", len(body) + 12)
        )

    shb = block(0x0A0D0D0A, struct.pack(order + "IHHq", 0x1A2B3C4D, 1, 0, -1))
    idb = block(1, struct.pack(order + "HHI", 1, 0, 262144))
    epbs = [
        block(6, struct.pack(order + "IIIII", 0, 0, n * 1000, len(p), len(p)) + p)
        for n, p in enumerate(packets)
    ]
    return [shb, idb, *epbs]


def raw_packets(conversation: list[Any]) -> list[bytes]:
    return [bytes(p) for p in conversation]


def test_pcapng_blocks_read_back(tmp_path: Path, conversation: list[Any]) -> None:
    packets = raw_packets(conversation)
    path = tmp_path / "ok.pcapng"
    path.write_bytes(b"".join(pcapng(packets)))
    read = list(read_packets(str(path)))
    assert [p.data for p in read if isinstance(p, Packet)] == packets
    assert [p.ts for p in read if isinstance(p, Packet)][:2] == [0.0, 0.001]


def test_a_damaged_pcapng_block_is_skipped_and_reading_goes_on(
    tmp_path: Path, conversation: list[Any]
) -> None:
    packets = raw_packets(conversation)
    blocks = pcapng(packets)
    broken = bytearray(blocks[4])
    broken[4:8] = struct.pack("<I", 0xFFFFFFF0)  # a length bomb
    trailer = bytearray(blocks[6])
    trailer[-4:] = struct.pack("<I", 12)  # the two lengths disagree
    path = tmp_path / "damaged.pcapng"
    path.write_bytes(b"".join([*blocks[:4], bytes(broken), blocks[5], bytes(trailer), *blocks[7:]]))
    read = list(read_packets(str(path)))
    damage = [d for d in read if isinstance(d, Damage)]
    assert len(damage) == 2
    assert "runs past the end of the file" in damage[0].reason
    assert "its two length fields disagree" in damage[1].reason
    got = [p.data for p in read if isinstance(p, Packet)]
    assert got == [p for n, p in enumerate(packets) if n not in (2, 4)]


def test_a_damaged_section_header_costs_its_section_only(
    tmp_path: Path, conversation: list[Any]
) -> None:
    packets = raw_packets(conversation)
    first, second = pcapng(packets[:3]), pcapng(packets[3:], order=">")
    bad = bytearray(first[0])
    bad[8:12] = b"\x00\x11\x22\x33"  # no byte-order magic
    path = tmp_path / "bad-header.pcapng"
    path.write_bytes(bytes(bad) + b"".join(first[1:]) + b"".join(second))
    read = list(read_packets(str(path)))
    assert "damaged section header" in read[0].reason  # type: ignore[union-attr]
    assert [p.data for p in read if isinstance(p, Packet)] == packets[3:]


def test_pcap_length_bombs_and_truncation(tmp_path: Path, conversation: list[Any]) -> None:
    path = tmp_path / "whole.pcap"
    build_pcap(path, [conversation])
    data = path.read_bytes()
    first_len = struct.unpack_from("<I", data, 24 + 8)[0]
    second = 24 + 16 + first_len
    bomb = bytearray(data)
    bomb[second + 8 : second + 12] = struct.pack("<I", 0x7FFFFFFF)
    (tmp_path / "bomb.pcap").write_bytes(bytes(bomb))
    read = list(read_packets(str(tmp_path / "bomb.pcap")))
    assert isinstance(read[0], Packet) and isinstance(read[1], Damage) and len(read) == 2
    assert "packet 2 claims 2147483647 bytes" in read[1].reason
    (tmp_path / "cut.pcap").write_bytes(data[: second + 30])
    read = list(read_packets(str(tmp_path / "cut.pcap")))
    assert isinstance(read[-1], Damage) and "into packet 2" in read[-1].reason
    (tmp_path / "junk.pcap").write_bytes(b"\xd4\xc3\xb2\xa1" + b"\x01" * 10)
    [only] = list(read_packets(str(tmp_path / "junk.pcap")))
    assert isinstance(only, Damage) and "ends inside its 24-byte header" in only.reason


def test_damage_becomes_error_rows_beside_the_good_frames(
    tmp_path: Path, conversation: list[Any]
) -> None:
    build_pcap(tmp_path / "good.pcap", [conversation])
    data = (tmp_path / "good.pcap").read_bytes()
    (tmp_path / "cut.pcap").write_bytes(data[: len(data) - 7])
    good = pcap.pcap_rows(str(tmp_path / "good.pcap"))
    rows = pcap.pcap_rows([str(tmp_path / "good.pcap"), str(tmp_path / "cut.pcap")])
    errors = [r for r in rows if r.error is not None]
    assert any(r.error and r.error.startswith("cut.pcap: file ends") for r in errors)
    assert all(r.source == fr.PCAP for r in rows)
    assert len([r for r in rows if r.error is None and r.conn.startswith("good")]) == len(
        [r for r in good if r.error is None]
    )


# --- the broker's request log -------------------------------------------------------------------


def header(key: int, version: int, corr: int = 5, client: str | None = "app-1") -> dict[str, Any]:
    return {
        "requestApiKey": key,
        "requestApiVersion": version,
        "correlationId": corr,
        "clientId": client,
        "requestApiKeyName": "X",
    }


def test_request_log_lines_as_kafka_writes_them(tmp_path: Path) -> None:
    versions = {
        "errorCode": 0,
        "apiKeys": [{"apiKey": 0, "minVersion": 0, "maxVersion": 11}],
        "throttleTimeMs": 0,
    }
    metadata = {"brokers": [{"nodeId": 1, "host": "kafka-1", "port": 9092, "rack": None}]}
    lines = [
        "[2025-03-18 10:00:00,000] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)\n",
        entry_line(
            1742292000.25,
            header(18, 3, 1),
            {"clientSoftwareName": "apache-kafka-java", "clientSoftwareVersion": "3.7.0"},
            versions,
            "10.0.0.2:9092-10.0.0.7:51234-3",
            None,
        ),
        entry_line(
            1742292001.0,
            header(3, 12),
            {},
            metadata,
            "10.0.0.2:9092-10.0.0.7:51234-3",
            ("apache-kafka-java", "3.7.0"),
        ),
        entry_line(
            1742292002.0,
            header(0, 2, client=None),
            {},
            {},
            "0:0:0:0:0:0:0:1:9092-0:0:0:0:0:0:0:1:40000-9",
            None,
            deprecated=True,
        ),
        entry_line(1.0, header(0, 9), {}, {}, "a:1-b:2-0", None, forwarded=True),
        "[2025-03-18 10:00:03,000] DEBUG Completed request:{not json (kafka.request.logger)\n",
        "\tat org.apache.kafka.Something(Something.java:12)\n",
    ]
    path = tmp_path / "kafka-request.log"
    path.write_text("".join(lines))
    assert input_files([str(tmp_path)]) == [(str(path), "request log")]
    rows = list(log_rows(str(path)))
    assert len(rows) == 4  # the forwarded entry and the lines of other loggers are skipped
    versions_row, metadata_row, deprecated_row, bad = rows
    assert versions_row.ts == 1742292000.25 and versions_row.source == fr.REQUEST_LOG
    assert (versions_row.src, versions_row.dst) == ("10.0.0.7:51234", "10.0.0.2:9092")
    assert versions_row.conn == "kafka-request.log#10.0.0.2:9092-10.0.0.7:51234-3"
    facts = json.loads(versions_row.frame)
    assert facts["software"] == ["apache-kafka-java", "3.7.0"]
    assert facts["advertised"] == [[0, 0, 11]]
    assert json.loads(metadata_row.frame)["brokers"] == ["kafka-1:9092"]
    assert (metadata_row.api_key, metadata_row.api_version, metadata_row.client_id) == (
        3,
        12,
        "app-1",
    )
    assert deprecated_row.src == "0:0:0:0:0:0:0:1:40000" and deprecated_row.client_id is None
    assert json.loads(deprecated_row.frame) == {
        "software": None,
        "principal": "User:ANONYMOUS",
        "listener": "PLAINTEXT",
        "deprecated": True,
    }
    assert bad.error is not None and "not a request log entry of Kafka 2.8 or later" in bad.error
    assert bad.source == fr.REQUEST_LOG


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"requestApiKey": 2**20}, "requestApiKey 1048576 is not an integer"),
        ({"correlationId": "x"}, "correlationId 'x' is not an integer"),
        ({"clientId": 7}, "clientId is int, not text"),
    ],
)
def test_a_damaged_request_log_entry(change: dict[str, Any], reason: str) -> None:
    line = entry_line(1.0, {**header(0, 9), **change}, {}, {}, "a:1-b:2-0", None)
    with pytest.raises((ValueError, TypeError), match=reason):
        entry_row(line.encode(), "log")


def test_log4j_time_stamps() -> None:
    assert timestamp(b"[2025-03-18 10:00:00,123] DEBUG ") == 1742292000.123
    assert timestamp(b"2025-03-18T10:00:00.5Z ") == 1742292000.5
    assert timestamp(b"DEBUG ") is None
