"""Timers that API modules set on the cluster's event loop: members' session and rebalance
timeouts, share groups' acquisition locks, log retention.

The loop (``loop.EventLoop``) is the only implementation; ``ClusterState.timers`` holds it
once the cluster has one, and a state without it (a test's bare ``ClusterState``) sets no
timers: time then acts only when requests come, as the classic group code also checks.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol


class Timers(Protocol):
    def call_at(self, when: float, callback: Callable[[], None]) -> Any: ...

    def cancel(self, timer: Any) -> None: ...


def now() -> float:
    """The loop's clock (``time.monotonic``), for timer callbacks, which get no ``Call``."""
    return time.monotonic()


def wall_ms() -> int:
    """Wall-clock milliseconds, as record timestamps and retention use them."""
    return int(time.time() * 1000)


class Alarm:
    """One timer that is set again and again (a member's session timeout): ``set`` replaces
    the pending one, ``clear`` drops it."""

    __slots__ = ("_timers", "_handle", "when")

    def __init__(self, timers: Timers | None) -> None:
        self._timers = timers
        self._handle: Any = None
        self.when = 0.0

    def set(self, when: float, callback: Callable[[], None]) -> None:
        self.clear()
        self.when = when
        if self._timers is not None:

            def fire() -> None:
                self._handle = None
                callback()

            self._handle = self._timers.call_at(when, fire)

    def clear(self) -> None:
        if self._handle is not None and self._timers is not None:
            self._timers.cancel(self._handle)
        self._handle = None

    @property
    def pending(self) -> bool:
        return self._handle is not None
