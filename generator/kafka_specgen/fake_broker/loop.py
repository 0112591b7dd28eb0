"""One event loop for the whole cluster: a selector, a timer heap and a queue of woken work,
on one thread.

Everything the fake broker does runs as a callback here, one at a time, so no state needs a
lock. Other threads (a test changing the cluster) hand work in with ``call_threadsafe``.
A callback that raises is reported (``on_error``) and the loop goes on: no peer and no bug
in one answer ends it.
"""

from __future__ import annotations

import heapq
import itertools
import selectors
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from queue import Empty, SimpleQueue
from typing import Any

#: Rebuild the timer heap when this many cancelled timers clutter it (and most do).
_COMPACT_AFTER = 1024


class Timer:
    """A callback due at ``when`` (``time.monotonic()``); ``cancel()`` drops it."""

    __slots__ = ("when", "callback", "cancelled")

    def __init__(self, when: float, callback: Callable[[], None]) -> None:
        self.when, self.callback, self.cancelled = when, callback, False

    def cancel(self) -> None:
        self.cancelled = True


Ready = Callable[[int], None]
"""What a registered file object's selector key carries: called with the event mask."""


class EventLoop:
    def __init__(self, on_error: Callable[[str], None]) -> None:
        self.selector = selectors.DefaultSelector()
        self.on_error = on_error
        self._timers: list[tuple[float, int, Timer]] = []
        self._cancelled = 0
        self._order = itertools.count()
        self._ready: deque[Callable[[], None]] = deque()
        self._calls: SimpleQueue[Callable[[], None]] = SimpleQueue()
        self._wake_in, self._wake_out = socket.socketpair()
        self._wake_in.setblocking(False)
        self._wake_out.setblocking(False)
        self.selector.register(self._wake_in, selectors.EVENT_READ, self._drain_calls)
        self._stopping = False
        self.thread: threading.Thread | None = None

    # --- scheduling -------------------------------------------------------------------

    def call_at(self, when: float, callback: Callable[[], None]) -> Timer:
        timer = Timer(when, callback)
        heapq.heappush(self._timers, (when, next(self._order), timer))
        return timer

    def cancel(self, timer: Timer | None) -> None:
        if timer is not None and not timer.cancelled:
            timer.cancel()
            self._cancelled += 1
            if self._cancelled > _COMPACT_AFTER and self._cancelled * 2 > len(self._timers):
                self._timers = [entry for entry in self._timers if not entry[2].cancelled]
                heapq.heapify(self._timers)
                self._cancelled = 0

    def call_soon(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once the current one has returned (from the loop's thread)."""
        self._ready.append(callback)

    def call_threadsafe(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` on the loop's thread (from any thread)."""
        self._calls.put(callback)
        try:
            self._wake_out.send(b"\0")
        except (BlockingIOError, OSError):
            pass  # the loop is woken already, or gone

    def in_loop(self) -> bool:
        return self.thread is None or threading.current_thread() is self.thread

    def run_in_loop(self, fn: Callable[[], Any], timeout: float = 30.0) -> Any:
        """``fn()`` on the loop's thread, waited for; its result or its exception."""
        if self.in_loop() or self._stopping:
            return fn()
        done = threading.Event()
        outcome: list[Any] = []

        def run() -> None:
            try:
                outcome.append((True, fn()))
            except BaseException as exc:  # noqa: BLE001 - handed back to the caller
                outcome.append((False, exc))
            done.set()

        self.call_threadsafe(run)
        if not done.wait(timeout):
            raise TimeoutError(f"the fake cluster's loop did not run the call in {timeout} s")
        ok, value = outcome[0]
        if not ok:
            raise value
        return value

    # --- running ----------------------------------------------------------------------

    def start(self, name: str) -> None:
        self.thread = threading.Thread(target=self.run, name=name, daemon=True)
        self.thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        def stopping() -> None:
            self._stopping = True

        self.call_threadsafe(stopping)
        if self.thread is not None and self.thread is not threading.current_thread():
            self.thread.join(timeout)

    def run(self) -> None:
        try:
            while not self._stopping:
                for key, mask in self.selector.select(self._timeout()):
                    self._guarded(key.data, mask)
                self._run_timers()
                self._run_ready()
        finally:
            self.close()

    def close(self) -> None:
        """Free the loop's selector and wake-up sockets (it cannot run after this)."""
        self.selector.close()
        self._wake_in.close()
        self._wake_out.close()

    def _timeout(self) -> float | None:
        if self._ready or not self._calls.empty():
            return 0.0
        while self._timers and self._timers[0][2].cancelled:
            heapq.heappop(self._timers)
            self._cancelled -= 1
        if not self._timers:
            return None
        return max(self._timers[0][0] - time.monotonic(), 0.0)

    def _run_timers(self) -> None:
        now = time.monotonic()
        while self._timers and self._timers[0][0] <= now:
            _, _, timer = heapq.heappop(self._timers)
            if timer.cancelled:
                self._cancelled -= 1
                continue
            timer.cancelled = True  # done: a later cancel() is a no-op
            self._guarded(timer.callback)

    def _run_ready(self) -> None:
        while self._ready:
            self._guarded(self._ready.popleft())

    def _drain_calls(self, mask: int) -> None:
        try:
            while self._wake_in.recv(4096):
                pass
        except (BlockingIOError, OSError):
            pass
        while True:
            try:
                callback = self._calls.get_nowait()
            except Empty:
                return
            self._guarded(callback)

    def _guarded(self, callback: Callable[..., None], *args: Any) -> None:
        try:
            callback(*args)
        except Exception as exc:  # noqa: BLE001 - the loop must outlive any callback
            self.on_error(f"{type(exc).__name__}: {exc}")
