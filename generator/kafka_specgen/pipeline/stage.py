"""The decoded frames every table is written from (``tables.Staged``): read
(``datasource.read_frames``, or ``read_on_driver`` for small input), decoded in the Python
worker that read or reassembled them (``decode.count_and_decode``), kept once (persist:
memory, then disk) and counted in one pass.

The counts come from one aggregation over the kept frames (frames per status and message,
the errors of unknown API keys and of TLS without keys, the record batches not read), so
the tables need no Spark job of their own to count: the job checks them against the rows
the tables hold (``job.Summary.nothing_lost``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Sequence

from ..capture.tls import NEEDS_KEYS
from .decode import DECODED_DDL, LOGGED, count_and_decode
from .tables import Staged, with_clients

#: What an error row of a frame of an API key the package does not know says.
UNKNOWN_API = "unknown api key"


@dataclass(frozen=True)
class Counts:
    """What the decoded frames hold."""

    frames_read: int
    decoded: int
    errors: int  # frames that did not decode
    logged: int  # request log entries (no bytes)
    unknown_api: int  # of the errors: frames of API keys the package does not know
    tls_without_keys: int  # of the errors: TLS connections without keys
    batches_read: int  # record batch entries found, read or not
    batch_errors: int  # of those, not read
    messages: dict[str, int] = field(default_factory=dict)  # decoded bodies per message


@dataclass(frozen=True)
class Decoded:
    """The decoded frames (``decode.DecodedRow``, kept), what they hold, and whether the
    driver read the input (``small``)."""

    frames: Any
    counts: Counts
    small: bool

    def staged(self, spark: Any, out: Path, say: Callable[[str], None]) -> Staged:
        """What the tables are written from: these frames, and with their clients."""
        return Staged(spark, self.frames, with_clients(self.frames), out, say, self.small)


def stage(
    spark: Any,
    inputs: Sequence[str | Path],
    package: str,
    *,
    broker_ports: str,
    tls_keylog: str | None,
    records: bool,
    say: Callable[[str], None],
) -> Decoded:
    """Read and decode ``inputs`` with the generated package ``package`` (shipped to the
    executors already), keep the decoded frames and count them."""
    from pyspark import StorageLevel

    from .datasource import read_frames, read_on_driver

    sc = spark.sparkContext
    read_counter = sc.accumulator(0)
    batch_counter = sc.accumulator(0)
    decode = partial(
        count_and_decode,
        package=package,
        counter=read_counter,
        batch_counter=batch_counter,
        records=records,
    )
    small = reads_on_driver(spark, inputs)
    read = read_on_driver if small else read_frames
    decoded = read(spark, inputs, broker_ports, tls_keylog, decode, DECODED_DDL)
    decoded = decoded.persist(StorageLevel.MEMORY_AND_DISK)
    say(f"reading and decoding {len(inputs)} input path(s)")
    counts = _count(_summary(decoded).collect(), read_counter.value, batch_counter.value)
    return Decoded(decoded, counts, small)


#: Input up to this size is small: in local mode the driver reads it
#: (``datasource.read_on_driver``) and writes its tables, and the job's own session is set
#: up for a quick start (``job.session_settings``).
SMALL_INPUT = 64 << 20


def small_input(files: Sequence[tuple[str, str]]) -> bool:
    """Whether input files (``capture.inputs.input_files``) are small."""
    import os

    return sum(os.path.getsize(path) for path, _ in files) <= SMALL_INPUT


def reads_on_driver(spark: Any, inputs: Sequence[str | Path]) -> bool:
    """Whether the driver reads the input: small input in local mode (where the driver's
    files are the executors')."""
    from ..capture.inputs import input_files

    if not spark.sparkContext.master.startswith("local"):
        return False
    return small_input(input_files([str(path) for path in inputs]))


def _summary(decoded: Any) -> Any:
    """Per status and message: frames, errors of unknown API keys and of TLS without keys,
    record batch entries not read."""
    from pyspark.sql import functions as F

    error = F.col("status") == "error"
    unread = F.size(F.filter("batches", lambda b: b["error"].isNotNull()))

    def count(condition: Any) -> Any:
        return F.sum(condition.cast("long"))

    return decoded.groupBy("status", "message").agg(
        F.count(F.lit(1)).alias("frames"),
        count(error & F.col("reason").contains(UNKNOWN_API)).alias("unknown_api"),
        count(error & F.col("reason").contains(NEEDS_KEYS)).alias("tls_without_keys"),
        F.sum(F.when(F.col("batches").isNull(), 0).otherwise(unread)).alias("batch_errors"),
    )


def _count(rows: list[Any], frames_read: int, batches_read: int) -> Counts:
    def total(column: str, status: str | None = None) -> int:
        return sum(int(r[column] or 0) for r in rows if status is None or r["status"] == status)

    return Counts(
        frames_read=int(frames_read),
        decoded=total("frames", "decoded"),
        errors=total("frames", "error"),
        logged=total("frames", LOGGED),
        unknown_api=total("unknown_api"),
        tls_without_keys=total("tls_without_keys"),
        batches_read=int(batches_read),
        batch_errors=total("batch_errors"),
        messages={
            r["message"]: int(r["frames"])
            for r in rows
            if r["status"] == "decoded" and r["message"] is not None
        },
    )
