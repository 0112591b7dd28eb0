# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""What ``registry`` is made of: one ``ApiEntry`` per API, and the header-version rules."""

from __future__ import annotations

import importlib

from .errors import UnsupportedVersionError

TYPE_CHECKING = False
if TYPE_CHECKING:  # names for annotations only: importing typing costs about 3 ms
    from typing import Any


class ApiEntry:
    """One API: its name, request and response classes, and version facts."""

    __slots__ = (
        "api_key",
        "name",
        "min_version",
        "max_version",
        "flexible_min_version",
        "response_flexible_min_version",
        "latest_version_unstable",
        "_module",
        "_request",
        "_response",
        "_classes",
    )

    def __init__(
        self,
        api_key: int,
        name: str,
        min_version: int,
        max_version: int,
        flexible_min_version: int | None,
        response_flexible_min_version: int | None,
        module: str,
        request: str,
        response: str,
        *,
        latest_version_unstable: bool = False,
    ) -> None:
        self.api_key = api_key
        self.name = name
        self.min_version = min_version
        self.max_version = max_version
        self.flexible_min_version = flexible_min_version
        """The first flexible version of the request; None if it never is."""
        self.response_flexible_min_version = response_flexible_min_version
        self.latest_version_unstable = latest_version_unstable
        self._module = module
        self._request = request
        self._response = response
        self._classes: tuple[Any, Any] | None = None

    def _load(self) -> tuple[Any, Any]:
        module = importlib.import_module(f".{self._module}", __package__)
        self._classes = (getattr(module, self._request), getattr(module, self._response))
        return self._classes

    @property
    def request(self) -> Any:
        """The request class (its module is imported on first use)."""
        return (self._classes or self._load())[0]

    @property
    def response(self) -> Any:
        """The response class (its module is imported on first use)."""
        return (self._classes or self._load())[1]

    @property
    def flexible_versions(self) -> range:
        """The flexible versions of this API, as a range (empty if none)."""
        if self.flexible_min_version is None:
            return range(0)
        return range(self.flexible_min_version, self.max_version + 1)

    def request_header_version(self, api_version: int) -> int:
        """2 for a flexible request, else 1; ControlledShutdown v0 predates the client id
        in the header and uses 0 (one of the two exceptions Kafka hard-codes)."""
        if self.name == "ControlledShutdown" and api_version == 0:
            return 0
        flexible = self.flexible_min_version
        return 2 if flexible is not None and api_version >= flexible else 1

    def response_header_version(self, api_version: int) -> int:
        """1 for a flexible response, else 0. ApiVersions responses always use 0 (KIP-511):
        a client must read them before it knows which versions the broker speaks."""
        if self.name == "ApiVersions":
            return 0
        flexible = self.response_flexible_min_version
        return 1 if flexible is not None and api_version >= flexible else 0

    def __repr__(self) -> str:
        return (
            f"ApiEntry({self.api_key}, {self.name!r}, "
            f"versions {self.min_version}-{self.max_version})"
        )


class CoordinatorRecordType:
    """One record type of a coordinator's internal topic: its key and value classes."""

    __slots__ = ("record_type", "name", "_key_module", "_key", "_value_module", "_value")

    def __init__(
        self,
        record_type: int,
        name: str,
        key_module: str,
        key: str,
        value_module: str,
        value: str,
    ) -> None:
        self.record_type = record_type
        self.name = name
        self._key_module = key_module
        self._key = key
        self._value_module = value_module
        self._value = value

    @property
    def key(self) -> Any:
        """The key class (its module is imported on first use)."""
        return getattr(importlib.import_module(f".{self._key_module}", __package__), self._key)

    @property
    def value(self) -> Any:
        """The value class (its module is imported on first use)."""
        module = importlib.import_module(f".{self._value_module}", __package__)
        return getattr(module, self._value)

    def __repr__(self) -> str:
        return f"CoordinatorRecordType({self.record_type}, {self.name!r})"


def checked_entry(api_keys: dict[int, ApiEntry], api_key: int, api_version: int) -> ApiEntry:
    """The entry of ``api_key``; ``UnsupportedVersionError`` for an unknown key or version."""
    entry = api_keys.get(api_key)
    if entry is None:
        raise UnsupportedVersionError(f"unknown api key {api_key}")
    if not entry.min_version <= api_version <= entry.max_version:
        raise UnsupportedVersionError(
            f"{entry.name} has no version {api_version} "
            f"(versions: {entry.min_version}-{entry.max_version})"
        )
    return entry
