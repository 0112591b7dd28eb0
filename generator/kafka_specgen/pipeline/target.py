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
from pathlib import Path
from typing import Sequence

from ..facts import build_facts, split_raws
from ..library import bundled_specs, load_specs
from ..load import load_paths
from ..versions import Versions


class TargetError(ValueError):
    """A target release the table does not have (one line for the command line)."""


@dataclass(frozen=True)
class ReleaseRanges:
    """A release's request ranges per api key, as its brokers accept and advertise them."""

    release: str  # e.g. "4.0.2"
    accepted: dict[int, tuple[int, int]]
    advertised: dict[int, tuple[int, int]]


def release_ranges(name: str) -> ReleaseRanges:
    """Kafka release ``name`` (``4.0`` is the newest 4.0.x the tool knows) from the tool's
    release table. The table gives one range per API, what the release's specs define for
    its brokers: it stands for both what they accept and what they advertise."""
    facts = build_facts(split_raws(load_paths([bundled_specs() / "facts"]))[1])
    releases = {r.release: r for r in facts.broker_releases}
    matches = [r for r in releases if r == name or r.startswith(name + ".")]
    if not matches:
        raise TargetError(
            f"--target-release: no Kafka release {name!r} in the table ({', '.join(releases)})"
        )
    chosen = releases[matches[-1]]
    ranges = {key: (lo, hi) for key, lo, hi in chosen.apis}
    return ReleaseRanges(chosen.release, ranges, dict(ranges))


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

    def __init__(self, specs: Sequence[Path | str], label: str | None = None) -> None:
        paths = [Path(p) for p in specs]
        messages, _ = load_specs(paths, warn=False)
        self.label = label or ", ".join(str(p) for p in paths)
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
        """Kafka release ``name`` (``4.0`` is the newest 4.0.x of the table)."""
        ranges = release_ranges(name)
        names = api_names()
        target = cls.__new__(cls)
        target.label = f"Kafka {ranges.release}"
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
