"""``kafka-specgen pipeline``: captured traffic -> decoded Parquet tables, with PySpark.

::

    kafka-specgen pipeline --input PATH [PATH ...] --out DIR [--specs PATH] [--master URL]
                           [--target-specs PATH] [--fail-on-unready] [--report] [--no-records]

Reads capture files and pcap/pcapng (``datasource.read_frames``: the ``kafka-capture`` data
source, TCP streams of pcap files reassembled across files), decodes every
frame with a package generated from ``--specs`` (default: the specs shipped with the tool)
into a temporary folder and shipped to the executors as a zip, re-encodes it
and compares the bytes, reads the record batches of Produce requests and Fetch
responses, and writes Parquet tables under ``DIR``:

``usage/``        client software name/version (from ApiVersionsRequest v3+ on the same
                  connection), client id, api key, api name, api version: frames, requests,
                  first and last timestamp
``conformance/``  per api key, direction and version: frames, decoded, re-encoded byte-exact,
                  mismatches (with the first differing offset and the frame of a sample),
                  errors
``messages/<Message>/``  decoded bodies with nested columns (the generated package's
                  schemas built from the same model), one table per message (e.g. ``MetadataRequest``)
``batches/``      one row per record batch (legacy: top-level message) in Produce requests
                  and Fetch responses: where it was, magic, compression, counts, sizes,
                  producer, flags, CRC
``record_usage/`` client software x client id x direction x magic x compression: batches,
                  records, bytes
``readiness/``    with ``--target-specs``: per client x api key x version seen (and per
                  client x message format), supported by the target or not, and why
``errors/``       every frame that could not be decoded and every record batch that could
                  not be read (``kind``): reason and bytes

Nothing is lost: frames read = decoded + frame errors, and record batches read = rows of
``batches/`` + batch errors, are checked (exit status 1 otherwise) and printed with a
short summary and, with ``--target-specs``, the readiness verdict (``--fail-on-unready``:
exit status 1 when a client would break). ``--report`` also writes ``DIR/report.html``
(``pipeline.report``). Spark runs in local mode unless ``--master`` (or ``spark-submit``)
says otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import threading
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from .inputs import InputError, check_inputs
from .report import REPORT

TABLES = (
    "usage",
    "conformance",
    "messages",
    "errors",
    "batches",
    "record_usage",
    "readiness",
)


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "pipeline",
        help="decode captured traffic (capture files, pcap) into Parquet tables with Spark",
        description="Read capture files and pcap/pcapng, decode every Kafka frame with a "
        "generated package, and write Parquet tables under --out: usage/, conformance/, "
        "messages/<Message>/, errors/, batches/ and record_usage/ (unless --no-records), "
        "readiness/ (with --target-specs) and report.html (with --report). PySpark; local "
        "mode by default. Decode with Kafka's whole spec set (--specs): the tool's own "
        "specs have 3 APIs.",
    )
    parser.add_argument(
        "--input",
        nargs="+",
        action="extend",
        required=True,
        metavar="PATH",
        help="capture files (.jsonl), pcap/pcapng files, or folders of them",
    )
    parser.add_argument(
        "--out",
        required=True,
        type=Path,
        metavar="DIR",
        help="where the tables go (each table is replaced)",
    )
    parser.add_argument(
        "--specs",
        action="append",
        type=Path,
        metavar="PATH",
        help="decode with a package generated from these specs (a folder or "
        ".zip/.jar; repeat to merge); default: the specs shipped with kafka-specgen",
    )
    parser.add_argument(
        "--master", metavar="URL", help="Spark master (default: local[*], or spark-submit's)"
    )
    parser.add_argument(
        "--broker-ports",
        default="",
        metavar="PORTS",
        help="comma-separated broker ports, for pcap connections whose "
        "handshake was not captured",
    )
    parser.add_argument(
        "--target-specs",
        action="append",
        type=Path,
        metavar="PATH",
        help="a spec set to upgrade to (e.g. a Kafka 4.x release's; repeat to merge): adds "
        "readiness/ and prints a verdict",
    )
    parser.add_argument(
        "--target-release",
        metavar="X.Y",
        help="a Kafka release to upgrade to (e.g. 4.0; its brokers' API ranges, from the "
        "tool's release table): adds readiness/ and prints a verdict naming it",
    )
    parser.add_argument(
        "--fail-on-unready",
        action="store_true",
        help="exit status 1 if a client would break on the target (for CI)",
    )
    parser.add_argument(
        "--report", action="store_true", help=f"also write DIR/{REPORT} (pipeline.report)"
    )
    parser.add_argument(
        "--no-records",
        action="store_true",
        help="do not read record batches (no batches/ and record_usage/)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.set_defaults(func=cmd_pipeline)


def cmd_pipeline(args: argparse.Namespace) -> int:
    if args.fail_on_unready and not (args.target_specs or args.target_release):
        print(
            "kafka-specgen pipeline: --fail-on-unready needs --target-release or --target-specs",
            file=sys.stderr,
        )
        return 2
    if args.target_specs and args.target_release:
        print(
            "kafka-specgen pipeline: give --target-release or --target-specs, not both",
            file=sys.stderr,
        )
        return 2
    try:
        check_inputs(args.input)
        if args.target_release:
            from .readiness import Target

            Target.release(args.target_release)
    except (InputError, ValueError) as exc:
        print(f"kafka-specgen pipeline: {exc}", file=sys.stderr)
        return 2
    summary = run_pipeline(
        args.input,
        args.out,
        specs=args.specs,
        master=args.master,
        broker_ports=args.broker_ports,
        progress=not args.quiet,
        target_specs=args.target_specs,
        target_release=args.target_release,
        records=not args.no_records,
        report=args.report,
    )
    print(format_summary(summary))
    return exit_status(summary, args.fail_on_unready)


def exit_status(summary: dict[str, Any], fail_on_unready: bool = False) -> int:
    """1 if something was lost, or (``fail_on_unready``) a client would break on the
    target; else 0."""
    if not summary["nothing_lost"]:
        return 1
    readiness = summary.get("readiness")
    if fail_on_unready and (readiness is None or not readiness["ready"]):
        return 1
    return 0


# --- Spark session and packages ---------------------------------------------------------------


def spark_session(
    master: str | None = None, *, quick_jvm: bool = False, conf: dict[str, str] | None = None
) -> Any:
    """A SparkSession: ``master``, or local mode unless launched by ``spark-submit``.

    Local mode binds to loopback and runs the Python workers with this interpreter.
    ``quick_jvm`` trades JIT depth for start-up (tests).
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    under_submit = "PYSPARK_GATEWAY_PORT" in os.environ
    if master is None and not under_submit:
        master = "local[*]"
    if master is not None and master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("kafka-specgen pipeline")
    if master is not None:
        builder = builder.master(master)
    settings = {"spark.sql.session.timeZone": "UTC", "spark.ui.showConsoleProgress": "false"}
    if master is not None and master.startswith("local"):
        settings.update(
            {
                "spark.driver.host": "127.0.0.1",
                "spark.driver.bindAddress": "127.0.0.1",
                "spark.sql.shuffle.partitions": "8",
            }
        )
    if quick_jvm:
        settings["spark.driver.extraJavaOptions"] = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
    settings.update(conf or {})
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def package_for(specs: Sequence[Path] | None, workdir: Path) -> tuple[str, Path, dict[str, Any]]:
    """``(package name, folder holding it, Spark schema per message)``: a package generated
    from ``specs``, or from the specs shipped with the tool (named after a hash of the spec
    paths, so two spec sets never collide); the schemas come from the same model."""
    from ..format import write_package
    from ..library import bundled_specs, load_specs, package_files
    from ..spark_schema import spark_schemas

    paths = list(specs) if specs else [bundled_specs()]
    digest = hashlib.sha1("\0".join(str(Path(p).resolve()) for p in paths).encode()).hexdigest()
    name = f"kafka_messages_{digest[:10]}"
    messages, facts = load_specs(paths, warn=False)
    write_package(package_files(messages, facts), workdir / name)
    import importlib

    importlib.invalidate_caches()
    return name, workdir, spark_schemas(messages)


def zip_package(folder: Path, name: str, out: Path) -> Path:
    """A zip of the Python package ``folder/name`` (for ``addPyFile``)."""
    target = out / f"{name}.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted((folder / name).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                zf.write(path, path.relative_to(folder).as_posix())
    return target


def zip_pipeline(out: Path) -> Path:
    """A zip of ``kafka_specgen``'s own ``__init__`` and its ``pipeline`` subpackage: all
    that executors import of the tool (no jinja2, black or jsonschema there)."""
    import importlib

    init = importlib.import_module("kafka_specgen").__file__
    if init is None:
        raise RuntimeError("kafka_specgen has no __init__ file to ship")
    target = out / "kafka_specgen.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(Path(init), "kafka_specgen/__init__.py")
        for path in sorted(Path(__file__).resolve().parent.glob("*.py")):
            zf.write(path, f"kafka_specgen/pipeline/{path.name}")
    return target


def ship(spark: Any, package: str, folder: Path, workdir: Path) -> None:
    """Make ``package`` and the pipeline importable on the driver and every executor."""
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    sc = spark.sparkContext
    shipped = _SHIPPED.setdefault(sc.applicationId, set())
    # Spark refuses a second file of the same name
    if package not in shipped:
        sc.addPyFile(str(zip_package(folder, package, workdir)))
        shipped.add(package)
    if "kafka_specgen" not in shipped:
        sc.addPyFile(str(zip_pipeline(workdir)))
        shipped.add("kafka_specgen")


_SHIPPED: dict[str, set[str]] = {}


# --- the job ------------------------------------------------------------------------------------


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
    specs: Sequence[Path] | None = None,
    master: str | None = None,
    broker_ports: str = "",
    progress: bool = True,
    spark: Any = None,
    workdir: Path | None = None,
    target_specs: Sequence[Path] | None = None,
    records: bool = True,
    report: bool = False,
    target_release: str | None = None,
) -> dict[str, Any]:
    """Run the whole job; returns the summary (counts per table, ``nothing_lost``, and with
    ``target_specs`` or ``target_release`` the readiness verdict).

    ``spark``: an existing session to use (left running); otherwise one is started and
    stopped here. ``workdir``: where a package generated from ``specs`` and the zips for
    the executors go (kept); by default a temporary folder, removed at the end.
    ``records``: read record batches (``batches/``, ``record_usage/``). ``report``: write
    ``out/report.html`` from the tables.
    """
    # input that holds nothing to read, and a target spec set that does not load, fail
    # here, before Spark starts
    check_inputs([str(path) for path in inputs])
    from .readiness import Target

    target = None
    if target_specs:
        target = Target(target_specs)
    elif target_release:
        target = Target.release(target_release)
    own = spark is None
    t0 = time.monotonic()
    if own:
        spark = spark_session(master)
    startup = time.monotonic() - t0
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
                specs,
                broker_ports,
                workdir,
                prog,
                target,
                records,
            )
            if report:
                from .report import write_report

                summary["report"] = str(write_report(Path(out).resolve()))
                prog.say(f"wrote {summary['report']}")
        summary["master"] = spark.sparkContext.master
        summary["startup_s"] = round(startup, 3)
        summary["total_s"] = round(time.monotonic() - t0, 3)
        return summary
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
        if own:
            spark.stop()


#: Where a frame or record batch was: the columns ``errors/`` starts with.
ERROR_COLUMNS = (
    "kind",
    "conn",
    "ts",
    "src",
    "dst",
    "direction",
    "api_key",
    "api_name",
    "api_version",
    "correlation_id",
    "client_id",
    "topic",
    "partition",
    "batch_index",
    "reason",
    "frame",
)


def _run(
    spark: Any,
    inputs: Sequence[str | Path],
    out: Path,
    specs: Sequence[Path] | None,
    broker_ports: str,
    workdir: Path,
    prog: Progress,
    target: Any,
    records: bool,
) -> dict[str, Any]:
    from pyspark.sql import functions as F

    from .datasource import read_frames
    from .decode import DECODED_DDL

    started = time.monotonic()
    package, folder, schemas = package_for(specs, workdir)
    ship(spark, package, folder, workdir)
    prog.say(
        f"decoding with package {package}"
        + (f" (from {', '.join(map(str, specs))})" if specs else "")
    )
    sc = spark.sparkContext
    read_counter = sc.accumulator(0)
    batch_counter = sc.accumulator(0)

    frames = read_frames(spark, inputs, broker_ports)
    decoded = frames.mapInArrow(
        partial(
            _count_and_decode,
            package=package,
            counter=read_counter,
            batch_counter=batch_counter,
            records=records,
        ),
        DECODED_DDL,
    )
    stage = out / "staging_decoded"
    _remove_tables(out)
    prog.say(f"reading and decoding {len(inputs)} input path(s)")
    decoded.write.mode("overwrite").parquet(str(stage))
    staged = spark.read.parquet(str(stage)).cache()
    counts = {r["status"]: r["count"] for r in staged.groupBy("status").count().collect()}
    frames_read = int(read_counter.value)
    batches_read = int(batch_counter.value)
    n_decoded, n_errors = counts.get("decoded", 0), counts.get("error", 0)
    decode_s = time.monotonic() - started
    prog.say(
        f"{frames_read} frames read, {n_decoded} decoded, {n_errors} errors"
        + (f", {batches_read} record batches" if records else "")
        + f" ({time.monotonic() - started:.1f} s)"
    )

    ok = F.col("status") == "decoded"
    # the client software of a connection: its first ApiVersionsRequest v3+
    software = (
        staged.filter(F.col("software_name").isNotNull())
        .groupBy("conn")
        .agg(F.min_by(F.struct("software_name", "software_version"), "ts").alias("sw"))
        .select(
            "conn",
            F.col("sw.software_name").alias("software_name"),
            F.col("sw.software_version").alias("software_version"),
        )
    )
    # one row per record batch entry (read or not)
    entries = (
        staged.filter(F.col("batches").isNotNull())
        .select(
            "conn",
            "ts",
            "src",
            "dst",
            "direction",
            "api_key",
            "api_name",
            "api_version",
            "correlation_id",
            "client_id",
            F.explode("batches").alias("b"),
        )
        .select("*", "b.*")
        .drop("b")
    )

    # errors/: frames that did not decode, then record batches that could not be read
    null_int = F.lit(None).cast("int")
    frame_errors = staged.filter(F.col("status") == "error").select(
        F.lit("frame").alias("kind"),
        *ERROR_COLUMNS[1:11],
        F.lit(None).cast("string").alias("topic"),
        null_int.alias("partition"),
        null_int.alias("batch_index"),
        "reason",
        "frame",
    )
    batch_errors = entries.filter(F.col("error").isNotNull()).select(
        F.lit("batch").alias("kind"),
        *ERROR_COLUMNS[1:14],
        F.col("error").alias("reason"),
        F.col("data").alias("frame"),
    )
    frame_errors.unionByName(batch_errors).coalesce(1).write.mode("overwrite").parquet(
        str(out / "errors")
    )
    written_errors = spark.read.parquet(str(out / "errors"))
    error_kinds = {r["kind"]: r["count"] for r in written_errors.groupBy("kind").count().collect()}
    n_batch_errors = error_kinds.get("batch", 0)
    unknown_apis = written_errors.filter(
        (F.col("kind") == "frame") & F.col("reason").contains("unknown api key")
    ).count()

    # conformance/
    mismatch = ok & ~F.col("reencoded_equal")
    conformance = (
        staged.groupBy("api_key", "api_name", "direction", "api_version")
        .agg(
            F.count(F.lit(1)).alias("frames"),
            F.sum(ok.cast("long")).alias("decoded"),
            F.sum((ok & F.col("reencoded_equal")).cast("long")).alias("reencoded_equal"),
            F.sum(mismatch.cast("long")).alias("mismatches"),
            F.sum((~ok).cast("long")).alias("errors"),
            F.first(F.when(mismatch, F.col("first_diff")), ignorenulls=True).alias(
                "sample_first_diff"
            ),
            F.first(F.when(mismatch, F.col("frame")), ignorenulls=True).alias("sample_frame"),
            F.first(F.when(~ok, F.col("reason")), ignorenulls=True).alias("sample_error"),
        )
        .orderBy("api_key", "direction", "api_version")
    )
    conformance.coalesce(1).write.mode("overwrite").parquet(str(out / "conformance"))
    conf_rows = spark.read.parquet(str(out / "conformance")).collect()

    # usage/
    client = ["software_name", "software_version", "client_id"]
    usage = (
        staged.filter(F.col("api_key").isNotNull())
        .drop("software_name", "software_version")
        .join(software, "conn", "left")
        .groupBy(*client, "api_key", "api_name", "api_version")
        .agg(
            F.count(F.lit(1)).alias("frames"),
            F.sum((F.col("direction") == "request").cast("long")).alias("requests"),
            F.min("ts").alias("first_ts"),
            F.max("ts").alias("last_ts"),
        )
        .orderBy(*client, "api_key", "api_version")
    )
    usage.coalesce(1).write.mode("overwrite").parquet(str(out / "usage"))
    usage_rows = spark.read.parquet(str(out / "usage")).count()
    prog.say("wrote errors/, conformance/, usage/")

    # batches/ and record_usage/
    n_batches = record_usage_rows = 0
    if records:
        batches = (
            entries.filter(F.col("error").isNull())
            .join(software, "conn", "left")
            .select(
                "conn",
                "ts",
                "direction",
                "api_key",
                "api_name",
                "api_version",
                "correlation_id",
                *client,
                "topic",
                "topic_id",
                "partition",
                "batch_index",
                "base_offset",
                "magic",
                "compression",
                "record_count",
                "size_bytes",
                "uncompressed_bytes",
                "producer_id",
                "producer_epoch",
                "is_transactional",
                "is_control",
                "crc_ok",
            )
        )
        batches.write.mode("overwrite").parquet(str(out / "batches"))
        written = spark.read.parquet(str(out / "batches"))
        n_batches = written.count()
        record_usage = (
            written.groupBy(*client, "direction", "magic", "compression")
            .agg(
                F.count(F.lit(1)).alias("batches"),
                F.sum("record_count").alias("records"),
                F.sum("size_bytes").alias("bytes"),
                F.sum("uncompressed_bytes").alias("uncompressed_bytes"),
                F.sum(F.col("uncompressed_bytes").isNull().cast("long")).alias(
                    "batches_without_uncompressed_size"
                ),
                F.sum(F.col("is_control").cast("long")).alias("control_batches"),
                F.sum(F.col("is_transactional").cast("long")).alias("transactional_batches"),
                F.sum((~F.col("crc_ok")).cast("long")).alias("crc_failures"),
            )
            .orderBy(*client, "direction", "magic", "compression")
        )
        record_usage.coalesce(1).write.mode("overwrite").parquet(str(out / "record_usage"))
        record_usage_rows = spark.read.parquet(str(out / "record_usage")).count()
        prog.say(f"wrote batches/ ({n_batches} rows), record_usage/")

    # readiness/
    readiness: dict[str, Any] | None = None
    if target is not None:
        readiness = _readiness(spark, staged, software, out, target, records)
        prog.say(f"wrote readiness/ ({readiness['rows']} rows)")

    # messages/<Message>/
    messages = {
        r["message"]: r["count"] for r in staged.filter(ok).groupBy("message").count().collect()
    }
    missing = sorted(m for m in messages if m not in schemas)
    tables = sorted(m for m in messages if m in schemas)
    done = [0]
    lock = threading.Lock()

    def write_message(name: str) -> None:
        from pyspark.sql.types import StructType

        schema = StructType.fromJson(schemas[name])
        table = staged.filter(ok & (F.col("message") == name)).select(
            "conn",
            "ts",
            "api_version",
            "correlation_id",
            "client_id",
            F.from_json("body", schema, {"mode": "FAILFAST"}).alias("body"),
        )
        table.coalesce(max(1, messages[name] // 500_000)).write.mode("overwrite").parquet(
            str(out / "messages" / name)
        )
        with lock:
            done[0] += 1
            if done[0] % 10 == 0 or done[0] == len(tables):
                prog.say(f"messages/: {done[0]}/{len(tables)} tables")

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(write_message, tables))
    staged.unpersist()
    shutil.rmtree(stage, ignore_errors=True)

    total_decoded = sum(r["decoded"] for r in conf_rows)
    equal = sum(r["reencoded_equal"] for r in conf_rows)
    frames_ok = (
        frames_read == n_decoded + n_errors == sum(r["frames"] for r in conf_rows)
        and total_decoded == n_decoded
        and error_kinds.get("frame", 0) == n_errors
    )
    batches_ok = batches_read == n_batches + n_batch_errors
    return {
        "package": package,
        "frames_read": frames_read,
        "unknown_api_errors": unknown_apis,
        "decoded": n_decoded,
        "errors": n_errors,
        "records": records,
        "batches_read": batches_read,
        "batches": n_batches,
        "batch_errors": n_batch_errors,
        "nothing_lost": frames_ok and batches_ok,
        "reencoded_equal": equal,
        "mismatches": total_decoded - equal,
        "usage_rows": usage_rows,
        "conformance_rows": len(conf_rows),
        "record_usage_rows": record_usage_rows,
        "message_tables": tables,
        "messages_without_schema": missing,
        "readiness": readiness,
        "out": str(out),
        "decode_s": round(decode_s, 3),
        "job_s": round(time.monotonic() - started, 3),
    }


def _readiness(
    spark: Any, staged: Any, software: Any, out: Path, target: Any, records: bool
) -> dict[str, Any]:
    """``readiness/`` and the verdict: requests per client x api key x version, and
    record batches per client x magic, judged against ``target`` on the driver (a few
    hundred aggregated rows)."""
    from pyspark.sql import functions as F

    from .readiness import READINESS_DDL, judge_rows, verdict

    client = ["software_name", "software_version", "client_id"]
    requests = (
        staged.filter((F.col("direction") == "request") & F.col("api_key").isNotNull())
        .drop("software_name", "software_version")
        .join(software, "conn", "left")
        .groupBy(*client, "api_key", "api_version")
        .agg(
            F.first("api_name", ignorenulls=True).alias("api_name"),
            F.count(F.lit(1)).alias("requests"),
            F.min("ts").alias("first_ts"),
            F.max("ts").alias("last_ts"),
        )
        .collect()
    )
    formats: list[Any] = []
    if records:
        formats = (
            spark.read.parquet(str(out / "batches"))
            .groupBy(*client, "magic")
            .agg(
                F.count(F.lit(1)).alias("batches"),
                F.min("ts").alias("first_ts"),
                F.max("ts").alias("last_ts"),
            )
            .collect()
        )
    rows = judge_rows(target, [r.asDict() for r in requests], [r.asDict() for r in formats])
    table = spark.createDataFrame([tuple(r) for r in rows], READINESS_DDL)
    table.coalesce(1).write.mode("overwrite").parquet(str(out / "readiness"))
    result = verdict(rows, target.label)
    return {
        "target": target.label,
        "rows": len(rows),
        "unsupported_rows": sum(not r.supported_by_target for r in rows),
        "ready": result.ready,
        "clients": result.clients,
        "breaking": result.breaking,
        "verdict": result.text(),
    }


def _count_and_decode(
    batches: Iterable[Any], package: str, counter: Any, batch_counter: Any, records: bool
) -> Iterator[Any]:
    """``mapInArrow``: count the frames read and the record batches found, decode."""

    def counted() -> Iterator[Any]:
        for batch in batches:
            counter.add(batch.num_rows)
            yield batch

    for out in decode_batches_lazy(counted(), package, records):
        if records:
            lengths = out.column("batches").value_lengths()
            batch_counter.add(sum(n for n in lengths.to_pylist() if n is not None))
        yield out


def decode_batches_lazy(
    batches: Iterable[Any], package: str, records: bool = True
) -> Iterator[Any]:
    from .decode import decode_batches

    return decode_batches(batches, package, records)


def _remove_tables(out: Path) -> None:
    """Remove the tables a previous run left (only ours: a stale messages/ table would stay)."""
    for name in (*TABLES, "staging_decoded"):
        path = out / name
        if path.is_dir():
            shutil.rmtree(path)
    report = out / REPORT
    if report.is_file():
        report.unlink()


def format_summary(s: dict[str, Any]) -> str:
    decoded = s["decoded"]
    pct = 100.0 * s["reencoded_equal"] / decoded if decoded else 100.0
    lines = [
        f"kafka-specgen pipeline: {s['frames_read']} frames read = {decoded} decoded + "
        f"{s['errors']} errors"
        + (" (nothing lost)" if s["nothing_lost"] else "  <-- COUNTS DISAGREE: something was lost"),
    ]
    if s.get("records"):
        lines.append(
            f"  record batches: {s['batches_read']} read = {s['batches']} in batches/ + "
            f"{s['batch_errors']} unreadable (in errors/); record_usage: "
            f"{s['record_usage_rows']} rows"
        )
    lines += [
        f"  conformance: {s['reencoded_equal']}/{decoded} re-encoded byte-exact ({pct:.1f} %), "
        f"{s['mismatches']} mismatches, {s['conformance_rows']} api/direction/version rows",
        f"  usage: {s['usage_rows']} rows; messages: {len(s['message_tables'])} tables; "
        f"errors: {s['errors'] + s.get('batch_errors', 0)} rows",
    ]
    if s.get("unknown_api_errors", 0) * 2 > s["frames_read"]:
        lines.append(
            f"  hint: {s['unknown_api_errors']} of {s['frames_read']} frames are of APIs the "
            "package has no codec for: decode with Kafka's whole spec set, --specs PATH (e.g. "
            "clients/src/main/resources/common/message of a Kafka checkout)"
        )
    if s["messages_without_schema"]:
        lines.append(
            f"  no Spark schema (no messages/ table): " f"{', '.join(s['messages_without_schema'])}"
        )
    tables = ["usage/", "conformance/", "messages/<Message>/", "errors/"]
    if s.get("records"):
        tables += ["batches/", "record_usage/"]
    readiness = s.get("readiness")
    if readiness:
        tables.append("readiness/")
    if s.get("report"):
        tables.append(REPORT)
    lines.append(
        f"  tables in {s['out']}/: {' '.join(tables)} "
        f"(Spark {s.get('master', '?')}: start {s.get('startup_s', 0):.1f} s, "
        f"job {s['job_s']:.1f} s)"
    )
    if readiness:
        lines.append("  readiness: " + readiness["verdict"].replace("\n", "\n  "))
    return "\n".join(lines)
