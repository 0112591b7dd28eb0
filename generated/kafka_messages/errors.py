# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""The exceptions of this package: one for bad bytes, one for values that cannot be written,
one for an error code a broker answered with.

The protocol's own error codes are in ``error_codes``.
"""

from __future__ import annotations


class DecodeError(ValueError):
    """Bytes that are not a valid message: where (offset, field path) and why.

    Decoders raise no other exception, whatever the input.
    """

    def __init__(self, reason: str, offset: int, path: str) -> None:
        self.reason = reason
        self.offset = offset
        self.path = path
        super().__init__(f"{path}: {reason} (at byte {offset})")

    def within(self, outer: str) -> DecodeError:
        """The same error seen from the struct or message that holds the failing field."""
        path = f"{outer}.{self.path}" if self.path else outer
        return type(self)(self.reason, self.offset, path)


class EncodeError(ValueError):
    """A value that cannot be written at the requested version: names field and version."""

    def __init__(self, reason: str, path: str, obj: object, version: int | None = None) -> None:
        self.reason = reason
        self.path = path
        self.obj = obj
        self.version = version
        where = f"{path} " if path else ""
        at = "" if version is None else f"at version {version}"
        prefix = f"{where}{at}".strip()
        super().__init__(f"{prefix}: {reason}" if prefix else reason)

    def nested(self, attr: str, parent: object) -> EncodeError:
        """The same error seen from ``parent``, whose field ``attr`` holds the failing value."""
        path = f"{attr}.{self.path}" if self.path else attr
        return type(self)(self.reason, path, parent, self.version)

    def within(self, name: str, version: int) -> EncodeError:
        """The error as the caller of ``encode`` sees it, with class name and version."""
        path = f"{name}.{self.path}" if self.path else name
        return type(self)(self.reason, path, self.obj, version)


class UnsupportedVersionError(EncodeError):
    """A version the message does not have, or that the other side does not speak."""

    def __init__(
        self, reason: str, path: str = "", obj: object = None, version: int | None = None
    ) -> None:
        super().__init__(reason, path, obj, version)


class ProtocolError(Exception):
    """A non-zero ``error_code`` in a response (``error_codes.raise_for_errors``)."""

    def __init__(self, code: int, name: str, retriable: bool, path: str) -> None:
        self.code = code
        self.name = name
        self.retriable = retriable
        """True when the same request may succeed if sent again later."""
        self.path = path
        """Where the code was, e.g. ``topics[0].partitions[2].error_code``."""
        kind = "retriable" if retriable else "not retriable"
        super().__init__(f"{path}: {name} ({code}, {kind})")
