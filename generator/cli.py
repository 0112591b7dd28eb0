"""The ``kafka-specgen`` command line: wires the stages together."""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from .errors import SpecError
from .facts import Facts, api_names, build_facts, split_raws
from .format import compare_package, format_files, write_package
from .load import load_paths
from .model import Message, build_messages
from .render import GeneratedFile, render_package, spec_api_names
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
    files = render_package(messages, facts)
    return format_files(files) if formatted else sorted(files, key=lambda f: f.path)


def cmd_generate(args: argparse.Namespace) -> int:
    started = time.monotonic()
    files = generate_files(args.specs, formatted=not args.no_format)
    package_dir = Path(args.out) / args.package
    if args.check:
        differences = compare_package(files, package_dir)
        for line in differences:
            print(line)
        if differences:
            print(f"{package_dir} is out of date: run `make generate`", file=sys.stderr)
            return 1
        print(f"{package_dir} is up to date ({len(files)} files)")
        return 0
    report = write_package(files, package_dir)
    elapsed = time.monotonic() - started
    print(
        f"{package_dir}: {len(files)} files ({len(report.written)} written, "
        f"{len(report.unchanged)} unchanged, {len(report.removed)} stale removed) "
        f"in {elapsed:.1f} s"
    )
    return 0


#: Modules that add more sub-commands: each has ``register(commands)`` adding one parser
#: whose ``func`` default runs it. They import their heavy dependencies inside ``func``.
COMMAND_MODULES: tuple[str, ...] = (
    "pipeline.capture",
    "generator.broker_versions",
    "generator.diff",
    "pipeline.job",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kafka-specgen",
        description="Generate a typed pure-Python Kafka protocol package from JSON message specs.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    register_generate(commands)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(commands)
    return parser


def register_generate(commands: Any) -> None:
    gen = commands.add_parser(
        "generate",
        help="generate the message package from specs",
        description="Read Kafka JSON message specs and write a Python package of codecs.",
    )
    gen.add_argument(
        "--specs",
        action="append",
        type=Path,
        required=True,
        metavar="PATH",
        help="a folder searched recursively for *.json specs, or a .zip/.jar of them "
        "(repeatable)",
    )
    gen.add_argument(
        "--out", type=Path, required=True, metavar="DIR", help="folder to write the package into"
    )
    gen.add_argument(
        "--package",
        default="kafka_messages",
        metavar="NAME",
        help="package name (default: kafka_messages)",
    )
    gen.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if DIR/NAME differs from what would be generated",
    )
    gen.add_argument(
        "--no-format",
        action="store_true",
        help="skip black (faster; for throw-away builds, not for committed code)",
    )
    gen.set_defaults(func=cmd_generate)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "package", "x").isidentifier() is False:
        print(
            f"kafka-specgen: --package {args.package!r} is not a Python identifier", file=sys.stderr
        )
        return 2
    try:
        return int(args.func(args))
    except SpecError as exc:
        print(f"kafka-specgen: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
