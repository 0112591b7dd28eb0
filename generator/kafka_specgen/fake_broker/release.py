"""The Kafka release a fake cluster emulates: its row of the release table (``broker_releases``),
the spec data that serves it, and how its brokers treat each request and answer ApiVersions.

A release is served with its own bundled spec data (``SpecSet.of_release``); releases before
2.4 have no JSON specs and are served with the oldest bundled set's codecs (2.4.0), which hold
every version they speak. The broker advertises exactly the row's ranges and accepts what the
row accepts; the rest is refused as that release refuses it:

- a version it advertises but refuses (Produce v0-2 on 4.x, KAFKA-18659) closes the
  connection without an answer, as Kafka's ``SocketServer`` does;
- an API key or version it does not know closes the connection, except on 0.9, whose
  request parsing fails outside its per-request error handling: the request is dropped, no
  answer comes and the connection stays open (``IGNORE``);
- ApiVersions is answered from 0.10 on (a version newer than the broker's gets KIP-511's
  answer; before 2.4, with an empty list, as those brokers answered); 0.8 closes the
  connection on it, 0.9 never answers it.

The finalized features (KIP-584) live here too: ApiVersions v3+ answers carry the row's
supported features, the finalized levels and their epoch, and UpdateFeatures (``features``)
changes the levels.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from .. import history
from ..api_keys import ApiKey
from ..broker_releases import KRAFT, BrokerRelease, ReleaseTableError, release
from ..library import SpecSet
from ..release_names import Release
from .errors import ErrorCode

VersionRange = tuple[int, int]

ANSWER, CLOSE, IGNORE = "answer", "close", "ignore"
"""What the broker does with a request: answer it, close the connection, or drop it."""

#: A fresh KRaft cluster's metadata log already holds this many records (the bootstrap
#: records, the brokers' registrations): the epoch a new broker reports is about that.
KRAFT_BOOT_OFFSET = 20
#: A KRaft controller writes a NoOpRecord every metadata.max.idle.interval.ms (500 ms,
#: since 3.3): the finalized-features epoch grows that fast on an idle cluster.
IDLE_RECORD_SECONDS = 0.5


class UnknownRelease(ValueError):
    """A release the table has no row for, or a kind it does not have (one line)."""


def resolve(name: str, kraft: bool = False) -> tuple[BrokerRelease, SpecSet]:
    """The table's row for Kafka ``name`` (``kraft``: its KRaft broker) and the bundled spec
    data that serves it: the release's own (``4.0.1`` is served with 4.0.2's, see
    ``history.release_data``), or the oldest bundled set's before 2.4."""
    try:
        broker = release(name, kraft)
    except ReleaseTableError as exc:
        raise UnknownRelease(str(exc)) from None
    oldest = history.releases()[0]
    try:
        return broker, SpecSet.of_release(str(oldest) if Release.parse(name) < oldest else name)
    except history.HistoryError as exc:
        raise UnknownRelease(str(exc)) from None


def describe(broker: BrokerRelease, asked: str, specs: SpecSet) -> str:
    """One line naming what a cluster emulates, e.g. ``Kafka 4.0.2 (KRaft broker, the
    release table's 4.0.1 row, spec data of 4.0.2)``."""
    wanted = Release.parse(asked)
    parts = ["KRaft broker" if broker.kind == KRAFT else "ZooKeeper broker"]
    if str(wanted) != broker.name:
        parts.append(f"the release table's {broker.name} row")
    if specs.paths:
        parts.append(f"specs {specs.label}")
    elif wanted < history.releases()[0]:
        parts.append(f"codecs of {specs.bundled[0]}")
    elif specs.bundled[0] != str(wanted):
        parts.append(f"spec data of {specs.bundled[0]}")
    else:
        parts.append("its own spec data")
    if broker.api_versions == "closes":
        parts.append("no ApiVersions: closes the connection on it")
    elif broker.api_versions == "no answer":
        parts.append("no ApiVersions: never answers it")
    return f"Kafka {wanted} ({', '.join(parts)})"


@dataclass
class Emulation:
    """What a fake cluster's brokers do as brokers of one release: which requests they
    answer, their ApiVersions answer, their finalized features. Only the event loop's
    thread changes it (UpdateFeatures)."""

    broker: BrokerRelease
    telemetry: bool = False
    """Advertise the telemetry APIs (71, 72), as with a client-telemetry receiver."""
    unstable: bool = False
    """Advertise and accept unstable versions (``unstable.api.versions.enable``)."""
    package: Any = None
    """The serving ``GeneratedPackage`` (pre-2.4 KIP-511 answers are encoded with it)."""
    advertised: dict[int, VersionRange] = field(init=False)
    accepted: dict[int, VersionRange] = field(init=False)
    finalized: dict[str, int] = field(init=False)
    """Feature -> finalized level (0: not finalized)."""
    records: int = field(init=False, default=0)
    """Metadata records written since the start (KRaft): feature levels changed."""
    updates: int = field(init=False, default=0)
    """Feature updates applied (ZooKeeper: the /feature znode's version)."""
    started: float = field(init=False, default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self.advertised = self.broker.advertised(self.telemetry, self.unstable)
        self.accepted = self.broker.accepts(self.unstable)  # before 0.10: what it handles
        features = self.broker.features
        self.finalized = dict(features.finalized) if features is not None else {}

    # --- requests -------------------------------------------------------------------------

    def verdict(self, api_key: int, version: int) -> str:
        """``ANSWER``, ``CLOSE`` or ``IGNORE`` for a request of ``api_key`` at ``version``."""
        behaviour = self.broker.api_versions
        known = self.accepted.get(api_key)
        if api_key == ApiKey.API_VERSIONS and behaviour == "answered":
            return ANSWER  # any version: KIP-511 answers the newer ones
        if known is None:
            return IGNORE if behaviour == "no answer" else CLOSE
        if not known[0] <= version <= known[1]:
            return CLOSE
        if self.broker.refusal(api_key, version) is not None:
            return CLOSE  # every refusal of the table is "close"
        return ANSWER

    def old_unsupported_api_versions(self, event: Any) -> bytes | None:
        """The frame (size prefix included) a broker before 2.4 sends for an ApiVersions
        request newer than it knows: a v0 answer, UNSUPPORTED_VERSION, no api keys (KIP-511's
        list of ApiVersions' own range came with 2.4); None when the usual answer applies."""
        own = self.advertised.get(ApiKey.API_VERSIONS)
        if (
            own is None
            or event.api_version <= own[1]
            or self.broker.release >= Release.parse("2.4")
        ):
            return None
        framing = self.package.module("framing")
        response = self.package.module("registry").API_KEYS[ApiKey.API_VERSIONS].response
        body = response(error_code=ErrorCode.UNSUPPORTED_VERSION, api_keys=[])
        header = self.package.module("headers").ResponseHeader(event.correlation_id)
        return bytes(
            framing.add_size_prefix(framing.encode_response(header, body, ApiKey.API_VERSIONS, 0))
        )

    # --- features -------------------------------------------------------------------------

    @property
    def feature_levels_known(self) -> bool:
        """Whether the brokers hold finalized features (ZooKeeper from 2.7, KRaft from 3.3)."""
        features = self.broker.features
        return features is not None and features.epoch != "unknown"

    def epoch(self, now: float | None = None) -> int:
        """The finalized-features epoch: -1 when unknown; ZooKeeper: the /feature znode's
        version; KRaft: the newest metadata offset, which grows with every record and with
        the idle records (``IDLE_RECORD_SECONDS``)."""
        features = self.broker.features
        if features is None or features.epoch == "unknown":
            return -1
        if features.epoch == "zookeeper":
            return self.updates
        elapsed = (time.monotonic() if now is None else now) - self.started
        return KRAFT_BOOT_OFFSET + self.records + int(elapsed / IDLE_RECORD_SECONDS)

    def api_versions_features(self, api_versions_version: int) -> dict[str, Any]:
        """The feature fields of an ApiVersions answer at this version (keyword arguments of
        ``ServerConnection.send_api_versions``): none before v3 or before 2.7."""
        features = self.broker.features
        if features is None or api_versions_version < 3:
            return {}
        return {
            "supported_features": features.supported_in(api_versions_version, self.unstable),
            "finalized_features": {n: (lvl, lvl) for n, lvl in self.finalized.items() if lvl > 0},
            "finalized_features_epoch": self.epoch(),
        }

    def supported(self) -> dict[str, VersionRange]:
        """Feature -> the levels the brokers (and controllers) support."""
        features = self.broker.features
        if features is None:
            return {}
        return dict(features.supported_unstable if self.unstable else features.supported)

    def set_levels(self, levels: dict[str, int]) -> None:
        """Finalize ``levels`` (an accepted UpdateFeatures): one metadata record per changed
        feature (KRaft), one more version of the /feature znode (ZooKeeper). Level 0 is no
        finalized level: the feature is dropped (so only supported features are kept)."""
        changed = {n: lvl for n, lvl in levels.items() if self.finalized.get(n, 0) != lvl}
        if not changed:
            return
        for name, level in changed.items():
            if level > 0:
                self.finalized[name] = level
            else:
                self.finalized.pop(name, None)
        self.records += len(changed)
        self.updates += 1
