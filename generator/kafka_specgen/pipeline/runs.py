"""How the TCP segments of pcap files travel between the pipeline's Spark stages: as
*segment runs*, the segments of one connection read from one file packed into a few rows,
instead of a row per segment.

Reassembly needs every segment of a connection in one place, from every file of a
rotated capture: the data source reads each pcap file in a partition of its own, and
Spark shuffles the segments by connection. Spark's cost is per row (conversion to and
from Arrow, hashing, serialising, sorting): a row per segment made the shuffle cost about
as much CPU as decoding itself. A ``SegmentRun`` holds the facts of its segments packed
in one binary column (``SEGMENT``: time stamp, sequence number, flags, packet number,
payload size and direction) and their payloads in another, so a file's million segments
travel as a few thousand rows; ``segments_of`` unpacks them as ``pcap.Segment`` again.

A damaged part of a file (a ``Segment`` with ``error``) is a run of its own. The runs of a
connection and file are numbered (``part``): the reader flushes what it holds when it
holds ``FLUSH_BYTES``, so a large file is never held whole.
"""

from __future__ import annotations

import struct
from typing import Iterable, Iterator, NamedTuple

from ..capture.columns import Bytes, Int, OptStr, Str
from ..capture.pcap import Segment, capture_order, connection_key

#: A segment's facts: ts (double), seq (uint32), flags (uint8), packet (int64), payload
#: size (uint32), sent by the connection's ``low`` end (bool).
SEGMENT = struct.Struct("<dIBqI?")
#: The reader emits its runs when it holds this many bytes.
FLUSH_BYTES = 32 << 20


class SegmentRun(NamedTuple):
    """Segments of one connection read from one file, in the file's order."""

    low: Str  # the connection's endpoints (``pcap.connection_key``); "" for a damaged part
    high: Str
    file: Str
    file_no: Int
    part: Int  # the runs of one connection and file, in order
    segments: Bytes  # ``SEGMENT`` per segment
    payloads: Bytes  # their payloads, one after the other
    error: OptStr = None  # a damaged part of the file: one segment, its bytes as payload


class _Open:
    """A connection's run being collected."""

    __slots__ = ("facts", "payloads", "part")

    def __init__(self) -> None:
        self.facts = bytearray()
        self.payloads: list[bytes] = []
        self.part = 0


def segment_runs(
    segments: Iterable[Segment], flush_bytes: int = FLUSH_BYTES
) -> Iterator[list[SegmentRun]]:
    """The runs of the segments of one file (as ``pcap.read_segments`` gives them), in
    lists of about ``flush_bytes``."""
    pack = SEGMENT.pack
    runs: dict[tuple[str, str], _Open] = {}
    done: list[SegmentRun] = []
    held = 0
    file, file_no = "", 0
    for s in segments:
        file, file_no = s.file, s.file_no
        if s.error is not None:
            facts = pack(s.ts, s.seq, s.flags, s.packet, len(s.payload), True)
            done.append(SegmentRun("", "", file, file_no, 0, facts, s.payload, s.error))
        else:
            key = connection_key(s)
            run = runs.get(key)
            if run is None:
                run = runs[key] = _Open()
            run.facts += pack(s.ts, s.seq, s.flags, s.packet, len(s.payload), s.src == key[0])
            run.payloads.append(s.payload)
        held += SEGMENT.size + len(s.payload)
        if held >= flush_bytes:
            yield done + _close(runs, file, file_no)
            done, held = [], 0
    last = done + _close(runs, file, file_no)
    if last:
        yield last


def _close(runs: dict[tuple[str, str], _Open], file: str, file_no: int) -> list[SegmentRun]:
    out = []
    for (low, high), run in runs.items():
        if run.payloads:
            payloads = b"".join(run.payloads)
            out.append(SegmentRun(low, high, file, file_no, run.part, bytes(run.facts), payloads))
            run.facts, run.payloads, run.part = bytearray(), [], run.part + 1
    return out


def segments_of(runs: Iterable[SegmentRun]) -> list[Segment]:
    """The segments of runs (of one connection, or several), in capture order."""
    out: list[Segment] = []
    for run in runs:
        low, high, file, file_no, payloads, error = (
            run.low,
            run.high,
            run.file,
            run.file_no,
            run.payloads,
            run.error,
        )
        at = 0
        for ts, seq, flags, packet, size, from_low in SEGMENT.iter_unpack(run.segments):
            src, dst = (low, high) if from_low else (high, low)
            payload = payloads[at : at + size]
            out.append(Segment(ts, src, dst, seq, flags, payload, file, file_no, packet, error))
            at += size
    out.sort(key=capture_order)
    return out
