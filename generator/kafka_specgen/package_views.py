"""The views stage for a whole package: what every template gets, worked out from the catalog.

One ``ModuleView`` per API module (``view_builder``, from the plans of its messages), and
the views of the rendered tables: the registry (APIs and coordinator record types), the
error codes and the broker releases. ``render`` fills the templates from these and only
renders.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from .catalog import Catalog, module_name
from .docstrings import module_doc
from .facts import BrokerReleaseFact, ErrorCodeFact
from .headers import facts_header, file_header
from .model import Message
from .plan import plan_message
from .view_builder import ModuleBuilder
from .release_names import Release
from .layout import pystr
from .view_kit import Flavour, pylit
from .views import ModuleView


@dataclass(frozen=True)
class ApiView:
    """One row of the registry's API table."""

    api_key: int
    name: str
    module: str
    request: str
    response: str
    min_version: int
    max_version: int
    flexible_min: int | None
    response_flexible_min: int | None
    latest_version_unstable: bool


@dataclass(frozen=True)
class CoordinatorRecordView:
    """One row of the registry's coordinator record table: a record type's key and value."""

    record_type: int
    name: str
    key_module: str
    key_class: str
    value_module: str
    value_class: str


@dataclass(frozen=True)
class CoordinatorView:
    """The record types of one coordinator (``group``, ``share``, ``transaction``)."""

    name: str
    records: tuple[CoordinatorRecordView, ...]


@dataclass(frozen=True)
class RegistryView:
    """``registry.py.j2``: every API, every api key's name, the modules, the coordinators."""

    header: str
    apis: tuple[ApiView, ...]
    api_names: dict[int, str]
    api_keys: tuple[tuple[str, int], ...]
    """``ApiKey``'s members, ``(name, key)`` by key."""
    modules: tuple[str, ...]
    coordinators: tuple[CoordinatorView, ...]


@dataclass(frozen=True)
class ErrorCodesView:
    """``error_codes.py.j2``: the facts table of error codes, and those the runtime uses."""

    header: str
    error_codes: tuple[ErrorCodeFact, ...]


@dataclass(frozen=True)
class ReleaseRowView:
    """One ``BrokerRow`` of ``releases.py``: its fields, the mappings as Python literals
    (wrapped at 100 columns, for the template's ``fmt: off`` block)."""

    release: str
    kraft: bool
    default: bool
    label: str
    advertised: str
    telemetry: str
    supported: str
    finalized: str


@dataclass(frozen=True)
class ReleasesView:
    """``releases.py.j2``: the release table's rows that answer ApiVersions and the
    ``metadata.version`` level names (both empty without facts)."""

    header: str
    rows: tuple[ReleaseRowView, ...]
    metadata_versions: tuple[str, ...]
    """``level: "name",`` items packed into lines."""


@dataclass(frozen=True)
class PackageView:
    """Everything the templates of one package get."""

    package: str
    modules: tuple[tuple[str, ModuleView], ...]
    """``(module name, view)`` of each module generated from specs."""
    registry: RegistryView
    error_codes: ErrorCodesView
    releases: ReleasesView
    framing: bool
    """The package has both headers: it gets framing and what is built on it."""


def build_views(catalog: Catalog, flavour: Flavour, package: str) -> PackageView:
    """The views of every module and table of ``package``: plan, then views, per module."""
    modules = tuple(
        (
            module.name,
            ModuleBuilder(plans=[plan_message(m) for m in module.messages], flavour=flavour).build(
                file_header(package, (m.source for m in module.messages)), module_doc(module)
            ),
        )
        for module in catalog.modules
    )
    facts = catalog.facts
    no_sources = file_header(package, [])
    return PackageView(
        package=package,
        modules=modules,
        registry=RegistryView(
            header=facts_header(
                file_header(package, (m.source for m in catalog.messages)),
                [facts.api_keys_source],
            ),
            apis=tuple(api_view(request, response) for request, response in catalog.apis),
            api_names=catalog.api_names,
            api_keys=catalog.api_keys,
            modules=tuple(m.name for m in catalog.modules),
            coordinators=coordinator_views(catalog),
        ),
        error_codes=ErrorCodesView(
            header=facts_header(no_sources, [facts.error_codes_source]),
            error_codes=catalog.error_codes,
        ),
        releases=ReleasesView(
            header=facts_header(no_sources, [facts.broker_releases_source]),
            rows=release_rows(facts.broker_releases),
            metadata_versions=metadata_version_lines(facts.broker_releases),
        ),
        framing=catalog.has_framing,
    )


def api_view(request: Message, response: Message) -> ApiView:
    assert request.api_key is not None
    return ApiView(
        api_key=request.api_key,
        name=request.api_name,
        module=module_name(request),
        request=request.name,
        response=response.name,
        min_version=request.valid_versions.lo,
        max_version=request.valid_versions.hi,
        flexible_min=request.flexible_min,
        response_flexible_min=response.flexible_min,
        latest_version_unstable=request.latest_version_unstable,
    )


def coordinator_views(catalog: Catalog) -> tuple[CoordinatorView, ...]:
    return tuple(
        CoordinatorView(
            name,
            tuple(
                CoordinatorRecordView(
                    record_type=r.record_type,
                    name=r.key.name.removesuffix("Key"),
                    key_module=module_name(r.key),
                    key_class=r.key.name,
                    value_module=module_name(r.value),
                    value_class=r.value.name,
                )
                for r in records
            ),
        )
        for name, records in catalog.coordinators.items()
    )


def release_rows(releases: Sequence[BrokerReleaseFact]) -> tuple[ReleaseRowView, ...]:
    """The rows of the brokers that answer ApiVersions (0.10 and later)."""
    zookeeper = {row.release for row in releases if row.kind == "zookeeper"}
    rows = []
    for row in releases:
        if row.advertised is None:
            continue
        kraft = row.kind == "kraft"
        early = kraft and Release.parse(row.release).parts[0] < 4
        features = row.features
        rows.append(
            ReleaseRowView(
                release=row.release,
                kraft=kraft,
                default=not kraft or row.release not in zookeeper,
                label=f"{row.release} (KRaft)" if early else row.release,
                advertised=_literal({k: (lo, hi) for k, lo, hi in row.advertised}),
                telemetry=_literal({k: (lo, hi) for k, lo, hi in row.telemetry}),
                supported=_literal(
                    {} if features is None else {n: (lo, hi) for n, lo, hi in features.supported}
                ),
                finalized=_literal({} if features is None else dict(features.finalized)),
            )
        )
    return tuple(rows)


def metadata_version_lines(releases: Sequence[BrokerReleaseFact]) -> tuple[str, ...]:
    """``level: "name",`` of every metadata.version level the table names, packed into lines."""
    names: dict[int, str] = {}
    for row in releases:
        for level, name, _ in row.features.metadata_versions if row.features else ():
            names[level] = name
    return tuple(_pack([f"{level}: {pystr(name)}," for level, name in sorted(names.items())], 4))


def _literal(mapping: Mapping[Any, Any]) -> str:
    """A dict literal: ``{}``, or its items packed into lines of 100 columns at indent 12."""
    if not mapping:
        return "{}"
    items = [f"{pylit(key)}: {pylit(value)}," for key, value in mapping.items()]
    return "{\n" + "\n".join(_pack(items, 12)) + "\n        }"


def _pack(items: list[str], indent: int) -> list[str]:
    lines: list[str] = []
    for item in items:
        if lines and len(lines[-1]) + 1 + len(item) <= 100:
            lines[-1] += " " + item
        else:
            lines.append(" " * indent + item)
    return lines
