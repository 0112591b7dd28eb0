"""The render stage: models and plans in, the text of every generated module out.

Python decides structure (which module holds what, which function serves which
version); the jinja2 templates in ``templates/`` write every character of code.
"""

from __future__ import annotations

import math
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import jinja2

from .errors import SpecError
from .facts import Facts, api_names
from .model import (
    EMPTY_STRUCT,
    INT_RANGES,
    Field,
    Message,
    Struct,
    check_class_names,
    snake_case,
)
from .plan import FieldPlan, MessagePlans, StructPlan, plan_message, version_ranges
from .resources import package_folder
from .spark_schema import assignment, spark_schemas

TEMPLATES = package_folder("templates")

FIXED_TYPES = {
    # wire type: (struct constant in _wire, struct format letter, size)
    "bool": ("BOOL", "?", 1),
    "int8": ("INT8", "b", 1),
    "int16": ("INT16", "h", 2),
    "int32": ("INT32", "i", 4),
    "int64": ("INT64", "q", 8),
    "uint16": ("UINT16", "H", 2),
    "uint32": ("UINT32", "I", 4),
    "float64": ("FLOAT64", "d", 8),
}
#: Modules the package always has; a spec module of the same name would replace one.
RUNTIME_MODULES = frozenset(
    {"__init__", "_wire", "errors", "framing", "negotiation", "registry", "spark_schemas"}
)


@dataclass(frozen=True)
class GeneratedFile:
    path: str
    """Path inside the package, POSIX style."""
    text: str


def pystr(value: str) -> str:
    """A string literal: ``repr`` escapes every quote, backslash and control character."""
    return repr(str(value))


def pylit(value: Any) -> str:
    """A Python literal for a default or a constant table (never raw spec text)."""
    if isinstance(value, float) and not math.isfinite(value):
        return f'float("{value}")'
    if isinstance(value, (bool, int, float, str, bytes)) or value is None:
        return repr(value)
    if isinstance(value, (tuple, list)):
        items = ", ".join(pylit(v) for v in value)
        if isinstance(value, tuple):
            return f"({items},)" if len(value) == 1 else f"({items})"
        return f"[{items}]"
    raise TypeError(f"no literal for {value!r}")


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


_STRINGS_AND_COMMENTS = re.compile(
    r'''[rbf]*("""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')|\#[^\n]*'''
)


def mentions(text: str, name: str) -> bool:
    """Whether generated code uses ``name`` as a name (not inside a string or comment, as an
    attribute or as part of a longer name): so a module imports, and a function computes, only what
    it uses."""
    code = _STRINGS_AND_COMMENTS.sub('""', text)
    return re.search(rf"(?<![\w.]){re.escape(name)}\b", code) is not None


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
    env.filters["mentions"] = mentions
    env.tests["in_text"] = lambda name, text: mentions(text, name)
    return env


def module_name(message: Message) -> str:
    if message.type == "header":
        return "headers"
    return snake_case(message.api_name)


class ModuleRenderer:
    """The views one module template needs, for the messages it holds."""

    def __init__(self, plans: list[MessagePlans]) -> None:
        self.plans = plans
        self.uses_uuid = False
        self.struct_formats: set[str] = set()
        self.empty_structs: dict[str, str] = {}

    def field_view(self, message: Message, f: Field) -> dict[str, Any]:
        ftype = f.type
        element = ftype.element or ftype
        if element.text in FIXED_TYPES and element.text not in ("bool", "float64"):
            element_kind = "fixed_int"
        elif element.text == "records":
            element_kind = "bytes"
        elif element.is_struct:
            element_kind = "struct"
        else:
            element_kind = element.text
        if element_kind == "uuid":
            self.uses_uuid = True
        default = f.default
        if default is None:
            default_kind, default_value = "none", None
        elif isinstance(default, list):
            default_kind, default_value = "list", None
        elif default is EMPTY_STRUCT:
            default_kind, default_value = "struct", None
        elif element_kind == "uuid":
            default_kind = "zero_uuid" if default.int == 0 else "uuid"
            default_value = str(default)
        else:
            default_kind, default_value = "value", default
        return {
            "attr": f.attr,
            "is_array": ftype.is_array,
            "element_kind": element_kind,
            "nullable_any": bool(f.nullable_versions.intersect(f.versions)) or default is None,
            "struct_class": (message.class_name(f.struct) if f.struct is not None else ""),
            "default_kind": default_kind,
            "default_value": default_value,
            "empty_const": self.empty_const(message, f.struct) if default_kind == "struct" else "",
            "doc": field_doc(f),
        }

    def empty_const(self, message: Message, struct: Struct | None) -> str:
        """The module constant holding an empty ``struct`` to compare against (never handed
        out, so never mutated): a default check then builds nothing."""
        assert struct is not None
        class_name = message.class_name(struct)
        const = "_EMPTY_" + snake_case(class_name).upper()
        self.empty_structs[const] = class_name
        return const

    def wire_view(self, message: Message, fp: FieldPlan) -> dict[str, Any]:
        """How one field is read and written at a plan's versions."""
        f = fp.field
        view = self.field_view(message, f)
        ftype = f.type
        prefix = ("compact_" if fp.compact else "") + ("nullable_" if fp.nullable else "")
        view["path"] = f.attr
        if ftype.text in FIXED_TYPES:
            const, _, size = FIXED_TYPES[ftype.text]
            view.update(kind="fixed", struct_const=const, size=size)
        elif ftype.text == "string":
            view.update(kind="string", reader=f"{prefix}string")
        elif ftype.text in ("bytes", "records"):
            view.update(kind="bytes", reader=f"{prefix}bytes")
        elif ftype.text == "uuid":
            view.update(kind="uuid", reader="uuid")
        elif ftype.is_struct:
            view.update(kind="struct")
        else:
            element = ftype.element
            assert element is not None
            compact = "compact_" if fp.compact else ""
            view.update(
                kind="array",
                length_reader=f"{prefix}array_length",
                null_bytes=repr(b"\x00" if fp.compact else b"\xff\xff\xff\xff"),
                local=f"{f.attr}_list",
                element_type=(
                    message.class_name(f.struct)
                    if f.struct is not None
                    else {
                        "string": "str",
                        "bytes": "bytes",
                        "uuid": "UUID",
                        "bool": "bool",
                        "float64": "float",
                    }.get(element.text, "int")
                ),
                item_size=max(1, min_size(element.text, fp.compact, fp.child)),
            )
            if element.text in FIXED_TYPES:
                view.update(
                    element_wire="fixed", element_items=f"{FIXED_TYPES[element.text][0]}_ITEMS"
                )
            elif element.is_struct:
                view.update(element_wire="struct")
            else:
                kind = "bytes" if element.text == "records" else element.text
                reader = "uuid" if kind == "uuid" else f"{compact}{kind}"
                view.update(element_wire="other", element_reader=reader)
        return view

    def plan_view(self, message: Message, plan: StructPlan) -> dict[str, Any]:
        def with_view(fp: FieldPlan, in_tag: bool = False) -> dict[str, Any]:
            view = self.wire_view(message, fp)
            # Inside a tagged field a nullable struct has a uvarint marker (0 = null,
            # 1 = present); elsewhere an int8 (-1 = null, 1 = present), as in Kafka.
            view["in_tag"] = in_tag
            return {
                "field": fp.field,
                "compact": fp.compact,
                "nullable": fp.nullable,
                "child": fp.child,
                "view": view,
            }

        on_wire = [*plan.regular, *plan.tagged]
        return {
            "struct": plan.struct,
            "function": plan.function,
            "versions": plan.versions,
            "version_label": plan.version_label,
            "class_name": message.class_name(plan.struct),
            "flexible": plan.flexible,
            "regular": [with_view(fp) for fp in plan.regular],
            "tagged": [with_view(fp, in_tag=True) for fp in plan.tagged],
            "guarded_views": [self.field_view(message, f) for f in plan.guarded],
            "invalid_tags": plan.invalid_tags,
            "has_unknown_tags": has_flexible_plan(self.plans_of(message), plan.struct),
            "has_known_tags": has_known_tags(self.plans_of(message), plan.struct),
            # Fields not on the wire at these versions: the decoder sets their defaults.
            "absent": [
                self.field_view(message, f)
                for f in plan.struct.fields
                if f.name not in {fp.field.name for fp in plan.regular}
            ],
            "steps": self.steps(plan.regular, with_view),
            # For the error locator: "attr:type" per field, "?" marking nullable here.
            "checks": tuple(
                f"{fp.field.attr}:{check_type(fp.field)}{'?' if fp.nullable else ''}"
                for fp in on_wire
            ),
        }

    def steps(self, regular: tuple[FieldPlan, ...], with_view: Any) -> list[dict[str, Any]]:
        """Regular fields in order, each run of fixed-size ones (even of one) read and written
        with one call of a module-level bound ``struct`` method."""
        steps: list[dict[str, Any]] = []
        run: list[FieldPlan] = []

        def flush() -> None:
            if run:
                fmt = ">" + "".join(FIXED_TYPES[fp.field.type.text][1] for fp in run)
                self.struct_formats.add(fmt[1:])
                steps.append(
                    {
                        "run": True,
                        "format": fmt[1:],
                        "attrs": [fp.field.attr for fp in run],
                        "size": sum(FIXED_TYPES[fp.field.type.text][2] for fp in run),
                    }
                )
            run.clear()

        for fp in regular:
            # Bools stay out of runs: they are written through a checked lookup.
            if fp.field.type.text in FIXED_TYPES and fp.field.type.text != "bool":
                run.append(fp)
            else:
                flush()
                steps.append({"run": False, "fp": with_view(fp)})
        flush()
        return steps

    def plans_of(self, message: Message) -> MessagePlans:
        return next(p for p in self.plans if p.message is message)

    def class_view(self, mp: MessagePlans, struct: Struct) -> dict[str, Any]:
        message = mp.message
        is_message = struct is message.root
        versions = mp.struct_versions.get(struct.name, {})
        functions = sorted((v, plan.function) for v, plan in versions.items())
        known_tags = has_known_tags(mp, struct)
        view = {
            "name": struct.name,
            "class_name": message.class_name(struct),
            "stem": (
                versions[min(versions)].function.rsplit("_v", 1)[0]
                if versions
                else snake_case(struct.name)
            ),
            "is_message": is_message,
            "kind_word": message.type if is_message else "struct",
            "doc": message_doc(message) if is_message else struct_doc(struct, versions),
            "fields": [self.field_view(message, f) for f in struct.fields],
            "has_unknown_tags": has_flexible_plan(mp, struct),
            "has_known_tags": known_tags,
            "functions": functions,
            "dict_keys": tuple(
                [f.attr for f in struct.fields]
                + (["unknown_tagged_fields"] if has_flexible_plan(mp, struct) else [])
            ),
        }
        if is_message:
            flexible = message.flexible_versions.intersect(message.valid_versions)
            view.update(
                api_key=message.api_key,
                min_version=message.valid_versions.lo,
                max_version=message.valid_versions.hi,
                flexible_min=None if flexible.empty else flexible.lo,
                latest_version_unstable=message.latest_version_unstable,
            )
        return view

    def render(self, env: jinja2.Environment, header: str, doc: str) -> str:
        # Leaves first, each message after its structs: a class exists before a default uses it.
        classes = [
            self.class_view(mp, struct)
            for mp in self.plans
            for struct in (*mp.message.structs, mp.message.root)
        ]
        plans = [self.plan_view(mp.message, plan) for mp in self.plans for plan in mp.plans]
        template = env.get_template("module.py.j2")
        return template.render(
            header=header,
            module_doc=doc,
            classes=classes,
            plans=plans,
            uses_uuid=self.uses_uuid,
            struct_formats=sorted(self.struct_formats),
            empty_structs=sorted(self.empty_structs.items()),
        )


def check_type(f: Field) -> str:
    """The wire type the error locator checks a value against (structs by shape only)."""
    if f.type.struct_name:
        return "[]struct" if f.type.is_array else "struct"
    return f.type.text


def has_known_tags(mp: MessagePlans, struct: Struct) -> bool:
    return any(plan.tagged for plan in mp.struct_versions.get(struct.name, {}).values())


def has_flexible_plan(mp: MessagePlans, struct: Struct) -> bool:
    return any(plan.flexible for plan in mp.struct_versions.get(struct.name, {}).values())


def min_size(type_text: str, compact: bool, child: StructPlan | None) -> int:
    """The fewest bytes one non-null value of this type takes (a bound for count checks)."""
    if type_text in FIXED_TYPES:
        return FIXED_TYPES[type_text][2]
    if type_text == "uuid":
        return 16
    if type_text.startswith("[]"):
        return 1 if compact else 4
    if type_text == "string":
        return 1 if compact else 2
    if type_text in ("bytes", "records"):
        return 1 if compact else 4
    assert child is not None, type_text
    return min_struct_size(child)


def min_struct_size(plan: StructPlan) -> int:
    size = sum(
        1 if fp.nullable else min_size(fp.field.type.text, fp.compact, fp.child)
        for fp in plan.regular
    )
    return size + (1 if plan.flexible else 0)


def version_facts(f: Field) -> str:
    facts = [f"Versions: {f.versions}."]
    if f.nullable_versions.intersect(f.versions):
        facts.append(f"Nullable: {f.nullable_versions.intersect(f.versions)}.")
    if f.tag is not None:
        facts.append(f"Tagged: {f.tagged_versions} (tag {f.tag}).")
    if f.ignorable:
        facts.append("Ignorable.")
    if f.map_key:
        facts.append("Map key.")
    if f.entity_type and f.entity_type != "unknown":
        facts.append(f"Entity: {f.entity_type}.")
    return " ".join(facts)


def field_doc(f: Field) -> str:
    about = f.about.strip()
    return f"{about}\n\n{version_facts(f)}" if about else version_facts(f)


def struct_doc(struct: Struct, versions: dict[int, StructPlan]) -> str:
    about = struct.about.strip()
    label = version_label(sorted(versions)) if versions else "none"
    facts = f"Occurs in versions: {label}."
    return f"{about}\n\n{facts}" if about else f"Struct {struct.name}.\n\n{facts}"


def version_label(versions: list[int]) -> str:
    return version_ranges(versions) if versions else "none"


def message_doc(message: Message) -> str:
    flexible = message.flexible_versions.intersect(message.valid_versions)
    if message.api_key is not None and message.type in ("request", "response"):
        title = f"The {message.type} of {message.api_name} (api key {message.api_key})."
    elif message.type == "header":
        title = f"The {message.name[: -len('Header')].lower()} header."
    else:
        title = f"{message.name}: a {message.type} record" + (
            f" (api key {message.api_key})." if message.api_key is not None else "."
        )
    facts = [
        f"Valid versions: {message.valid_versions}.",
        f"Flexible versions: {flexible if flexible else 'none'}.",
    ]
    if message.deprecated_versions:
        facts.append(f"Deprecated versions: {message.deprecated_versions}.")
    if message.latest_version_unstable:
        facts.append(f"Version {message.valid_versions.hi} is unstable upstream.")
    notes = f"{message.notes}\n\n" if message.notes else ""
    return f"{title}\n\n{notes}" + " ".join(facts) + f"\n\nSpec: {message.source}"


@dataclass(frozen=True)
class ModuleSpec:
    name: str
    messages: tuple[Message, ...]


def group_modules(messages: Iterable[Message]) -> list[ModuleSpec]:
    """One module per API (request and response together), headers in ``headers``."""
    groups: dict[str, list[Message]] = {}
    for message in messages:
        name = module_name(message)
        if name in RUNTIME_MODULES or (name == "headers" and message.type != "header"):
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


def render_package(messages: list[Message], facts: Facts | None = None) -> list[GeneratedFile]:
    """Every file of the package: one module per API, then the runtime modules."""
    facts = facts or Facts()
    env = environment()
    modules = group_modules(messages)
    files = [
        GeneratedFile(
            f"{module.name}.py",
            ModuleRenderer([plan_message(m) for m in module.messages]).render(
                env, file_header(m.source for m in module.messages), module_doc(module)
            ),
        )
        for module in modules
    ]
    return files + runtime_files(env, messages, facts, modules)


def runtime_files(
    env: jinja2.Environment, messages: list[Message], facts: Facts, modules: list[ModuleSpec]
) -> list[GeneratedFile]:
    """The modules that are not one API each: registry, framing, errors, ..."""

    def render(name: str, header: str, **context: Any) -> GeneratedFile:
        return GeneratedFile(name, env.get_template(f"{name}.j2").render(header=header, **context))

    apis = sorted(
        (api_view(request, response) for request, response in api_pairs(messages)),
        key=lambda a: a["api_key"],
    )
    headers = {m.name for m in messages if m.type == "header"}
    has_framing = headers >= {"RequestHeader", "ResponseHeader"}
    all_sources = file_header(m.source for m in messages)
    runtime = file_header(["(runtime, no spec)"])
    names, _ = api_names(facts, spec_api_names(messages))
    files = [
        render(
            "_wire.py",
            runtime,
            fixed_items=sorted(FIXED_TYPES.values()),
            int_ranges=INT_RANGES,
        ),
        render(
            "errors.py",
            facts_header(runtime, [facts.error_codes_source]),
            error_codes=facts.error_codes,
        ),
        render(
            "registry.py",
            facts_header(all_sources, [facts.api_keys_source]),
            apis=apis,
            has_headers=bool(headers),
            api_names=names,
        ),
        render(
            "negotiation.py",
            runtime,
            api_versions=(
                next((a for a in apis if a["name"] == "ApiVersions"), None) if has_framing else None
            ),
        ),
        render(
            "spark_schemas.py",
            all_sources,
            schemas=assignment("SCHEMAS: dict[str, dict[str, Any]] = ", spark_schemas(messages)),
        ),
        render("__init__.py", runtime, modules=tuple(m.name for m in modules)),
        GeneratedFile("py.typed", ""),
    ]
    if has_framing:
        files.append(render("framing.py", runtime))
    return files


def api_pairs(messages: list[Message]) -> list[tuple[Message, Message]]:
    """Each request with the response of the same api key (the model checked both exist)."""
    responses = {m.api_key: m for m in messages if m.type == "response"}
    return [(m, responses[m.api_key]) for m in messages if m.type == "request"]


def module_doc(module: ModuleSpec) -> str:
    names = ", ".join(m.name for m in module.messages)
    if module.name == "headers":
        return f"Request and response headers: {names}."
    first = module.messages[0]
    if first.type in ("request", "response"):
        return f"The {first.api_name} API (api key {first.api_key}): {names}."
    return f"{names}."


def api_view(request: Message, response: Message) -> dict[str, Any]:
    flexible = request.flexible_versions.intersect(request.valid_versions)
    response_flexible = response.flexible_versions.intersect(response.valid_versions)
    return {
        "api_key": request.api_key,
        "name": request.api_name,
        "module": module_name(request),
        "request": request.name,
        "response": response.name,
        "min_version": request.valid_versions.lo,
        "max_version": request.valid_versions.hi,
        "flexible_min": None if flexible.empty else flexible.lo,
        "response_flexible_min": None if response_flexible.empty else response_flexible.lo,
        "latest_version_unstable": request.latest_version_unstable,
        # The two exceptions Kafka's own generator hard-codes (spec-language.md section 12).
        "request_header_v0_versions": (0,) if request.api_name == "ControlledShutdown" else (),
        "response_header_always_v0": request.api_name == "ApiVersions",
    }
