"""The ``kafka-capture`` Spark data source (PySpark's Python Data Source API), and
``read_frames``: the frames of capture files and pcap/pcapng files as one DataFrame.

::

    from kafka_specgen.pipeline.datasource import read_frames
    df = read_frames(spark, ["tests/golden", "cap0.pcap", "cap1.pcap"])

Paths are files or folders (searched recursively); a file is pcap/pcapng when its magic
number says so, a capture file (``kafka-specgen capture``'s JSON lines) when it ends in
``.jsonl``/``.json`` or is named explicitly. One row per frame, columns
``capture.frames.Row`` (``error`` is set on bytes that are not a whole frame).

Capture files and request logs are read as frames by the data source, in pieces of at most
``splitBytes`` (default 64 MiB) of a file (its lines are independent), packed into about
equal partitions, at least ``minPartitions`` of them where there are enough pieces: a
folder of small files is a task per core, not per file. pcap files are one capture: a TCP
stream may go on in the next of a set of rotated files. The data source reads the TCP
segments of each pcap file in its own partition, packed as segment runs (option ``rows``
= ``runs``: ``runs.SegmentRun``, the segments of one connection in one file in a few
rows); ``read_frames`` shuffles the runs by connection, unpacks each connection's
segments, puts them in capture order and reassembles them with
``capture.pcap.reassemble`` (``mapInArrow``), so a connection's segments are taken from
every file.

Options of the data source (strings, as Spark passes them): ``rows`` (``frames``, the
default: capture files and request logs only; ``runs`` or ``segments``, a row per TCP
segment: pcap files only), ``splitBytes``, ``minPartitions``, ``batchRows``.
``read_frames`` takes ``broker_ports`` (comma-separated: which side of a connection
without a handshake in the pcap is the broker).
"""

from __future__ import annotations

import json
import os
from functools import partial
from itertools import groupby
from typing import Any, Callable, Iterable, Iterator, NamedTuple, Sequence

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from ..capture.columns import arrow_schema, batch_of, rows_of, to_batches
from ..capture.frames import SCHEMA_DDL, Row, capture_rows
from ..capture.inputs import PCAP, REQUEST_LOG, input_files


class Piece(NamedTuple):
    """A byte range of a capture file or request log, or a whole pcap file (the
    ``file_no``-th read)."""

    path: str
    kind: str
    start: int = 0
    end: int | None = None
    file_no: int = 0

    @property
    def size(self) -> int:
        return (self.end if self.end is not None else os.path.getsize(self.path)) - self.start


class CapturePartition(InputPartition):
    """The pieces one task reads, one after the other."""

    def __init__(self, pieces: Sequence[Piece]) -> None:
        super().__init__(tuple(pieces))
        self.pieces = list(pieces)


def pack(pieces: Sequence[Piece], bins: int) -> list[list[Piece]]:
    """``pieces`` in at most ``bins`` groups of about equal size (largest first into the
    smallest group): small files share a task instead of paying for one each."""
    groups: list[list[Piece]] = [[] for _ in range(max(1, min(bins, len(pieces))))]
    sizes = [0] * len(groups)
    for piece in sorted(pieces, key=lambda p: -p.size):
        smallest = sizes.index(min(sizes))
        groups[smallest].append(piece)
        sizes[smallest] += piece.size
    return [sorted(g, key=lambda p: (p.path, p.start)) for g in groups if g]


def option_paths(options: dict[str, str]) -> list[str]:
    if "paths" in options:  # load([a, b]) arrives as JSON
        return [str(p) for p in json.loads(options["paths"])]
    if "path" in options:
        return [options["path"]]
    raise ValueError("kafka-capture: no path given")


class KafkaCaptureDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "kafka-capture"

    def schema(self) -> str:
        from ..capture.columns import ddl
        from ..capture.pcap import SEGMENT_DDL
        from .runs import SegmentRun

        rows = _rows_option(dict(self.options))
        return {"segments": SEGMENT_DDL, "runs": ddl(SegmentRun)}.get(rows, SCHEMA_DDL)

    def reader(self, schema: Any) -> "KafkaCaptureReader":
        return KafkaCaptureReader(dict(self.options))


class KafkaCaptureReader(DataSourceReader):
    def __init__(self, options: dict[str, str]) -> None:
        lowered = {k.lower(): v for k, v in options.items()}
        self.paths = option_paths(lowered)
        self.rows = _rows_option(lowered)
        self.split_bytes = max(1, int(lowered.get("splitbytes", 64 << 20)))
        self.batch_rows = max(1, int(lowered.get("batchrows", 8192)))
        self.min_partitions = max(1, int(lowered.get("minpartitions", 1)))

    def partitions(self) -> list[CapturePartition]:
        parts: list[CapturePartition] = []
        pieces: list[Piece] = []
        for file_no, (path, kind) in enumerate(input_files(self.paths)):
            if (kind == PCAP) != (self.rows != "frames"):
                raise ValueError(
                    f"kafka-capture: {path} is a {kind} file, and rows={self.rows} reads "
                    + (
                        "capture files and request logs only"
                        if self.rows == "frames"
                        else "pcap files only"
                    )
                    + ": read_frames(spark, paths) reads both (pcap: TCP streams across files)"
                )
            size = os.path.getsize(path)
            if kind == PCAP:
                parts.append(CapturePartition([Piece(path, kind, file_no=file_no)]))
                continue
            for start in range(0, max(size, 1), self.split_bytes):
                pieces.append(Piece(path, kind, start, min(size, start + self.split_bytes)))
        total = sum(p.size for p in pieces)
        bins = max(self.min_partitions, -(-total // self.split_bytes))
        parts += [CapturePartition(group) for group in pack(pieces, bins)]
        return parts or [CapturePartition([])]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        if not isinstance(partition, CapturePartition):
            raise TypeError(f"kafka-capture: not one of its partitions: {partition!r}")
        if len(partition.pieces) == 1 and partition.pieces[0].kind == PCAP:
            from ..capture.pcap import Segment, read_segments
            from .runs import SegmentRun, segment_runs

            piece = partition.pieces[0]
            segments = read_segments(piece.path, piece.file_no)
            if self.rows == "segments":
                return to_batches(segments, arrow_schema(Segment), self.batch_rows)
            schema = arrow_schema(SegmentRun)
            return (batch_of(runs, schema) for runs in segment_runs(segments))
        return to_batches(self._rows(partition.pieces), arrow_schema(Row), self.batch_rows)

    @staticmethod
    def _rows(pieces: Sequence[Piece]) -> Iterator[Row]:
        from ..capture.requestlog import log_rows

        for piece in pieces:
            read = log_rows if piece.kind == REQUEST_LOG else capture_rows
            yield from read(piece.path, piece.start, piece.end)


def _rows_option(options: dict[str, str]) -> str:
    rows = {k.lower(): v for k, v in options.items()}.get("rows", "frames").lower()
    if rows not in ("frames", "runs", "segments"):
        raise ValueError(f"kafka-capture: rows={rows!r}: frames, runs or segments")
    return rows


# --- frames of capture files and pcap files ------------------------------------------------------


#: What the frames go through in the Python worker that read or reassembled them: rows
#: (``frames.Row``) in, Arrow record batches (of the schema given with it) out.
RowFunction = Callable[[Iterable[Row]], Iterator[Any]]


def as_batches(rows: Iterable[Row]) -> Iterator[Any]:
    """The ``RowFunction`` that changes nothing: the frames as batches of ``Row``."""
    return to_batches(rows, arrow_schema(Row))


def read_frames(
    spark: Any,
    paths: Sequence[Any],
    broker_ports: str = "",
    tls_keylog: str | None = None,
    then: RowFunction = as_batches,
    schema: str = SCHEMA_DDL,
) -> Any:
    """A DataFrame of the frames of the capture files, request logs and pcap files in
    ``paths``, through ``then`` (giving rows of ``schema``; by default the frames as
    they are, ``SCHEMA_DDL``).

    Every pcap file is read in its own partition (its TCP segments, as segment runs); the
    runs are shuffled by connection, and each connection's segments are put in capture
    order and reassembled (``reassemble_runs``); TLS connections are decrypted with the
    keys of ``tls_keylog`` (a path every executor can read). ``then`` runs on the frames in
    the Python worker that made them: the frames of pcap files go back to the JVM once,
    decoded.
    """
    spark.dataSource.register(KafkaCaptureDataSource)
    files = input_files([str(p) for p in paths])
    captures = [path for path, kind in files if kind != PCAP]
    pcaps = [path for path, kind in files if kind == PCAP]
    parts = []
    if captures:
        parallelism = str(spark.sparkContext.defaultParallelism)
        frames = (
            spark.read.format("kafka-capture").option("minPartitions", parallelism).load(captures)
        )
        parts.append(
            frames
            if then is as_batches
            else frames.mapInArrow(partial(frames_then, then=then), schema)
        )
    if pcaps:
        runs = spark.read.format("kafka-capture").option("rows", "runs").load(pcaps)
        ports = tuple(int(p) for p in broker_ports.split(",") if p.strip())
        parts.append(
            runs.repartition("low", "high")
            .sortWithinPartitions("low", "high", "file_no", "part")
            .mapInArrow(
                partial(reassemble_runs, broker_ports=ports, tls_keylog=tls_keylog, then=then),
                schema,
            )
        )
    if not parts:
        return spark.createDataFrame([], schema)
    frames = parts[0]
    for part in parts[1:]:
        frames = frames.unionByName(part)
    return frames


def frames_then(batches: Iterable[Any], then: RowFunction) -> Iterator[Any]:
    """``mapInArrow``: batches of frames through ``then``."""
    return then(rows_of(batches, Row))


#: Frames per task when the driver reads the input: below it, one task (one Python worker
#: to start) costs less than the work it would share.
ROWS_PER_TASK = 10_000


def read_on_driver(
    spark: Any,
    paths: Sequence[Any],
    broker_ports: str = "",
    tls_keylog: str | None = None,
    then: RowFunction = as_batches,
    schema: str = SCHEMA_DDL,
) -> Any:
    """``read_frames`` for small input: the driver reads the files itself (the same rows:
    ``capture_rows``, ``log_rows``, ``pcap_rows``) and hands Spark an Arrow table, one task
    per ``ROWS_PER_TASK`` frames (at most one per core). No Python data source: its
    planning starts Python processes of its own, seconds on small input. ``then`` runs on
    the executors as in ``read_frames``."""
    import pyarrow as pa  # type: ignore[import-untyped]  # no stubs or py.typed

    from ..capture.pcap import pcap_rows
    from ..capture.requestlog import log_rows

    files = input_files([str(p) for p in paths])
    rows: list[Row] = []
    for path, kind in files:
        if kind != PCAP:
            rows += (log_rows if kind == REQUEST_LOG else capture_rows)(path)
    pcaps = [path for path, kind in files if kind == PCAP]
    if pcaps:
        ports = tuple(int(p) for p in broker_ports.split(",") if p.strip())
        rows += pcap_rows(pcaps, ports, _keys(tls_keylog))
    tasks = max(1, min(spark.sparkContext.defaultParallelism, -(-len(rows) // ROWS_PER_TASK)))
    per_task = max(1, -(-len(rows) // tasks))
    batches = list(to_batches(rows, arrow_schema(Row), per_task))
    table = pa.Table.from_batches(batches, schema=arrow_schema(Row))
    frames = spark.createDataFrame(table).coalesce(tasks)
    if then is as_batches:
        return frames
    return frames.mapInArrow(partial(frames_then, then=then), schema)


def _keys(tls_keylog: str | None) -> Any:
    """The TLS session keys of a key log file (None: no file)."""
    from ..capture.tls import read_keylog

    if tls_keylog is None:
        return None
    with open(tls_keylog, encoding="utf-8", errors="replace") as log:
        return read_keylog(log.read())


def reassemble_runs(
    batches: Iterable[Any],
    broker_ports: Sequence[int] = (),
    tls_keylog: str | None = None,
    then: RowFunction = as_batches,
) -> Iterator[Any]:
    """``mapInArrow``: batches of segment runs, sorted by connection and then by file and
    part -> the connections' frames through ``then``, reassembling (and decrypting) one
    connection at a time."""
    from ..capture.pcap import reassemble
    from .runs import SegmentRun, segments_of

    keys = _keys(tls_keylog)

    def rows() -> Iterator[Row]:
        runs = rows_of(batches, SegmentRun)
        for _, connection in groupby(runs, key=lambda run: (run.low, run.high)):
            yield from reassemble(segments_of(connection), broker_ports, keys)

    return then(rows())
