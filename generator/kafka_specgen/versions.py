"""``Versions``: the one place version arithmetic lives (after Kafka's ``Versions.java``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator

#: Kafka stores versions as int16; an open-ended range ``N+`` runs up to this.
MAX_VERSION = 32767


@dataclass(frozen=True, slots=True, order=True)
class Versions:
    """An inclusive range of versions; ``lo > hi`` is the empty range (``NONE``)."""

    lo: int
    hi: int

    @staticmethod
    def parse(text: str) -> Versions:
        """Parse ``"none"``, ``"N"``, ``"A-B"`` or ``"N+"``; raise ``ValueError`` otherwise."""
        text = text.strip()
        if text == "none":
            return NONE
        if text.endswith("+"):
            lo = _parse_number(text[:-1], text)
            return Versions(lo, MAX_VERSION)
        if "-" in text:
            lo_text, _, hi_text = text.partition("-")
            lo, hi = _parse_number(lo_text, text), _parse_number(hi_text, text)
            if lo > hi:
                raise ValueError(f"invalid version range {text!r}: {lo} is above {hi}")
            return Versions(lo, hi)
        number = _parse_number(text, text)
        return Versions(number, number)

    @property
    def empty(self) -> bool:
        return self.lo > self.hi

    @property
    def open_ended(self) -> bool:
        return not self.empty and self.hi == MAX_VERSION

    def __contains__(self, item: object) -> bool:
        if isinstance(item, Versions):
            return item.empty or (self.lo <= item.lo and item.hi <= self.hi)
        return isinstance(item, int) and self.lo <= item <= self.hi

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.lo, self.hi + 1))

    def __bool__(self) -> bool:
        return not self.empty

    def intersect(self, other: Versions) -> Versions:
        lo, hi = max(self.lo, other.lo), min(self.hi, other.hi)
        return Versions(lo, hi) if lo <= hi else NONE

    def subtract(self, other: Versions) -> Versions:
        """The versions of ``self`` not in ``other``; a split range raises ``ValueError``."""
        overlap = self.intersect(other)
        if overlap.empty:
            return self
        if overlap == self:
            return NONE
        if overlap.lo > self.lo and overlap.hi < self.hi:
            raise ValueError(f"{other} splits {self} in two")
        if overlap.lo > self.lo:
            return Versions(self.lo, overlap.lo - 1)
        return Versions(overlap.hi + 1, self.hi)

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.hi == MAX_VERSION:
            return f"{self.lo}+"
        if self.lo == self.hi:
            return str(self.lo)
        return f"{self.lo}-{self.hi}"


def _parse_number(text: str, whole: str) -> int:
    text = text.strip()
    if not (text.isascii() and text.isdigit()):
        raise ValueError(f"invalid version string {whole!r}")
    number = int(text)
    if number > MAX_VERSION:
        raise ValueError(f"version {number} in {whole!r} is above {MAX_VERSION}")
    return number


NONE = Versions(1, 0)
ALL = Versions(0, MAX_VERSION)


@dataclass(frozen=True)
class VersionSet:
    """Any set of versions, kept as sorted disjoint ranges: what comparing two spec sets
    needs (versions added at both ends of a range, a field's regular versions around its
    tagged ones)."""

    ranges: tuple[Versions, ...] = ()

    @staticmethod
    def of(*items: Versions) -> VersionSet:
        """The union of ranges (empty ones are ignored)."""
        runs = sorted((v for v in items if not v.empty), key=lambda v: v.lo)
        merged: list[Versions] = []
        for run in runs:
            if merged and run.lo <= merged[-1].hi + 1:
                merged[-1] = Versions(merged[-1].lo, max(merged[-1].hi, run.hi))
            else:
                merged.append(run)
        return VersionSet(tuple(merged))

    @staticmethod
    def from_versions(versions: Iterable[int]) -> VersionSet:
        return VersionSet.of(*(Versions(v, v) for v in versions))

    def __iter__(self) -> Iterator[int]:
        for run in self.ranges:
            yield from run

    def __bool__(self) -> bool:
        return bool(self.ranges)

    def __contains__(self, version: object) -> bool:
        return any(version in run for run in self.ranges)

    def __or__(self, other: VersionSet) -> VersionSet:
        return VersionSet.of(*self.ranges, *other.ranges)

    def __and__(self, other: VersionSet) -> VersionSet:
        return VersionSet.of(*(a.intersect(b) for a in self.ranges for b in other.ranges))

    def __sub__(self, other: VersionSet) -> VersionSet:
        pieces = list(self.ranges)
        for cut in other.ranges:
            pieces = [
                piece
                for run in pieces
                for piece in (
                    run.intersect(Versions(0, cut.lo - 1)),
                    run.intersect(Versions(cut.hi + 1, MAX_VERSION)),
                )
                if not piece.empty
            ]
        return VersionSet.of(*pieces)

    def __xor__(self, other: VersionSet) -> VersionSet:
        return (self - other) | (other - self)

    def __str__(self) -> str:
        """``0-2, 5``; a range up to the maximum reads ``N+``; empty is ``none``."""
        if not self.ranges:
            return "none"
        return ", ".join(str(run) for run in self.ranges)


def version_ranges(versions: Iterable[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``"0-2, 5"`` (``N+`` for a run up to the maximum)."""
    return str(VersionSet.from_versions(versions))
