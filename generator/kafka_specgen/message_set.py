"""The rules that span the files of a spec set: unique message names, and one request and
one response (or one record key and one value) per api key."""

from __future__ import annotations

from typing import Iterable

from .errors import SpecError, raise_all
from .model import SCOPED_RECORD_TYPES, Message


def check_message_set(messages: Iterable[Message]) -> None:
    """Rules that span files: unique names, one request and one response per api key.
    Every break of them is reported."""
    errors: list[SpecError] = []
    by_name: dict[str, Message] = {}
    by_key: dict[tuple[str, int, str], Message] = {}
    for message in messages:
        if message.name in by_name:
            errors.append(
                SpecError(
                    message.source,
                    "duplicate-message",
                    f"message {message.name} is also defined in {by_name[message.name].source}",
                )
            )
            continue
        by_name[message.name] = message
        if message.api_key is None:
            continue
        # Record keys are numbered per module (metadata/, storage/, each coordinator), like
        # Kafka's record type generators, which run once per module.
        scope = message.scope if message.type in SCOPED_RECORD_TYPES else ""
        slot = (message.type, message.api_key, scope)
        if slot in by_key:
            errors.append(
                SpecError(
                    message.source,
                    "duplicate-api-key",
                    f"{message.type} api key {message.api_key} is also used by "
                    f"{by_key[slot].name} ({by_key[slot].source})",
                )
            )
            continue
        by_key[slot] = message
    for (kind, key, scope), message in sorted(by_key.items()):
        other = PAIRED_TYPES.get(kind)
        if other and (other, key, scope) not in by_key:
            errors.append(
                SpecError(
                    message.source,
                    "unpaired-api",
                    f"api key {key} has a {kind} ({message.name}) but no {other}",
                )
            )
    raise_all(errors)


#: Types that come in pairs sharing an api key (a coordinator record is a key and a value).
PAIRED_TYPES = {
    "request": "response",
    "response": "request",
    "coordinator-key": "coordinator-value",
    "coordinator-value": "coordinator-key",
}
