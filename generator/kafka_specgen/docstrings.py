"""Docstrings of generated classes and fields, from the specs' ``about`` texts and facts."""

from __future__ import annotations

from .model import Field, Message, Struct
from .plan import StructPlan
from .versions import version_ranges


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
