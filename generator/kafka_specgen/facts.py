"""Facts tables: API-key names, error codes and the API ranges of each broker release: the
protocol facts no message spec carries.

A facts file (``specs/facts/*.json``) is told apart from a message spec by its top-level
``"facts"`` key: ``{"facts": "api-keys", "entries": [{"key": 0, "name": "Produce"}, ...]}``
or ``{"facts": "error-codes", "entries": [{"code": 35, "name": "UNSUPPORTED_VERSION",
"retriable": false, "description": "..."}, ...]}`` or ``{"facts": "broker-releases",
"entries": [{"release": "3.8.0", "kind": "zookeeper", "advertised": [[0, 0, 11], ...]},
...]}`` (the release table: ``tools/release_table.py`` documents its fields). This module validates such files against
``facts.schema.json`` (shape) and its own rules (unique keys, codes and names), and builds
the immutable ``Facts`` the render stage reads. Every rejection is a ``SpecError`` naming
the file, the entry and the rule.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from jsonschema import Draft202012Validator  # type: ignore[import-untyped, unused-ignore]
from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped, unused-ignore]
from jsonschema.validators import extend  # type: ignore[import-untyped, unused-ignore]

from .errors import SpecError
from .load import RawSpec
from .release_names import Release

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


Triple = tuple[int, int, int]
"""``(api key, min version, max version)``."""


@dataclass(frozen=True)
class RefusalFact:
    """Versions a broker advertises yet refuses, and how."""

    api_key: int
    versions: tuple[int, int]
    answer: str
    """``close``: the broker closes the connection without an answer."""
    quirk: str


@dataclass(frozen=True)
class FeatureFacts:
    """The feature part of a broker's ApiVersions v3+ answer (KIP-584)."""

    epoch: str
    """How the finalized-features epoch behaves: ``zookeeper``, ``metadata offset`` or
    ``unknown`` (the table's ``epochs`` say what each means)."""
    supported: tuple[tuple[str, int, int], ...]
    """``(feature, min level, max level)``, in the table's order."""
    finalized: tuple[tuple[str, int], ...]
    """The default finalized levels of a new cluster: ``(feature, level)``."""
    supported_unstable: tuple[tuple[str, int, int], ...] | None = None
    """``supported`` with unstable feature versions enabled; None: the same."""
    metadata_version_floor: int | None = None
    """The lowest ``metadata.version`` UpdateFeatures may set (KRaft from 3.3)."""
    metadata_versions: tuple[tuple[int, str, bool], ...] = ()
    """``(level, name, metadata changed at that level)`` of every level the release knows."""


@dataclass(frozen=True)
class QuirkFact:
    """A way real brokers differ from their specs, and where in Kafka's source it is read."""

    id: str
    about: str
    source: str


@dataclass(frozen=True)
class BrokerReleaseFact:
    """One row of the release table: a broker of one Kafka release and kind."""

    release: str
    kind: str
    """``zookeeper`` or ``kraft``."""
    advertised: tuple[Triple, ...] | None
    """What the broker advertises in ApiVersions by default, sorted by key; None for
    brokers without ApiVersions (before 0.10)."""
    api_versions: str = "answered"
    """``answered``, ``closes`` (the connection) or ``no answer``."""
    accepted_without_api_versions: tuple[Triple, ...] = ()
    """For brokers without ApiVersions: the requests they handle."""
    telemetry: tuple[Triple, ...] = ()
    """Advertised besides when a client-telemetry receiver is configured."""
    unstable: tuple[Triple, ...] = ()
    """The ranges that change with ``unstable.api.versions.enable``."""
    refused: tuple[RefusalFact, ...] = ()
    features: FeatureFacts | None = None
    """None before 2.7 (ApiVersions carries no features)."""
    quirks: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def apis(self) -> tuple[Triple, ...]:
        """``advertised``, or () for a broker without ApiVersions."""
        return self.advertised or ()

    @property
    def version(self) -> tuple[int, ...]:
        return Release.parse(self.release).parts


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
    """Oldest release first; a ZooKeeper row before the KRaft row of the same release."""
    broker_releases_source: str | None = None
    broker_release_quirks: tuple[QuirkFact, ...] = ()
    broker_release_sources: tuple[tuple[str, str], ...] = ()
    """``(id, description)`` of each source rows cite."""
    broker_release_epochs: tuple[tuple[str, str], ...] = ()
    """``(id, description)`` of each finalized-features epoch behaviour."""

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
    releases = facts if facts.broker_releases_source else fallback
    return Facts(
        api_keys[0],
        error_codes[0],
        api_keys[1],
        error_codes[1],
        releases.broker_releases,
        releases.broker_releases_source,
        releases.broker_release_quirks,
        releases.broker_release_sources,
        releases.broker_release_epochs,
    )


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
    releases = Facts()
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
            releases = _broker_release_table(raw)
    return replace(
        releases,
        api_keys=api_keys,
        error_codes=error_codes,
        api_keys_source=seen.get("api-keys"),
        error_codes_source=seen.get("error-codes"),
        broker_releases_source=seen.get("broker-releases"),
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


def _broker_release_table(raw: RawSpec) -> Facts:
    data = raw.data
    quirks = tuple(QuirkFact(k, v["about"], v["source"]) for k, v in data.get("quirks", {}).items())
    known_quirks = {q.id for q in quirks}
    rows = [_broker_release(raw, entry, known_quirks) for entry in data["entries"]]
    _unique(
        raw,
        [((r.release, r.kind), f"entries: release {r.release} ({r.kind})") for r in rows],
        "duplicate-release",
    )
    rows.sort(key=lambda r: (Release.parse(r.release), r.kind != "zookeeper"))
    return Facts(
        broker_releases=tuple(rows),
        broker_release_quirks=quirks,
        broker_release_sources=tuple(data.get("sources", {}).items()),
        broker_release_epochs=tuple(data.get("epochs", {}).items()),
    )


def _broker_release(raw: RawSpec, entry: dict[str, Any], quirks: set[str]) -> BrokerReleaseFact:
    release = str(Release.parse(entry["release"]))
    where = f"entries: release {release} ({entry['kind']})"

    def fail(rule: str, message: str) -> SpecError:
        return SpecError(raw.source, rule, f"{where}: {message}")

    def ranges(name: str) -> tuple[Triple, ...]:
        triples = tuple(sorted((k, lo, hi) for k, lo, hi in entry.get(name, ())))
        _unique(
            raw, [(k, f"{where}: {name}: api key {k}") for k, _, _ in triples], "duplicate-api-key"
        )
        for key, lo, hi in triples:
            if lo > hi:
                raise fail(
                    "bad-range",
                    f"{name}: api key {key} has min version {lo} above max version {hi}",
                )
        return triples

    answers = entry.get("api_versions", "answered")
    if ("advertised" in entry) != (answers == "answered") or ("accepted" in entry) == (
        answers == "answered"
    ):
        raise fail(
            "bad-row",
            "a broker that answers ApiVersions has advertised ranges (and no accepted); one "
            "that does not (api_versions closes or no answer) has accepted ranges only",
        )
    advertised = ranges("advertised") if "advertised" in entry else None
    refused = tuple(
        RefusalFact(r["api_key"], (r["versions"][0], r["versions"][1]), r["answer"], r["quirk"])
        for r in entry.get("refused", ())
    )
    shown = dict((k, (lo, hi)) for k, lo, hi in advertised or ())
    for refusal in refused:
        lo, hi = refusal.versions
        have = shown.get(refusal.api_key)
        if have is None or lo > hi or lo < have[0] or hi > have[1]:
            raise fail(
                "bad-refusal",
                f"refused api key {refusal.api_key} v{lo}-{hi} is not within what it advertises",
            )
    named = list(entry.get("quirks", ())) + [r.quirk for r in refused]
    for quirk in named:
        if quirk not in quirks:
            raise fail("unknown-quirk", f"quirk {quirk!r} is not in the table's quirks")
    return BrokerReleaseFact(
        release,
        entry["kind"],
        advertised,
        answers,
        ranges("accepted"),
        ranges("telemetry"),
        ranges("unstable"),
        refused,
        _feature_facts(entry["features"], fail) if "features" in entry else None,
        tuple(entry.get("quirks", ())),
        tuple(entry.get("sources", ())),
        tuple(entry.get("notes", ())),
    )


def _feature_facts(data: dict[str, Any], fail: Callable[[str, str], SpecError]) -> FeatureFacts:
    supported = tuple((name, lo, hi) for name, (lo, hi) in data["supported"].items())
    unstable = data.get("supported_unstable")
    levels = tuple(
        (level, name, changed) for level, name, changed in data.get("metadata_versions", ())
    )
    features = FeatureFacts(
        data["epoch"],
        supported,
        tuple(data["finalized"].items()),
        None if unstable is None else tuple((n, lo, hi) for n, (lo, hi) in unstable.items()),
        data.get("metadata_version_floor"),
        levels,
    )
    ranges = {name: (lo, hi) for name, lo, hi in supported}
    for name, lo, hi in supported + (features.supported_unstable or ()):
        if lo > hi:
            raise fail("bad-feature", f"feature {name} has min level {lo} above max level {hi}")
    for name, level in features.finalized:
        lo, hi = ranges.get(name, (1, 0))
        if not lo <= level <= hi:
            raise fail(
                "bad-feature", f"finalized {name} {level} is not within its supported levels"
            )
    known = {level for level, _, _ in levels}
    if levels and "metadata.version" in ranges:
        lo, hi = ranges["metadata.version"]
        if not set(range(lo, hi + 1)) <= known:
            raise fail("bad-feature", f"metadata_versions lacks levels of {lo}-{hi}")
    return features


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
