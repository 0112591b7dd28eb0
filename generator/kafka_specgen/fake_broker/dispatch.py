"""Which handler answers which API, at which versions, and the hooks tests put in front.

The table is built from the API modules' declarations (each module's ``HANDLERS``); the
versions advertised are what the release, the spec set and the handler all have.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, TextIO

from . import acls, cluster_admin, configs, consumer_groups, coordinator, epochs, fetch
from . import group_admin, groups, list_offsets, maintenance, metadata, offsets
from . import partition_admin, produce, sasl, share_fetch, share_groups, share_offsets, topics
from . import txn, txn_admin
from . import features
from ..api_keys import ApiKey
from .call import Call
from .errors import ErrorCode
from .handler import Handler
from .waiting import Wait

DISCONNECT = object()
"""What a ``control`` function returns to close the client's connection instead."""

API_MODULES: tuple[ModuleType, ...] = (
    produce,
    fetch,
    list_offsets,
    metadata,
    topics,
    configs,
    coordinator,
    groups,
    offsets,
    txn,
    consumer_groups,
    maintenance,
    group_admin,
    partition_admin,
    cluster_admin,
    txn_admin,
    share_groups,
    share_fetch,
    share_offsets,
    features,
    acls,
    sasl,
    epochs,
)
"""The modules whose ``HANDLERS`` the broker serves (one module per API family)."""

VersionRange = tuple[int, int]


def handler_table(modules: Iterable[ModuleType] = API_MODULES) -> dict[int, Handler]:
    """Api key -> its handler, from the modules' declarations."""
    table: dict[int, Handler] = {}
    for module in modules:
        for handler in module.HANDLERS:
            if handler.api_key in table:
                raise ValueError(f"two handlers for api key {handler.api_key}")
            table[handler.api_key] = handler
    return table


HANDLERS = handler_table()


def unimplemented(call: Call) -> Any:
    """The answer to an API a release has and the fake broker does not implement: its
    response with UNSUPPORTED_VERSION in every error field."""
    return with_error(call.reply(), ErrorCode.UNSUPPORTED_VERSION)


def serving(versions: Mapping[int, VersionRange]) -> dict[int, Handler]:
    """Advertised api key -> the handler that answers it (``unimplemented`` for the APIs a
    release has that no module implements; ApiVersions is the connection's own)."""
    return {
        key: HANDLERS.get(key) or Handler(key, (0, high), unimplemented)
        for key, (_, high) in versions.items()
        if key != ApiKey.API_VERSIONS
    }


def advertised(
    entries: Mapping[int, Any],
    release: Mapping[int, VersionRange] | None,
    table: Mapping[int, Handler] = HANDLERS,
) -> dict[int, VersionRange]:
    """The ranges to advertise. For a release: every API it has (as its brokers advertise
    them, so that clients negotiate and guess as they would), within the spec set's and,
    for the implemented ones, the handler's; APIs without a handler then get an error
    answer. Without one: the spec set's ranges of the implemented APIs, within the
    handlers'."""
    versions = {}
    keys = release if release is not None else (*table, ApiKey.API_VERSIONS)
    for key in keys:
        entry = entries.get(key)
        if entry is None:
            continue
        low, high = entry.min_version, entry.max_version
        if release is not None:
            low, high = max(low, release[key][0]), min(high, release[key][1])
        handler = table.get(key)
        if handler is not None:
            low, high = max(low, handler.versions[0]), min(high, handler.versions[1])
        if low <= high:
            versions[key] = (low, high)
    return dict(sorted(versions.items()))


def missing(
    entries: Mapping[int, Any],
    release: Mapping[int, VersionRange] | None,
    table: Mapping[int, Handler] = HANDLERS,
) -> dict[int, VersionRange]:
    """Implemented APIs whose release range the spec set does not fully cover."""
    if release is None:
        return {}
    out = {}
    for key in table:
        entry, wanted = entries.get(key), release.get(key)
        if wanted is None:
            continue
        if entry is None or entry.min_version > wanted[0] or entry.max_version < wanted[1]:
            out[key] = wanted
    return out


@dataclass
class Routes:
    """What every broker of a cluster answers, and how: shared by the event loop and the
    hooks of ``FakeCluster``."""

    handlers: dict[int, Handler]
    """Advertised api key -> its handler (``unimplemented`` for the release's others)."""
    versions: dict[int, VersionRange]
    """Advertised api key -> (min, max)."""
    controls: dict[int, Callable[[Call], Any]] = field(default_factory=dict)
    throttle_ms: int = 0
    failures: list[str] = field(default_factory=list)
    """What went wrong, one line each: answers that raised (their connection was closed),
    accept errors (EMFILE ...)."""
    record: TextIO | None = None
    faults: Any = None
    """The fault injection in front of every answer (``faults.Faults``), if any."""
    guard: Callable[[Call, Callable[[Call], Any]], Any] | None = None
    """The authorizer around the handlers (``authorize.guard``), when ACLs are enforced."""
    tracked: list[Any] | None = None
    """Every request the brokers read, while request tracking is on."""

    def answer(self, call: Call) -> Any:
        """The fault injection's answer, else the control function's, else the handler's."""
        if self.faults is not None:
            return self.faults.answer(call, self.controlled)
        return self.controlled(call)

    def controlled(self, call: Call) -> Any:
        """The control function's answer, else the handler's."""
        control = self.controls.get(call.api_key)
        response = control(call) if control is not None else None
        if response is None:
            response = self.usual(call)
        return response

    def usual(self, call: Call) -> Any:
        """The handler's answer, behind the authorizer when ACLs are enforced. A release's
        version the handler does not implement is answered as an API the fake broker does
        not implement."""
        handler = self.handlers[call.api_key]
        low, high = handler.versions
        answer = handler.answer if low <= call.version <= high else unimplemented
        return answer(call) if self.guard is None else self.guard(call, answer)


def with_error(obj: Any, code: int) -> Any:
    """``obj`` with every error-code field, at any depth, set to ``code``."""
    for attr in getattr(obj, "__dataclass_fields__", ()):
        value = getattr(obj, attr)
        if attr in ("error_code", "partition_error_code"):
            setattr(obj, attr, code)
        elif isinstance(value, (list, tuple)):
            for item in value:
                with_error(item, code)
        elif hasattr(value, "__dataclass_fields__"):
            with_error(value, code)
    return obj


def erring(answer: Callable[[Call], Any], code: int, times: int) -> Callable[[Call], Any]:
    """A control function: the next ``times`` answers of ``answer`` with ``code`` in every
    error field (a waiting answer gets it when it is ready), then the usual ones."""
    left = [times]

    def failing(call: Call) -> Any:
        if left[0] <= 0:
            return None
        left[0] -= 1
        return _errored(answer(call), code)

    return failing


def _errored(response: Any, code: int) -> Any:
    if isinstance(response, Wait):
        inner = response.poll

        def poll(now: float, expired: bool) -> Any:
            return _errored(inner(now, expired), code)

        return Wait(response.deadline, poll, response.on)
    if response is None or response is DISCONNECT:
        return response
    return with_error(response, code)
