"""Kafka release names: ``"4.1"``, ``"4.1.1"``, ``"0.10.2.1"``; one parser and one order.

Kafka named releases with four parts before 1.0 (``0.10.2.1``: line 0.10.2, patch 1) and
with three since (``2.8.1``: line 2.8, patch 1). A name may leave its patch out, and then
means the line's first release: ``"4.0"`` is 4.0.0, as Kafka and kafka-python name it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NAME = re.compile(r"[0-9]+(\.[0-9]+){1,3}\Z")


class ReleaseNameError(ValueError):
    """Text that is not a Kafka release name (one line, for the command line)."""


@dataclass(frozen=True, order=True)
class Release:
    """One Kafka release, ordered as released: ``Release.parse("0.10.2") < "2.8"``."""

    parts: tuple[int, int, int, int]
    """Four numbers, zero-padded: 2.8.1 is ``(2, 8, 1, 0)``, 0.10.2.1 ``(0, 10, 2, 1)``."""

    @staticmethod
    def parse(text: str) -> Release:
        """Parse ``X.Y``, ``X.Y.Z`` (or ``0.X.Y.Z``); raise ``ReleaseNameError``."""
        text = text.strip()
        if not _NAME.match(text):
            raise ReleaseNameError(f"{text!r} is not a Kafka release (like 3.9, 4.1.1 or 0.10.2)")
        numbers = [int(part) for part in text.split(".")]
        if numbers[0] != 0 and len(numbers) > 3:
            raise ReleaseNameError(f"{text!r}: releases since 1.0 have three parts at most")
        numbers += [0] * (4 - len(numbers))
        return Release((numbers[0], numbers[1], numbers[2], numbers[3]))

    @property
    def line(self) -> tuple[int, ...]:
        """The release line: ``(4, 0)`` for 4.0.2, ``(0, 10, 2)`` for 0.10.2.1."""
        return self.parts[:3] if self.parts[0] == 0 else self.parts[:2]

    @property
    def patch(self) -> int:
        return self.parts[3] if self.parts[0] == 0 else self.parts[2]

    def __str__(self) -> str:
        """The full name: ``4.0.0``, ``0.10.2.0``."""
        size = 4 if self.parts[0] == 0 else 3
        return ".".join(str(part) for part in self.parts[:size])

    @property
    def short(self) -> str:
        """The line's name, as kafka-python's table keys it: ``4.0``, ``0.10.2``."""
        return ".".join(str(part) for part in self.line)
