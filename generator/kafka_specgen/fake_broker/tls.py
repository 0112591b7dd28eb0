"""TLS on the listeners: a certificate authority and a server certificate made on the spot,
and a TLS session per connection that never blocks.

``certificates(folder, hosts)`` writes ``ca.pem`` (what clients trust), ``ca.key``,
``server.pem`` and ``server.key`` into ``folder``: an ECDSA P-256 CA, self-signed, and a
server certificate it signs for ``localhost``, ``127.0.0.1``, ``::1`` and the listeners'
host. A folder that has a CA already keeps it (clients configured with its ``ca.pem`` go on
trusting the broker after a restart); the server certificate is made anew each time. The
keys are made with the ``cryptography`` package (the ``fake-broker`` extra).

``TlsSession`` runs one connection's TLS on memory buffers (``ssl.MemoryBIO``): the event
loop feeds it the bytes it read and sends the bytes it gives back, so a handshake is a few
steps of the loop like any request, and a peer that stalls its handshake holds nothing but
its own connection (closed after ``handshake_timeout_ms``).
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
from pathlib import Path
from typing import Any

#: What a TLS session raises on bytes it cannot take (a failed handshake, a bad record).
TLS_ERRORS = (ssl.SSLError, ValueError)
#: The certificates' lifetime: long enough for any test run, short enough to look sane.
VALID_DAYS = 825
CA_NAME = "kafka-specgen fake broker CA"
READ_SIZE = 1 << 17


class TlsUnavailable(Exception):
    """TLS asked for without the ``cryptography`` package (one line for the user)."""


class TlsSession:
    """The server side of one connection's TLS, without I/O."""

    errors = TLS_ERRORS

    def __init__(self, context: ssl.SSLContext) -> None:
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._tls = context.wrap_bio(self._incoming, self._outgoing, server_side=True)
        self.handshaken = False

    def receive(self, data: bytes) -> bytes:
        """Feed bytes from the peer; the plaintext they complete (b"" during the handshake).
        Raises one of ``errors`` when the peer breaks TLS."""
        self._incoming.write(data)
        if not self.handshaken:
            try:
                self._tls.do_handshake()
            except ssl.SSLWantReadError:
                return b""
            self.handshaken = True
        chunks = []
        while True:
            try:
                chunk = self._tls.read(READ_SIZE)
            except (ssl.SSLWantReadError, ssl.SSLZeroReturnError):
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)

    def wrap(self, data: bytes) -> bytes:
        """``data`` encrypted, with whatever else the session has to send before it."""
        self._tls.write(data)
        return self._outgoing.read()

    def outgoing(self) -> bytes:
        """Bytes the session has to send (handshake messages, session tickets, alerts)."""
        return self._outgoing.read()


def server_context(folder: Path) -> ssl.SSLContext:
    """A TLS 1.2+ server context with ``folder``'s server certificate and key."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(folder / "server.pem", folder / "server.key")
    return context


def certificates(folder: Path, hosts: list[str]) -> Path:
    """Write the CA (unless ``folder`` has one) and a server certificate for ``hosts`` (and
    localhost, 127.0.0.1, ::1) into ``folder``; the path of ``ca.pem``."""
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ImportError:
        raise TlsUnavailable(
            "TLS needs the cryptography package to make its certificates: "
            "pip install 'kafka-specgen[fake-broker]'"
        ) from None
    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    start, end = now - datetime.timedelta(days=1), now + datetime.timedelta(days=VALID_DAYS)
    ca_pem, ca_key_pem = folder / "ca.pem", folder / "ca.key"

    def write_key(path: Path, key: Any) -> None:
        data = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(data)

    if ca_pem.is_file() and ca_key_pem.is_file():
        ca_cert = x509.load_pem_x509_certificate(ca_pem.read_bytes())
        ca_key: Any = serialization.load_pem_private_key(ca_key_pem.read_bytes(), None)
    else:
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, CA_NAME)])
        ca_cert = (
            x509.CertificateBuilder()
            .subject_name(ca_subject)
            .issuer_name(ca_subject)
            .public_key(ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start)
            .not_valid_after(end)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
            )
            .sign(ca_key, hashes.SHA256())
        )
        write_key(ca_key_pem, ca_key)
        ca_pem.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    names: list[x509.GeneralName] = [x509.DNSName("localhost")]
    addresses = {"127.0.0.1", "::1"}
    for host in hosts:
        try:
            addresses.add(str(ipaddress.ip_address(host)))
        except ValueError:
            if host != "localhost":
                names.append(x509.DNSName(host))
    names += [x509.IPAddress(ipaddress.ip_address(a)) for a in sorted(addresses)]
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_cert.public_key()),  # type: ignore[arg-type]
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    write_key(folder / "server.key", key)
    (folder / "server.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return ca_pem
