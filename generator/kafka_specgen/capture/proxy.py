"""``kafka-specgen capture``: a recording TCP proxy for Kafka traffic.

Clients connect to ``--listen``; every connection is relayed to ``--upstream`` (a broker)
byte for byte, in both directions. On the side, each stream is cut into Kafka frames
(int32 size prefix), responses are paired with their requests by connection and
correlation id, and every frame becomes one JSON line in ``--out``::

    {"ts": 1718000000.123, "conn": 1, "dir": "request", "api_key": 18, "api_version": 3,
     "correlation_id": 1, "client_id": "rdkafka", "frame": "0012000300000001..."}

``frame`` is the hex of the bytes after the size prefix (header and body). A response
carries the api key, version and client id of the request it answers (they are not on the
wire in a response); a response whose request was never seen has ``null`` there.

The proxy never alters, delays on purpose or reorders bytes: recording happens before a
chunk is forwarded, so a request is always written before its response. The file is flushed
after every frame, so a killed capture loses at most the frame being written. Either side
closing a connection closes the other side of that connection only. SIGINT and SIGTERM
stop the proxy cleanly, as do ``--max-frames`` and ``--duration``.

TLS: with ``--tls-cert`` and ``--tls-key`` the proxy terminates TLS from clients (they
must trust that certificate) and records the plaintext; ``--upstream-tls`` (with
``--upstream-ca`` or ``--upstream-insecure``) speaks TLS onward to the broker.
``--tls-keylog FILE`` appends the session keys of the client side (NSS key log format),
so that a packet capture of the same connections can be decrypted too.

The capture format (frame splitting, header parsing, pairing, the lines) is
``capture.frames``. Standard library only: no Spark (or generated package) import here.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import ssl
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable

from .frames import Ends, FrameSplitter, Pairer, Row, capture_line

CHUNK = 256 * 1024


def parse_hostport(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (or ``[v6]:PORT``) -> ``(host, port)``."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port)


@dataclass(frozen=True)
class Tls:
    """TLS towards clients (``server``: None for plain TCP) and towards the broker
    (``upstream``: None for plain TCP)."""

    server: ssl.SSLContext | None = None
    upstream: ssl.SSLContext | None = None
    upstream_name: str | None = None  # the name the broker's certificate is checked for


class TlsSetupError(ValueError):
    """TLS settings that do not load (one line for the command line)."""


def tls_settings(args: argparse.Namespace) -> Tls:
    """The TLS contexts the capture options ask for."""
    server = upstream = None
    if bool(args.tls_cert) != bool(args.tls_key):
        raise TlsSetupError("--tls-cert and --tls-key go together")
    try:
        if args.tls_cert:
            server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            server.load_cert_chain(args.tls_cert, args.tls_key)
            if args.tls_keylog:
                server.keylog_filename = args.tls_keylog
        if args.upstream_tls or args.upstream_ca or args.upstream_insecure:
            upstream = ssl.create_default_context(cafile=args.upstream_ca)
            if args.upstream_insecure:
                upstream.check_hostname = False
                upstream.verify_mode = ssl.CERT_NONE
    except (OSError, ssl.SSLError) as exc:
        raise TlsSetupError(f"TLS set-up: {exc}") from exc
    if args.tls_keylog and server is None:
        raise TlsSetupError("--tls-keylog needs --tls-cert and --tls-key")
    return Tls(server, upstream, args.upstream[0] if upstream is not None else None)


class Recorder:
    """Writes frames as capture-file lines (``frames.capture_line``), flushing after each;
    counts them."""

    def __init__(self, out: IO[str], max_frames: int | None, on_full: Callable[[], Any]) -> None:
        self.out = out
        self.max_frames = max_frames
        self.on_full = on_full
        self.frames = 0

    @property
    def full(self) -> bool:
        return self.max_frames is not None and self.frames >= self.max_frames

    def write(self, row: Row) -> None:
        if self.full or self.out.closed:
            return
        self.out.write(capture_line(row))
        self.out.flush()
        self.frames += 1
        if self.full:
            self.on_full()


class Connection:
    """One client connection relayed to the upstream broker."""

    def __init__(self, conn_id: int, proxy: "CaptureProxy") -> None:
        self.conn_id = conn_id
        self.proxy = proxy
        self.pairer = Pairer()
        self.writers: list[asyncio.StreamWriter] = []
        self.ends: Ends = (
            None,
            f"{proxy.upstream[0]}:{proxy.upstream[1]}",
        )

    def record(self, direction: str, frames: list[bytes]) -> None:
        conn = str(self.conn_id)
        for frame in frames:
            ts = round(time.time(), 6)
            self.proxy.recorder.write(self.pairer.row(conn, ts, direction, frame, self.ends))

    async def pump(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, direction: str
    ) -> None:
        splitter = FrameSplitter()
        reported = False
        try:
            while True:
                data = await reader.read(CHUNK)
                if not data:
                    break
                self.record(direction, splitter.feed(data))
                if splitter.broken is not None and not reported:
                    reported = True
                    self.proxy.log(
                        f"conn {self.conn_id} {direction}s: {splitter.broken}; "
                        "relaying without recording"
                    )
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            self.close()

    def close(self) -> None:
        for writer in self.writers:
            if not writer.is_closing():
                writer.close()

    async def run(
        self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter
    ) -> None:
        self.writers.append(client_writer)
        peer = client_writer.get_extra_info("peername")
        if peer:
            self.ends = (f"{peer[0]}:{peer[1]}", self.ends[1])
        host, port = self.proxy.upstream
        tls = self.proxy.tls
        try:
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection(
                    host,
                    port,
                    ssl=tls.upstream,
                    server_hostname=tls.upstream_name if tls.upstream is not None else None,
                ),
                timeout=10,
            )
        except (OSError, asyncio.TimeoutError) as exc:
            self.proxy.log(f"conn {self.conn_id}: cannot reach upstream {host}:{port}: {exc}")
            self.close()
            return
        self.writers.append(up_writer)
        await asyncio.gather(
            self.pump(client_reader, up_writer, "request"),
            self.pump(up_reader, client_writer, "response"),
        )
        for writer in self.writers:
            try:
                await writer.wait_closed()
            except (ConnectionError, OSError):
                pass


class CaptureProxy:
    def __init__(
        self,
        listen: tuple[str, int],
        upstream: tuple[str, int],
        out: IO[str],
        max_frames: int | None = None,
        quiet: bool = False,
        tls: Tls = Tls(),
    ) -> None:
        self.listen = listen
        self.upstream = upstream
        self.quiet = quiet
        self.tls = tls
        self.stopping = asyncio.Event()
        self.recorder = Recorder(out, max_frames, self.stopping.set)
        self.connections: dict[int, Connection] = {}
        self.tasks: set[asyncio.Task[None]] = set()
        self.next_conn = 0
        self.bound_port: int | None = None

    def log(self, text: str) -> None:
        if not self.quiet:
            print(f"capture: {text}", file=sys.stderr, flush=True)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.stopping.is_set():
            writer.close()
            return
        self.next_conn += 1
        conn = Connection(self.next_conn, self)
        self.connections[conn.conn_id] = conn
        task = asyncio.current_task()
        if task is not None:
            self.tasks.add(task)
        try:
            await conn.run(reader, writer)
        except asyncio.CancelledError:
            conn.close()  # stopping: end quietly (the stream callback inspects the task)
        finally:
            self.connections.pop(conn.conn_id, None)
            if task is not None:
                self.tasks.discard(task)

    async def serve(self, duration: float | None = None) -> int:
        """Relay and record until stopped; returns the number of frames written."""
        server = await asyncio.start_server(
            self._handle,
            self.listen[0],
            self.listen[1],
            reuse_address=True,
            ssl=self.tls.server,
            ssl_handshake_timeout=10 if self.tls.server is not None else None,
        )
        self.bound_port = server.sockets[0].getsockname()[1]
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, self.stopping.set)
            except (NotImplementedError, RuntimeError):  # pragma: no cover (not main thread)
                pass
        self.log(
            f"listening on {self.listen[0]}:{self.bound_port}"
            + (" (TLS)" if self.tls.server is not None else "")
            + f", relaying to {self.upstream[0]}:{self.upstream[1]}"
            + (" (TLS)" if self.tls.upstream is not None else "")
        )
        try:
            if duration is not None:
                try:
                    await asyncio.wait_for(self.stopping.wait(), timeout=duration)
                except asyncio.TimeoutError:
                    pass
            else:
                await self.stopping.wait()
        finally:
            self.stopping.set()
            server.close()
            for conn in list(self.connections.values()):
                conn.close()  # the pumps then read EOF and end
            if self.tasks:
                await asyncio.wait(list(self.tasks), timeout=2)
            for task in list(self.tasks):
                task.cancel()
            if self.tasks:
                await asyncio.wait(list(self.tasks), timeout=3)
            await server.wait_closed()
            for sig in (signal.SIGINT, signal.SIGTERM):
                try:
                    loop.remove_signal_handler(sig)
                except (NotImplementedError, RuntimeError):  # pragma: no cover
                    pass
        return self.recorder.frames


def cmd_capture(args: argparse.Namespace) -> int:
    out_path = Path(args.out)
    if out_path.parent and not out_path.parent.exists():
        out_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        tls = tls_settings(args)
    except TlsSetupError as exc:
        print(f"kafka-specgen capture: {exc}", file=sys.stderr)
        return 2
    if tls.server is not None:
        # a client that fails its TLS handshake is the client's problem: asyncio would log
        # each one with a trace
        logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    started = time.monotonic()
    with open(out_path, "w", encoding="utf-8") as out:

        async def main() -> int:
            proxy = CaptureProxy(args.listen, args.upstream, out, args.max_frames, args.quiet, tls)
            return await proxy.serve(args.duration)

        try:
            frames = asyncio.run(main())
        except OSError as exc:  # the listening address is taken or not ours
            host, port = args.listen
            reason = exc.strerror or str(exc).rsplit(": ", 1)[-1]
            print(
                f"kafka-specgen capture: cannot listen on {host}:{port}: {reason}", file=sys.stderr
            )
            return 1
    if not args.quiet:
        print(
            f"capture: {frames} frames written to {out_path} in "
            f"{time.monotonic() - started:.1f} s",
            file=sys.stderr,
            flush=True,
        )
    return 0


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be > 0")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError("must be > 0")
    return value


def register(commands: Any) -> None:
    cap = commands.add_parser(
        "capture",
        help="record Kafka traffic through a TCP proxy as JSON lines",
        description="Relay client connections to a broker unchanged and write every "
        "request and response frame as one JSON line (the format: docs/pipeline.md, "
        "'Capture files').",
    )
    cap.add_argument(
        "--listen",
        type=parse_hostport,
        required=True,
        metavar="HOST:PORT",
        help="where clients connect (port 0: any free port, printed on stderr)",
    )
    cap.add_argument(
        "--upstream",
        type=parse_hostport,
        required=True,
        metavar="HOST:PORT",
        help="the broker to relay to",
    )
    cap.add_argument("--out", required=True, metavar="FILE", help="the JSON-lines file to write")
    cap.add_argument(
        "--max-frames", type=_positive_int, metavar="N", help="stop after writing N frames"
    )
    cap.add_argument("--duration", type=_positive_float, metavar="S", help="stop after S seconds")
    cap.add_argument(
        "--tls-cert",
        metavar="FILE",
        help="terminate TLS from clients with this certificate (PEM; the chain clients "
        "trust), recording the plaintext",
    )
    cap.add_argument("--tls-key", metavar="FILE", help="the private key of --tls-cert (PEM)")
    cap.add_argument(
        "--tls-keylog",
        metavar="FILE",
        help="append the client sessions' TLS keys to FILE (NSS key log, as SSLKEYLOGFILE): "
        "decrypts a packet capture of the same connections",
    )
    cap.add_argument(
        "--upstream-tls", action="store_true", help="speak TLS to the broker (system CAs)"
    )
    cap.add_argument(
        "--upstream-ca", metavar="FILE", help="speak TLS to the broker, trusting this CA (PEM)"
    )
    cap.add_argument(
        "--upstream-insecure",
        action="store_true",
        help="speak TLS to the broker without checking its certificate",
    )
    cap.add_argument("--quiet", action="store_true", help="no messages on stderr")
    cap.set_defaults(func=cmd_capture)
