# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""``ServerConnection``: the broker side of a Kafka connection, without I/O."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import framing
from ..error_codes import ErrorCode
from ..errors import DecodeError, UnsupportedVersionError
from ..headers import RequestHeader, ResponseHeader
from ..negotiation import VersionRange
from .._codec import item_class
from ..registry import API_KEYS, ApiKey, api_name
from ._errors import LocalProtocolError, ProtocolFailure
from ._events import (
    ConnectionClosed,
    ConnectionFailed,
    Event,
    FailureCause,
    RequestReceived,
    SaslTokenReceived,
)
from ._policy import (
    INT16,
    INT32,
    expects_response,
    split_frames,
)

# --- the server ---------------------------------------------------------------------------


class ServerConnection:
    """The broker side of one connection, for proxies and test brokers.

    Request bytes in, ``RequestReceived`` events out; answer with ``send_response`` (or
    ``send_api_versions``, which also does KIP-511's downgrade answer). After a successful
    SaslHandshake v0 response the client sends raw SASL tokens (``SaslTokenReceived``),
    answered with ``send_sasl_token(..., last=True)`` for the final one.
    """

    def __init__(self, *, max_frame_size: int = framing.DEFAULT_MAX_FRAME_SIZE) -> None:
        self.max_frame_size = max_frame_size
        self._buffer = bytearray()
        self._out: list[bytes] = []
        # correlation id -> (api key, version) of the requests awaiting an answer with it,
        # oldest first: a client may reuse an id (Kafka's brokers only echo it back)
        self._pending: dict[int, list[tuple[int, int]]] = {}
        self._raw_sasl = False
        self.closed = False

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def data_to_send(self) -> bytes:
        data = b"".join(self._out)
        self._out.clear()
        return data

    def parts_to_send(self) -> list[bytes]:
        """``data_to_send`` in parts, not joined (the frames in order, a large body apart):
        for a sender that writes a list of buffers at once (``socket.sendmsg``)."""
        parts = self._out
        self._out = []
        return parts

    def receive_data(self, data: bytes, now: float = 0.0) -> list[Event]:
        """Feed bytes from the client (b"" when it closed); never raises on them."""
        events: list[Event] = []
        if self.closed:
            return events
        try:
            if not data:
                if self._buffer:
                    raise ProtocolFailure(
                        FailureCause.CLOSED, "the client closed in the middle of a frame"
                    )
                self.close()
                events.append(ConnectionClosed())
                return events
            self._buffer += data
            self._read_frames(events)
        except ProtocolFailure as failure:
            self.close()
            events.append(ConnectionFailed(failure.cause, failure.reason))
        except Exception as exc:  # noqa: BLE001 - a bug here must not crash the caller's loop
            self.close()
            events.append(
                ConnectionFailed(FailureCause.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
            )
        return events

    def _read_frames(self, events: list[Event]) -> None:
        for frame in split_frames(self._buffer, self.max_frame_size, "client"):
            if self._raw_sasl:
                events.append(SaslTokenReceived(frame))
            else:
                events.append(self._request(frame))

    def _request(self, frame: bytes) -> RequestReceived:
        if len(frame) < 8:
            raise ProtocolFailure(FailureCause.UNDECODABLE, f"a {len(frame)}-byte request frame")
        api_key: int = INT16.unpack_from(frame, 0)[0]
        api_version: int = INT16.unpack_from(frame, 2)[0]
        entry = API_KEYS.get(api_key)
        request: Any = None
        try:
            if (
                api_key == ApiKey.API_VERSIONS
                and entry is not None
                and api_version > entry.max_version
            ):
                # KIP-511: a newer ApiVersions body cannot be read, but the header can (its
                # client id keeps the classic string form at every version): answer it.
                header, _ = RequestHeader.decode_from(frame, 0, 1)
            else:
                # bytes after the body are ignored, as Kafka's brokers ignore them
                header, request = framing.decode_request(frame, strict=False)
        except DecodeError as exc:
            raise ProtocolFailure(
                FailureCause.UNDECODABLE,
                f"{api_name(api_key)} v{api_version} request does not decode: {exc}",
            ) from None
        cid = header.correlation_id
        expects = request is None or expects_response(request)
        if expects:
            self._pending.setdefault(cid, []).append((api_key, api_version))
        return RequestReceived(cid, api_key, api_version, header, request, expects, frame)

    def send_response(self, to: RequestReceived | int, response: Any) -> None:
        """Answer a request (the event, or its correlation id) with a response object, at
        the request's version. An ApiVersions request newer than this package is answered
        at v0, as KIP-511 wants (use ``send_api_versions`` to get the body right too)."""
        cid = to if isinstance(to, int) else to.correlation_id
        if self.closed:
            raise LocalProtocolError("the connection is closed")
        pending = self._take(cid)
        if pending is None:
            if isinstance(to, int) or to.expects_response:
                raise LocalProtocolError(f"no request with correlation id {cid} awaits an answer")
            # An acks=0 Produce answered anyway (to emulate brokers that do).
            pending = (to.api_key, to.api_version)
        self._write(cid, response, *pending)

    def _take(self, cid: int) -> tuple[int, int] | None:
        """The oldest request awaiting an answer with correlation id ``cid``."""
        waiting = self._pending.get(cid)
        if not waiting:
            return None
        pending = waiting.pop(0)
        if not waiting:
            del self._pending[cid]
        return pending

    def _write(self, cid: int, response: Any, api_key: int, api_version: int) -> None:
        entry = API_KEYS[api_key]
        if not entry.min_version <= api_version <= entry.max_version:
            api_version = 0  # only ApiVersions gets here, answered KIP-511's way
        head, payload = framing.encode_response_parts(
            ResponseHeader(cid), response, api_key, api_version
        )
        self._out += [INT32.pack(len(head) + len(payload)) + head, payload]
        if (
            api_key == ApiKey.SASL_HANDSHAKE
            and api_version == 0
            and response.error_code == ErrorCode.NONE
        ):
            self._raw_sasl = True  # KIP-43: raw tokens follow

    def send_api_versions(
        self,
        to: RequestReceived,
        versions: Mapping[int, VersionRange],
        *,
        error_code: int = 0,
        throttle_time_ms: int = 0,
        supported_features: Mapping[str, VersionRange] | None = None,
        finalized_features: Mapping[str, VersionRange] | None = None,
        finalized_features_epoch: int = -1,
    ) -> None:
        """Answer an ApiVersions request as a broker with ``versions`` would.

        When the request is newer than the broker's own ApiVersions range (``versions[18]``)
        or than this package, the answer is KIP-511's: error UNSUPPORTED_VERSION and a v0
        body that lists only ApiVersions' range.
        """
        entry = API_KEYS[ApiKey.API_VERSIONS]
        cls = entry.response
        item = item_class(cls, "api_keys")
        own = versions.get(ApiKey.API_VERSIONS, (0, entry.max_version))
        if to.api_version > min(own[1], entry.max_version):
            low, high = own[0], min(own[1], entry.max_version)
            only = item(api_key=ApiKey.API_VERSIONS, min_version=low, max_version=high)
            body = cls(error_code=ErrorCode.UNSUPPORTED_VERSION, api_keys=[only])
            if self.closed:
                raise LocalProtocolError("the connection is closed")
            self._take(to.correlation_id)
            self._write(to.correlation_id, body, ApiKey.API_VERSIONS, 0)
            return
        fields: dict[str, Any] = {
            "error_code": error_code,
            "api_keys": [
                item(api_key=k, min_version=lo, max_version=hi)
                for k, (lo, hi) in sorted(versions.items())
            ],
        }
        if throttle_time_ms:
            fields["throttle_time_ms"] = throttle_time_ms
        if supported_features:
            feature = item_class(cls, "supported_features")
            fields["supported_features"] = [
                feature(name=n, min_version=lo, max_version=hi)
                for n, (lo, hi) in sorted(supported_features.items())
            ]
        if finalized_features_epoch != -1 or finalized_features:
            feature = item_class(cls, "finalized_features")
            fields["finalized_features_epoch"] = finalized_features_epoch
            fields["finalized_features"] = [
                feature(name=n, min_version_level=lo, max_version_level=hi)
                for n, (lo, hi) in sorted((finalized_features or {}).items())
            ]
        self.send_response(to, cls(**fields))

    def send_sasl_token(self, token: bytes, *, last: bool = False) -> None:
        """Answer a raw SASL token (after SaslHandshake v0); ``last`` ends the raw mode."""
        if not self._raw_sasl:
            raise LocalProtocolError("raw SASL tokens follow a SaslHandshake v0 only")
        self._out.append(framing.add_size_prefix(token))
        if last:
            self._raw_sasl = False

    def close(self) -> None:
        self.closed = True
        self._buffer.clear()
        self._pending.clear()
