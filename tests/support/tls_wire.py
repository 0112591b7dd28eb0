"""TLS for tests: a self-signed certificate for 127.0.0.1, a TLS terminator (TLS in, plain
TCP out: a broker that speaks TLS), and a wire recorder (a plain TCP relay that keeps every
chunk it relays, with its time) whose recording becomes a pcap file: the bytes a packet
capture between the client and the next hop would hold.

Each relay runs its own event loop in a thread, every wait bounded; ``close()`` stops it.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import ssl
import struct
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path


def make_cert(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost, and its key (PEM files)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kafka-specgen test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@dataclass
class Recorded:
    """One relayed connection: its client's port and the chunks, ``(ts, from_client, data)``."""

    client_port: int
    chunks: list[tuple[float, bool, bytes]] = field(default_factory=list)


class Relay:
    """Accepts on a free loopback port and relays every connection to ``upstream``:
    ``server_tls`` terminates TLS from clients, ``record`` keeps the chunks."""

    def __init__(
        self,
        upstream: tuple[str, int],
        *,
        server_tls: ssl.SSLContext | None = None,
        record: bool = False,
    ) -> None:
        self.upstream, self.server_tls, self.record = upstream, server_tls, record
        self.connections: list[Recorded] = []
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.port = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        if not self.ready.wait(10):
            raise RuntimeError("the relay did not start")

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(
            asyncio.start_server(self._handle, "127.0.0.1", 0, ssl=self.server_tls)
        )
        self.port = server.sockets[0].getsockname()[1]
        self.ready.set()
        self.loop.run_forever()
        server.close()
        self.loop.run_until_complete(server.wait_closed())

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        recorded = Recorded(peer[1])
        if self.record:
            self.connections.append(recorded)
        try:
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection(*self.upstream), timeout=10
            )
        except (OSError, asyncio.TimeoutError):
            writer.close()
            return

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter, out: bool) -> None:
            try:
                while data := await src.read(65536):
                    recorded.chunks.append((time.time(), out, data))
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pump(reader, up_writer, True), pump(up_reader, writer, False))

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def write_pcap(path: Path, connections: list[Recorded], server_port: int) -> None:
    """A pcap (Ethernet, IPv4, TCP on 127.0.0.1) of recorded connections: a handshake,
    then every chunk in segments of at most 1460 bytes, in the order they were relayed."""
    out = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))
    loopback = 0x7F000001

    def packet(
        ts: float, sport: int, dport: int, seq: int, ack: int, flags: int, data: bytes
    ) -> None:
        ip = struct.pack(
            ">BBHHHBBHII", 0x45, 0, 40 + len(data), 0, 0x4000, 64, 6, 0, loopback, loopback
        )
        tcp = struct.pack(
            ">HHIIBBHHH", sport, dport, seq % 2**32, ack % 2**32, 5 << 4, flags, 65535, 0, 0
        )
        frame = b"\x00" * 12 + b"\x08\x00" + ip + tcp + data
        sec = int(ts)
        out.extend(struct.pack("<IIII", sec, int((ts - sec) * 1e6), len(frame), len(frame)))
        out.extend(frame)

    for conn in connections:
        start = conn.chunks[0][0] if conn.chunks else time.time()
        cseq, sseq = 1000, 9000
        packet(start, conn.client_port, server_port, cseq, 0, 0x02, b"")
        packet(start, server_port, conn.client_port, sseq, cseq + 1, 0x12, b"")
        cseq, sseq = cseq + 1, sseq + 1
        for ts, from_client, data in conn.chunks:
            for i in range(0, len(data), 1460):
                piece = data[i : i + 1460]
                if from_client:
                    packet(ts, conn.client_port, server_port, cseq, sseq, 0x18, piece)
                    cseq += len(piece)
                else:
                    packet(ts, server_port, conn.client_port, sseq, cseq, 0x18, piece)
                    sseq += len(piece)
    path.write_bytes(bytes(out))
