"""The target of an upgrade: which request versions it accepts, and which its brokers
advertise in their ApiVersions answers (the two can differ: Kafka 4.0 advertises
Produce v0-v2 for librdkafka's sake and rejects them, KAFKA-18659).

``Target.release("4.0")`` reads a Kafka release through ``release_ranges``, the one place
readiness looks a release up; ``Target(specs)`` takes a spec set (what its brokers accept
is what they advertise). Readiness judges versions against ``accepted``; known client
bugs look at ``advertised`` (``pipeline.advice``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import broker_releases
from ..facts import build_facts, split_raws
from ..library import SpecSource, bundled_specs, load_specs, spec_set
from ..load import load_paths
from ..versions import Versions


class TargetError(ValueError):
    """A target release the table does not have (one line for the command line)."""


@dataclass(frozen=True)
class ReleaseRanges:
    """A release's request ranges per api key, as its brokers accept and advertise them."""

    release: str  # the table row's release, e.g. "4.0.0"
    label: str  # with its kind where a release has both, e.g. "3.9.0 (KRaft)"
    accepted: dict[int, tuple[int, int]]
    advertised: dict[int, tuple[int, int]]


def release_ranges(name: str) -> ReleaseRanges:
    """Kafka release ``name`` (``4.0`` is 4.0.0; ``4.0.2`` the table's newest 4.0 row at or
    below it) from the tool's release table: what its brokers accept and what they
    advertise (ZooKeeper brokers before 4.0, as most clusters of those releases ran)."""
    try:
        chosen = broker_releases.release(name)
    except broker_releases.ReleaseTableError as exc:
        raise TargetError(f"--target-release: {exc}") from None
    return ReleaseRanges(
        chosen.name, chosen.label, dict(chosen.accepted), dict(chosen.advertised())
    )


def api_names() -> dict[int, str]:
    facts = build_facts(split_raws(load_paths([bundled_specs() / "facts"]))[1])
    return {fact.key: fact.name for fact in facts.api_keys}


class Target:
    """What a target accepts (``accepted``: api key -> (name, versions); an empty
    ``Versions`` for an API the target removed altogether), what its brokers advertise
    (``advertised``), and the versions its specs mark deprecated."""

    label: str
    release_name: str | None  # the Kafka release, for a release target
    accepted: dict[int, tuple[str, Versions]]
    advertised: dict[int, Versions]
    deprecated: dict[int, Versions]

    def __init__(self, specs: SpecSource, label: str | None = None) -> None:
        chosen = spec_set(specs)
        messages, _ = load_specs(chosen, warn=False)
        self.label = label or chosen.label
        self.release_name = None
        self.accepted = {
            m.api_key: (m.api_name, Versions(1, 0) if m.removed else m.valid_versions)
            for m in messages
            if m.type == "request" and m.api_key is not None
        }
        self.advertised = {key: versions for key, (_, versions) in self.accepted.items()}
        self.deprecated = {
            m.api_key: m.deprecated_versions
            for m in messages
            if m.type == "request" and m.api_key is not None and m.deprecated_versions
        }

    @classmethod
    def release(cls, name: str) -> Target:
        """Kafka release ``name`` (``4.0`` is 4.0.0), from the release table."""
        ranges = release_ranges(name)
        names = api_names()
        target = cls.__new__(cls)
        target.label = f"Kafka {ranges.label}"
        target.release_name = ranges.release
        target.accepted = {
            key: (names.get(key, f"api key {key}"), Versions(lo, hi))
            for key, (lo, hi) in ranges.accepted.items()
        }
        target.advertised = {key: Versions(lo, hi) for key, (lo, hi) in ranges.advertised.items()}
        target.deprecated = {}
        return target

    def lowest(self, api_key: int) -> int | None:
        """The lowest version of an API the target accepts (None: none at all)."""
        known = self.accepted.get(api_key)
        return known[1].lo if known is not None and known[1] else None

    def advertises(self, api_key: int, version: int) -> bool:
        versions = self.advertised.get(api_key)
        return versions is not None and version in versions
