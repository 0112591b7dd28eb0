"""The pipeline's job: captured traffic -> decoded Parquet tables, with PySpark.

``run_pipeline`` reads capture files and pcap/pcapng (``datasource.read_frames``: the
``kafka-capture`` data source, TCP streams of pcap files reassembled across files),
decodes every frame with a package generated from ``specs`` (``library.generated_package``;
default: the specs shipped with the tool) and shipped to the executors, re-encodes it and
compares the bytes, reads the record batches of Produce requests and Fetch responses
(``decode``), stages the decoded frames once, and writes each table from them
(``pipeline.tables``, one module per table).

Nothing is lost: frames read = decoded + frame errors, and record batches read = rows of
``batches/`` + batch errors; ``Summary.nothing_lost`` says whether both hold.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Sequence

from ..library import SpecSource
from ..capture.inputs import check_inputs
from .report import REPORT
from .tables import all_tables
from .target import Target
from .verdict import Verdict

#: Exit status when the counts disagree (a bug: something read was lost).
EXIT_LOST = 5
#: Exit status when the Spark job failed (one line says why).
EXIT_FAILED = 4


class JobFailed(RuntimeError):
    """The Spark job failed: ``line`` says why in one line, ``trace`` holds the traces."""

    def __init__(self, line: str, trace: Path) -> None:
        super().__init__(line)
        self.line, self.trace = line, trace


@dataclass
class Summary:
    """What a run wrote, with the counts that check nothing was lost."""

    package: str
    out: str
    records: bool  # record batches were read
    frames_read: int
    decoded: int
    errors: int  # frames that did not decode
    unknown_api_errors: int  # of those, frames of API keys the package does not know
    reencoded_equal: int
    mismatches: int
    batches_read: int
    batches: int  # rows of batches/
    batch_errors: int
    nothing_lost: bool
    usage_rows: int
    conformance_rows: int
    record_usage_rows: int
    message_tables: list[str]
    messages_without_schema: list[str]
    readiness: Verdict | None
    readiness_rows: int
    decode_s: float
    job_s: float
    report: str | None = None
    master: str = "?"
    startup_s: float = 0.0
    total_s: float = 0.0
    tables: list[str] = field(default_factory=list)
    spec_set: str = ""
    """The spec set the package was generated from (its label)."""
    logged: int = 0  # request log entries (no bytes to decode)
    tls_without_keys: int = 0  # error rows of TLS connections no key log was given for

    def exit_status(self, fail_on_unready: bool = False) -> int:
        """``EXIT_LOST`` if something was lost; with ``fail_on_unready``, the verdict's
        status (1: a client would break, 3: incomplete); else 0."""
        if not self.nothing_lost:
            return EXIT_LOST
        if fail_on_unready and self.readiness is not None:
            return self.readiness.exit_status()
        return 0

    def text(self) -> str:
        """The summary printed at the end of a run."""
        decoded = self.decoded
        pct = 100.0 * self.reencoded_equal / decoded if decoded else 100.0
        lost = "  <-- COUNTS DISAGREE: something was lost"
        logged = f" + {self.logged} request log entries" if self.logged else ""
        lines = [
            f"kafka-specgen pipeline: {self.frames_read} frames read = {decoded} decoded + "
            f"{self.errors} errors{logged}" + (" (nothing lost)" if self.nothing_lost else lost),
        ]
        if self.records:
            lines.append(
                f"  record batches: {self.batches_read} read = {self.batches} in batches/ + "
                f"{self.batch_errors} unreadable (in errors/); record_usage: "
                f"{self.record_usage_rows} rows"
            )
        lines += [
            f"  decoded with: {self.spec_set}",
            f"  conformance: {self.reencoded_equal}/{decoded} re-encoded byte-exact "
            f"({pct:.1f} %), {self.mismatches} mismatches, {self.conformance_rows} "
            "api/direction/version rows",
            f"  usage: {self.usage_rows} rows; messages: {len(self.message_tables)} tables; "
            f"errors: {self.errors + self.batch_errors} rows",
        ]
        if self.unknown_api_errors * 2 > self.frames_read:
            lines.append(
                f"  hint: {self.unknown_api_errors} of {self.frames_read} frames are of APIs "
                "the package has no codec for: decode with Kafka's whole spec set, --release "
                "X.Y (e.g. --release 3.9) or --specs PATH (e.g. "
                "clients/src/main/resources/common/message of a Kafka checkout)"
            )
        if self.tls_without_keys:
            lines.append(
                f"  hint: {self.tls_without_keys} error rows are of TLS connections: pass "
                "--tls-keylog FILE (an SSLKEYLOGFILE) to decrypt them"
            )
        if self.messages_without_schema:
            lines.append(
                "  no Spark schema (no messages/ table): " + ", ".join(self.messages_without_schema)
            )
        written = " ".join(self.tables + ([REPORT] if self.report else []))
        lines.append(
            f"  tables in {self.out}/: {written} (Spark {self.master}: start "
            f"{self.startup_s:.1f} s, job {self.job_s:.1f} s)"
        )
        if self.readiness is not None:
            lines.append("  readiness: " + self.readiness.text().replace("\n", "\n  "))
        return "\n".join(lines)


class Progress:
    """Phase lines on stderr, and every few seconds the tasks done of the running stages."""

    def __init__(self, spark: Any, enabled: bool, every: float = 5.0) -> None:
        self.spark, self.enabled, self.every = spark, enabled, every
        self.started = time.monotonic()
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def __enter__(self) -> "Progress":
        if self.enabled:
            self.thread = threading.Thread(target=self._poll, daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join(timeout=self.every + 1)

    def say(self, text: str) -> None:
        if self.enabled:
            print(
                f"[pipeline {time.monotonic() - self.started:6.1f}s] {text}",
                file=sys.stderr,
                flush=True,
            )

    def _poll(self) -> None:
        tracker = self.spark.sparkContext.statusTracker()
        while not self.stop.wait(self.every):
            try:
                stages = [tracker.getStageInfo(s) for s in tracker.getActiveStageIds()]
            except Exception:  # the context is stopping
                return
            parts = [
                f"stage {s.stageId}: {s.numCompletedTasks}/{s.numTasks} tasks"
                for s in stages
                if s is not None
            ]
            if parts:
                self.say("running " + ", ".join(parts))


def run_pipeline(
    inputs: Sequence[str | Path],
    out: str | Path,
    *,
    specs: SpecSource | None = None,
    master: str | None = None,
    broker_ports: str = "",
    progress: bool = True,
    spark: Any = None,
    workdir: Path | None = None,
    target_specs: SpecSource | None = None,
    records: bool = True,
    report: bool = False,
    target_release: str | None = None,
    tls_keylog: str | Path | None = None,
) -> Summary:
    """Run the whole job; returns its summary.

    ``spark``: an existing session to use (left running); otherwise one is started and
    stopped here. ``workdir``: where the zips for the executors go (kept); by default a
    temporary folder, removed at the end. ``records``: read record batches (``batches/``,
    ``record_usage/``). ``target_specs`` or ``target_release``: judge readiness against
    it (``readiness/``). ``report``: write ``out/report.html`` from the tables.
    ``tls_keylog``: an SSLKEYLOGFILE to decrypt the TLS connections of pcap files with.
    """
    from .spark import spark_session

    # input that holds nothing to read, and a target that does not load, fail here,
    # before Spark starts
    files = check_inputs([str(path) for path in inputs])
    target = None
    if target_specs:
        target = Target(target_specs)
    elif target_release:
        target = Target.release(target_release)
    own = spark is None
    t0 = time.monotonic()
    # the JVM starts while the decoding package and the schemas are made ready
    with ThreadPoolExecutor(max_workers=1) as starter:
        starting = (
            starter.submit(spark_session, master, **session_settings(master, files))
            if own
            else None
        )
        try:
            prepared = prepare(specs)
        except BaseException:
            if starting is not None and starting.exception() is None:
                starting.result().stop()
            raise
        if starting is not None:
            try:
                spark = starting.result()
            except ModuleNotFoundError:
                raise  # a missing extra (pyspark): the command line names it
            except Exception as exc:
                raise _failed(exc) from exc
        startup = time.monotonic() - t0
    if not own:
        startup = 0.0
    if spark is None:  # pragma: no cover (a session was given or started)
        raise RuntimeError("no Spark session")
    keep = workdir is not None
    workdir = workdir or Path(tempfile.mkdtemp(prefix="kafka-specgen-pipeline-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        with Progress(spark, progress) as prog:
            prog.say(f"Spark {spark.version} up ({spark.sparkContext.master}) in {startup:.1f} s")
            summary = _run(
                spark,
                inputs,
                Path(out).resolve(),
                prepared,
                broker_ports,
                workdir,
                prog,
                target,
                records,
                str(Path(tls_keylog).resolve()) if tls_keylog else None,
            )
            summary.master = spark.sparkContext.master
            if report:
                from .report import write_report

                summary.report = str(write_report(Path(out).resolve()))
                prog.say(f"wrote {summary.report}")
    except JobFailed:
        raise
    except Exception as exc:
        if _from_spark(exc):
            raise _failed(exc) from exc
        raise
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
        if own:
            spark.stop()
    summary.startup_s = round(startup, 3)
    summary.total_s = round(time.monotonic() - t0, 3)
    return summary


def session_settings(master: str | None, files: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """How the job's own session is set up: in local mode no web UI, and for small input
    (``stage.SMALL_INPUT``) a JVM tuned for start-up and one shuffle partition (each task
    costs more than it does on so little data)."""
    import os

    from .stage import small_input

    local = master is None or master.startswith("local")
    if "PYSPARK_GATEWAY_PORT" in os.environ or not local:
        return {}
    small = small_input(files)
    conf = {"spark.ui.enabled": "false"}
    if small:
        conf["spark.sql.shuffle.partitions"] = "1"
        conf["spark.sql.adaptive.enabled"] = "false"
    return {"quick_jvm": small, "conf": conf}


@dataclass(frozen=True)
class Prepared:
    """The decoding package (generated, or from the tool's cache) and the Spark schemas of
    its messages."""

    package: Any  # library.GeneratedPackage
    schemas: dict[str, Any]
    source: str  # the spec set's label, for the progress line and the summary


def prepare(specs: SpecSource | None) -> Prepared:
    """The package that decodes the capture: from ``specs``, by default every version of
    every Kafka release (``--release all``), so a mixed fleet decodes whole."""
    from ..library import SpecSet, generated_package, load_specs, spec_set
    from .spark_schema import spark_schemas

    chosen = spec_set(specs) if specs else SpecSet.of_release("all")
    package = generated_package(chosen)
    package.require(because="the pipeline decodes whole frames, headers included")
    schemas = spark_schemas(load_specs(chosen, warn=False)[0])
    return Prepared(package, schemas, chosen.label)


def _from_spark(exc: BaseException) -> bool:
    """Whether an exception came out of Spark (the JVM, an executor, the Python worker)."""
    names = {cls.__module__.split(".")[0] for cls in type(exc).__mro__}
    return bool(names & {"py4j", "pyspark"})


def _failed(exc: BaseException) -> JobFailed:
    from .spark import failure_line, keep_trace

    return JobFailed(failure_line(exc), keep_trace(exc))


def _run(
    spark: Any,
    inputs: Sequence[str | Path],
    out: Path,
    prepared: Prepared,
    broker_ports: str,
    workdir: Path,
    prog: Progress,
    target: Target | None,
    records: bool,
    tls_keylog: str | None,
) -> Summary:
    from .spark import ship
    from .stage import stage
    from .tables import batches, conformance, errors, messages, readiness, usage

    started = time.monotonic()
    package, schemas = prepared.package, prepared.schemas
    ship(spark, package, workdir)
    prog.say(f"decoding with package {package.name} (from {prepared.source})")
    _remove_tables(out)
    decoded = stage(
        spark,
        inputs,
        package.name,
        broker_ports=broker_ports,
        tls_keylog=tls_keylog,
        records=records,
        say=prog.say,
    )
    decode_s = time.monotonic() - started
    counts = decoded.counts
    prog.say(
        f"{counts.frames_read} frames read, {counts.decoded} decoded, {counts.errors} errors"
        + (f", {counts.logged} request log entries" if counts.logged else "")
        + (f", {counts.batches_read} record batches" if records else "")
        + f" ({decode_s:.1f} s)"
    )

    # The tables are independent jobs: submitted together, Spark overlaps their scheduling
    # and small tasks.
    staged = decoded.staged(spark, out, prog.say)
    entries = batches.entries(staged)
    jobs: dict[str, Any] = {
        "errors": partial(errors.write, staged, entries),
        "conformance": partial(conformance.write, staged),
        "usage": partial(usage.write, staged),
        "messages": partial(messages.write, staged, schemas, counts.messages),
    }
    if records:
        jobs["batches"] = partial(batches.write, staged, entries)
        jobs["record_usage"] = partial(batches.write_record_usage, staged, entries)
    if target is not None:
        read = batches.read(entries) if records else None
        jobs["readiness"] = partial(readiness.write, staged, target, read, counts.errors)
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        running = {name: pool.submit(write) for name, write in jobs.items()}
        done = {name: job.result() for name, job in running.items()}
    prog.say("wrote " + ", ".join(f"{name}/" for name in done))
    error_rows, conf_rows, usage_rows = done["errors"], done["conformance"], done["usage"]
    n_batches, record_usage_rows = done.get("batches", 0), done.get("record_usage", 0)
    verdict: Verdict | None = None
    readiness_rows = 0
    if "readiness" in done:
        verdict, readiness_rows = done["readiness"]
    tables, missing = done["messages"]
    written = [t.name for t in all_tables() if t.name in done and t.name != messages.TABLE.name]
    written.append(f"{messages.TABLE.name}/<Message>")
    staged.decoded.unpersist()

    total_decoded = sum(r["decoded"] for r in conf_rows)
    equal = sum(r["reencoded_equal"] for r in conf_rows)
    n_decoded, n_errors, batch_errors = counts.decoded, counts.errors, counts.batch_errors
    frames_ok = (
        counts.frames_read == n_decoded + n_errors + counts.logged
        and n_decoded + n_errors == sum(r["frames"] for r in conf_rows)
        and total_decoded == n_decoded
        and error_rows == n_errors + batch_errors
    )
    return Summary(
        package=package.name,
        out=str(out),
        records=records,
        frames_read=counts.frames_read,
        decoded=n_decoded,
        errors=n_errors,
        logged=counts.logged,
        unknown_api_errors=counts.unknown_api,
        tls_without_keys=counts.tls_without_keys,
        reencoded_equal=equal,
        mismatches=total_decoded - equal,
        batches_read=counts.batches_read,
        batches=n_batches,
        batch_errors=batch_errors,
        nothing_lost=frames_ok and counts.batches_read == n_batches + batch_errors,
        usage_rows=usage_rows,
        conformance_rows=len(conf_rows),
        record_usage_rows=record_usage_rows,
        message_tables=tables,
        messages_without_schema=missing,
        readiness=verdict,
        readiness_rows=readiness_rows,
        decode_s=round(decode_s, 3),
        job_s=round(time.monotonic() - started, 3),
        tables=[f"{name}/" for name in written],
        spec_set=prepared.source,
    )


def _remove_tables(out: Path) -> None:
    """Remove the tables a previous run left (only ours: a stale messages/ table would stay)."""
    for name in (*(t.name for t in all_tables()), "staging_decoded"):
        path = out / name
        if path.is_dir():
            shutil.rmtree(path)
    report = out / REPORT
    if report.is_file():
        report.unlink()
