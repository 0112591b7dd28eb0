"""``kafka-specgen broker-versions``: which API versions each broker of a cluster speaks.

Like Kafka's ``kafka-broker-api-versions.sh`` (KIP-97's format), built on the generated
package ``kafka_messages`` alone (framing, registry, negotiation): a Metadata request to
the bootstrap server finds the brokers, then each broker gets an ApiVersions request at
the newest version this package has, downgraded as KIP-511 says when the broker answers
UNSUPPORTED_VERSION. Plain blocking sockets, one timeout per step, bounded loops.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import time
from dataclasses import dataclass, field
from typing import Any

CLIENT_ID = "kafka-specgen"
SOFTWARE_NAME = "kafka-specgen"
SOFTWARE_VERSION = "0.1.0"
#: A reply larger than this is treated as garbage (ApiVersions/Metadata without topics
#: are a few kilobytes).
MAX_REPLY_BYTES = 16 * 1024 * 1024
#: Each ApiVersions exchange downgrades at most this many times (KIP-511 needs one).
MAX_DOWNGRADES = 4
METADATA_KEY = 3
API_VERSIONS_KEY = 18


class BrokerVersionsError(Exception):
    """A failure reported as one line on stderr (no traceback)."""


@dataclass
class BrokerReport:
    node_id: int
    host: str
    port: int
    rack: str | None
    api_versions_version: int
    broker: dict[int, tuple[int, int]]
    downgraded_from: list[int] = field(default_factory=list)


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "broker-versions",
        help="list the API versions every broker of a cluster supports",
        description="Ask each broker of a cluster which API versions it supports and show "
        "the newest version this package can use with it (KIP-35/KIP-97/KIP-511).",
    )
    parser.add_argument(
        "--bootstrap-server", required=True, metavar="HOST:PORT", help="any broker of the cluster"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds to wait for each connection and each reply (default 10)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        host, port = parse_address(args.bootstrap_server)
        if not args.timeout > 0:
            raise BrokerVersionsError(f"--timeout must be positive, not {args.timeout}")
        reports = collect(host, port, args.timeout)
    except BrokerVersionsError as exc:
        print(f"kafka-specgen broker-versions: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(as_json(reports), indent=2))
    else:
        print(as_text(reports), end="")
    return 0


def parse_address(text: str) -> tuple[str, int]:
    host, sep, port_text = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise BrokerVersionsError(f"--bootstrap-server {text!r} is not HOST:PORT")
    return host, int(port_text)


class Connection:
    """One broker connection: size-prefixed frames, correlation ids, a timeout per step."""

    def __init__(self, host: str, port: int, timeout: float) -> None:
        self.address = f"{host}:{port}"
        self.timeout = timeout
        self.correlation_id = 0
        try:
            self.sock = socket.create_connection((host, port), timeout=timeout)
        except socket.timeout:
            raise BrokerVersionsError(
                f"{self.address}: no connection within {timeout:g} s"
            ) from None
        except OSError as exc:
            raise BrokerVersionsError(
                f"{self.address}: cannot connect: {exc.strerror or exc}"
            ) from None

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(self, api_key: int, version: int, body: Any) -> tuple[int, bytes]:
        """Send one request; return ``(correlation id, response frame)``."""
        from kafka_messages import framing
        from kafka_messages.headers import RequestHeader

        self.correlation_id += 1
        header = RequestHeader(
            request_api_key=api_key,
            request_api_version=version,
            correlation_id=self.correlation_id,
            client_id=CLIENT_ID,
        )
        frame = framing.add_size_prefix(framing.encode_request(header, body))
        try:
            self.sock.sendall(frame)
            size_bytes = self._read(4)
            size = int.from_bytes(size_bytes, "big", signed=True)
            if not 4 <= size <= MAX_REPLY_BYTES:
                raise BrokerVersionsError(
                    f"{self.address}: garbage reply (frame size {size} is outside "
                    f"4..{MAX_REPLY_BYTES}); is this a Kafka broker?"
                )
            return self.correlation_id, self._read(size)
        except socket.timeout:
            raise BrokerVersionsError(
                f"{self.address}: no reply within {self.timeout:g} s"
            ) from None
        except OSError as exc:
            raise BrokerVersionsError(
                f"{self.address}: connection failed: {exc.strerror or exc}"
            ) from None

    def check_correlation_id(self, got: int | None, sent: int) -> None:
        if got != sent:
            raise BrokerVersionsError(
                f"{self.address}: reply has correlation id {got}, expected {sent}"
            )

    def _read(self, count: int) -> bytes:
        # One deadline for the whole read: a peer that trickles bytes cannot stall us.
        deadline = time.monotonic() + self.timeout
        chunks: list[bytes] = []
        remaining = count
        while remaining > 0:
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout()
            self.sock.settimeout(left)
            chunk = self.sock.recv(min(remaining, 65536))
            if not chunk:
                raise BrokerVersionsError(
                    f"{self.address}: the connection was closed before a full reply arrived"
                )
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)


def api_versions(conn: Connection) -> tuple[int, dict[int, tuple[int, int]], list[int]]:
    """ApiVersions with the KIP-511 downgrade: ``(version used, versions, refused)``."""
    from kafka_messages import negotiation
    from kafka_messages.api_versions import ApiVersionsRequest
    from kafka_messages.errors import DecodeError

    version = ApiVersionsRequest.MAX_VERSION
    refused: list[int] = []
    for _ in range(MAX_DOWNGRADES + 1):
        request = ApiVersionsRequest(
            client_software_name=SOFTWARE_NAME, client_software_version=SOFTWARE_VERSION
        )
        correlation_id, frame = conn.request(API_VERSIONS_KEY, version, request)
        try:
            outcome = negotiation.decode_api_versions_response(frame, version)
        except DecodeError as exc:
            raise BrokerVersionsError(f"{conn.address}: garbage ApiVersions reply: {exc}") from None
        conn.check_correlation_id(outcome.correlation_id, correlation_id)
        if outcome.retry_version is not None:
            refused.append(version)
            version = outcome.retry_version
            continue
        if not outcome.ok:
            raise BrokerVersionsError(
                f"{conn.address}: ApiVersions v{version} failed with error "
                f"{describe_error(outcome.response.error_code)}"
            )
        return version, outcome.versions, refused
    raise BrokerVersionsError(
        f"{conn.address}: ApiVersions still refused after {MAX_DOWNGRADES} downgrades "
        f"(tried versions {', '.join(map(str, refused))})"
    )


def describe_error(code: int) -> str:
    try:
        from kafka_messages.errors import error_name
    except ImportError:  # a package generated without the error-code facts
        return str(code)
    return f"{code} ({error_name(code)})"


def find_brokers(
    conn: Connection, broker: dict[int, tuple[int, int]]
) -> list[tuple[int, str, int, str | None]]:
    """A Metadata request (no topics) at the newest common version: every broker."""
    from kafka_messages import framing, negotiation
    from kafka_messages.errors import DecodeError, UnsupportedVersionError
    from kafka_messages.metadata import MetadataRequest

    try:
        version = negotiation.pick_version(
            METADATA_KEY,
            (MetadataRequest.MIN_VERSION, MetadataRequest.MAX_VERSION),
            broker.get(METADATA_KEY),
        )
    except UnsupportedVersionError as exc:
        raise BrokerVersionsError(f"{conn.address}: {exc}") from None
    request = MetadataRequest(topics=[])
    if version >= 4:
        request.allow_auto_topic_creation = False
    correlation_id, frame = conn.request(METADATA_KEY, version, request)
    try:
        header, response = framing.decode_response(frame, METADATA_KEY, version)
    except DecodeError as exc:
        raise BrokerVersionsError(f"{conn.address}: garbage Metadata reply: {exc}") from None
    conn.check_correlation_id(header.correlation_id, correlation_id)
    brokers = sorted((b.node_id, b.host, b.port, b.rack) for b in response.brokers)
    if not brokers:
        raise BrokerVersionsError(f"{conn.address}: the Metadata reply lists no brokers")
    return brokers


def collect(host: str, port: int, timeout: float) -> list[BrokerReport]:
    with Connection(host, port, timeout) as conn:
        _, bootstrap_versions, _ = api_versions(conn)
        brokers = find_brokers(conn, bootstrap_versions)
    reports: list[BrokerReport] = []
    for node_id, broker_host, broker_port, rack in brokers:
        with Connection(broker_host, broker_port, timeout) as conn:
            used, versions, refused = api_versions(conn)
        reports.append(
            BrokerReport(node_id, broker_host, broker_port, rack, used, versions, refused)
        )
    return reports


def api_rows(report: BrokerReport) -> list[dict[str, Any]]:
    """One row per API the broker or this package knows, by api key."""
    from kafka_messages import negotiation, registry

    rows: list[dict[str, Any]] = []
    for key in sorted(set(report.broker) | set(registry.API_KEYS)):
        entry = registry.API_KEYS.get(key)
        ours = None if entry is None else (entry.min_version, entry.max_version)
        theirs = report.broker.get(key)
        common = negotiation.intersect(ours, theirs)
        rows.append(
            {
                "api_key": key,
                "name": registry.api_name(key),
                "broker": None if theirs is None else {"min": theirs[0], "max": theirs[1]},
                "package": None if ours is None else {"min": ours[0], "max": ours[1]},
                "usable": None if common is None else common[1],
            }
        )
    return rows


def as_text(reports: list[BrokerReport]) -> str:
    from kafka_messages import registry

    blocks = []
    for report in reports:
        lines = []
        for row in api_rows(report):
            known = row["api_key"] in registry.API_NAMES
            label = f"{row['name']}({row['api_key']})" if known else row["name"]
            broker = row["broker"]
            if broker is None:
                lines.append(f"  {label}: UNSUPPORTED")
                continue
            versions = (
                str(broker["min"])
                if broker["min"] == broker["max"]
                else f"{broker['min']} to {broker['max']}"
            )
            usable = "UNSUPPORTED" if row["usable"] is None else f"usable: {row['usable']}"
            lines.append(f"  {label}: {versions} [{usable}]")
        rack = "null" if report.rack is None else report.rack
        blocks.append(
            f"{report.host}:{report.port} (id: {report.node_id} rack: {rack}) -> {{\n"
            + ",\n".join(lines)
            + "\n}\n"
        )
    return "".join(blocks)


def as_json(reports: list[BrokerReport]) -> dict[str, Any]:
    return {
        "brokers": [
            {
                "node_id": r.node_id,
                "host": r.host,
                "port": r.port,
                "rack": r.rack,
                "api_versions_version": r.api_versions_version,
                "downgraded_from": r.downgraded_from,
                "apis": api_rows(r),
            }
            for r in reports
        ]
    }
