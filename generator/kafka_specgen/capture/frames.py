"""The capture format, owned here: Kafka frames cut out of byte streams, request headers,
request/response pairing, and the lines of capture files (reading and writing). The proxy
(``capture.proxy``), pcap reading (``capture.pcap``) and the Spark job all use it.
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
import math
import os
import struct
from collections import deque
from typing import Any, Iterable, Iterator, NamedTuple, Optional

from ..api_keys import ApiKey
from .columns import Bytes, OptDouble, OptInt, OptStr, Str, ddl

#: Frames larger than this (Kafka's socket.request.max.bytes) mean the stream is not Kafka
#: or lost sync: the proxy stops recording that stream, ``split_stream`` makes the rest
#: of it one error row.
MAX_FRAME_SIZE = 100 * 1024 * 1024

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")

#: Where a row was read (``Row.source``).
CAPTURE, PCAP, REQUEST_LOG = "capture", "pcap", "request log"


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
    if not (api_key == ApiKey.CONTROLLED_SHUTDOWN and api_version == 0) and len(frame) >= 10:
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

    def row(
        self,
        conn: str,
        ts: float | None,
        direction: str,
        frame: bytes,
        ends: Ends = (None, None),
        source: str = CAPTURE,
    ) -> Row:
        """The row of one whole frame of this connection (``direction`` ``request`` or
        ``response``): a request's header facts, or a response's from its request."""
        client, broker = ends
        if direction == "request":
            api_key, api_version, correlation_id, client_id = self.request(frame)
            src, dst = client, broker
        else:
            correlation_id, (api_key, api_version, client_id) = self.response(frame)
            src, dst = broker, client
        return Row(
            conn,
            ts,
            src,
            dst,
            direction,
            api_key,
            api_version,
            correlation_id,
            client_id,
            frame,
            None,
            source,
        )

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


def capture_line(row: Row) -> str:
    """One line of a capture file (with its newline) for a frame's row: its connection's
    number is what follows the last ``#`` of ``row.conn`` (a row read from a capture file
    is written back as it was read)."""
    conn = row.conn.rpartition("#")[2]
    if not conn.isdigit():
        raise ValueError(f"row {row.conn!r} names no connection number: not a frame's row")
    record = {
        "ts": row.ts,
        "conn": int(conn),
        **({"src": row.src, "dst": row.dst} if row.src or row.dst else {}),
        "dir": row.direction,
        "api_key": row.api_key,
        "api_version": row.api_version,
        "correlation_id": row.correlation_id,
        "client_id": row.client_id,
        "frame": row.frame.hex(),
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
    frame: Bytes  # request log entries: the entry's JSON text (no bytes were captured)
    error: OptStr  # set on bytes that are not a whole frame
    source: Str = CAPTURE  # CAPTURE, PCAP or REQUEST_LOG: where the row was read


#: ``(client, broker)``: a connection's two ends, ``"host:port"`` each (None: unknown).
Ends = tuple[Optional[str], Optional[str]]


def error_row(
    conn: str,
    frame: bytes,
    error: str,
    source: str = CAPTURE,
    *,
    ts: float | None = None,
    ends: Ends = (None, None),
    direction: str | None = None,
) -> Row:
    """The row of bytes that are not a whole frame (``error`` says why): no header facts."""
    src, dst = ends if direction != "response" else ends[::-1]
    return Row(conn, ts, src, dst, direction, None, None, None, None, frame, error, source)


#: The data source's columns and Spark DDL, from ``Row``.
COLUMNS = Row._fields
SCHEMA_DDL = ddl(Row)


# --- capture files (JSON lines of ``kafka-specgen capture``) ----------------------------------

#: The longest capture line read: a frame of ``MAX_FRAME_SIZE`` bytes in hex, and the rest
#: of its record. A longer line is an error row holding its first ``KEPT_BYTES``.
MAX_LINE = 2 * MAX_FRAME_SIZE + 4096
#: How much of an unreadable line (or damaged file region) an error row keeps.
KEPT_BYTES = 64 * 1024

_INT_RANGES = {
    "api_key": (-(2**15), 2**15 - 1),
    "api_version": (-(2**15), 2**15 - 1),
    "correlation_id": (-(2**31), 2**31 - 1),
}


class BadRecord(ValueError):
    """A capture line whose record cannot be a frame (a wrong type or an impossible value)."""


def capture_line_row(line: bytes, name: str, line_no: int) -> Row:
    """One JSON line of a capture file -> a row (an error row if the line is damaged: not
    JSON, a key missing, a wrong type, a number out of its field's range)."""
    try:
        rec = json.loads(line)
        if not isinstance(rec, dict):
            raise BadRecord(f"a JSON {type(rec).__name__}, not an object")
        text = rec["frame"]
        if not isinstance(text, str):
            raise BadRecord(f"frame is {_kind(text)}, not hex text")
        frame = bytes.fromhex(text)
        direction = rec["dir"]
        if direction not in ("request", "response"):
            raise BadRecord(f"dir {direction!r}: request or response")
        conn = rec["conn"]
        if isinstance(conn, bool) or not isinstance(conn, int):
            raise BadRecord(f"conn is {_kind(conn)}, not an integer")
        ts = rec["ts"]
        if isinstance(ts, bool) or not isinstance(ts, (int, float)) or not math.isfinite(ts):
            raise BadRecord(f"ts is {_kind(ts)}, not a finite number")
        return Row(
            f"{name}#{conn}",
            float(ts),
            _opt_str(rec, "src"),
            _opt_str(rec, "dst"),
            direction,
            _opt_int(rec, "api_key"),
            _opt_int(rec, "api_version"),
            _opt_int(rec, "correlation_id"),
            _opt_str(rec, "client_id"),
            frame,
            None,
        )
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        what = "key missing" if isinstance(exc, KeyError) else type(exc).__name__
        return line_error(name, line_no, line, f"not a capture record ({what}: {exc})")


def line_error(name: str, line_no: int, line: bytes, why: str, source: str = CAPTURE) -> Row:
    """The error row of a line that cannot be read (its first ``KEPT_BYTES`` kept)."""
    kept = bytes(line.rstrip(b"\r\n")[:KEPT_BYTES])
    return error_row(f"{name}#line{line_no}", kept, f"{name} line {line_no}: {why}", source)


def _kind(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def _opt_int(rec: dict[str, Any], key: str) -> int | None:
    value = rec.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRecord(f"{key} is {_kind(value)}, not an integer")
    low, high = _INT_RANGES[key]
    if not low <= value <= high:
        raise BadRecord(f"{key} {value} outside {low}..{high}")
    return value


def _opt_str(rec: dict[str, Any], key: str) -> str | None:
    value = rec.get(key)
    if value is not None and not isinstance(value, str):
        raise BadRecord(f"{key} is {_kind(value)}, not text")
    return value


def capture_rows(
    path: str, start: int = 0, end: int | None = None, name: str | None = None
) -> Iterator[Row]:
    """Rows of the lines of a capture file that start in the byte range ``[start, end)``.

    Ranges that tile a file read every line exactly once (Hadoop's rule: a range skips the
    line that started before it and reads the line that crosses its end). A line longer
    than ``MAX_LINE`` is an error row; reading goes on after it.
    """
    name = name or os.path.basename(path)
    for line_no, line, size in file_lines(path, start, end, MAX_LINE):
        if size > MAX_LINE:
            yield line_error(name, line_no, line, f"a line of {size} bytes, more than {MAX_LINE}")
        elif line.strip():
            yield capture_line_row(line, name, line_no)


def file_lines(
    path: str, start: int = 0, end: int | None = None, limit: int = MAX_LINE
) -> Iterator[tuple[int, bytes, int]]:
    """``(line number, line, its size)`` of the lines starting in ``[start, end)``; a line
    longer than ``limit`` is given as its first ``KEPT_BYTES`` (never read whole)."""
    with open(path, "rb") as f:
        line_no = 0
        if start > 0:
            f.seek(start - 1)
            _read_line(f, 0)  # the rest of a line that belongs to the range before
        pos = f.tell()
        if start > 0:
            line_no = _count_lines(path, pos)
        while end is None or pos < end:
            line, size = _read_line(f, limit)
            if not size:
                break
            line_no += 1
            pos += size
            yield line_no, line, size


def _read_line(f: Any, limit: int) -> tuple[bytes, int]:
    """The next line, whole if at most ``limit`` bytes, else its first ``KEPT_BYTES``; and
    its size. The rest of a long line is skipped in chunks."""
    line: bytes = f.readline(limit + 1)
    size = len(line)
    if size <= limit or line.endswith(b"\n"):
        return line, size
    kept = line[:KEPT_BYTES]
    while not line.endswith(b"\n"):
        line = f.readline(1 << 20)
        if not line:
            break
        size += len(line)
    return kept, size


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
