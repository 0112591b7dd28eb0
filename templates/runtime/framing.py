"""Whole request and response frames: header plus body, on both sides of a connection.

A *frame* is what follows the 4-byte size prefix on the wire; ``add_size_prefix`` and
``strip_size_prefix`` convert between the two. Decoding is strict: a frame must hold
exactly one header and one body, nothing after them.
"""

from __future__ import annotations

import struct

from .errors import DecodeError, EncodeError, UnsupportedVersionError
from .headers import RequestHeader, ResponseHeader
from .registry import API_KEYS, request_header_version, response_header_version

TYPE_CHECKING = False
if TYPE_CHECKING:  # names for annotations only: importing typing costs about 3 ms
    from typing import Any

    from ._plan import Buffer

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
#: The largest frame a reader should accept by default (Kafka's socket.request.max.bytes):
#: the connection's default (its own reader cuts frames off a stream).
DEFAULT_MAX_FRAME_SIZE = 100 * 1024 * 1024


def add_size_prefix(frame: bytes) -> bytes:
    """Put the int32 size in front of a frame, as it goes on the wire."""
    return _INT32.pack(len(frame)) + frame


def strip_size_prefix(data: Buffer) -> Buffer:
    """The frame inside size-prefixed ``data``; the size must match exactly."""
    if len(data) < 4:
        raise DecodeError(f"{len(data)} bytes cannot hold a size prefix", 0, "size")
    (size,) = _INT32.unpack_from(data, 0)
    if size != len(data) - 4:
        raise DecodeError(f"size prefix says {size} bytes, {len(data) - 4} follow", 0, "size")
    return data[4:]


def _api_version_of(frame: Buffer) -> tuple[int, int]:
    if len(frame) < 4:
        raise DecodeError(
            f"{len(frame)} bytes cannot hold an api key and version", 0, "RequestHeader"
        )
    api_key: int = _INT16.unpack_from(frame, 0)[0]
    api_version: int = _INT16.unpack_from(frame, 2)[0]
    return api_key, api_version


def _body_class(api_key: int, api_version: int, side: str) -> Any:
    entry = API_KEYS.get(api_key)
    if entry is None:
        raise DecodeError(f"unknown api key {api_key}", 0, "RequestHeader.request_api_key")
    if not entry.min_version <= api_version <= entry.max_version:
        raise DecodeError(
            f"{entry.name} has no version {api_version} "
            f"(versions: {entry.min_version}-{entry.max_version})",
            2,
            "RequestHeader.request_api_version",
        )
    return entry.request if side == "request" else entry.response


def _check_end(frame: Buffer, end: int, name: str) -> None:
    if end != len(frame):
        raise DecodeError(f"{len(frame) - end} trailing bytes after the body", end, name)


def decode_request(frame: Buffer, *, strict: bool = True) -> tuple[RequestHeader, Any]:
    """Decode a request frame (as a broker or proxy sees it): ``(header, body)``.

    ``strict=False`` ignores bytes after the body, as Kafka's brokers do (they read the
    fields and never look at what is left: librdkafka 2.16 sends a Metadata v13 request for
    every topic with three bytes too many)."""
    api_key, api_version = _api_version_of(frame)
    body_class = _body_class(api_key, api_version, "request")
    header, pos = RequestHeader.decode_from(frame, 0, request_header_version(api_key, api_version))
    body, end = body_class.decode_from(frame, pos, api_version)
    if strict:
        _check_end(frame, end, body_class.__name__)
    return header, body


def encode_request(header: RequestHeader, body: Any) -> bytes:
    """A request frame (without size prefix) from a header and a body."""
    api_key, api_version = header.request_api_key, header.request_api_version
    if getattr(body, "API_KEY", None) != api_key:
        raise EncodeError(
            f"the header says api key {api_key}, the body is a {type(body).__name__}",
            "request_api_key",
            header,
        )
    header_version = request_header_version(api_key, api_version)
    payload: bytes = body.encode(api_version)
    return header.encode(header_version) + payload


def decode_response(frame: Buffer, api_key: int, api_version: int) -> tuple[ResponseHeader, Any]:
    """Decode a response frame; the caller knows the api key and version it asked with."""
    try:
        header_version = response_header_version(api_key, api_version)
    except UnsupportedVersionError as exc:
        raise DecodeError(str(exc), 0, "ResponseHeader") from None
    body_class = _body_class(api_key, api_version, "response")
    header, pos = ResponseHeader.decode_from(frame, 0, header_version)
    body, end = body_class.decode_from(frame, pos, api_version)
    _check_end(frame, end, body_class.__name__)
    return header, body


def encode_response(header: ResponseHeader, body: Any, api_key: int, api_version: int) -> bytes:
    """A response frame (without size prefix) to a request of ``api_key`` at ``api_version``."""
    head, payload = encode_response_parts(header, body, api_key, api_version)
    return head + payload


def encode_response_parts(
    header: ResponseHeader, body: Any, api_key: int, api_version: int
) -> tuple[bytes, bytes]:
    """``encode_response`` as (header, body) bytes, not joined: a broker sends a large
    Fetch response without copying it once more."""
    if getattr(body, "API_KEY", None) != api_key:
        raise EncodeError(
            f"api key {api_key} was asked for, the body is a {type(body).__name__}", "", body
        )
    header_version = response_header_version(api_key, api_version)
    payload: bytes = body.encode(api_version)
    return header.encode(header_version), payload
