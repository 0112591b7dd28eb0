"""What a handler returns when its answer is not ready yet (``Wait``), and the events that
wake it (``Signal``).

A Fetch waiting for data waits on the ``arrivals`` signal of each partition it reads; a
JoinGroup or SyncGroup waiting for the other members waits on its group's ``changed``
signal. The event loop looks at a waiting request again only when one of its signals fires
or its deadline comes: never by polling.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol


class Waiter(Protocol):
    """What a signal wakes (the event loop's parked request)."""

    def wake(self) -> None: ...


class Signal:
    """Something waiting requests wait for. ``fire()`` wakes every request waiting on it;
    each is looked at again once the current handler has returned."""

    __slots__ = ("_waiting",)

    def __init__(self) -> None:
        self._waiting: set[Waiter] = set()

    def subscribe(self, waiter: Waiter) -> None:
        self._waiting.add(waiter)

    def unsubscribe(self, waiter: Waiter) -> None:
        self._waiting.discard(waiter)

    def fire(self) -> None:
        for waiter in list(self._waiting):
            waiter.wake()

    def __len__(self) -> int:
        return len(self._waiting)


Poll = Callable[[float, bool], Any]
"""``poll(now, expired)``: the answer, None to go on waiting, or a new ``Wait``."""


class Wait:
    """A response that is not ready yet.

    ``poll(now, expired)`` is called when one of the ``on`` signals fires and at
    ``deadline`` (then with ``expired`` true). It returns the response, None to go on
    waiting (not allowed once expired), or a new ``Wait`` (other signals, another
    deadline). Until then the request holds its connection's later requests back, as Kafka
    answers a connection's requests in order.
    """

    __slots__ = ("deadline", "poll", "on")

    def __init__(self, deadline: float, poll: Poll, on: Iterable[Signal] = ()) -> None:
        self.deadline = deadline
        self.poll = poll
        self.on = tuple(on)

    def __repr__(self) -> str:
        return f"Wait(deadline={self.deadline:.3f}, on={len(self.on)} signals)"
