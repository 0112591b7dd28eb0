"""The library API: spec sets in, validated models or generated files out.

``load_specs`` runs load -> schema -> model; ``generate_files`` adds render -> format.
The command line, the pipeline, the side tools and the tests all come through here.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

from .facts import Facts, api_names, build_facts, split_raws
from .format import format_files
from .load import load_paths
from .model import Message, build_messages
from .render import GeneratedFile, render_package, spec_api_names
from .resources import package_folder
from .schema import validate_spec


def load_specs(spec_paths: Sequence[Path], *, warn: bool = True) -> tuple[list[Message], Facts]:
    """Run load -> schema -> model: the validated messages and facts tables of a spec set.

    Facts tables (a top-level ``"facts"`` key) take their own path: facts.schema.json.
    """
    raws, fact_raws = split_raws(load_paths(spec_paths))
    facts = build_facts(fact_raws)
    for raw in raws:
        validate_spec(raw)
    messages = build_messages(raws)
    if warn:
        warnings = [w for raw in raws for w in raw.warnings]
        warnings += [w for message in messages for w in message.warnings]
        warnings += api_names(facts, spec_api_names(messages))[1]
        for warning in warnings:
            print(f"warning: {warning}", file=sys.stderr)
    return messages, facts


def generate_files(
    spec_paths: Sequence[Path], *, warn: bool = True, formatted: bool = True
) -> list[GeneratedFile]:
    """Run load -> schema -> model -> render -> format; return the package's files.

    ``formatted=False`` skips black (same code, other layout): for quick throw-away builds.
    """
    messages, facts = load_specs(spec_paths, warn=warn)
    return package_files(messages, facts, formatted=formatted)


def package_files(
    messages: list[Message], facts: Facts, *, formatted: bool = True
) -> list[GeneratedFile]:
    """Run render -> format on a loaded spec set; return the package's files."""
    files = render_package(messages, facts)
    return format_files(files) if formatted else sorted(files, key=lambda f: f.path)


def bundled_specs() -> Path:
    """The specs shipped with the tool (``specs/`` of the repo): the default spec set of
    the commands that need a generated package (broker-versions, pipeline)."""
    return package_folder("specs")
