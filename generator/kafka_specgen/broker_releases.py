"""Kafka's brokers release by release: what each advertises in ApiVersions, what it accepts,
its feature levels and its quirks, read from the release table the tool ships
(``specs/facts/broker-releases.json``, built by ``tools/release_table.py``).

    >>> from kafka_specgen.broker_releases import release
    >>> broker = release("4.0.2")  # the 4.0.1 row: 4.0.1 and the 4.0.x after it
    >>> broker.advertised()[0], broker.accepted[0]  # Produce: KAFKA-18659
    ((0, 12), (3, 12))

Before 4.0 a release has two kinds of broker, ZooKeeper (the default, as most clusters of
those releases ran it) and KRaft (``kraft=True``, from 2.8); 4.x is KRaft only. A row stands
for its release and the patch releases after it, up to the next row of its line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Mapping

from .facts import BrokerReleaseFact, FeatureFacts, Facts, build_facts
from .load import load_path
from .release_names import Release, ReleaseNameError

VersionRange = tuple[int, int]
ZOOKEEPER = "zookeeper"
KRAFT = "kraft"
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = "upgrade", "safe downgrade", "unsafe downgrade"
"""The UpdateFeatures upgrade types (v0/v1 ``allowDowngrade`` is a safe downgrade)."""


class ReleaseTableError(ValueError):
    """A release the table has no row for (one line, for the command line)."""


@dataclass(frozen=True)
class Quirk:
    """A way real brokers differ from their specs, and where Kafka's source says so."""

    id: str
    about: str
    source: str


@dataclass(frozen=True)
class Refusal:
    """Versions a broker advertises but refuses (``answer``: ``close``, the broker closes
    the connection without an answer)."""

    api_key: int
    versions: VersionRange
    answer: str
    quirk: str


@dataclass(frozen=True)
class Features:
    """The feature part of the broker's ApiVersions v3+ answer (KIP-584)."""

    epoch: str
    """``zookeeper`` (the /feature znode version: 0, then one more per update), ``metadata
    offset`` (the newest metadata offset the broker applied: it keeps growing) or
    ``unknown`` (-1)."""
    supported: Mapping[str, VersionRange]
    """Feature -> the (min, max) levels the broker supports, as an ApiVersions v4 answer
    lists them (``supported_in`` gives an older version's list)."""
    supported_unstable: Mapping[str, VersionRange]
    """``supported`` with unstable feature versions enabled."""
    finalized: Mapping[str, int]
    """Feature -> the level a new cluster finalizes by default (``metadata.version`` is the
    release's newest production level)."""
    metadata_version_floor: int | None
    """The lowest ``metadata.version`` UpdateFeatures may set (KRaft from 3.3), else None."""
    metadata_versions: Mapping[int, tuple[str, bool]]
    """``metadata.version`` level -> (name such as ``3.3-IV3``, whether the metadata
    changed at that level: a downgrade across such a level is refused)."""
    omits_min_zero_before_v4: bool
    """An ApiVersions v0-3 answer leaves out features whose minimum level is 0 (KAFKA-17492)."""

    def supported_in(
        self, api_versions_version: int, unstable: bool = False
    ) -> dict[str, VersionRange]:
        """The supported features an ApiVersions answer of this version lists."""
        ranges = self.supported_unstable if unstable else self.supported
        drop_zero = self.omits_min_zero_before_v4 and api_versions_version < 4
        return {name: r for name, r in ranges.items() if not (drop_zero and r[0] == 0)}

    def metadata_version_name(self, level: int) -> str:
        """``3.3-IV3`` for level 7; ``UNKNOWN 0`` for a level the release does not know (as
        ``kafka-features.sh`` prints it)."""
        known = self.metadata_versions.get(level)
        return known[0] if known else f"UNKNOWN {level}"

    def metadata_version_change(
        self, current: int, target: int, upgrade_type: str = UPGRADE, unstable: bool = False
    ) -> str | None:
        """Why the broker's controller refuses to move ``metadata.version`` from ``current``
        to ``target`` (it answers INVALID_UPDATE_VERSION with this reason), or None when it
        allows it: any supported level from the floor up; downgrades only with a downgrade
        type, only safe ones (no level in between changed the metadata), never unsafe ones
        (FeatureControlManager.updateFeature / updateMetadataVersion)."""
        supported = (self.supported_unstable if unstable else self.supported).get(
            "metadata.version"
        )
        if supported is None or self.metadata_version_floor is None:
            return "this broker has no metadata.version to change"
        if upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
            return "The controller does not support the given upgrade type."
        if not supported[0] <= target <= supported[1]:
            return (
                f"metadata.version {target} is outside the supported {supported[0]}-{supported[1]}."
            )
        if target < self.metadata_version_floor:
            return (
                "Unable to set a metadata.version less than "
                f"{self.metadata_version_name(self.metadata_version_floor)}"
            )
        if target < current and upgrade_type == UPGRADE:
            return (
                "Can't downgrade the version of this feature without setting the upgrade type "
                "to either safe or unsafe downgrade."
            )
        if target > current and upgrade_type != UPGRADE:
            return "Can't downgrade to a newer version."
        if target < current and any(
            self.metadata_versions.get(level, ("", True))[1]
            for level in range(target + 1, current + 1)
        ):
            if upgrade_type == UNSAFE_DOWNGRADE:
                return "Unsafe metadata downgrade is not supported in this version."
            return (
                "Refusing to perform the requested downgrade because it might delete metadata "
                "information."
            )
        return None


@dataclass(frozen=True)
class BrokerRelease:
    """A broker of one Kafka release and kind, as the table has it."""

    release: Release
    kind: str
    """``zookeeper`` or ``kraft``."""
    api_versions: str
    """``answered``; before 0.10 ``closes`` (0.8: the connection) or ``no answer`` (0.9)."""
    features: Features | None
    """None before 2.7: ApiVersions carries no features."""
    quirks: tuple[Quirk, ...]
    sources: tuple[str, ...]
    notes: tuple[str, ...]
    refusals: tuple[Refusal, ...]
    _advertised: Mapping[int, VersionRange] = field(repr=False)
    _telemetry: Mapping[int, VersionRange] = field(repr=False)
    _unstable: Mapping[int, VersionRange] = field(repr=False)
    _handled: Mapping[int, VersionRange] = field(repr=False)
    """What a broker without ApiVersions handles."""

    @property
    def name(self) -> str:
        """The row's release: ``4.0.1``, ``0.10.2.0``."""
        return str(self.release)

    @property
    def label(self) -> str:
        """The name, with ``(KRaft)`` for a KRaft broker of a release that has both kinds."""
        return (
            f"{self.name} (KRaft)"
            if self.kind == KRAFT and self.release.parts[0] < 4
            else self.name
        )

    def advertised(
        self, telemetry: bool = False, unstable: bool = False
    ) -> dict[int, VersionRange]:
        """Api key -> (min, max) in the broker's ApiVersions answer; ``telemetry``: with a
        client-telemetry receiver configured; ``unstable``: with
        ``unstable.api.versions.enable``. Empty for a broker without ApiVersions."""
        ranges = dict(self._advertised)
        if telemetry:
            ranges.update(self._telemetry)
        if unstable:
            ranges.update(self._unstable)
        return dict(sorted(ranges.items()))

    @property
    def accepted(self) -> dict[int, VersionRange]:
        """Api key -> (min, max) the broker handles in its default configuration: what it
        advertises, its telemetry APIs (answered even when not advertised), less what it
        refuses (``refusals``)."""
        return self.accepts()

    def accepts(self, unstable: bool = False) -> dict[int, VersionRange]:
        """``accepted``, with ``unstable.api.versions.enable`` when ``unstable``."""
        if not self._advertised:
            return dict(self._handled)
        ranges = self.advertised(telemetry=True, unstable=unstable)
        for refusal in self.refusals:
            lo, hi = ranges[refusal.api_key]
            ranges[refusal.api_key] = (refusal.versions[1] + 1, hi)
            assert refusal.versions[0] == lo, "refusals start at the advertised minimum"
        return ranges

    def refusal(self, api_key: int, version: int) -> Refusal | None:
        """How the broker refuses an advertised version, or None when it does not."""
        for refusal in self.refusals:
            if refusal.api_key == api_key and refusal.versions[0] <= version <= refusal.versions[1]:
                return refusal
        return None


def _ranges(triples: tuple[tuple[int, int, int], ...]) -> dict[int, VersionRange]:
    return {key: (lo, hi) for key, lo, hi in triples}


def _features(facts: FeatureFacts, quirks: tuple[str, ...]) -> Features:
    supported = {name: (lo, hi) for name, lo, hi in facts.supported}
    unstable = facts.supported_unstable
    return Features(
        facts.epoch,
        supported,
        supported if unstable is None else {name: (lo, hi) for name, lo, hi in unstable},
        dict(facts.finalized),
        facts.metadata_version_floor,
        {level: (name, changed) for level, name, changed in facts.metadata_versions},
        "features-v3" in quirks,
    )


def _broker(row: BrokerReleaseFact, quirks: Mapping[str, Quirk]) -> BrokerRelease:
    return BrokerRelease(
        Release.parse(row.release),
        row.kind,
        row.api_versions,
        None if row.features is None else _features(row.features, row.quirks),
        tuple(quirks[q] for q in row.quirks),
        row.sources,
        row.notes,
        tuple(Refusal(r.api_key, r.versions, r.answer, r.quirk) for r in row.refused),
        _ranges(row.advertised or ()),
        _ranges(row.telemetry),
        _ranges(row.unstable),
        _ranges(row.accepted_without_api_versions),
    )


class ReleaseTable:
    """Every row of a release table, oldest first (ZooKeeper before KRaft)."""

    def __init__(self, facts: Facts) -> None:
        quirks = {q.id: Quirk(q.id, q.about, q.source) for q in facts.broker_release_quirks}
        self.rows: tuple[BrokerRelease, ...] = tuple(
            _broker(row, quirks) for row in facts.broker_releases
        )
        self.quirks: Mapping[str, Quirk] = quirks

    def releases(self, kind: str | None = None) -> tuple[BrokerRelease, ...]:
        """The rows of ``kind`` (``zookeeper``, ``kraft``), or every row, oldest first."""
        return tuple(row for row in self.rows if kind is None or row.kind == kind)

    def default_rows(self) -> tuple[BrokerRelease, ...]:
        """One row per release: ZooKeeper where the release has both kinds, else KRaft."""
        zookeeper = {row.release for row in self.rows if row.kind == ZOOKEEPER}
        return tuple(r for r in self.rows if r.kind == ZOOKEEPER or r.release not in zookeeper)

    def release(self, name: str, kraft: bool = False) -> BrokerRelease:
        """The row for Kafka ``name`` (``X.Y``, ``X.Y.Z``, ``0.X.Y.Z``): the newest row of its
        line at or below it; ``kraft``: its KRaft broker (4.x has no other)."""
        try:
            wanted = Release.parse(name)
        except ReleaseNameError as exc:
            raise ReleaseTableError(str(exc)) from None
        line = [row for row in self.rows if row.release.line == wanted.line]
        if not line:
            lines = sorted({row.release for row in self.rows})
            raise ReleaseTableError(
                f"no Kafka {wanted.short} in the release table ({lines[0].short} to "
                f"{lines[-1].short})"
            )
        kinds = {row.kind for row in line}
        kind = KRAFT if kraft or ZOOKEEPER not in kinds else ZOOKEEPER
        if kind not in kinds:
            first = min(row.release for row in self.rows if row.kind == KRAFT)
            raise ReleaseTableError(
                f"Kafka {wanted.short} has no KRaft brokers (KRaft came with {first.short})"
            )
        rows = [row for row in line if row.kind == kind and row.release <= wanted]
        return (rows or [row for row in line if row.kind == kind])[-1]


def load(path: Path) -> ReleaseTable:
    """The release table in ``path`` (a ``broker-releases`` facts file)."""
    return ReleaseTable(build_facts(load_path(path)))


@cache
def table() -> ReleaseTable:
    """The release table the tool ships."""
    from .library import bundled_specs

    return load(bundled_specs() / "facts" / "broker-releases.json")


def release(name: str, kraft: bool = False) -> BrokerRelease:
    """The shipped table's row for Kafka ``name`` (see ``ReleaseTable.release``)."""
    return table().release(name, kraft)


def releases(kind: str | None = None) -> tuple[BrokerRelease, ...]:
    """The shipped table's rows of ``kind`` (or all), oldest first."""
    return table().releases(kind)
