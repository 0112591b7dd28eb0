"""Keeping part of a spec set: the APIs a client needs, by Kafka's ``listeners`` or by name.

A client library vendors a package of the APIs it speaks; Kafka's specs also hold the
broker-to-broker and controller APIs, KRaft's metadata records and the coordinators'
records. A selection keeps the chosen APIs (request and response), ApiVersions and the headers
(without them a client cannot connect), and the
``data`` specs of the folders the kept requests come from (in Kafka's clients module: the
consumer protocol's subscription and assignment, ...); it drops the rest. Each message
carries the structs it uses, so nothing else is needed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .api_keys import ApiKey
from .model import Message

#: Kafka's listener names (a request's ``listeners`` key).
LISTENERS = ("zkBroker", "broker", "controller")


class SelectionError(ValueError):
    """A selection that names a listener or an API the spec set does not have."""


@dataclass(frozen=True)
class Selection:
    listeners: tuple[str, ...] = ()
    """Keep the APIs whose requests list one of these listeners."""
    apis: tuple[str, ...] = ()
    """Keep these APIs, by name (``Metadata``) or api key (``3``)."""

    def __bool__(self) -> bool:
        return bool(self.listeners or self.apis)

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        """The messages this selection keeps (all of them when it selects nothing)."""
        if not self:
            return list(messages)
        unknown = [name for name in self.listeners if name not in LISTENERS]
        if unknown:
            raise SelectionError(
                f"--listeners: unknown listener {', '.join(unknown)} (Kafka's are "
                f"{', '.join(LISTENERS)})"
            )
        requests = [m for m in messages if m.type == "request" and m.api_key is not None]
        keys = {m.api_key for m in requests if set(m.listeners) & set(self.listeners)}
        keys |= self._named(requests)
        # A client cannot connect without ApiVersions (the handshake of KIP-35) and the
        # headers: every selection keeps them.
        keys.add(ApiKey.API_VERSIONS)
        kept = [m for m in messages if m.type in ("request", "response") and m.api_key in keys]
        folders = {m.scope for m in kept}
        return [
            m
            for m in messages
            if m in kept or m.type == "header" or (m.type == "data" and m.scope in folders)
        ]

    def _named(self, requests: Iterable[Message]) -> set[int | None]:
        by_name = {m.api_name.lower(): m.api_key for m in requests}
        by_key = {str(m.api_key): m.api_key for m in requests}
        keys: set[int | None] = set()
        unknown = []
        for api in self.apis:
            text = api.strip()
            key = by_key[text] if text in by_key else by_name.get(text.lower())
            if key is None:
                unknown.append(api)
            else:
                keys.add(key)
        if unknown:
            raise SelectionError(f"--apis: the spec set has no API {', '.join(unknown)}")
        return keys
