"""The catalog stage: what a package holds, worked out once from a validated spec set.

Between model and render: which module holds which messages (with the rules on module and
class names), each API's request and response, every api key's name (the specs' over the
facts table's, with a warning where they differ), the members of the package's ``ApiKey``
and ``ErrorCode`` (with those the runtime spells: ``runtime_names``) and each
coordinator's record types.
Render reads the catalog and only renders.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import SpecError, raise_all
from .facts import ErrorCodeFact, Facts, api_names
from .model import Message, snake_case
from .model_builder import check_class_names
from .runtime_names import RUNTIME, api_key_members, error_codes

#: Rendered modules that are not one API each.
RENDERED_MODULES = frozenset({"registry", "error_codes", "releases"})


def runtime_modules() -> list[str]:
    """The top-level names the runtime takes in a package: its modules
    (``templates/runtime/*.py``) and its subpackages (folders there with an ``__init__.py``,
    e.g. ``records``). No spec may generate a module of one of these names."""
    return sorted(
        {
            path.stem if path.is_file() else path.name
            for path in RUNTIME.iterdir()
            if (path.suffix == ".py" and path.is_file()) or (path / "__init__.py").is_file()
        }
    )


@dataclass(frozen=True)
class ModuleSpec:
    """One generated module and the messages it holds (request before response)."""

    name: str
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class CoordinatorRecord:
    """One record type of a coordinator's topic: its key and value messages."""

    record_type: int
    key: Message
    value: Message


@dataclass(frozen=True)
class Catalog:
    messages: tuple[Message, ...]
    """Every message of the spec set, removed APIs included."""
    facts: Facts
    modules: tuple[ModuleSpec, ...]
    apis: tuple[tuple[Message, Message], ...]
    """(request, response) of each API that has classes, by api key."""
    api_names: dict[int, str]
    """Api key -> name, for every key of the facts or the specs."""
    api_keys: tuple[tuple[str, int], ...]
    """``registry.ApiKey``'s members, by key: ``api_names``' and the runtime's."""
    error_codes: tuple[ErrorCodeFact, ...]
    """``error_codes.ErrorCode``'s: the facts table's and the runtime's, by code."""
    coordinators: dict[str, tuple[CoordinatorRecord, ...]]
    """Coordinator (``group``, ``share``, ``transaction``) -> its record types."""
    warnings: tuple[str, ...]

    @property
    def has_framing(self) -> bool:
        """Whether the package has both headers, which framing needs."""
        headers = {m.name for m in self.messages if m.type == "header"}
        return headers >= {"RequestHeader", "ResponseHeader"}


def build_catalog(messages: list[Message], facts: Facts) -> Catalog:
    names, warnings = api_names(facts, spec_api_names(messages))
    responses = {m.api_key: m for m in messages if m.type == "response"}
    apis = sorted(
        ((m, responses[m.api_key]) for m in messages if m.type == "request" and not m.removed),
        key=lambda pair: pair[0].api_key or 0,
    )
    return Catalog(
        messages=tuple(messages),
        facts=facts,
        # A removed API (validVersions "none") has no class; its name stays in the tables.
        modules=tuple(group_modules([m for m in messages if not m.removed])),
        apis=tuple(apis),
        api_names=names,
        api_keys=api_key_members(names, facts.api_keys_source or "the specs"),
        error_codes=error_codes(facts),
        coordinators=coordinator_records(messages),
        warnings=tuple(warnings),
    )


def module_name(message: Message) -> str:
    if message.type == "header":
        return "headers"
    return snake_case(message.api_name)


def group_modules(messages: list[Message]) -> list[ModuleSpec]:
    """One module per API (request and response together), headers in ``headers``; every
    name clash is a spec error."""
    reserved = RENDERED_MODULES | set(runtime_modules())
    groups: dict[str, list[Message]] = {}
    errors: list[SpecError] = []
    for message in messages:
        name = module_name(message)
        if name in reserved or (name == "headers" and message.type != "header"):
            errors.append(
                SpecError(
                    message.source,
                    "module-name",
                    f"{message.name} would be generated as module {name!r}, which the "
                    "package uses for itself",
                )
            )
            continue
        groups.setdefault(name, []).append(message)
    for group in groups.values():
        try:
            check_class_names(group)
        except SpecError as exc:
            errors.append(exc)
    raise_all(errors)
    order = {"request": 0, "response": 1}
    return [
        ModuleSpec(name, tuple(sorted(group, key=lambda m: (order.get(m.type, 2), m.name))))
        for name, group in sorted(groups.items())
    ]


def spec_api_names(messages: list[Message]) -> dict[int, str]:
    """Api key -> API name, from the request specs."""
    return {
        m.api_key: m.api_name for m in messages if m.type == "request" and m.api_key is not None
    }


def coordinator_name(scope: str) -> str:
    """``group-coordinator`` -> ``group``: the coordinator a folder of records belongs to."""
    folder = scope.rsplit("/", 1)[-1]
    return folder.removesuffix("-coordinator") if folder else "coordinator"


def coordinator_records(messages: list[Message]) -> dict[str, tuple[CoordinatorRecord, ...]]:
    """Every coordinator's record types, from its coordinator-key/-value pairs (the model
    checked that each key has its value in the same folder)."""
    values = {(m.scope, m.api_key): m for m in messages if m.type == "coordinator-value"}
    found: dict[str, list[CoordinatorRecord]] = {}
    for key in messages:
        if key.type == "coordinator-key" and key.api_key is not None:
            value = values[(key.scope, key.api_key)]
            found.setdefault(coordinator_name(key.scope), []).append(
                CoordinatorRecord(key.api_key, key, value)
            )
    return {
        name: tuple(sorted(records, key=lambda r: r.record_type))
        for name, records in sorted(found.items())
    }
