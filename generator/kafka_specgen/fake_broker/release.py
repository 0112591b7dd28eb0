"""Which API ranges a Kafka release's brokers advertise: the one place the fake broker
looks a release up (the generated package's ``releases.BROKER_RELEASES`` table today)."""

from __future__ import annotations

from collections.abc import Mapping

from ..library import GeneratedPackage

VersionRange = tuple[int, int]


class UnknownRelease(ValueError):
    """A release the table does not have (or a package without the table)."""


def release_ranges(package: GeneratedPackage, name: str) -> tuple[str, Mapping[int, VersionRange]]:
    """(the release's full name, api key -> (min, max) its brokers advertise) for ``name``
    (``"3.0"`` picks the newest 3.0.x of the table)."""
    table: Mapping[str, Mapping[int, VersionRange]] = package.module("releases").BROKER_RELEASES
    if not table:
        raise UnknownRelease("the package has no release table (generated with --facts none)")
    matches = [r for r in table if r == name or r.startswith(name + ".")]
    if not matches:
        raise UnknownRelease(f"no Kafka release {name!r} in the table: {', '.join(table)}")
    chosen = matches[-1]
    return chosen, table[chosen]
