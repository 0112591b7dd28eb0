"""Kafka frames cut out of a reassembled TCP stream that may have holes (``split_stream``),
and the rows of one connection, each response paired with its request
(``pair_frames``). pcap reading (``capture.pcap``) uses them; the live proxy cuts its
streams with ``frames.FrameSplitter``. Standard library only.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, NamedTuple

from .frames import _INT32, MAX_FRAME_SIZE, Pairer, Row, error_row


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
    source: str = "pcap",
) -> list[Row]:
    """Rows of one connection: requests and responses, each response paired with its
    request (``Pairer``), in time order (a request before its response)."""
    rows: list[Row] = []
    pairer = Pairer()
    ends = (client, broker)
    for direction, frames in (("request", requests), ("response", responses)):
        for ts, frame, error in frames:
            if error is None:
                rows.append(pairer.row(conn, ts, direction, frame, ends, source))
            else:
                rows.append(
                    error_row(conn, frame, error, source, ts=ts, ends=ends, direction=direction)
                )
    rows.sort(key=lambda r: (r.ts if r.ts is not None else 0.0, r.direction != "request"))
    return rows
