"""TLS inside pcap files: the Kafka bytes of a TLS 1.2 or 1.3 connection, decrypted with the
session keys of a key log (``SSLKEYLOGFILE``, NSS format: ``CLIENT_RANDOM``,
``CLIENT_TRAFFIC_SECRET_0``, ...), which clients write when asked (Python's
``SSLContext.keylog_filename``, Java agents, ``kafka-specgen capture --tls-keylog``).

``decrypt(client, server, keys)`` takes the two directions of a reassembled connection
(``streams.Chunk`` lists, the client's starting with a ClientHello) and gives their
plaintext as chunks, record by record (each at the time stamp of the chunk its record ended
in), and the problems that stopped a direction: no key log, no key for this session in it,
a cipher suite not handled (only AEAD suites: AES-GCM and ChaCha20-Poly1305, which is what
TLS 1.3 has and what TLS 1.2 servers pick today), a record that does not decrypt, a
capture gap (records cannot be found past it). AEAD comes from ``cryptography``; the key
schedules (TLS 1.2's PRF, TLS 1.3's HKDF) are the standard library's HMAC.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from dataclasses import dataclass, field
from typing import Any, Iterable, NamedTuple

from .streams import Chunk

HANDSHAKE, CHANGE_CIPHER_SPEC, ALERT, APPLICATION_DATA = 22, 20, 21, 23
CLIENT_HELLO, SERVER_HELLO, FINISHED, KEY_UPDATE = 1, 2, 20, 24
#: A HelloRetryRequest is a ServerHello with this random (RFC 8446 4.1.3).
HELLO_RETRY = bytes.fromhex("CF21AD74E59A6111BE1D8C021E65B891C2A211167ABB8C5E079E09E2C8A8339C")
NEEDS_KEYS = "a TLS connection: decrypting it needs its session keys, --tls-keylog FILE"

#: suite -> (AEAD, key length, IV length, hash); TLS 1.3 suites and TLS 1.2's AEAD suites.
SUITES: dict[int, tuple[str, int, int, str]] = {
    0x1301: ("gcm", 16, 12, "sha256"),
    0x1302: ("gcm", 32, 12, "sha384"),
    0x1303: ("chacha", 32, 12, "sha256"),
    0x009C: ("gcm", 16, 4, "sha256"),
    0x009D: ("gcm", 32, 4, "sha384"),
    0x009E: ("gcm", 16, 4, "sha256"),
    0x009F: ("gcm", 32, 4, "sha384"),
    0xC02B: ("gcm", 16, 4, "sha256"),
    0xC02C: ("gcm", 32, 4, "sha384"),
    0xC02F: ("gcm", 16, 4, "sha256"),
    0xC030: ("gcm", 32, 4, "sha384"),
    0xCCA8: ("chacha", 32, 12, "sha256"),
    0xCCA9: ("chacha", 32, 12, "sha256"),
    0xCCAA: ("chacha", 32, 12, "sha256"),
}


class TlsProblem(Exception):
    """Why a direction of a TLS connection cannot be decrypted (further)."""


def read_keylog(text: str) -> dict[tuple[str, bytes], bytes]:
    """``(label, client random) -> secret`` of an NSS key log."""
    keys: dict[tuple[str, bytes], bytes] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 3 or line.startswith("#"):
            continue
        try:
            keys[(parts[0], bytes.fromhex(parts[1]))] = bytes.fromhex(parts[2])
        except ValueError:
            continue
    return keys


def looks_like_tls(data: bytes) -> bool:
    """A ClientHello record: handshake, TLS 1.x, handshake type 1."""
    return len(data) >= 6 and data[0] == HANDSHAKE and data[1] == 3 and data[5] == CLIENT_HELLO


# --- key schedules ------------------------------------------------------------------------------


def _hmac(hash_name: str, key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, getattr(hashlib, hash_name)).digest()


def expand_label(hash_name: str, secret: bytes, label: str, length: int) -> bytes:
    """TLS 1.3's HKDF-Expand-Label with an empty context."""
    full = b"tls13 " + label.encode()
    info = struct.pack(">HB", length, len(full)) + full + b"\x00"
    out, block, n = b"", b"", 1
    while len(out) < length:
        block = _hmac(hash_name, secret, block + info + bytes([n]))
        out += block
        n += 1
    return out[:length]


def prf(hash_name: str, secret: bytes, label: bytes, seed: bytes, length: int) -> bytes:
    """TLS 1.2's PRF (P_hash of RFC 5246 5)."""
    seed = label + seed
    out, a = b"", seed
    while len(out) < length:
        a = _hmac(hash_name, secret, a)
        out += _hmac(hash_name, secret, a + seed)
    return out[:length]


@dataclass
class Direction:
    """One direction's record protection: AEAD, key, IV, the record sequence number, and
    (TLS 1.3) the traffic secret they come from (a KeyUpdate derives the next one)."""

    aead: str
    key: bytes
    iv: bytes
    tls13: bool
    secret: bytes | None = None
    seq: int = 0
    cipher: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        from cryptography.hazmat.primitives.ciphers.aead import (  # type: ignore[import-not-found,unused-ignore]
            AESGCM,
            ChaCha20Poly1305,
        )

        self.cipher = AESGCM(self.key) if self.aead == "gcm" else ChaCha20Poly1305(self.key)

    def open(self, header: bytes, payload: bytes) -> tuple[int, bytes]:
        """Decrypt a record: ``(content type, plaintext)``."""
        seq = self.seq.to_bytes(8, "big")
        if self.tls13 or self.aead == "chacha":
            nonce = bytes(a ^ b for a, b in zip(self.iv, bytes(4) + seq))
            body = payload
        else:  # TLS 1.2 AES-GCM: 4-byte salt + 8-byte explicit nonce
            nonce, body = self.iv + payload[:8], payload[8:]
        if self.tls13:
            aad = header
        else:
            aad = seq + header[:3] + struct.pack(">H", len(body) - 16)
        try:
            plain = self.cipher.decrypt(nonce, body, aad)
        except Exception as exc:  # InvalidTag: the wrong key, or a damaged record
            raise TlsProblem(f"record {self.seq} does not decrypt ({type(exc).__name__})") from exc
        self.seq += 1
        if not self.tls13:
            return header[0], plain
        end = len(plain.rstrip(b"\x00"))
        if end == 0:
            raise TlsProblem(f"record {self.seq - 1} has no content type")
        return plain[end - 1], plain[: end - 1]


# --- records ------------------------------------------------------------------------------------


class Record(NamedTuple):
    type: int
    header: bytes
    payload: bytes
    ts: float


def records(chunks: Iterable[Chunk]) -> tuple[list[Record], str | None]:
    """The TLS records of one direction, and why reading stopped early (a capture gap, a
    record cut by the end of the capture), if it did."""
    runs: list[Chunk] = list(chunks)
    data = bytearray()
    ends: list[tuple[int, float]] = []
    problem = None
    for chunk in runs:
        if chunk.offset != len(data):
            problem = (
                f"capture gap at byte {len(data)} of the TLS stream: records unreadable past it"
            )
            break
        data += chunk.data
        ends.append((len(data), chunk.ts))
    out: list[Record] = []
    pos, which = 0, 0
    while pos + 5 <= len(data):
        (length,) = struct.unpack_from(">H", data, pos + 3)
        if data[pos + 1] != 3 or length > 18432:
            return out, f"not a TLS record at byte {pos} of the stream"
        if pos + 5 + length > len(data):
            break
        end = pos + 5 + length
        while ends[which][0] < end:
            which += 1
        out.append(
            Record(
                data[pos], bytes(data[pos : pos + 5]), bytes(data[pos + 5 : end]), ends[which][1]
            )
        )
        pos = end
    if pos < len(data) and problem is None:
        problem = f"the capture ends inside a TLS record at byte {pos}"
    return out, problem


def _handshake_messages(payloads: Iterable[bytes]) -> list[tuple[int, bytes]]:
    return _split_handshake(b"".join(payloads))[0]


def _split_handshake(data: bytes) -> tuple[list[tuple[int, bytes]], bytes]:
    """Whole handshake messages ``(type, body)`` at the start of ``data``, and the rest."""
    out, pos = [], 0
    while pos + 4 <= len(data):
        kind, length = data[pos], int.from_bytes(data[pos + 1 : pos + 4], "big")
        if pos + 4 + length > len(data):
            break
        out.append((kind, data[pos + 4 : pos + 4 + length]))
        pos += 4 + length
    return out, data[pos:]


class Hello(NamedTuple):
    random: bytes
    suite: int
    tls13: bool


def server_hello(body: bytes) -> Hello:
    """Random, cipher suite and TLS version (from supported_versions) of a ServerHello."""
    random = body[2:34]
    session_len = body[34]
    pos = 35 + session_len
    suite = int.from_bytes(body[pos : pos + 2], "big")
    pos += 3  # suite and compression method
    tls13 = False
    if pos + 2 <= len(body):
        end = pos + 2 + int.from_bytes(body[pos : pos + 2], "big")
        pos += 2
        while pos + 4 <= end:
            ext, length = struct.unpack_from(">HH", body, pos)
            if ext == 0x002B and length == 2:
                tls13 = body[pos + 4 : pos + 6] == b"\x03\x04"
            pos += 4 + length
    return Hello(random, suite, tls13)


# --- a connection -----------------------------------------------------------------------------


class Decrypted(NamedTuple):
    chunks: list[Chunk]  # the plaintext, one chunk per record of application data
    problem: str | None  # why decryption stopped before the end
    rest: bytes  # the ciphertext from there on (capped), for the error row


def decrypt(
    client: list[Chunk], server: list[Chunk], keys: dict[tuple[str, bytes], bytes] | None
) -> tuple[Decrypted, Decrypted]:
    """The two directions of a TLS connection, decrypted (client's, server's)."""
    c_records, c_gap = records(client)
    s_records, s_gap = records(server)
    try:
        if keys is None:
            raise TlsProblem(NEEDS_KEYS)
        hellos = _handshake_messages(r.payload for r in c_records if r.type == HANDSHAKE)
        client_random = next((b[2:34] for t, b in hellos if t == CLIENT_HELLO), None)
        plain_server = []
        for r in s_records:  # the server's plaintext handshake ends where encryption starts
            if r.type != HANDSHAKE:
                break
            plain_server.append(r.payload)
        hello = next(
            (
                h
                for t, b in _handshake_messages(plain_server)
                if t == SERVER_HELLO and (h := server_hello(b)).random != HELLO_RETRY
            ),
            None,
        )
        if client_random is None or hello is None:
            raise TlsProblem("no ClientHello and ServerHello in the capture: keys unknown")
        if hello.suite not in SUITES:
            raise TlsProblem(f"cipher suite 0x{hello.suite:04X} is not one decrypted here")
        if hello.tls13:
            sides = _tls13(keys, client_random, hello)
        else:
            sides = _tls12(keys, client_random, hello)
    except TlsProblem as exc:
        why = f"TLS: {exc}"
        return (_failed(c_records, why), _failed(s_records, why))
    return (
        _run(c_records, sides[0], hello.suite, hello.tls13, c_gap),
        _run(s_records, sides[1], hello.suite, hello.tls13, s_gap),
    )


def _failed(recs: list[Record], why: str) -> Decrypted:
    return Decrypted([], why, b"".join(r.header + r.payload for r in recs)[: 64 * 1024])


def _secret(keys: dict[tuple[str, bytes], bytes], label: str, random: bytes) -> bytes:
    secret = keys.get((label, random))
    if secret is None:
        raise TlsProblem(f"no {label} for client random {random.hex()[:16]}... in the key log")
    return secret


def _tls13(
    keys: dict[tuple[str, bytes], bytes], random: bytes, hello: Hello
) -> tuple[list[Any], list[Any]]:
    """Per direction: [handshake protection, the application traffic secret]."""

    def side(handshake: str, application: str) -> list[Any]:
        first = traffic_keys(hello.suite, _secret(keys, handshake, random))
        return [first, _secret(keys, application, random)]

    return (
        side("CLIENT_HANDSHAKE_TRAFFIC_SECRET", "CLIENT_TRAFFIC_SECRET_0"),
        side("SERVER_HANDSHAKE_TRAFFIC_SECRET", "SERVER_TRAFFIC_SECRET_0"),
    )


def traffic_keys(suite: int, secret: bytes) -> Direction:
    """TLS 1.3 record protection from a traffic secret (RFC 8446 7.3)."""
    aead, key_len, _, hash_name = SUITES[suite]
    return Direction(
        aead,
        expand_label(hash_name, secret, "key", key_len),
        expand_label(hash_name, secret, "iv", 12),
        True,
        secret,
    )


def _tls12(
    keys: dict[tuple[str, bytes], bytes], random: bytes, hello: Hello
) -> tuple[list[Any], list[Any]]:
    aead, key_len, iv_len, hash_name = SUITES[hello.suite]
    master = _secret(keys, "CLIENT_RANDOM", random)
    block = prf(hash_name, master, b"key expansion", hello.random + random, 2 * (key_len + iv_len))
    client_key, server_key = block[:key_len], block[key_len : 2 * key_len]
    client_iv = block[2 * key_len : 2 * key_len + iv_len]
    server_iv = block[2 * key_len + iv_len :]
    return (
        [Direction(aead, client_key, client_iv, False), None],
        [Direction(aead, server_key, server_iv, False), None],
    )


def _run(
    recs: list[Record], side: list[Any], suite: int, tls13: bool, gap: str | None
) -> Decrypted:
    """Decrypt one direction's records; application data becomes plaintext chunks."""
    protection: Direction = side[0]
    application: bytes | None = side[1]
    hash_name = SUITES[suite][3]
    encrypted = False
    pending = b""  # a handshake message split over records
    out: list[Chunk] = []
    size = 0
    for n, record in enumerate(recs):
        if record.type == CHANGE_CIPHER_SPEC:
            encrypted = encrypted or not tls13  # TLS 1.3's is for middleboxes only
            continue
        if not encrypted and not (tls13 and record.type == APPLICATION_DATA):
            continue  # the plaintext handshake
        try:
            kind, plain = protection.open(record.header, record.payload)
        except TlsProblem as exc:
            rest = b"".join(r.header + r.payload for r in recs[n:])[: 64 * 1024]
            return Decrypted(out, f"TLS: {exc}", rest)
        if kind == APPLICATION_DATA and plain:
            out.append(Chunk(size, plain, record.ts))
            size += len(plain)
        elif kind == HANDSHAKE and tls13:
            messages, pending = _split_handshake(pending + plain)
            for message, _ in messages:
                if message == FINISHED and application is not None:
                    protection, application = traffic_keys(suite, application), None
                elif message == KEY_UPDATE and application is None and protection.secret:
                    length = len(protection.secret)
                    secret = expand_label(hash_name, protection.secret, "traffic upd", length)
                    protection = traffic_keys(suite, secret)
    return Decrypted(out, f"TLS: {gap}" if gap else None, b"")
