"""CPU time of a benchmark's process and its children (Linux ``/proc``): what a run costs
whatever the load of other work on the machine, where wall-clock time moves with it."""

from __future__ import annotations

import os
import threading
import time
from typing import Any


def tree_cpu() -> float | None:
    """CPU seconds of this process and its descendants (the JVM, the Python workers; those
    that ended, as their parents reaped them), from /proc; None where there is none."""
    if not os.path.isdir("/proc/self"):
        return None
    tick = os.sysconf("SC_CLK_TCK")
    parent: dict[int, int] = {}
    used: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry)
        parent[pid] = int(fields[1])
        # utime stime, and for the others cutime cstime (children they reaped)
        used[pid] = sum(int(v) for v in fields[11 : 13 if pid == os.getpid() else 15])
    children: dict[int, list[int]] = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0, [os.getpid()]
    while todo:
        pid = todo.pop()
        total += used.get(pid, 0)
        todo += children.get(pid, [])
    return total / tick


class CpuSampler:
    """``tree_cpu()`` every ``every`` seconds while running: the CPU seconds at a point of a
    run that reports only its times (the end of the decode stage)."""

    def __init__(self, every: float = 0.25) -> None:
        self.every = every
        self.samples: list[tuple[float, float]] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "CpuSampler":
        self.started = time.perf_counter()
        self._sample()
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        self.thread.join()
        self._sample()

    def _run(self) -> None:
        while not self.stop.wait(self.every):
            self._sample()

    def _sample(self) -> None:
        cpu = tree_cpu()
        if cpu is not None:
            self.samples.append((time.perf_counter() - self.started, cpu))

    def used_by(self, seconds: float) -> float | None:
        """CPU seconds used from the start until ``seconds`` into the run."""
        if len(self.samples) < 2:
            return None
        before = [cpu for at, cpu in self.samples if at <= seconds]
        return (before[-1] if before else self.samples[0][1]) - self.samples[0][1]
