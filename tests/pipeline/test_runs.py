"""Segment runs (``pipeline.runs``): the segments of pcap files packed a connection and a
file at a time, as Spark shuffles them, unpack to the very segments, and the frames
reassembled from them are those of the plain reader (no Spark)."""

from __future__ import annotations

import random
from itertools import groupby
from pathlib import Path

from kafka_specgen.capture import pcap
from kafka_specgen.capture.pcap import Segment, read_segments
from kafka_specgen.pipeline.runs import SEGMENT, SegmentRun, segment_runs, segments_of
from tests.support.pcaps import by_conn, conversation_packets, golden_records, rotated_pcaps


def shuffled(files: list[Path], flush_bytes: int) -> list[SegmentRun]:
    """What the job's shuffle hands reassembly: every file's runs, in a random order of
    arrival, sorted by connection, file and part."""
    runs = [
        run
        for n, path in enumerate(files)
        for batch in segment_runs(read_segments(str(path), n), flush_bytes)
        for run in batch
    ]
    random.Random(7).shuffle(runs)
    return sorted(runs, key=lambda r: (r.low, r.high, r.file_no, r.part))


def rotated_capture(tmp_path: Path) -> list[Path]:
    recs = golden_records("aiokafka_producer.jsonl", 60)
    convs = [conversation_packets(rs, 44000 + n) for n, rs in enumerate(by_conn(recs).values())]
    files = rotated_pcaps(tmp_path, convs)
    with open(files[1], "ab") as f:  # a damaged record at the end of the second file
        f.write(b"\x01\x02\x03")
    return files


def test_runs_unpack_to_the_segments_read(tmp_path: Path) -> None:
    files = rotated_capture(tmp_path)
    segments = sorted(
        (s for n, path in enumerate(files) for s in read_segments(str(path), n)),
        key=pcap.capture_order,
    )
    assert any(s.error for s in segments) and len({pcap.connection_key(s) for s in segments}) > 2
    for flush_bytes in (1, 300, 1 << 20):  # a run per segment, several per file, one
        runs = shuffled(files, flush_bytes)
        assert sum(len(r.segments) // SEGMENT.size for r in runs) == len(segments)
        assert sorted(segments_of(runs), key=pcap.capture_order) == segments
        if flush_bytes == 1 << 20:
            assert len(runs) < len(segments) / 5  # packed
            assert {(r.low, r.high, r.file_no) for r in runs if r.error is None} == {
                (*pcap.connection_key(s), s.file_no) for s in segments if s.error is None
            }


def test_reassembled_runs_give_the_plain_readers_rows(tmp_path: Path) -> None:
    """Reassembly one connection at a time, from its runs, gives the rows of
    ``pcap_rows`` over the files (a stream cut between two files, a damaged part)."""
    files = rotated_capture(tmp_path)
    plain = pcap.pcap_rows([str(f) for f in files])
    for flush_bytes in (1, 1 << 20):
        rows = [
            row
            for _, connection in groupby(
                shuffled(files, flush_bytes), key=lambda r: (r.low, r.high)
            )
            for row in pcap.reassemble(segments_of(connection))
        ]
        assert sorted(rows) == sorted(plain)
        assert any(r.error for r in rows) and sum(r.error is None for r in rows) >= 60


def test_a_run_keeps_which_end_sent_each_segment() -> None:
    a, b = "10.0.0.1:5000", "10.0.0.2:9092"
    sent = [
        Segment(1.0, a, b, 1, 0x02, b"", "f", 0, 1),
        Segment(1.5, b, a, 7, 0x12, b"", "f", 0, 2),
        Segment(2.0, a, b, 2, 0x18, b"\x00\x00\x00\x01x", "f", 0, 3),
        Segment(2.5, b, a, 8, 0x18, b"\x00\x00\x00\x01y", "f", 0, 4),
    ]
    [[run]] = list(segment_runs(sent))
    assert (run.low, run.high, run.part, run.error) == (a, b, 0, None)
    assert run.payloads == b"\x00\x00\x00\x01x\x00\x00\x00\x01y"
    assert segments_of([run]) == sent
