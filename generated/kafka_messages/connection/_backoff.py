# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""``ReconnectBackoff``: how long to wait before each new connection attempt."""

from __future__ import annotations

import random


class ReconnectBackoff:
    """Exponential backoff with jitter, as Java's client paces reconnects
    (``reconnect.backoff.ms`` = 50 ms, ``reconnect.backoff.max.ms`` = 1 s, ±20 %).

    ``next_delay()`` gives the wait before the next attempt: ``initial`` after the first
    failure, doubled after each further one, capped at ``maximum``, then spread by
    ``jitter`` (0.2: between 80 % and 120 %). ``reset()`` after a success.
    """

    def __init__(
        self,
        initial: float = 0.05,
        maximum: float = 1.0,
        *,
        jitter: float = 0.2,
        rng: random.Random | None = None,
    ) -> None:
        if not 0 < initial <= maximum:
            raise ValueError("the backoff needs 0 < initial <= maximum")
        if not 0 <= jitter < 1:
            raise ValueError("jitter must be in [0, 1)")
        self.initial = initial
        self.maximum = maximum
        self.jitter = jitter
        self.failures = 0
        self._rng = rng or random.Random()

    def next_delay(self) -> float:
        """The wait before the next attempt; counts one more failure."""
        base = min(self.maximum, self.initial * 2.0 ** min(self.failures, 64))
        self.failures += 1
        spread = 1.0 + self.jitter * (2.0 * self._rng.random() - 1.0)
        return min(self.maximum * (1.0 + self.jitter), base * spread)

    def reset(self) -> None:
        self.failures = 0
