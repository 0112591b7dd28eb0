"""``kafka-specgen broker-versions``: which API versions each broker of a cluster speaks.

Kafka's ``kafka-broker-api-versions.sh`` (KIP-97's format), judged against a spec set
(``--specs``, or a Kafka release's bundled specs with ``--release``, named on a last line;
by default the specs shipped with the tool). It is a user of the generated
package's own blocking client: the handshake (ApiVersions at the newest version, downgraded
as KIP-511 says), correlation and timeouts are the package's ``connection``. A Metadata
request to the bootstrap server finds the brokers, then each broker is asked itself and
its release guessed. The package is generated once per spec set and cached.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..api_keys import ApiKey
from ..errors import SpecError
from .. import __version__
from ..library import GeneratedPackage, PackageLacks, SpecSet, bundled_specs, generated_package
from ..spec_options import add_spec_options, chosen_spec_set

CLIENT_ID = "kafka-specgen"
SOFTWARE_NAME = "kafka-specgen"
SOFTWARE_VERSION = __version__
#: A reply larger than this is treated as garbage (ApiVersions/Metadata without topics
#: are a few kilobytes).
MAX_REPLY_BYTES = 16 * 1024 * 1024


class BrokerVersionsError(Exception):
    """A failure reported as one line on stderr (no traceback)."""


@dataclass
class BrokerReport:
    node_id: int
    host: str
    port: int
    rack: str | None
    api_versions_version: int | None
    broker: dict[int, tuple[int, int]]
    downgraded_from: list[int] = field(default_factory=list)
    release_guess: str | None = None
    """Which Kafka release the broker is (``Ready.release_guess``)."""
    supported_features: dict[str, tuple[int, int]] = field(default_factory=dict)
    finalized_features: dict[str, int] = field(default_factory=dict)
    """Feature -> finalized level (the max of the broker's finalized range)."""
    features_epoch: int = -1


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
    add_spec_options(
        parser,
        "judge usability with a package generated from these specs (a folder or "
        ".zip/.jar; repeatable; generated once and cached); default: the shipped specs, "
        "which have ApiVersions, Metadata and UpdateFeatures",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        host, port = parse_address(args.bootstrap_server)
        if not args.timeout > 0:
            raise BrokerVersionsError(f"--timeout must be positive, not {args.timeout}")
        specs = chosen_spec_set(args) or SpecSet("the tool's own specs", (bundled_specs(),))
        pkg = Package(generated_package(specs), specs)
        reports = collect(pkg, host, port, args.timeout)
    except (BrokerVersionsError, SpecError) as exc:
        print(f"kafka-specgen broker-versions: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(as_json(pkg, reports), indent=2))
    else:
        print(as_text(pkg, reports), end="")
        if specs.bundled:
            print(f"usable versions judged against {specs.label}")
    return 0


class Package:
    """The modules of the generated package this command speaks with."""

    def __init__(self, package: GeneratedPackage, specs: SpecSet | None = None) -> None:
        self.specs = specs
        """The spec set the package was generated from (its label goes in the output)."""
        module = package.module
        try:
            package.require(
                ApiKey.API_VERSIONS,
                ApiKey.METADATA,
                because="broker-versions asks every broker with ApiVersions and Metadata",
            )
        except PackageLacks as exc:
            raise BrokerVersionsError(str(exc)) from None
        self.registry = module("registry")
        self.client = module("client")
        self.connection = module("connection")
        releases = module("releases") if package.has("releases") else None
        self.metadata_versions: dict[int, str] = getattr(releases, "METADATA_VERSIONS", {})
        self.errors = module("errors")
        self.MetadataRequest = self.registry.API_KEYS[ApiKey.METADATA].request

    @contextmanager
    def connect(self, host: str, port: int, timeout: float) -> Iterator[Any]:
        """A ready client of ``host:port``; every failure, during the handshake or in the
        ``with`` block, becomes one ``BrokerVersionsError`` naming the address."""
        address = f"{host}:{port}"
        connection = self.connection.ClientConnection(
            client_id=CLIENT_ID,
            client_software=(SOFTWARE_NAME, SOFTWARE_VERSION),
            max_in_flight=1,
            request_timeout=timeout,
            max_frame_size=MAX_REPLY_BYTES,
        )
        try:
            # timeout bounds the connection and the handshake; each request has its own
            with self.client.Client.connect(host, port, connection, timeout=timeout) as client:
                yield client
        except BrokerVersionsError:
            raise
        except self.connection.RequestTimedOutError as exc:
            reason = exc.event.reason
            raise BrokerVersionsError(
                f"{address}: no reply within {timeout:g} s ({reason})"
            ) from None
        except self.connection.ConnectionFailedError as exc:
            raise BrokerVersionsError(f"{address}: {self.failure(exc, timeout)}") from None

    def failure(self, exc: Any, timeout: float) -> str:
        """A failed connection, in the words of someone asking a broker for its versions."""
        event = exc.event
        causes = self.connection.FailureCause
        if event.cause is causes.CONNECT_FAILED:
            return f"cannot connect: {event.reason.split(': ', 1)[-1]}"
        if event.cause in (causes.FRAME_TOO_LARGE, causes.UNDECODABLE):
            return f"garbage reply ({event.reason}); is this a Kafka broker?"
        if event.cause in (causes.CLOSED, causes.CLOSED_DURING_API_VERSIONS):
            return f"the connection was closed before a full reply arrived ({event.reason})"
        if event.cause is causes.TIMED_OUT:
            hint = ": a Kafka 0.9 broker never answers it" if "ApiVersions" in event.reason else ""
            return f"no reply within {timeout:g} s ({event.reason}{hint})"
        return f"{event.cause.value}: {event.reason}"


def parse_address(text: str) -> tuple[str, int]:
    host, sep, port_text = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise BrokerVersionsError(f"--bootstrap-server {text!r} is not HOST:PORT")
    return host, int(port_text)


def collect(pkg: Package, host: str, port: int, timeout: float) -> list[BrokerReport]:
    """The bootstrap server's Metadata lists the brokers; each one is then asked itself."""
    with pkg.connect(host, port, timeout) as client:
        brokers = find_brokers(pkg, client, f"{host}:{port}")
    reports: list[BrokerReport] = []
    for node_id, broker_host, broker_port, rack in brokers:
        with pkg.connect(broker_host, broker_port, timeout) as client:
            ready = client.ready
        reports.append(
            BrokerReport(
                node_id,
                broker_host,
                broker_port,
                rack,
                ready.api_versions_version,
                dict(ready.versions),
                list(ready.api_versions_refused),
                None if ready.release_guess is None else str(ready.release_guess),
                dict(ready.features.supported),
                {name: high for name, (_, high) in ready.features.finalized.items()},
                ready.features.epoch,
            )
        )
    return reports


def find_brokers(pkg: Package, client: Any, address: str) -> list[tuple[int, str, int, str | None]]:
    """A Metadata request (no topics) at the newest common version: every broker."""
    try:
        version = client.connection.version_for(ApiKey.METADATA)
    except pkg.errors.UnsupportedVersionError as exc:
        raise BrokerVersionsError(f"{address}: {exc}") from None
    # Auto-creation must be off to ask for no topics from v4 on; the field is new in v4.
    request = pkg.MetadataRequest(topics=(), allow_auto_topic_creation=version < 4)
    response = client.request(request, version=version)
    brokers = sorted((b.node_id, b.host, b.port, b.rack) for b in response.brokers)
    if not brokers:
        raise BrokerVersionsError(f"{address}: the Metadata reply lists no brokers")
    return brokers


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
    """Each broker as Kafka's tool prints it (``NodeApiVersions.toString(true)``), then a
    line with the release it looks like and its features (``feature_lines``)."""
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
            + f"release guess: {report.release_guess or 'unknown (no release table)'}\n"
            + "".join(line + "\n" for line in feature_lines(report, pkg.metadata_versions))
        )
    return "".join(blocks)


def feature_lines(report: BrokerReport, metadata_versions: dict[int, str]) -> list[str]:
    """The broker's features as ``kafka-features.sh describe`` prints them (Kafka's
    FeatureCommand): one tab-separated line per supported feature, by name; levels of
    ``metadata.version`` by name (``3.3-IV3``; ``UNKNOWN n`` for one the table lacks), a
    feature not finalized at level 0, the epoch ``-`` when unknown."""

    def level(feature: str, value: int) -> str:
        if feature != "metadata.version":
            return str(value)
        return metadata_versions.get(value, f"UNKNOWN {value}")

    epoch = str(report.features_epoch) if report.features_epoch >= 0 else "-"
    return [
        f"Feature: {name}\tSupportedMinVersion: {level(name, low)}"
        f"\tSupportedMaxVersion: {level(name, high)}"
        f"\tFinalizedVersionLevel: {level(name, report.finalized_features.get(name, 0))}"
        f"\tEpoch: {epoch}"
        for name, (low, high) in sorted(report.supported_features.items())
    ]


def as_json(pkg: Package, reports: list[BrokerReport]) -> dict[str, Any]:
    return {
        "spec_set": None if pkg.specs is None else pkg.specs.label,
        "brokers": [
            {
                "node_id": r.node_id,
                "host": r.host,
                "port": r.port,
                "rack": r.rack,
                "api_versions_version": r.api_versions_version,
                "downgraded_from": r.downgraded_from,
                "release_guess": r.release_guess,
                "features": {
                    "supported": {
                        name: {"min": low, "max": high}
                        for name, (low, high) in sorted(r.supported_features.items())
                    },
                    "finalized": dict(sorted(r.finalized_features.items())),
                    "epoch": r.features_epoch,
                },
                "apis": api_rows(pkg, r),
            }
            for r in reports
        ],
    }
