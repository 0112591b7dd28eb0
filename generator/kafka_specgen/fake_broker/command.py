"""``kafka-specgen fake-broker``: a fake Kafka cluster on the command line, until Ctrl-C."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from ..errors import SpecError
from .cluster import FakeBrokerError, FakeCluster
from .limits import minimum, options


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "fake-broker",
        help="run a fake Kafka cluster that speaks a chosen release's protocol",
        description="Serve a fake Kafka cluster in memory (topics, records, consumer "
        "groups, transactions) that advertises exactly the API versions of a Kafka release, "
        "for testing clients without a JVM. Runs until interrupted.",
    )
    parser.add_argument(
        "--listen",
        default="127.0.0.1:9092",
        metavar="HOST:PORT",
        help="the first broker's address (default 127.0.0.1:9092; port 0 picks one); "
        "the others get free ports on the same host",
    )
    parser.add_argument(
        "--specs",
        action="append",
        type=Path,
        metavar="PATH",
        help="your own Kafka message specs (a folder, .zip or .jar; repeatable), e.g. "
        "clients/src/main/resources/common/message of a Kafka checkout; default: the release's "
        "spec data bundled with the tool",
    )
    parser.add_argument(
        "--release",
        metavar="X.Y[.Z]",
        help="the Kafka release to emulate, 0.8.0 to 4.3 (e.g. 2.8, 3.9, 4.0.1): its brokers' "
        "ApiVersions answer, what they refuse, their features; default: the newest release, "
        "or with --specs every version of the specs",
    )
    parser.add_argument(
        "--kraft",
        action="store_true",
        help="emulate the release's KRaft broker (releases 2.8 to 3.9 have both kinds; the "
        "default is ZooKeeper, as most clusters of those releases ran; 4.x is KRaft only)",
    )
    parser.add_argument(
        "--telemetry",
        action="store_true",
        help="advertise the client telemetry APIs (71, 72), as a broker with a telemetry "
        "receiver configured does (3.7+ KRaft)",
    )
    parser.add_argument(
        "--unstable",
        action="store_true",
        help="advertise and accept unstable versions and feature levels "
        "(unstable.api.versions.enable)",
    )
    parser.add_argument(
        "--brokers", type=int, default=1, metavar="N", help="brokers in the cluster (default 1)"
    )
    parser.add_argument(
        "--topics",
        default="",
        metavar="NAME:PARTITIONS,...",
        help="topics to create at start (others are created on first use)",
    )
    parser.add_argument(
        "--record",
        type=Path,
        metavar="FILE",
        help="append every frame to FILE in the capture format (for `kafka-specgen pipeline`)",
    )
    security = parser.add_argument_group("security (default: PLAINTEXT, no ACLs)")
    security.add_argument(
        "--user",
        action="append",
        default=[],
        metavar="NAME:PASSWORD",
        help="a SASL user (repeatable): the listeners then ask for SASL PLAIN, SCRAM-SHA-256 "
        "or SCRAM-SHA-512",
    )
    security.add_argument(
        "--sasl-mechanisms",
        metavar="NAME,...",
        help="the SASL mechanisms the listeners offer (default: PLAIN,SCRAM-SHA-256,"
        "SCRAM-SHA-512)",
    )
    security.add_argument(
        "--tls",
        type=Path,
        metavar="DIR",
        help="serve TLS with a self-signed CA and a server certificate for 127.0.0.1 and "
        "localhost written into DIR (clients trust DIR/ca.pem; a CA already there is kept)",
    )
    security.add_argument(
        "--superuser",
        action="append",
        default=None,
        metavar="NAME",
        help="a super user (repeatable; User:ANONYMOUS without SASL): enforces ACLs "
        "(Create/Describe/DeleteAcls) on everyone else",
    )
    limits = parser.add_argument_group("limits and settings (Kafka's defaults unless said)")
    for name, text, default in options():
        limits.add_argument(
            "--" + name.replace("_", "-"),
            dest=name,
            type=int,
            default=default,
            metavar="N",
            help=text.replace("%", "%%"),
        )
    parser.set_defaults(func=run)


def parse_topics(text: str) -> dict[str, int]:
    topics: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, count = part.rpartition(":")
        if not sep or not name or not count.isdigit() or int(count) < 1:
            raise ValueError(f"--topics: {part!r} is not NAME:PARTITIONS")
        topics[name] = int(count)
    return topics


def parse_users(entries: list[str]) -> dict[str, str]:
    users: dict[str, str] = {}
    for entry in entries:
        name, sep, password = entry.partition(":")
        if not sep or not name:
            raise ValueError(f"--user: {entry!r} is not NAME:PASSWORD")
        users[name] = password
    return users


def report(failures: list[str], reported: int) -> int:
    """Print the failures not printed yet (one line each, on stderr); how many are now."""
    for line in failures[reported:]:
        print(f"kafka-specgen fake-broker: {line}", file=sys.stderr, flush=True)
    return len(failures)


def run(args: argparse.Namespace) -> int:
    host, sep, port = args.listen.rpartition(":")
    try:
        if not sep or not host or not port.isdigit() or int(port) > 65535:
            raise ValueError(f"--listen {args.listen!r} is not HOST:PORT")
        topics = parse_topics(args.topics)
        users = parse_users(args.user)
        mechanisms = None
        if args.sasl_mechanisms is not None:
            mechanisms = [m.strip().upper() for m in args.sasl_mechanisms.split(",") if m.strip()]
        limits = {name: getattr(args, name) for name, _, _ in options()}
        for name, value in limits.items():
            if value < minimum(name):
                raise ValueError(
                    f"--{name.replace('_', '-')} must be at least {minimum(name)}, not {value}"
                )
        cluster = FakeCluster(
            args.specs,
            release=args.release,
            kraft=args.kraft,
            telemetry=args.telemetry,
            unstable=args.unstable,
            brokers=args.brokers,
            topics=topics,
            host=host.strip("[]"),
            port=int(port),
            record=args.record,
            users=users or None,
            sasl_mechanisms=mechanisms,
            tls=args.tls if args.tls is not None else False,
            superusers=args.superuser,
            **limits,
        )
    except (ValueError, FakeBrokerError, SpecError) as exc:
        print(f"kafka-specgen fake-broker: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, ValueError) else 1
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    with cluster:
        addresses = ", ".join(f"{b.host}:{b.port} (id {b.node_id})" for b in cluster.state.brokers)
        print(f"fake cluster speaking {cluster.description}: {addresses}", flush=True)
        if cluster.security_protocol != "PLAINTEXT" or args.superuser:
            facts = [f"security.protocol {cluster.security_protocol}"]
            if cluster.ca_file is not None:
                facts.append(f"CA {cluster.ca_file}")
            if args.superuser:
                facts.append(f"ACLs enforced (super users: {', '.join(args.superuser)})")
            print("; ".join(facts), flush=True)
        for key, wanted in sorted(cluster.missing_versions.items()):
            print(
                f"warning: the spec set lacks some versions {cluster.release} has of api "
                f"{key} ({wanted[0]}-{wanted[1]}): advertising what both have",
                file=sys.stderr,
            )
        reported = 0
        while not stop.wait(0.5):
            reported = report(cluster.failures, reported)
        report(cluster.failures, reported)
    print("stopped", flush=True)
    return 0
