"""Load a page in Debian's headless Chromium and report what a person would see.

``load_page(path, screenshot)`` starts ``chromium --headless`` with a fresh profile and the
flags that keep it off the network, drives it through the DevTools protocol over a pipe
(``--remote-debugging-pipe``: file descriptors 3 and 4, JSON messages ending in NUL; no
websocket client needed), loads the page, waits for the load event and for ``ready_js``
to be true, and returns:

- ``console_errors``: ``console.error`` calls, uncaught exceptions and browser log entries
  of level error (e.g. a resource that failed to load);
- ``requests``: every URL the page asked for (a self-contained page asks for its own
  ``file://`` URL only);
- ``facts``: the value of ``facts_js`` evaluated in the page;
- the screenshot (PNG of the whole page at ``width`` pixels), written to ``screenshot``.

Chromium is always stopped (``Browser.close``, then kill) and every wait is bounded.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from base64 import b64decode
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
    "--mute-audio",
)


def chromium_binary() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class PageResult:
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    facts: Any = None
    screenshot: bytes = b""
    ready: bool = False


class _Pipe:
    """The DevTools protocol over Chromium's pipe: commands out, replies and events in."""

    def __init__(self, write_fd: int, read_fd: int, proc: subprocess.Popen[bytes]) -> None:
        self.write_fd, self.read_fd, self.proc = write_fd, read_fd, proc
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> int:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self.write_fd, data) :]
        return self.next_id

    def wait(self, match: Callable[[dict[str, Any]], bool], timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self.buffer:
                raw, self.buffer = self.buffer.split(b"\0", 1)
                message = json.loads(raw)
                if "id" not in message:
                    self.events.append(message)
                if match(message):
                    return message
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from Chromium")
            ready, _, _ = select.select([self.read_fd], [], [], min(left, 0.5))
            if ready:
                chunk = os.read(self.read_fd, 1 << 20)
                if not chunk:
                    raise EOFError(f"Chromium closed the pipe (exit status {self.proc.poll()})")
                self.buffer += chunk

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        session: str | None = None,
        timeout: float = 30,
    ) -> dict[str, Any]:
        number = self.send(method, params, session)
        reply = self.wait(lambda m: m.get("id") == number, timeout)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        result: dict[str, Any] = reply.get("result", {})
        return result


def _high(fd: int) -> int:
    import fcntl

    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return moved


def load_page(
    path: Path,
    screenshot: Path,
    *,
    ready_js: str = "true",
    facts_js: str = "null",
    width: int = 1400,
    timeout: float = 60,
    clips: dict[str, Path] | None = None,
) -> PageResult:
    """``clips``: CSS selector -> where to write a screenshot of that element alone."""
    binary = chromium_binary()
    if binary is None:
        raise RuntimeError("Chromium is not installed (apt-get install chromium; see .ci/run)")
    profile = Path(tempfile.mkdtemp(prefix="kafka-specgen-chromium-"))
    to_chrome_r, to_chrome_w = os.pipe()
    from_chrome_r, from_chrome_w = os.pipe()
    # the ends the child gets, moved above 9 so that they are not 3 or 4 themselves
    to_chrome_r, from_chrome_w = _high(to_chrome_r), _high(from_chrome_w)
    # the child gets the pipe ends as fds 3 and 4 (the shell moves them there)
    command = [
        shutil.which("bash") or "/bin/bash",  # dash redirects fds 0-9 only
        "-c",
        f'exec "$0" "$@" 3<&{to_chrome_r} 4>&{from_chrome_w} {to_chrome_r}<&- {from_chrome_w}>&-',
        binary,
        *FLAGS,
        f"--user-data-dir={profile}",
        f"--window-size={width},1000",
        "--remote-debugging-pipe",
        "about:blank",
    ]
    log = open(profile.parent / f"{profile.name}.log", "wb")
    proc = subprocess.Popen(
        command,
        pass_fds=(to_chrome_r, from_chrome_w),
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
    )
    os.close(to_chrome_r)
    os.close(from_chrome_w)
    result = PageResult()
    pipe = _Pipe(to_chrome_w, from_chrome_r, proc)
    try:
        targets = pipe.call("Target.getTargets", timeout=timeout)["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        session = pipe.call(
            "Target.attachToTarget", {"targetId": page["targetId"], "flatten": True}
        )["sessionId"]
        for domain in ("Runtime", "Log", "Page", "Network"):
            pipe.call(f"{domain}.enable", session=session)
        pipe.call("Page.navigate", {"url": path.resolve().as_uri()}, session=session)
        pipe.wait(lambda m: m.get("method") == "Page.loadEventFired", timeout)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = pipe.call(
                "Runtime.evaluate",
                {"expression": f"Boolean({ready_js})", "returnByValue": True},
                session=session,
            )
            if value.get("result", {}).get("value") is True:
                result.ready = True
                break
            time.sleep(0.25)
        time.sleep(0.5)  # let the last frame paint
        facts = pipe.call(
            "Runtime.evaluate", {"expression": facts_js, "returnByValue": True}, session=session
        )
        result.facts = facts.get("result", {}).get("value")
        metrics = pipe.call("Page.getLayoutMetrics", session=session)
        height = int(metrics["cssContentSize"]["height"])
        pipe.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": min(height, 16000), "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        time.sleep(0.5)
        shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session=session)
        result.screenshot = b64decode(shot["data"])
        screenshot.write_bytes(result.screenshot)
        for selector, target in (clips or {}).items():
            box = pipe.call(
                "Runtime.evaluate",
                {
                    "expression": "(() => { const r = document.querySelector("
                    + json.dumps(selector)
                    + ").getBoundingClientRect(); return [r.x, r.y + window.scrollY, r.width,"
                    " r.height]; })()",
                    "returnByValue": True,
                },
                session=session,
            )["result"]["value"]
            clip = dict(zip(("x", "y", "width", "height"), box), scale=1)
            part = pipe.call(
                "Page.captureScreenshot", {"format": "png", "clip": clip}, session=session
            )
            target.write_bytes(b64decode(part["data"]))
        for event in pipe.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                text = " ".join(
                    str(a.get("value", a.get("description", ""))) for a in params["args"]
                )
                result.console_errors.append(f"console.{params['type']}: {text}")
            elif method == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                text = details.get("exception", {}).get("description") or details.get("text")
                result.console_errors.append(f"uncaught: {text}")
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                entry = params["entry"]
                result.console_errors.append(f"log: {entry.get('text')} {entry.get('url', '')}")
            elif method == "Network.requestWillBeSent":
                result.requests.append(params["request"]["url"])
        try:
            pipe.send("Browser.close")
            proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            pass
        return result
    finally:
        try:  # Chromium and the helpers it started (its own process group)
            os.killpg(proc.pid, 9)
        except ProcessLookupError:
            pass
        proc.wait(timeout=10)
        os.close(to_chrome_w)
        os.close(from_chrome_r)
        log.close()
        shutil.rmtree(profile, ignore_errors=True)
        (profile.parent / f"{profile.name}.log").unlink(missing_ok=True)
