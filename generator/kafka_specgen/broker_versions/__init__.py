"""``kafka-specgen broker-versions``: which API versions each broker of a cluster speaks.

Kafka's ``kafka-broker-api-versions.sh`` (KIP-97's format), built on a generated package
alone (framing, registry, negotiation), judged against a spec set (``--specs``; by default
the specs shipped with the tool): a Metadata request to the bootstrap server finds the
brokers, then each broker gets an ApiVersions request at the newest version the package
has, downgraded as KIP-511 says when the broker answers UNSUPPORTED_VERSION. Plain
blocking sockets, one timeout per step, bounded loops. The package is generated once per
spec set and cached.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import SpecError
from .. import __version__
from ..library import GeneratedPackage, bundled_specs, generated_package

CLIENT_ID = "kafka-specgen"
SOFTWARE_NAME = "kafka-specgen"
SOFTWARE_VERSION = __version__
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
    parser.add_argument(
        "--specs",
        action="append",
        type=Path,
        metavar="PATH",
        help="judge usability with a package generated from these specs (a folder or "
        ".zip/.jar; repeatable; generated once and cached); default: the shipped specs",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        host, port = parse_address(args.bootstrap_server)
        if not args.timeout > 0:
            raise BrokerVersionsError(f"--timeout must be positive, not {args.timeout}")
        pkg = Package(generated_package(args.specs or [bundled_specs()]))
        reports = collect(pkg, host, port, args.timeout)
    except (BrokerVersionsError, SpecError) as exc:
        print(f"kafka-specgen broker-versions: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(as_json(pkg, reports), indent=2))
    else:
        print(as_text(pkg, reports), end="")
    return 0


class Package:
    """The modules of the generated package this command speaks with."""

    def __init__(self, package: GeneratedPackage) -> None:
        module = package.module
        self.registry = module("registry")
        missing = [
            name
            for key, name in ((API_VERSIONS_KEY, "ApiVersions"), (METADATA_KEY, "Metadata"))
            if key not in self.registry.API_KEYS
        ]
        if missing or not package.has("framing"):
            raise BrokerVersionsError(
                "the spec set needs ApiVersions, Metadata and the request and response "
                f"headers; it lacks {', '.join(missing) or 'the headers'}"
            )
        self.framing = module("framing")
        self.negotiation = module("negotiation")
        self.errors = module("errors")
        self.headers = module("headers")
        self.error_codes = module("error_codes") if package.has("error_codes") else None
        self.ApiVersionsRequest = self.registry.API_KEYS[API_VERSIONS_KEY].request
        self.MetadataRequest = self.registry.API_KEYS[METADATA_KEY].request


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

    def request(self, pkg: Package, api_key: int, version: int, body: Any) -> tuple[int, bytes]:
        """Send one request; return ``(correlation id, response frame)``."""
        framing = pkg.framing
        self.correlation_id += 1
        header = pkg.headers.RequestHeader(
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


def api_versions(
    pkg: Package, conn: Connection
) -> tuple[int, dict[int, tuple[int, int]], list[int]]:
    """ApiVersions with the KIP-511 downgrade: ``(version used, versions, refused)``."""
    request_class = pkg.ApiVersionsRequest
    version = request_class.MAX_VERSION
    refused: list[int] = []
    for _ in range(MAX_DOWNGRADES + 1):
        request = request_class(
            client_software_name=SOFTWARE_NAME, client_software_version=SOFTWARE_VERSION
        )
        correlation_id, frame = conn.request(pkg, API_VERSIONS_KEY, version, request)
        try:
            outcome = pkg.negotiation.decode_api_versions_response(frame, version)
        except pkg.errors.DecodeError as exc:
            raise BrokerVersionsError(f"{conn.address}: garbage ApiVersions reply: {exc}") from None
        conn.check_correlation_id(outcome.correlation_id, correlation_id)
        if outcome.retry_version is not None:
            refused.append(version)
            version = outcome.retry_version
            continue
        if not outcome.ok:
            raise BrokerVersionsError(
                f"{conn.address}: ApiVersions v{version} failed with error "
                f"{describe_error(pkg, outcome.response.error_code)}"
            )
        return version, outcome.versions, refused
    raise BrokerVersionsError(
        f"{conn.address}: ApiVersions still refused after {MAX_DOWNGRADES} downgrades "
        f"(tried versions {', '.join(map(str, refused))})"
    )


def describe_error(pkg: Package, code: int) -> str:
    if pkg.error_codes is None:  # a package generated without the error-code facts
        return str(code)
    return f"{code} ({pkg.error_codes.error_name(code)})"


def find_brokers(
    pkg: Package, conn: Connection, broker: dict[int, tuple[int, int]]
) -> list[tuple[int, str, int, str | None]]:
    """A Metadata request (no topics) at the newest common version: every broker."""
    request_class = pkg.MetadataRequest
    try:
        version = pkg.negotiation.pick_version(
            METADATA_KEY,
            (request_class.MIN_VERSION, request_class.MAX_VERSION),
            broker.get(METADATA_KEY),
        )
    except pkg.errors.UnsupportedVersionError as exc:
        raise BrokerVersionsError(f"{conn.address}: {exc}") from None
    # Auto-creation must be off to ask for no topics from v4 on; the field is new in v4.
    request = request_class(topics=(), allow_auto_topic_creation=version < 4)
    correlation_id, frame = conn.request(pkg, METADATA_KEY, version, request)
    try:
        header, response = pkg.framing.decode_response(frame, METADATA_KEY, version)
    except pkg.errors.DecodeError as exc:
        raise BrokerVersionsError(f"{conn.address}: garbage Metadata reply: {exc}") from None
    conn.check_correlation_id(header.correlation_id, correlation_id)
    brokers = sorted((b.node_id, b.host, b.port, b.rack) for b in response.brokers)
    if not brokers:
        raise BrokerVersionsError(f"{conn.address}: the Metadata reply lists no brokers")
    return brokers


def collect(pkg: Package, host: str, port: int, timeout: float) -> list[BrokerReport]:
    with Connection(host, port, timeout) as conn:
        _, bootstrap_versions, _ = api_versions(pkg, conn)
        brokers = find_brokers(pkg, conn, bootstrap_versions)
    reports: list[BrokerReport] = []
    for node_id, broker_host, broker_port, rack in brokers:
        with Connection(broker_host, broker_port, timeout) as conn:
            used, versions, refused = api_versions(pkg, conn)
        reports.append(
            BrokerReport(node_id, broker_host, broker_port, rack, used, versions, refused)
        )
    return reports


def judge(
    package: tuple[int, int] | None, broker: tuple[int, int] | None
) -> tuple[str | None, int | None]:
    """Kafka's marker for one API (``NodeApiVersions``) and the usable version: ``usable:
    N``, ``unusable: node too new`` or ``unusable: node too old``; no marker when the
    package has no codec for the API (or the broker lacks it)."""
    if package is None or broker is None:
        return None, None
    if broker[0] > package[1]:
        return "unusable: node too new", None
    if broker[1] < package[0]:
        return "unusable: node too old", None
    usable = min(package[1], broker[1])
    return f"usable: {usable}", usable


def api_rows(pkg: Package, report: BrokerReport) -> list[dict[str, Any]]:
    """One row per API the broker or the package knows, by api key."""
    registry = pkg.registry
    rows: list[dict[str, Any]] = []
    for key in sorted(set(report.broker) | set(registry.API_KEYS)):
        entry = registry.API_KEYS.get(key)
        ours = None if entry is None else (entry.min_version, entry.max_version)
        theirs = report.broker.get(key)
        marker, usable = judge(ours, theirs)
        rows.append(
            {
                "api_key": key,
                "name": registry.api_name(key),
                "broker": None if theirs is None else {"min": theirs[0], "max": theirs[1]},
                "package": None if ours is None else {"min": ours[0], "max": ours[1]},
                "usable": usable,
                "marker": marker,
            }
        )
    return rows


def as_text(pkg: Package, reports: list[BrokerReport]) -> str:
    """Each broker as Kafka's tool prints it (``NodeApiVersions.toString(true)``)."""
    known = pkg.registry.API_NAMES
    blocks = []
    for report in reports:
        lines = []
        for row in api_rows(pkg, report):
            label = f"{row['name']}({row['api_key']})" if row["api_key"] in known else row["name"]
            broker = row["broker"]
            if broker is None:
                lines.append(f"{label}: UNSUPPORTED")
                continue
            low, high = broker["min"], broker["max"]
            versions = str(low) if low == high else f"{low} to {high}"
            marker = f" [{row['marker']}]" if row["marker"] else ""
            lines.append(f"{label}: {versions}{marker}")
        rack = "null" if report.rack is None else report.rack
        blocks.append(
            f"{report.host}:{report.port} (id: {report.node_id} rack: {rack}) -> (\n\t"
            + ",\n\t".join(lines)
            + "\n)\n"
        )
    return "".join(blocks)


def as_json(pkg: Package, reports: list[BrokerReport]) -> dict[str, Any]:
    return {
        "brokers": [
            {
                "node_id": r.node_id,
                "host": r.host,
                "port": r.port,
                "rack": r.rack,
                "api_versions_version": r.api_versions_version,
                "downgraded_from": r.downgraded_from,
                "apis": api_rows(pkg, r),
            }
            for r in reports
        ]
    }
