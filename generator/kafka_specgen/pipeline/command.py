"""``kafka-specgen pipeline``: captured traffic -> decoded Parquet tables, with PySpark.

::

    kafka-specgen pipeline --input PATH [PATH ...] --out DIR [--specs PATH | --release X.Y]
                           [--master URL]
                           [--target-release X.Y | --target-specs PATH] [--fail-on-unready]
                           [--report] [--no-records]

The job is ``pipeline.job``, its tables ``pipeline.tables``. Input that holds nothing to
read and a target the tool does not know fail here, in one line, before Spark starts; a
failed Spark job (an executor's error, Java missing) is one line too, its traces kept in a
file. Exit status: 0 done; with ``--fail-on-unready``, 1 a client would break on the
target, 3 the verdict is incomplete; 2 bad input or arguments; 4 the Spark job failed; 5
the counts disagree (something read was lost: a bug).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from ..spec_options import add_spec_options, chosen_spec_set
from ..capture.inputs import InputError, check_inputs
from .report import REPORT
from .tables import all_tables


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "pipeline",
        help="decode captured traffic (capture files, pcap) into Parquet tables with Spark",
        description="Read capture files and pcap/pcapng, decode every Kafka frame with a "
        "generated package, and write Parquet tables under --out. PySpark; local mode by "
        "default. Decodes with every version of every Kafka release from 2.4 to 4.3 by "
        "default (--release all); --release X.Y or --specs PATH decode with one spec set.",
        epilog="tables: "
        + "; ".join(f"{t.name}/: {t.about}" for t in all_tables())
        + f". batches/ and record_usage/ unless --no-records, readiness/ with "
        f"--target-release or --target-specs, {REPORT} with --report. Exit status: 0 done; "
        "with --fail-on-unready, 1 a client would break, 3 the verdict is incomplete (the "
        "capture does not show enough); 2 bad input or arguments; 4 the Spark job failed; "
        "5 the counts disagree (something read was lost).",
    )
    parser.add_argument(
        "--input",
        nargs="+",
        action="extend",
        required=True,
        metavar="PATH",
        help="capture files (.jsonl), pcap/pcapng files, broker request logs "
        "(kafka.request.logger at DEBUG, as written), or folders of them",
    )
    parser.add_argument(
        "--out",
        required=True,
        type=Path,
        metavar="DIR",
        help="where the tables go (each table is replaced)",
    )
    add_spec_options(
        parser,
        "decode with a package generated from these specs (a folder or .zip/.jar; repeat to "
        "merge); default: --release all, every version any Kafka release 2.4-4.3 defines",
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
        "--tls-keylog",
        metavar="FILE",
        default=os.environ.get("SSLKEYLOGFILE") or None,
        help="the TLS session keys (an SSLKEYLOGFILE, NSS format) to decrypt the TLS "
        "connections of pcap files with (default: $SSLKEYLOGFILE)",
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
        help="exit status 1 if a client would break on the target, 3 if the verdict is "
        "incomplete (for CI)",
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
        specs = chosen_spec_set(args)
        check_inputs(args.input)
        if args.tls_keylog and not os.path.isfile(args.tls_keylog):
            raise InputError(f"--tls-keylog: no such file: {args.tls_keylog}")
        if args.target_release:
            from .target import Target

            Target.release(args.target_release)
    except (InputError, ValueError) as exc:
        print(f"kafka-specgen pipeline: {exc}", file=sys.stderr)
        return 2
    from .job import EXIT_FAILED, JobFailed, run_pipeline

    try:
        summary = run_pipeline(
            args.input,
            args.out,
            specs=specs,
            master=args.master,
            broker_ports=args.broker_ports,
            progress=not args.quiet,
            target_specs=args.target_specs,
            target_release=args.target_release,
            records=not args.no_records,
            report=args.report,
            tls_keylog=args.tls_keylog,
        )
    except JobFailed as failed:
        print(
            f"kafka-specgen pipeline: the Spark job failed: {failed.line} "
            f"(traces in {failed.trace})",
            file=sys.stderr,
        )
        return EXIT_FAILED
    print(summary.text())
    return summary.exit_status(args.fail_on_unready)
