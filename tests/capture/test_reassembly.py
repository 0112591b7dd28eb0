"""The capture's reading without Spark: capture-file rows, TCP reassembly of pcap/pcapng,
framing across segments, request/response pairing."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from kafka_specgen.capture import frames as fr
from kafka_specgen.capture import pcap
from kafka_specgen.capture import streams as st
from tests.support.pcaps import (
    GOLDEN,
    build_pcap,
    by_conn,
    conversation_packets,
    golden_records,
    key,
    rotated_pcaps,
    sized,
)

# --- capture files ------------------------------------------------------------------------------


def test_capture_rows_are_the_records() -> None:
    recs = golden_records("librdkafka_producer.jsonl")
    rows = list(fr.capture_rows(str(GOLDEN / "librdkafka_producer.jsonl")))
    assert len(rows) == len(recs)
    for rec, row in zip(recs, rows):
        assert row.conn == f"librdkafka_producer.jsonl#{rec['conn']}"
        assert (
            row.ts,
            row.direction,
            row.api_key,
            row.api_version,
            row.correlation_id,
            row.client_id,
            row.frame.hex(),
            row.error,
        ) == (
            rec["ts"],
            rec["dir"],
            rec["api_key"],
            rec["api_version"],
            rec["correlation_id"],
            rec["client_id"],
            rec["frame"],
            None,
        )


def test_byte_ranges_tile_a_capture_file(tmp_path: Path) -> None:
    path = GOLDEN / "handmade_requests.jsonl"
    whole = list(fr.capture_rows(str(path)))
    size = path.stat().st_size
    for step in (13, 97, 4096, size // 3 + 1):
        parts = [
            r
            for start in range(0, size, step)
            for r in fr.capture_rows(str(path), start, min(size, start + step))
        ]
        assert parts == whole, step


def test_a_damaged_line_is_an_error_row(tmp_path: Path) -> None:
    good = golden_records("handmade_requests.jsonl", 2)
    path = tmp_path / "bad.jsonl"
    path.write_text(
        json.dumps(good[0]) + "\n{not json\n" + json.dumps({**good[1], "frame": "zz"}) + "\n\n",
        encoding="utf-8",
    )
    rows = list(fr.capture_rows(str(path)))
    assert len(rows) == 3 and rows[0].error is None
    assert rows[1].error.startswith("bad.jsonl line 2: not a capture record")
    assert rows[1].frame == b"{not json"
    assert rows[2].error.startswith("bad.jsonl line 3: not a capture record (ValueError")


def test_capture_lines_round_trip_through_the_one_format_module(tmp_path: Path) -> None:
    """The proxy's splitter and pairing and the pcap path's give the same rows, and a
    line written by ``capture_line`` reads back as the same row, and is written again as
    the same line (``frames`` owns it all)."""
    recs = golden_records("librdkafka_producer.jsonl", 40)
    requests = b"".join(sized(bytes.fromhex(r["frame"])) for r in recs if r["dir"] == "request")
    responses = b"".join(sized(bytes.fromhex(r["frame"])) for r in recs if r["dir"] == "response")
    splitter, pairer, lines = fr.FrameSplitter(), fr.Pairer(), []
    for i in range(0, len(requests), 7):  # the proxy's way: chunks of any size
        for frame in splitter.feed(requests[i : i + 7]):
            lines.append(fr.capture_line(pairer.row("1", 1.0, "request", frame)))
    splitter = fr.FrameSplitter()
    for i in range(0, len(responses), 5):
        for frame in splitter.feed(responses[i : i + 5]):
            lines.append(fr.capture_line(pairer.row("1", 2.0, "response", frame)))
    path = tmp_path / "proxy.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    from_lines = list(fr.capture_rows(str(path)))
    paired = st.pair_frames(
        "proxy.jsonl#1",
        None,
        None,
        st.split_stream([st.Chunk(0, requests, 1.0)]),
        st.split_stream([st.Chunk(0, responses, 2.0)]),
        fr.CAPTURE,
    )
    assert len(from_lines) == len(recs) and sorted(from_lines) == sorted(paired)
    assert [fr.capture_line(row) for row in from_lines] == lines
    with pytest.raises(ValueError, match="names no connection number"):
        fr.capture_line(fr.line_error("bad.jsonl", 3, b"{", "not JSON"))
    expected = sorted(
        (r["dir"], r["api_key"], r["api_version"], r["correlation_id"], r["client_id"])
        for r in recs
    )
    assert (
        sorted(
            (r.direction, r.api_key, r.api_version, r.correlation_id, r.client_id)
            for r in from_lines
        )
        == expected
    )
    broken = fr.FrameSplitter()
    assert broken.feed(b"\xff\xff\xff\xff rest") == [] and "outside" in (broken.broken or "")


# --- stream splitting ---------------------------------------------------------------------------


def test_frames_across_chunk_boundaries_take_the_last_chunks_time() -> None:
    a, b = b"\x01" * 10, b"\x02" * 3
    stream = sized(a) + sized(b)
    chunks = [
        st.Chunk(0, stream[:2], 1.0),
        st.Chunk(2, stream[2:9], 2.0),
        st.Chunk(9, stream[9:15], 3.0),
        st.Chunk(15, stream[15:], 4.0),
    ]
    assert list(st.split_stream(chunks)) == [
        st.StreamFrame(3.0, a, None),
        st.StreamFrame(4.0, b, None),
    ]


def test_a_hole_inside_a_frame_loses_only_that_frame() -> None:
    a, b, c = b"A" * 20, b"B" * 20, b"C" * 5
    stream = sized(a) + sized(b) + sized(c)
    chunks = [st.Chunk(0, stream[:30], 1.0), st.Chunk(40, stream[40:], 2.0)]  # 30..40 missing
    out = list(st.split_stream(chunks))
    assert out[0] == st.StreamFrame(1.0, a, None)
    assert out[1].frame == stream[28:30] and "misses 10 bytes (capture gap)" in out[1].error
    assert out[2] == st.StreamFrame(2.0, c, None)


def test_a_hole_over_a_size_prefix_loses_the_rest_as_one_error() -> None:
    stream = sized(b"A" * 6) + sized(b"B" * 6) + sized(b"C" * 6)
    chunks = [st.Chunk(0, stream[:10], 1.0), st.Chunk(12, stream[12:], 2.0)]
    out = list(st.split_stream(chunks))
    assert out[0].error is None and out[0].frame == b"A" * 6
    assert out[1].error.startswith("lost frame boundaries") and out[1].frame == stream[12:]
    assert len(out) == 2


def test_truncated_and_non_kafka_streams_are_errors() -> None:
    stream = sized(b"x" * 8) + sized(b"y" * 100)[:30]
    out = list(st.split_stream([st.Chunk(0, stream, 1.0)]))
    assert out[0].error is None and "stream ends 30 bytes into a frame of 100" in out[1].error
    junk = list(st.split_stream([st.Chunk(0, b"GET / HTTP/1.1\r\n", 1.0)]))
    assert len(junk) == 1 and "outside 0.." in junk[0].error
    assert junk[0].frame == b"GET / HTTP/1.1\r\n"


def test_pairing_by_correlation_id() -> None:
    def request(corr: int) -> bytes:
        return struct.pack(">hhih", 3, 12, corr, 2) + b"me"

    reqs = [st.StreamFrame(1.0, request(7), None), st.StreamFrame(2.0, request(8), None)]
    resps = [
        st.StreamFrame(3.0, struct.pack(">i", 8), None),
        st.StreamFrame(4.0, struct.pack(">i", 7), None),
        st.StreamFrame(5.0, struct.pack(">i", 9), None),
    ]
    rows = st.pair_frames("c#1", "a:1", "b:2", reqs, resps)
    assert [
        (r.direction, r.correlation_id, r.api_key, r.api_version, r.client_id) for r in rows
    ] == [
        ("request", 7, 3, 12, "me"),
        ("request", 8, 3, 12, "me"),
        ("response", 8, 3, 12, "me"),
        ("response", 7, 3, 12, "me"),
        ("response", 9, None, None, None),
    ]
    assert rows[2].src == "b:2" and rows[2].dst == "a:1"


# --- pcap -------------------------------------------------------------------------------------


@pytest.mark.parametrize("ng", [False, True], ids=["pcap", "pcapng"])
def test_pcap_gives_the_capture_files_rows(tmp_path: Path, ng: bool) -> None:
    """Frames split over segments, out of order and retransmitted, one connection's sequence
    numbers wrapping past 2**32: the same rows as the capture file."""
    recs = golden_records("aiokafka_producer.jsonl", 60)
    conns = by_conn(recs)
    convs = [
        conversation_packets(rs, 40000 + n, isn=(2**32 - 700 * (n % 2), 77 + n))
        for n, rs in enumerate(conns.values())
    ]
    path = build_pcap(tmp_path / ("t.pcapng" if ng else "t.pcap"), convs, ng=ng)
    assert pcap.is_pcap(str(path))
    rows = pcap.pcap_rows(str(path))
    capture = tmp_path / "t.jsonl"
    capture.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    expected = list(fr.capture_rows(str(capture)))
    assert sorted(map(key, rows)) == sorted(map(key, expected))
    assert {r.src for r in rows if r.direction == "request"} == {
        f"127.0.0.1:{40000 + n}" for n in range(len(conns))
    }
    assert max(len(bytes.fromhex(r["frame"])) for r in recs) > 3 * 100  # really split


def test_a_stream_split_across_rotated_files_is_reassembled_across_them(tmp_path: Path) -> None:
    recs = golden_records("aiokafka_producer.jsonl", 60)
    convs = [conversation_packets(rs, 40000 + n) for n, rs in enumerate(by_conn(recs).values())]
    whole = pcap.pcap_rows(str(build_pcap(tmp_path / "whole.pcap", convs)))
    files = [str(p) for p in rotated_pcaps(tmp_path, convs)]
    assert len(whole) == len(recs) and not any(r.error for r in whole)
    each_alone = [r for f in files for r in pcap.pcap_rows(f)]
    assert any(r.error for r in each_alone)  # the cut really splits a stream
    for order in (files, files[::-1]):  # time stamps order the files, not their order here
        rows = pcap.pcap_rows(order)
        assert sorted(map(key, rows)) == sorted(map(key, whole))
        assert sorted((r.src, r.dst) for r in rows) == sorted((r.src, r.dst) for r in whole)
        # a connection is named after its first packet, in the file it starts in
        assert {r.conn.partition("#")[0] for r in rows} <= {"cap0.pcap", "cap1.pcap"}
        assert len({r.conn for r in rows}) == len({r.conn for r in whole}) == len(convs)


def test_pcap_without_handshake_uses_broker_ports_or_the_bytes(tmp_path: Path) -> None:
    recs = golden_records("handmade_requests.jsonl", 6)
    conv = conversation_packets(
        [r for r in recs if r["conn"] == recs[0]["conn"]], 50000, handshake=False, mess=False
    )
    path = build_pcap(tmp_path / "nohs.pcap", [conv])
    for ports in ((), (9092,)):
        rows = pcap.pcap_rows(str(path), ports)
        assert rows[0].direction == "request" and rows[0].dst == "127.0.0.2:9092"
        assert all(r.api_key is not None and r.error is None for r in rows)


def test_a_packet_the_capture_missed_is_an_error_row(tmp_path: Path) -> None:
    recs = golden_records("aiokafka_producer.jsonl", 40)
    one = by_conn(recs)
    big = next(rs for rs in one.values() if any(len(r["frame"]) > 700 for r in rs))
    packets = conversation_packets(big, 41000, mess=False)
    sizes = [len(bytes(p["TCP"].payload)) for p in packets]
    drop = next(
        i
        for i in range(1, len(packets) - 1)
        if sizes[i] == 100 and sizes[i - 1] == 100 and sizes[i + 1] > 0
    )
    del packets[drop]  # a middle segment of a split frame
    rows = pcap.pcap_rows(str(build_pcap(tmp_path / "gap.pcap", [packets])))
    errors = [r for r in rows if r.error]
    assert len(errors) == 1 and "misses 100 bytes (capture gap)" in errors[0].error
    assert len(rows) == len(big)  # every other frame is still there
