"""The capture format, owned here: Kafka frames cut out of byte streams, request headers,
request/response pairing, and the lines of capture files (reading and writing). The proxy
(``pipeline.capture``), pcap reading (``pipeline.pcap``) and the Spark job all use it.
Standard library only (no Spark).

A capture file (``kafka-specgen capture``'s output) holds one JSON line per frame::

    {"ts": 1718000000.123456, "conn": 1, "dir": "request", "api_key": 18, "api_version": 3,
     "correlation_id": 1, "client_id": "rdkafka", "frame": "0012000300000001..."}

(``capture_line`` writes one, ``capture_line_row`` reads one). A *row* is one frame (or
one piece of a stream that could not be cut into frames) as a tuple in the order of
``COLUMNS``, the rows of the ``kafka-capture`` data source:

``conn``            ``"<file name>#<connection>"`` (unique across the files of one read): the
                    connection's number in a capture file; in pcap files the number of its
                    first packet (in the file it starts in)
``ts``              Unix time (s) when the frame's last byte was seen
``src``, ``dst``    ``"ip:port"`` of sender and receiver (``None`` in capture files older than 0.2.0)
``direction``       ``"request"`` (client to broker) or ``"response"``
``api_key``, ``api_version``  a request's own; a response's are its request's
``correlation_id``, ``client_id``  from the request header (a response repeats its request's
                    client id)
``frame``           the bytes after the 4-byte size prefix (header and body)
``error``           ``None``, or why these bytes are not a whole frame (a capture gap, a stream
                    that is not Kafka, a bad line in a capture file): such rows go to
                    ``errors/`` so that nothing read is lost.

Streams: ``FrameSplitter`` cuts a live stream fed in arbitrary chunks (the proxy);
``split_stream`` cuts a reassembled stream that may have holes (pcap). ``Pairer`` gives a
response the api key, version and client id of its request (by correlation id, oldest
first), for both.
"""

from __future__ import annotations

import json
import os
import struct
from collections import deque
from typing import Any, Iterable, Iterator, NamedTuple

from .columns import Bytes, OptDouble, OptInt, OptStr, Str, ddl

#: Frames larger than this (Kafka's socket.request.max.bytes) mean the stream is not Kafka
#: or lost sync: the proxy stops recording that stream, ``split_stream`` makes the rest
#: of it one error row.
MAX_FRAME_SIZE = 100 * 1024 * 1024

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")


# --- headers and pairing ----------------------------------------------------------------------


def parse_request_header(frame: bytes) -> tuple[int | None, int | None, int | None, str | None]:
    """``(api_key, api_version, correlation_id, client_id)`` of a request frame.

    Whatever cannot be read (a frame too short) is ``None``. ``client_id`` is a classic
    nullable string in every request header version that has it (v1 and v2); only
    ControlledShutdown v0 uses header v0, which has none.
    """
    if len(frame) < 8:
        api_key = _INT16.unpack_from(frame, 0)[0] if len(frame) >= 2 else None
        api_version = _INT16.unpack_from(frame, 2)[0] if len(frame) >= 4 else None
        return api_key, api_version, None, None
    api_key, api_version = _INT16.unpack_from(frame, 0)[0], _INT16.unpack_from(frame, 2)[0]
    correlation_id = _INT32.unpack_from(frame, 4)[0]
    client_id = None
    if not (api_key == 7 and api_version == 0) and len(frame) >= 10:
        (length,) = _INT16.unpack_from(frame, 8)
        if 0 <= length <= len(frame) - 10:
            client_id = frame[10 : 10 + length].decode("utf-8", errors="replace")
    return int(api_key), int(api_version), int(correlation_id), client_id


def response_correlation_id(frame: bytes) -> int | None:
    """The correlation id a response frame starts with (``None`` if it is too short)."""
    return int(_INT32.unpack_from(frame, 0)[0]) if len(frame) >= 4 else None


#: What a response gets from its request: ``(api_key, api_version, client_id)``.
RequestFacts = tuple[int | None, int | None, str | None]


class Pairer:
    """Pairs the responses of one connection with its requests by correlation id: a
    response gets the api key, version and client id of the oldest request with its
    correlation id not yet answered (``None`` each if there is none)."""

    def __init__(self) -> None:
        self.pending: dict[int, deque[RequestFacts]] = {}

    def request(self, frame: bytes) -> tuple[int | None, int | None, int | None, str | None]:
        """The request's header (``parse_request_header``), remembered for its response."""
        api_key, api_version, correlation_id, client_id = header = parse_request_header(frame)
        if correlation_id is not None:
            self.pending.setdefault(correlation_id, deque()).append(
                (api_key, api_version, client_id)
            )
        return header

    def response(self, frame: bytes) -> tuple[int | None, RequestFacts]:
        """``(correlation_id, (api_key, api_version, client_id) of its request)``."""
        correlation_id = response_correlation_id(frame)
        waiting = self.pending.get(correlation_id) if correlation_id is not None else None
        if not waiting:
            return correlation_id, (None, None, None)
        facts = waiting.popleft()
        if not waiting and correlation_id is not None:
            del self.pending[correlation_id]
        return correlation_id, facts


class FrameSplitter:
    """Cuts size-prefixed frames off a live byte stream fed in arbitrary chunks. A size
    outside ``0..MAX_FRAME_SIZE`` sets ``broken`` (the reason) and ends the splitting."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.broken: str | None = None

    def feed(self, data: bytes) -> list[bytes]:
        if self.broken is not None:
            return []
        self.buffer += data
        frames: list[bytes] = []
        pos = 0
        while len(self.buffer) - pos >= 4:
            (size,) = _INT32.unpack_from(self.buffer, pos)
            if size < 0 or size > MAX_FRAME_SIZE:
                self.broken = f"frame size {size} outside 0..{MAX_FRAME_SIZE}"
                self.buffer.clear()
                return frames
            if len(self.buffer) - pos - 4 < size:
                break
            frames.append(bytes(self.buffer[pos + 4 : pos + 4 + size]))
            pos += 4 + size
        del self.buffer[:pos]
        return frames


# --- capture-file lines -------------------------------------------------------------------------


def capture_line(
    ts: float | None,
    conn: int,
    direction: str | None,
    api_key: int | None,
    api_version: int | None,
    correlation_id: int | None,
    client_id: str | None,
    frame: bytes,
    *,
    client: str | None = None,
    broker: str | None = None,
) -> str:
    """One line of a capture file (with its newline). ``client`` and ``broker`` are the
    two ends' ``host:port``, written (as ``src`` and ``dst`` of the frame) when known."""
    ends = (client, broker) if direction == "request" else (broker, client)
    record = {
        "ts": ts,
        "conn": conn,
        **({"src": ends[0], "dst": ends[1]} if client or broker else {}),
        "dir": direction,
        "api_key": api_key,
        "api_version": api_version,
        "correlation_id": correlation_id,
        "client_id": client_id,
        "frame": frame.hex(),
    }
    return json.dumps(record, separators=(", ", ": ")) + "\n"


class Row(NamedTuple):
    """A row of the ``kafka-capture`` data source: one frame, where it was seen."""

    conn: Str
    ts: OptDouble
    src: OptStr  # "host:port" of the sender, where the capture says
    dst: OptStr
    direction: OptStr  # "request" or "response"
    api_key: OptInt
    api_version: OptInt
    correlation_id: OptInt
    client_id: OptStr
    frame: Bytes
    error: OptStr  # set on bytes that are not a whole frame


#: The data source's columns and Spark DDL, from ``Row``.
COLUMNS = Row._fields
SCHEMA_DDL = ddl(Row)


# --- capture files (JSON lines of ``kafka-specgen capture``) ----------------------------------


def capture_line_row(line: bytes, name: str, line_no: int) -> Row:
    """One JSON line of a capture file -> a row (an error row if the line is damaged)."""
    try:
        rec = json.loads(line)
        frame = bytes.fromhex(rec["frame"])
        direction = rec["dir"]
        if direction not in ("request", "response"):
            raise ValueError(f"dir {direction!r}")
        return Row(
            f"{name}#{int(rec['conn'])}",
            float(rec["ts"]),
            rec.get("src"),
            rec.get("dst"),
            direction,
            _opt_int(rec.get("api_key")),
            _opt_int(rec.get("api_version")),
            _opt_int(rec.get("correlation_id")),
            rec.get("client_id"),
            frame,
            None,
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return Row(
            f"{name}#line{line_no}",
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            bytes(line.rstrip(b"\r\n")),
            f"{name} line {line_no}: not a capture record ({type(exc).__name__}: {exc})",
        )


def _opt_int(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {value!r}")
    return value


def capture_rows(
    path: str, start: int = 0, end: int | None = None, name: str | None = None
) -> Iterator[Row]:
    """Rows of the lines of a capture file that start in the byte range ``[start, end)``.

    Ranges that tile a file read every line exactly once (Hadoop's rule: a range skips the
    line that started before it and reads the line that crosses its end).
    """
    name = name or os.path.basename(path)
    with open(path, "rb") as f:
        line_no = 0
        if start > 0:
            f.seek(start - 1)
            f.readline()  # the rest of a line that belongs to the range before
        pos = f.tell()
        if start > 0:
            line_no = _count_lines(path, pos)
        while end is None or pos < end:
            line = f.readline()
            if not line:
                break
            line_no += 1
            pos += len(line)
            if line.strip():
                yield capture_line_row(line, name, line_no)


def _count_lines(path: str, upto: int) -> int:
    """Lines before byte ``upto`` (for line numbers in error messages of a split file)."""
    count = 0
    with open(path, "rb") as f:
        remaining = upto
        while remaining > 0:
            chunk = f.read(min(remaining, 1 << 20))
            if not chunk:
                break
            count += chunk.count(b"\n")
            remaining -= len(chunk)
    return count


# --- byte streams -> frames ---------------------------------------------------------------


class Chunk(NamedTuple):
    """Contiguous bytes of one direction of a TCP stream, at a stream offset."""

    offset: int
    data: bytes
    ts: float


class StreamFrame(NamedTuple):
    ts: float
    frame: bytes
    error: str | None


def split_stream(chunks: Iterable[Chunk]) -> Iterator[StreamFrame]:
    """Cut one direction of a reassembled stream into frames.

    ``chunks`` are non-overlapping and in offset order; a hole between two chunks is bytes
    the capture missed. A frame's ``ts`` is the latest ``ts`` of the chunks holding its
    bytes. A frame with a hole in it becomes an error frame (its bytes as far as they were
    seen) and splitting goes on after it; a hole where a size prefix should be loses the
    frame boundaries, and the rest of the stream becomes one error frame, as does a size
    prefix outside ``0..MAX_FRAME_SIZE`` (not Kafka, or lost sync) and a frame the capture
    ended in.
    """
    runs = _runs(chunks)
    pos = 0  # stream offset where the next frame starts
    for i, (run_start, data, ends, stamps) in enumerate(runs):
        run_end = run_start + len(data)
        if pos >= run_end:
            continue  # a damaged frame already covered this run
        if pos < run_start:
            yield StreamFrame(
                stamps[-1],
                b"".join(r[1] for r in runs[i:]),
                f"lost frame boundaries: capture gap of {run_start - pos} bytes at stream "
                f"offset {pos} where a size prefix was due; "
                f"{sum(len(r[1]) for r in runs[i:])} bytes from offset {run_start} unread",
            )
            return
        ts_index = 0
        while pos < run_end:
            local = pos - run_start
            if run_end - pos < 4:
                if i == len(runs) - 1:
                    yield _tail(runs, i, local, pos, "a size prefix", ends, stamps)
                else:
                    rest = b"".join([data[local:], *(r[1] for r in runs[i + 1 :])])
                    yield StreamFrame(
                        stamps[-1],
                        rest,
                        f"lost frame boundaries: capture gap inside the size prefix at stream "
                        f"offset {pos}; {len(rest)} bytes unread",
                    )
                return
            (size,) = _INT32.unpack_from(data, local)
            if size < 0 or size > MAX_FRAME_SIZE:
                yield StreamFrame(
                    _ts(ends, stamps, local, len(data)),
                    b"".join([data[local:], *(r[1] for r in runs[i + 1 :])]),
                    f"frame size {size} at stream offset {pos} outside 0..{MAX_FRAME_SIZE} "
                    "(not Kafka, or lost sync); rest of the stream unread",
                )
                return
            frame_end = local + 4 + size
            if frame_end <= len(data):
                while ends[ts_index] <= local:
                    ts_index += 1
                yield StreamFrame(
                    _ts(ends, stamps, local, frame_end, ts_index), data[local + 4 : frame_end], None
                )
                pos += 4 + size
                continue
            if i == len(runs) - 1:
                yield _tail(runs, i, local, pos, f"a frame of {size} bytes", ends, stamps)
                return
            # a hole inside this frame: skip to where the frame ends and go on
            missing = _missing(runs, i, pos + 4 + size)
            yield StreamFrame(
                stamps[-1],
                data[local + 4 :],
                f"frame of {size} bytes at stream offset {pos} misses {missing} bytes "
                "(capture gap)",
            )
            pos += 4 + size
    return


def _runs(chunks: Iterable[Chunk]) -> list[tuple[int, bytes, list[int], list[float]]]:
    """Merge touching chunks: ``(start, bytes, piece ends (relative), piece ts)`` per run."""
    runs: list[tuple[int, bytes, list[int], list[float]]] = []
    parts: list[bytes] = []
    start = length = 0
    ends: list[int] = []
    stamps: list[float] = []
    for chunk in chunks:
        if not chunk.data:
            continue
        if parts and chunk.offset != start + length:
            runs.append((start, b"".join(parts), ends, stamps))
            parts, ends, stamps = [], [], []
        if not parts:
            start, length = chunk.offset, 0
        parts.append(chunk.data)
        length += len(chunk.data)
        ends.append(length)
        stamps.append(chunk.ts)
    if parts:
        runs.append((start, b"".join(parts), ends, stamps))
    return runs


def _ts(ends: list[int], stamps: list[float], a: int, b: int, first: int = 0) -> float:
    """The latest ts of the pieces that overlap ``[a, b)`` (relative offsets)."""
    i = first
    while ends[i] <= a:
        i += 1
    latest = stamps[i]
    while ends[i] < b:
        i += 1
        latest = max(latest, stamps[i])
    return latest


def _tail(
    runs: Any, i: int, local: int, pos: int, what: str, ends: Any, stamps: Any
) -> StreamFrame:
    data = runs[i][1]
    return StreamFrame(
        _ts(ends, stamps, local, len(data)),
        data[local:],
        f"stream ends {len(data) - local} bytes into {what} at stream offset {pos} "
        "(capture stopped or connection cut)",
    )


def _missing(runs: Any, i: int, frame_end: int) -> int:
    """Bytes of ``[end of run i, frame_end)`` that no run holds."""
    missing = 0
    pos = runs[i][0] + len(runs[i][1])
    for start, data, _, _ in runs[i + 1 :]:
        if start >= frame_end:
            break
        missing += start - pos
        pos = min(start + len(data), frame_end)
    return int(missing + max(0, frame_end - pos))


# --- pairing -------------------------------------------------------------------------------


def pair_frames(
    conn: str,
    client: str | None,
    broker: str | None,
    requests: Iterable[StreamFrame],
    responses: Iterable[StreamFrame],
) -> list[Row]:
    """Rows of one connection: requests and responses, each response paired with its
    request (``Pairer``), in time order (a request before its response)."""
    rows: list[Row] = []
    pairer = Pairer()
    for ts, frame, error in requests:
        if error is not None:
            rows.append(
                Row(conn, ts, client, broker, "request", None, None, None, None, frame, error)
            )
            continue
        api_key, api_version, correlation_id, client_id = pairer.request(frame)
        rows.append(
            Row(
                conn,
                ts,
                client,
                broker,
                "request",
                api_key,
                api_version,
                correlation_id,
                client_id,
                frame,
                None,
            )
        )
    for ts, frame, error in responses:
        if error is not None:
            rows.append(
                Row(conn, ts, broker, client, "response", None, None, None, None, frame, error)
            )
            continue
        correlation_id, (api_key, api_version, client_id) = pairer.response(frame)
        rows.append(
            Row(
                conn,
                ts,
                broker,
                client,
                "response",
                api_key,
                api_version,
                correlation_id,
                client_id,
                frame,
                None,
            )
        )
    rows.sort(key=lambda r: (r.ts if r.ts is not None else 0.0, r.direction != "request"))
    return rows
