"""What the listeners ask of clients: TLS, SASL users, and who is a super user.

``Security.build(users=, superusers=, tls=, ...)`` turns ``FakeCluster``'s arguments into
what the server needs: a TLS context (its certificates in ``tls_folder``, ``ca_file`` for
the clients), the SASL mechanisms with each user's credentials (SCRAM's stored keys are
computed once, here), and the authorizer's settings. The listeners' security protocol
follows as Kafka names it: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL.
"""

from __future__ import annotations

import shutil
import ssl
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .authenticate import MECHANISMS, Authenticator, Credentials, scram_nonce_check
from .tls import TlsSession, TlsUnavailable, certificates, server_context


class SecurityError(ValueError):
    """Security settings that cannot work (one line for the user)."""


class Security:
    def __init__(
        self,
        credentials: Credentials | None,
        context: ssl.SSLContext | None,
        tls_folder: Path | None,
        temporary: bool,
    ) -> None:
        self.credentials = credentials
        self.context = context
        self.tls_folder = tls_folder
        self._temporary = temporary

    @classmethod
    def build(
        cls,
        *,
        users: Mapping[str, str] | None,
        mechanisms: Iterable[str] | None,
        tls: bool | str | Path,
        hosts: list[str],
        package: Any,
        release: str | None = None,
    ) -> Security:
        credentials = None
        if users:
            enabled = tuple(mechanisms) if mechanisms is not None else MECHANISMS
            unknown = [m for m in enabled if m not in MECHANISMS]
            if unknown or not enabled:
                raise SecurityError(
                    f"SASL mechanisms {', '.join(unknown) or '(none)'}: the fake broker has "
                    f"{', '.join(MECHANISMS)}"
                )
            for name in users:
                if not name or ":" in name:
                    raise SecurityError(
                        f"a SASL user name must be non-empty, without ':': {name!r}"
                    )
            sasl = package.module("sasl")
            credentials = Credentials(dict(users), enabled, sasl, scram_nonce_check(release))
        elif mechanisms is not None:
            raise SecurityError("SASL mechanisms without users: give users too")
        context, folder, temporary = None, None, False
        if tls is not False and tls is not None:
            temporary = tls is True
            if isinstance(tls, bool):
                folder = Path(tempfile.mkdtemp(prefix="fake-kafka-tls-"))
            else:
                folder = Path(tls)
            try:
                certificates(folder, hosts)
                context = server_context(folder)
            except (OSError, ValueError, TlsUnavailable) as exc:
                if temporary:
                    shutil.rmtree(folder, ignore_errors=True)
                if isinstance(exc, TlsUnavailable):
                    raise SecurityError(str(exc)) from None
                raise SecurityError(f"TLS certificates in {folder}: {exc}") from None
        return cls(credentials, context, folder, temporary)

    @property
    def secured(self) -> bool:
        return self.context is not None or self.credentials is not None

    @property
    def protocol(self) -> str:
        """The listeners' security protocol, as clients' ``security.protocol`` names it."""
        sasl, tls = self.credentials is not None, self.context is not None
        return {(False, False): "PLAINTEXT", (False, True): "SSL"}.get(
            (sasl, tls), "SASL_SSL" if tls else "SASL_PLAINTEXT"
        )

    @property
    def ca_file(self) -> Path | None:
        return self.tls_folder / "ca.pem" if self.tls_folder is not None else None

    def tls_session(self) -> TlsSession | None:
        return TlsSession(self.context) if self.context is not None else None

    def authenticator(self) -> Authenticator | None:
        return Authenticator(self.credentials) if self.credentials is not None else None

    def close(self) -> None:
        """Remove the certificates of a temporary folder (``tls=True``)."""
        if self._temporary and self.tls_folder is not None:
            shutil.rmtree(self.tls_folder, ignore_errors=True)
