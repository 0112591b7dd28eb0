"""The ``kafka-capture`` Spark data source (PySpark's Python Data Source API).

::

    from pipeline.datasource import KafkaCaptureDataSource
    spark.dataSource.register(KafkaCaptureDataSource)
    df = spark.read.format("kafka-capture").load(["tests/golden", "traffic.pcapng"])

Paths are files or folders (searched recursively); a file is pcap/pcapng when its magic
number says so, a capture file (``kafka-specgen capture``'s JSON lines) when it ends in
``.jsonl``/``.json`` or is named explicitly. One row per frame, columns
``pipeline.frames.COLUMNS`` (``error`` is set on bytes that are not a whole frame).

Partitions: one per pcap file (a TCP stream needs its file's packets together), and one per
``splitBytes`` (default 64 MiB) of a capture file (its lines are independent). Options
(strings, as Spark passes them): ``splitBytes``, ``brokerPorts`` (comma-separated: which
side of a connection without a handshake in the pcap is the broker), ``batchRows``.
"""

from __future__ import annotations

import json
import os
from typing import Any, Iterator

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from .frames import COLUMNS, SCHEMA_DDL, capture_rows

CAPTURE_SUFFIXES = (".jsonl", ".json")


class CapturePartition(InputPartition):  # type: ignore[misc]
    def __init__(self, path: str, kind: str, start: int = 0, end: int | None = None) -> None:
        super().__init__((path, kind, start, end))
        self.path, self.kind, self.start, self.end = path, kind, start, end


def input_files(paths: list[str]) -> list[tuple[str, str]]:
    """``(path, "pcap" | "capture")`` of every input file, sorted within each folder."""
    from .pcap import is_pcap

    found: list[tuple[str, str]] = []
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs.sort()
                for name in sorted(files):
                    full = os.path.join(root, name)
                    if is_pcap(full):
                        found.append((full, "pcap"))
                    elif name.endswith(CAPTURE_SUFFIXES):
                        found.append((full, "capture"))
        elif os.path.isfile(path):
            found.append((path, "pcap" if is_pcap(path) else "capture"))
        else:
            raise FileNotFoundError(f"kafka-capture: no such file or folder: {path}")
    return found


def option_paths(options: dict[str, str]) -> list[str]:
    if "paths" in options:  # load([a, b]) arrives as JSON
        return [str(p) for p in json.loads(options["paths"])]
    if "path" in options:
        return [options["path"]]
    raise ValueError("kafka-capture: no path given")


class KafkaCaptureDataSource(DataSource):  # type: ignore[misc]
    @classmethod
    def name(cls) -> str:
        return "kafka-capture"

    def schema(self) -> str:
        return SCHEMA_DDL

    def reader(self, schema: Any) -> "KafkaCaptureReader":
        return KafkaCaptureReader(dict(self.options))


class KafkaCaptureReader(DataSourceReader):  # type: ignore[misc]
    def __init__(self, options: dict[str, str]) -> None:
        lowered = {k.lower(): v for k, v in options.items()}
        self.paths = option_paths(lowered)
        self.split_bytes = max(1, int(lowered.get("splitbytes", 64 << 20)))
        ports = lowered.get("brokerports", "")
        self.broker_ports = tuple(int(p) for p in ports.split(",") if p.strip())
        self.batch_rows = max(1, int(lowered.get("batchrows", 8192)))

    def partitions(self) -> list[CapturePartition]:
        parts: list[CapturePartition] = []
        for path, kind in input_files(self.paths):
            size = os.path.getsize(path)
            if kind == "pcap" or size <= self.split_bytes:
                parts.append(CapturePartition(path, kind))
                continue
            for start in range(0, size, self.split_bytes):
                parts.append(
                    CapturePartition(path, kind, start, min(size, start + self.split_bytes))
                )
        return parts or [CapturePartition("", "none")]

    def read(self, partition: CapturePartition) -> Iterator[Any]:
        import pyarrow as pa

        if partition.kind == "none":
            return
        if partition.kind == "pcap":
            from .pcap import pcap_rows

            rows: Any = iter(pcap_rows(partition.path, self.broker_ports))
        else:
            rows = capture_rows(partition.path, partition.start, partition.end)
        schema = arrow_schema()
        while True:
            batch = [row for _, row in zip(range(self.batch_rows), rows)]
            if not batch:
                return
            columns = list(zip(*batch))
            yield pa.RecordBatch.from_arrays(
                [pa.array(col, type=field.type) for col, field in zip(columns, schema)],
                schema=schema,
            )


def arrow_schema() -> Any:
    import pyarrow as pa

    types = {
        "string": pa.string(),
        "double": pa.float64(),
        "int": pa.int32(),
        "binary": pa.binary(),
    }
    fields = [pa.field(n, types[t]) for n, t in (p.split(" ") for p in SCHEMA_DDL.split(", "))]
    assert tuple(f.name for f in fields) == COLUMNS
    return pa.schema(fields)
