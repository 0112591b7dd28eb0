"""Docstrings of generated modules, classes and fields, from the specs' ``about`` texts and
facts, and the literal that carries one into the code (``docstring``, a template filter)."""

from __future__ import annotations

import textwrap

from .catalog import ModuleSpec
from .model import Field, Message, Struct
from .plan import StructPlan
from .versions import version_ranges

#: What ``str.splitlines`` ends a line at, besides "\n": escaped in a docstring, so every
#: line of the text is a line of the code (U+2028 inside a literal would be one line to
#: Python's tokenizer but two to any tool that splits lines).
LINE_BREAKS = frozenset("\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def docstring(text: str, indent: int = 0) -> str:
    """A triple-quoted docstring whose content can never close it early or escape."""
    text = text.strip() or "(no description in the spec)"
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    text = "".join(
        ch if ch == "\n" or (ch.isprintable() and ch not in LINE_BREAKS) else escape(ch)
        for ch in text
    )
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


def escape(ch: str) -> str:
    """The escape sequence of one character: ``\\xNN``, ``\\uNNNN`` or ``\\UNNNNNNNN``."""
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def module_doc(module: ModuleSpec) -> str:
    names = ", ".join(m.name for m in module.messages)
    if module.name == "headers":
        return f"Request and response headers: {names}."
    first = module.messages[0]
    if first.type in ("request", "response"):
        return f"The {first.api_name} API (api key {first.api_key}): {names}."
    return f"{names}."


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
    label = version_ranges(sorted(versions)) if versions else "none"
    facts = f"Occurs in versions: {label}."
    return f"{about}\n\n{facts}" if about else f"Struct {struct.name}.\n\n{facts}"


def message_doc(message: Message) -> str:
    flexible = message.flexible_range
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
