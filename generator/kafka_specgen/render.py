"""The render stage: models and plans in, the text of every generated module out.

Python decides structure (which module holds what, which function serves which version,
in ``views``); the jinja2 templates in ``templates/`` write every character of code that
depends on the specs. The runtime modules (``templates/runtime/``) are copied verbatim.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import jinja2

from .errors import SpecError
from .facts import Facts, api_names
from .model import Message, check_class_names, snake_case
from .layout import (
    annotated,
    assignment,
    condition,
    import_from,
    lay_out,
    pystr,
    signature,
    statement,
    targets,
)
from .plan import plan_message
from .resources import package_folder
from .views import NATIVE_READS, Flavour, ModuleBuilder, pylit

TEMPLATES = package_folder("templates")
RUNTIME = TEMPLATES / "runtime"
#: The first line of every runtime module copied into a package.
RUNTIME_HEADER = (
    "# kafka-specgen runtime, copied verbatim into every generated package — do not edit\n"
)
#: Runtime modules a package gets only when it has the request and response headers:
#: framing and everything built on it.
FRAMING_MODULES = frozenset({"framing", "connection", "client", "aio"})
#: Rendered modules that are not one API each.
RENDERED_MODULES = frozenset({"registry", "error_codes", "releases"})


@dataclass(frozen=True)
class GeneratedFile:
    path: str
    """Path inside the package, POSIX style."""
    text: str
    formatted: bool = False
    """Already laid out as black would (runtime copies): the format stage leaves it."""


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


def docstring(text: str, indent: int = 0) -> str:
    """A triple-quoted docstring whose content can never close it early or escape."""
    text = text.strip() or "(no description in the spec)"
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    text = "".join(ch if ch == "\n" or ch.isprintable() else f"\\x{ord(ch):02x}" for ch in text)
    if text.endswith('"'):
        text += " "
    pad = " " * indent
    # Wrap long paragraphs (spec comments and about texts are often single long lines).
    width = max(40, 88 - indent)
    text = "\n".join(
        (
            textwrap.fill(line, width, break_long_words=False, break_on_hyphens=False)
            if len(line) > width
            else line
        )
        for line in text.split("\n")
    )
    lines = text.split("\n")
    body = lines[0] + "".join(f"\n{pad}{line}" if line.strip() else "\n" for line in lines[1:])
    if len(lines) > 1:
        body += f"\n{pad}"
    return f'"""{body}"""'


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["pystr"] = pystr
    env.filters["pylit"] = pylit
    env.filters["docstring"] = docstring
    env.filters["lay_out"] = lay_out
    # struct's "?" (bool) cannot be part of a name: "iq?" -> "iq_bool"
    env.filters["format_name"] = lambda fmt: fmt.replace("?", "_bool_").strip("_")
    env.globals.update(
        native_reads=NATIVE_READS,
        signature=signature,
        targets=targets,
        assignment=assignment,
        import_from=import_from,
        statement=statement,
        annotated=annotated,
        condition=condition,
    )
    return env


def module_name(message: Message) -> str:
    if message.type == "header":
        return "headers"
    return snake_case(message.api_name)


@dataclass(frozen=True)
class ModuleSpec:
    name: str
    messages: tuple[Message, ...]


def group_modules(messages: Iterable[Message]) -> list[ModuleSpec]:
    """One module per API (request and response together), headers in ``headers``."""
    groups: dict[str, list[Message]] = {}
    for message in messages:
        name = module_name(message)
        reserved = RENDERED_MODULES | set(runtime_modules())
        if name in reserved or (name == "headers" and message.type != "header"):
            raise SpecError(
                message.source,
                "module-name",
                f"{message.name} would be generated as module {name!r}, which the package "
                "uses for itself",
            )
        groups.setdefault(name, []).append(message)
    for group in groups.values():
        check_class_names(group)
    order = {"request": 0, "response": 1}
    return [
        ModuleSpec(name, tuple(sorted(group, key=lambda m: (order.get(m.type, 2), m.name))))
        for name, group in sorted(groups.items())
    ]


def file_header(sources: Iterable[str]) -> str:
    lines = ["# generated by kafka-specgen — do not edit"]
    lines += [f"# source: {source}" for source in sorted(sources)]
    # Sources are file names: keep any odd character out of the comment line.
    return "\n".join(re.sub(r"[^\x20-\x7e—]", "?", line) for line in lines)


def spec_api_names(messages: Iterable[Message]) -> dict[int, str]:
    """Api key -> API name, from the request specs."""
    return {
        m.api_key: m.api_name for m in messages if m.type == "request" and m.api_key is not None
    }


def facts_header(header: str, sources: Iterable[str | None]) -> str:
    """A file header plus one ``# facts:`` line per facts table the file was built from."""
    extra = file_header(f"facts: {s}" for s in sources if s).split("\n")[1:]
    return "\n".join([header, *(line.replace("# source: ", "# ", 1) for line in extra)])


def render_package(
    messages: list[Message], facts: Facts | None = None, flavour: Flavour = Flavour.PURE
) -> list[GeneratedFile]:
    """Every file of the package: one module per API, the rendered tables, the runtime."""
    facts = facts or Facts()
    env = environment()
    template = env.get_template("module.py.j2")
    # A removed API (validVersions "none") has no class; its name stays in the tables.
    modules = group_modules(m for m in messages if not m.removed)
    files = [
        GeneratedFile(
            f"{module.name}.py",
            template.render(
                v=ModuleBuilder([plan_message(m) for m in module.messages], flavour).build(
                    file_header(m.source for m in module.messages), module_doc(module)
                )
            ),
        )
        for module in modules
    ]
    return files + table_files(env, messages, facts, modules) + runtime_files(messages)


def table_files(
    env: jinja2.Environment, messages: list[Message], facts: Facts, modules: list[ModuleSpec]
) -> list[GeneratedFile]:
    """The rendered modules that are not one API each: the API table, the error codes and
    the broker releases (the last two empty when generated without facts)."""
    apis = sorted(
        (
            api_view(request, response)
            for request, response in api_pairs(messages)
            if not request.removed
        ),
        key=lambda a: a.api_key,
    )
    all_sources = file_header(m.source for m in messages)
    names, _ = api_names(facts, spec_api_names(messages))
    files = [
        GeneratedFile(
            "registry.py",
            env.get_template("registry.py.j2").render(
                header=facts_header(all_sources, [facts.api_keys_source]),
                apis=apis,
                api_names=names,
                modules=tuple(m.name for m in modules),
                coordinators=coordinator_views(messages),
            ),
        )
    ]
    files.append(
        GeneratedFile(
            "error_codes.py",
            env.get_template("error_codes.py.j2").render(
                header=facts_header(file_header([]), [facts.error_codes_source]),
                error_codes=facts.error_codes,
            ),
        )
    )
    files.append(
        GeneratedFile(
            "releases.py",
            env.get_template("releases.py.j2").render(
                header=facts_header(file_header([]), [facts.broker_releases_source]),
                releases=facts.broker_releases,
            ),
        )
    )
    return files


def runtime_files(messages: list[Message]) -> list[GeneratedFile]:
    """The hand-written runtime, copied verbatim (framing only with both headers): each
    module, and each module of each subpackage at the same path inside the package, every
    one behind ``RUNTIME_HEADER`` (``__pycache__`` left out), in sorted order."""
    headers = {m.name for m in messages if m.type == "header"}
    skip = set() if headers >= {"RequestHeader", "ResponseHeader"} else FRAMING_MODULES
    sources: list[Path] = []
    for name in runtime_modules():
        if name in skip:
            continue
        folder = RUNTIME / name
        if folder.is_dir():
            sources += sorted(
                path
                for path in folder.rglob("*.py")
                if "__pycache__" not in path.relative_to(RUNTIME).parts
            )
        else:
            sources.append(RUNTIME / f"{name}.py")
    files = [
        GeneratedFile(
            path.relative_to(RUNTIME).as_posix(),
            RUNTIME_HEADER + path.read_text(encoding="utf-8"),
            formatted=True,
        )
        for path in sources
    ]
    return files + [GeneratedFile("py.typed", "", formatted=True)]


def api_pairs(messages: list[Message]) -> list[tuple[Message, Message]]:
    """Each request with the response of the same api key (the model checked both exist)."""
    responses = {m.api_key: m for m in messages if m.type == "response"}
    return [(m, responses[m.api_key]) for m in messages if m.type == "request"]


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


def coordinator_name(scope: str) -> str:
    """``group-coordinator`` -> ``group``: the coordinator a folder of records belongs to."""
    folder = scope.rsplit("/", 1)[-1]
    return folder.removesuffix("-coordinator") if folder else "coordinator"


def coordinator_views(messages: list[Message]) -> tuple[CoordinatorView, ...]:
    """Every coordinator's record types, from its coordinator-key/-value pairs (the model
    checked that each key has its value in the same folder)."""
    values = {(m.scope, m.api_key): m for m in messages if m.type == "coordinator-value"}
    by_coordinator: dict[str, list[CoordinatorRecordView]] = {}
    for key in messages:
        if key.type != "coordinator-key" or key.api_key is None:
            continue
        value = values[(key.scope, key.api_key)]
        by_coordinator.setdefault(coordinator_name(key.scope), []).append(
            CoordinatorRecordView(
                record_type=key.api_key,
                name=key.name.removesuffix("Key"),
                key_module=module_name(key),
                key_class=key.name,
                value_module=module_name(value),
                value_class=value.name,
            )
        )
    return tuple(
        CoordinatorView(name, tuple(sorted(records, key=lambda r: r.record_type)))
        for name, records in sorted(by_coordinator.items())
    )


def module_doc(module: ModuleSpec) -> str:
    names = ", ".join(m.name for m in module.messages)
    if module.name == "headers":
        return f"Request and response headers: {names}."
    first = module.messages[0]
    if first.type in ("request", "response"):
        return f"The {first.api_name} API (api key {first.api_key}): {names}."
    return f"{names}."


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


def api_view(request: Message, response: Message) -> ApiView:
    flexible = request.flexible_versions.intersect(request.valid_versions)
    response_flexible = response.flexible_versions.intersect(response.valid_versions)
    assert request.api_key is not None
    return ApiView(
        api_key=request.api_key,
        name=request.api_name,
        module=module_name(request),
        request=request.name,
        response=response.name,
        min_version=request.valid_versions.lo,
        max_version=request.valid_versions.hi,
        flexible_min=None if flexible.empty else flexible.lo,
        response_flexible_min=None if response_flexible.empty else response_flexible.lo,
        latest_version_unstable=request.latest_version_unstable,
    )
