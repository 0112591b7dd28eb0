"""Facts tables: API-key names, error codes and the API ranges of each broker release: the
protocol facts no message spec carries.

A facts file (``specs/facts/*.json``) is told apart from a message spec by its top-level
``"facts"`` key: ``{"facts": "api-keys", "entries": [{"key": 0, "name": "Produce"}, ...]}``
or ``{"facts": "error-codes", "entries": [{"code": 35, "name": "UNSUPPORTED_VERSION",
"retriable": false, "description": "..."}, ...]}`` or ``{"facts": "broker-releases",
"entries": [{"release": "3.8.0", "apis": [[0, 0, 11], ...]}, ...]}``. This module validates such files against
``facts.schema.json`` (shape) and its own rules (unique keys, codes and names), and builds
the immutable ``Facts`` the render stage reads. Every rejection is a ``SpecError`` naming
the file, the entry and the rule.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Iterable, Sequence

from jsonschema import Draft202012Validator  # type: ignore[import-untyped, unused-ignore]
from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped, unused-ignore]
from jsonschema.validators import extend  # type: ignore[import-untyped, unused-ignore]

from .errors import SpecError
from .load import RawSpec

FACTS_SCHEMA_PATH = Path(__file__).with_name("facts.schema.json")
FACTS_KEY = "facts"


@dataclass(frozen=True)
class ApiKeyFact:
    key: int
    name: str


@dataclass(frozen=True)
class ErrorCodeFact:
    code: int
    name: str
    retriable: bool
    description: str


@dataclass(frozen=True)
class BrokerReleaseFact:
    """The API ranges a broker of one Kafka release advertises in ApiVersions."""

    release: str
    apis: tuple[tuple[int, int, int], ...]
    """``(api key, min version, max version)``, sorted by key."""

    @property
    def version(self) -> tuple[int, ...]:
        return tuple(int(part) for part in self.release.split("."))


@dataclass(frozen=True)
class Facts:
    """Every facts table given to one generation run (each part may be empty)."""

    api_keys: tuple[ApiKeyFact, ...] = ()
    """Sorted by key."""
    error_codes: tuple[ErrorCodeFact, ...] = ()
    """Sorted by code."""
    api_keys_source: str | None = None
    error_codes_source: str | None = None
    broker_releases: tuple[BrokerReleaseFact, ...] = ()
    """Oldest release first."""
    broker_releases_source: str | None = None

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(
            s
            for s in (self.api_keys_source, self.error_codes_source, self.broker_releases_source)
            if s
        )


def with_fallback(facts: Facts, fallback: Facts) -> Facts:
    """Each table from ``facts`` where it has one, else from ``fallback``."""
    api_keys = (facts.api_keys, facts.api_keys_source)
    if not facts.api_keys_source:
        api_keys = (fallback.api_keys, fallback.api_keys_source)
    error_codes = (facts.error_codes, facts.error_codes_source)
    if not facts.error_codes_source:
        error_codes = (fallback.error_codes, fallback.error_codes_source)
    releases = (facts.broker_releases, facts.broker_releases_source)
    if not facts.broker_releases_source:
        releases = (fallback.broker_releases, fallback.broker_releases_source)
    return Facts(api_keys[0], error_codes[0], api_keys[1], error_codes[1], releases[0], releases[1])


def is_facts(raw: RawSpec) -> bool:
    """A facts table rather than a message spec (message specs never have ``facts``)."""
    return FACTS_KEY in raw.data


def split_raws(raws: Iterable[RawSpec]) -> tuple[list[RawSpec], list[RawSpec]]:
    """``(message specs, facts tables)``, each in the order given."""
    specs: list[RawSpec] = []
    facts: list[RawSpec] = []
    for raw in raws:
        (facts if is_facts(raw) else specs).append(raw)
    return specs, facts


def build_facts(raws: Sequence[RawSpec]) -> Facts:
    """Validate every facts table and merge them; at most one table of each kind."""
    api_keys: tuple[ApiKeyFact, ...] = ()
    error_codes: tuple[ErrorCodeFact, ...] = ()
    releases: tuple[BrokerReleaseFact, ...] = ()
    seen: dict[str, str] = {}
    for raw in raws:
        validate_facts(raw)
        kind = raw.data[FACTS_KEY]
        if kind in seen:
            raise SpecError(
                raw.source,
                "duplicate-facts",
                f"a second '{kind}' table (the first is {seen[kind]})",
            )
        seen[kind] = raw.source
        if kind == "api-keys":
            api_keys = _api_keys(raw)
        elif kind == "error-codes":
            error_codes = _error_codes(raw)
        else:
            releases = _broker_releases(raw)
    return Facts(
        api_keys,
        error_codes,
        seen.get("api-keys"),
        seen.get("error-codes"),
        releases,
        seen.get("broker-releases"),
    )


def validate_facts(raw: RawSpec) -> None:
    """Raise a ``SpecError`` for the first schema violation of a facts table."""
    errors: Iterable[ValidationError] = _validator().iter_errors(raw.data)
    first = min(errors, key=_error_order, default=None)
    if first is None:
        return
    path = _format_path(list(first.absolute_path))
    if first.validator == "additionalProperties":
        allowed = sorted(first.schema.get("properties", {}))
        unknown = sorted(k for k in first.instance if k not in allowed)
        rule, message = "unknown-key", f"unknown key(s) {', '.join(map(repr, unknown))}"
    elif first.validator == "required":
        missing = [k for k in first.validator_value if k not in first.instance]
        rule, message = "missing-key", f"missing required key(s) {', '.join(map(repr, missing))}"
    else:
        expected = first.schema.get("description")
        shown = repr(first.instance)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        rule = "bad-value"
        message = (
            f"bad value {shown}: expected {expected}" if expected else f"bad value: {first.message}"
        )
    where = f"{path}: " if path else ""
    raise SpecError(raw.source, rule, where + message)


@cache
def _validator() -> Any:
    schema = json.loads(FACTS_SCHEMA_PATH.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    type_checker = Draft202012Validator.TYPE_CHECKER.redefine(
        "integer",
        lambda _checker, value: isinstance(value, int) and not isinstance(value, bool),
    )
    return extend(Draft202012Validator, type_checker=type_checker)(schema)


_RULE_ORDER = {"additionalProperties": 0, "required": 1}


def _error_order(error: ValidationError) -> tuple[list[tuple[int, int, str]], int, str]:
    position = [
        (0, item, "") if isinstance(item, int) else (1, 0, str(item))
        for item in error.absolute_path
    ]
    return position, _RULE_ORDER.get(str(error.validator), 2), str(error.message)


def _format_path(path: list[str | int]) -> str:
    text = ""
    for item in path:
        text += f"[{item}]" if isinstance(item, int) else (f".{item}" if text else str(item))
    return text


def _api_keys(raw: RawSpec) -> tuple[ApiKeyFact, ...]:
    facts = [ApiKeyFact(e["key"], e["name"]) for e in raw.data["entries"]]
    _unique(raw, [(f.key, f"entries: api key {f.key}") for f in facts], "duplicate-api-key")
    _unique(raw, [(f.name, f"entries: name {f.name!r}") for f in facts], "duplicate-name")
    return tuple(sorted(facts, key=lambda f: f.key))


def _error_codes(raw: RawSpec) -> tuple[ErrorCodeFact, ...]:
    facts = [
        ErrorCodeFact(e["code"], e["name"], e["retriable"], e["description"])
        for e in raw.data["entries"]
    ]
    _unique(raw, [(f.code, f"entries: error code {f.code}") for f in facts], "duplicate-error-code")
    _unique(raw, [(f.name, f"entries: name {f.name!r}") for f in facts], "duplicate-name")
    return tuple(sorted(facts, key=lambda f: f.code))


def _broker_releases(raw: RawSpec) -> tuple[BrokerReleaseFact, ...]:
    facts = [
        BrokerReleaseFact(e["release"], tuple(sorted((k, lo, hi) for k, lo, hi in e["apis"])))
        for e in raw.data["entries"]
    ]
    _unique(raw, [(f.release, f"entries: release {f.release}") for f in facts], "duplicate-release")
    for fact in facts:
        where = f"entries: release {fact.release}"
        _unique(raw, [(k, f"{where}: api key {k}") for k, _, _ in fact.apis], "duplicate-api-key")
        for key, lo, hi in fact.apis:
            if lo > hi:
                raise SpecError(
                    raw.source,
                    "bad-range",
                    f"{where}: api key {key} has min version {lo} above max version {hi}",
                )
    return tuple(sorted(facts, key=lambda f: f.version))


def _unique(raw: RawSpec, items: list[tuple[object, str]], rule: str) -> None:
    seen: set[object] = set()
    for value, label in items:
        if value in seen:
            raise SpecError(raw.source, rule, f"{label} appears more than once")
        seen.add(value)


def api_names(facts: Facts, spec_names: dict[int, str]) -> tuple[dict[int, str], list[str]]:
    """Key -> name for every key in the facts or the specs; a spec's name wins.

    Returns the names and a warning for each key whose names disagree (corpora of other
    Kafka versions name a few APIs differently, e.g. ListOffset before 2.5).
    """
    names = {fact.key: fact.name for fact in facts.api_keys}
    warnings = [
        f"{facts.api_keys_source}: api key {key} is {names[key]} in the facts table but "
        f"{name} in the specs; using {name} [rule: api-name-mismatch]"
        for key, name in sorted(spec_names.items())
        if key in names and names[key] != name
    ]
    names.update(spec_names)
    return dict(sorted(names.items())), warnings
