# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""``Handshake``: the opening of a Kafka connection as an object of its own.

wsproto keeps its opening handshake apart from the connection the same way. Here it is the
ApiVersions exchange (KIP-35) with KIP-511's downgrade, then the optional SASL login
(SaslHandshake, then SaslAuthenticate of KIP-152 or the raw tokens of KIP-43), and the
re-login before the session ends (KIP-368).

The handshake decides what to send and reads the answers; the connection numbers, frames
and times the requests. Every call returns steps for the connection to carry out:
``SendRequest`` (an internal request), ``SendToken`` (a raw SASL token), ``Throttle`` (the
ApiVersions answer's throttle time) and, last, ``Finished``. Anything wrong in an answer
raises ``ProtocolFailure``, which ends the connection.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Union

from .. import framing, negotiation
from ..error_codes import ErrorCode
from ..errors import DecodeError, UnsupportedVersionError
from ..negotiation import VersionRange
from ..registry import API_KEYS, ApiKey, api_name
from ..sasl import SaslError, SaslExchange, SaslMechanism
from ._errors import LocalProtocolError, ProtocolFailure
from ._events import FailureCause, Features
from ._policy import (
    MAX_API_VERSIONS_ATTEMPTS,
    choose_version,
    error_name,
)


@dataclass(frozen=True, slots=True)
class SendRequest:
    """Write this internal request."""

    api_key: int
    version: int
    body: Any


@dataclass(frozen=True, slots=True)
class SendToken:
    """Write this raw SASL token (size prefix only, no header: after SaslHandshake v0)."""

    token: bytes


@dataclass(frozen=True, slots=True)
class Throttle:
    """The ApiVersions answer carried this throttle time (KIP-219)."""

    throttle_time_ms: int


@dataclass(frozen=True, slots=True)
class Finished:
    """The handshake (or a re-login) is over."""

    session_lifetime_ms: int


Step = Union[SendRequest, SendToken, Throttle, Finished]


def request_class(api_key: int) -> Any:
    """The request class of ``api_key``. (Taken into a variable before the call: the
    compiled build drops a call made straight on a property's value.)"""
    cls = API_KEYS[api_key].request
    return cls


class HandshakeState(Enum):
    IDLE = "idle"
    NEGOTIATING = "negotiating"
    """ApiVersions sent, no answer yet."""
    AUTHENTICATING = "authenticating"
    DONE = "done"


class Handshake:
    """The ApiVersions exchange and the SASL login of one connection.

    ``configured`` (``{api_key: (min, max)}``) skips ApiVersions, as KIP-35 allows for a
    configured broker. Once ``state`` is ``DONE``, ``versions``, ``features``,
    ``api_versions_version``, ``api_versions_refused`` and ``session_lifetime_ms`` hold the
    outcome.
    """

    def __init__(
        self,
        *,
        client_software: tuple[str, str],
        policy: Mapping[int, VersionRange],
        configured: Mapping[int, VersionRange] | None = None,
        sasl: SaslMechanism | None = None,
    ) -> None:
        self.client_software = client_software
        self.policy = policy
        self.sasl = sasl
        self._configured = configured
        self.state = HandshakeState.IDLE
        self.versions: dict[int, VersionRange] = {}
        self.features = Features()
        self.api_versions_version: int | None = None
        self.api_versions_refused: list[int] = []
        self.session_lifetime_ms = 0
        self.raw_tokens = False
        """True between a SaslHandshake v0 answer and the end of the login: the peer's
        frames are bare tokens (KIP-43)."""
        self._attempts = 0
        self._exchange: SaslExchange | None = None

    # --- entry points ---------------------------------------------------------------------

    def start(self) -> list[Step]:
        """The first steps: ApiVersions at the newest version, or (configured) the login."""
        if self._configured is not None:
            self.versions = dict(self._configured)
            return self._after_versions()
        entry = API_KEYS.get(ApiKey.API_VERSIONS)
        if entry is None:
            # selection.py keeps ApiVersions in every package with headers; a package made
            # some other way needs the broker's versions given.
            raise LocalProtocolError("this package has no ApiVersions: pass broker_versions=")
        self.state = HandshakeState.NEGOTIATING
        high = min(
            entry.max_version, self.policy.get(ApiKey.API_VERSIONS, (0, entry.max_version))[1]
        )
        return [self._api_versions_request(high)]

    def receive(self, api_key: int, version: int, frame: bytes) -> list[Step]:
        """The answer (a whole response frame) to an internal request of ``api_key`` sent
        at ``version``."""
        if api_key == ApiKey.API_VERSIONS:
            return self._api_versions_answer(frame, version)
        try:
            _, body = framing.decode_response(frame, api_key, version)
        except DecodeError as exc:
            raise ProtocolFailure(
                FailureCause.UNDECODABLE,
                f"{api_name(api_key)} v{version} response does not decode: {exc}",
            ) from None
        if api_key == ApiKey.SASL_HANDSHAKE:
            return self._sasl_handshake_answer(body, version)
        return self._sasl_authenticate_answer(body)

    def receive_token(self, token: bytes) -> list[Step]:
        """A raw token from the broker (after SaslHandshake v0)."""
        reply = self._sasl_step(token)
        if reply is None:
            self.raw_tokens = False
            return self._finish()
        return [SendToken(reply)]

    def reauthenticate(self) -> list[Step]:
        """Log in again on the same connection (KIP-368): SaslHandshake, SaslAuthenticate."""
        if self.state is not HandshakeState.DONE or self.sasl is None:
            raise ProtocolFailure(FailureCause.INTERNAL_ERROR, "nothing to re-authenticate")
        return self._login()

    # --- ApiVersions ------------------------------------------------------------------------

    def _api_versions_request(self, version: int) -> SendRequest:
        self._attempts += 1
        name, version_text = self.client_software
        request = request_class(ApiKey.API_VERSIONS)(
            client_software_name=name, client_software_version=version_text
        )
        return SendRequest(ApiKey.API_VERSIONS, version, request)

    def _api_versions_answer(self, frame: bytes, sent: int) -> list[Step]:
        try:
            outcome = negotiation.decode_api_versions_response(frame, sent)
        except DecodeError as exc:
            raise ProtocolFailure(
                FailureCause.UNDECODABLE, f"ApiVersions v{sent} response does not decode: {exc}"
            ) from None
        response = outcome.response
        if response.error_code == ErrorCode.UNSUPPORTED_VERSION:
            # KIP-511: the body is v0 and lists the broker's ApiVersions range. Retry at its
            # newest if that is strictly lower than what was sent; else at v0 (a broker
            # listing nothing, or a range that does not explain the refusal).
            listed = outcome.versions.get(ApiKey.API_VERSIONS)
            retry = listed[1] if listed is not None and 0 <= listed[1] < sent else 0
            if sent == 0 or self._attempts >= MAX_API_VERSIONS_ATTEMPTS:
                raise ProtocolFailure(
                    FailureCause.HANDSHAKE_FAILED,
                    f"the broker refused ApiVersions v{sent} (UNSUPPORTED_VERSION) after "
                    f"{self._attempts} attempts",
                )
            self.api_versions_refused.append(sent)
            return [self._api_versions_request(retry)]
        if response.error_code != ErrorCode.NONE:
            raise ProtocolFailure(
                FailureCause.HANDSHAKE_FAILED,
                f"ApiVersions v{sent} answered {error_name(response.error_code)}",
            )
        self.versions = outcome.versions
        self.api_versions_version = outcome.version
        epoch = getattr(response, "finalized_features_epoch", -1)
        supported = getattr(response, "supported_features", ())
        finalized = getattr(response, "finalized_features", ()) if epoch != -1 else ()
        self.features = Features(
            {f.name: (f.min_version, f.max_version) for f in supported},
            {f.name: (f.min_version_level, f.max_version_level) for f in finalized},
            epoch,
        )
        steps: list[Step] = []
        throttle_ms = getattr(response, "throttle_time_ms", 0)
        if isinstance(throttle_ms, int) and throttle_ms > 0:
            steps.append(Throttle(throttle_ms))
        return steps + self._after_versions()

    def _after_versions(self) -> list[Step]:
        if self.sasl is None:
            return self._finish()
        return self._login()

    # --- SASL -------------------------------------------------------------------------------

    def _version(self, api_key: int, what: str) -> int:
        if api_key not in API_KEYS:
            raise ProtocolFailure(
                FailureCause.AUTHENTICATION_FAILED,
                f"SASL is configured but this package was generated without {what}",
            )
        try:
            return choose_version(api_key, self.policy, self.versions)
        except UnsupportedVersionError as exc:
            raise ProtocolFailure(FailureCause.AUTHENTICATION_FAILED, str(exc)) from None

    def _login(self) -> list[Step]:
        assert self.sasl is not None
        self.state = HandshakeState.AUTHENTICATING
        version = self._version(ApiKey.SASL_HANDSHAKE, "SaslHandshake")
        request = request_class(ApiKey.SASL_HANDSHAKE)(mechanism=self.sasl.name)
        return [SendRequest(ApiKey.SASL_HANDSHAKE, version, request)]

    def _sasl_handshake_answer(self, body: Any, version: int) -> list[Step]:
        assert self.sasl is not None
        if body.error_code != ErrorCode.NONE:
            offered = ", ".join(getattr(body, "mechanisms", ())) or "none"
            raise ProtocolFailure(
                FailureCause.AUTHENTICATION_FAILED,
                f"SaslHandshake for {self.sasl.name} answered {error_name(body.error_code)} "
                f"(the broker offers: {offered})",
            )
        try:
            token, self._exchange = self.sasl.start()
        except SaslError as exc:  # e.g. a token callback that failed
            raise ProtocolFailure(FailureCause.AUTHENTICATION_FAILED, str(exc)) from None
        if version == 0:
            # Before KIP-152 the tokens travel bare: a size prefix and nothing else.
            self.raw_tokens = True
            return [SendToken(token)]
        return [self._token_request(token)]

    def _token_request(self, token: bytes) -> SendRequest:
        version = self._version(ApiKey.SASL_AUTHENTICATE, "SaslAuthenticate")
        request = request_class(ApiKey.SASL_AUTHENTICATE)(auth_bytes=token)
        return SendRequest(ApiKey.SASL_AUTHENTICATE, version, request)

    def _sasl_step(self, challenge: bytes) -> bytes | None:
        assert self._exchange is not None
        try:
            return self._exchange.respond(challenge)
        except SaslError as exc:
            raise ProtocolFailure(FailureCause.AUTHENTICATION_FAILED, str(exc)) from None

    def _sasl_authenticate_answer(self, body: Any) -> list[Step]:
        if body.error_code != ErrorCode.NONE:
            message = body.error_message or "no message"
            raise ProtocolFailure(
                FailureCause.AUTHENTICATION_FAILED,
                f"SaslAuthenticate answered {error_name(body.error_code)}: {message}",
            )
        self.session_lifetime_ms = max(0, getattr(body, "session_lifetime_ms", 0))
        reply = self._sasl_step(body.auth_bytes)
        if reply is None:
            return self._finish()
        return [self._token_request(reply)]

    def _finish(self) -> list[Step]:
        self.state = HandshakeState.DONE
        self._exchange = None
        return [Finished(self.session_lifetime_ms)]
