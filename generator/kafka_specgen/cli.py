"""The ``kafka-specgen`` command line: ``generate`` (through ``library``) and the side tools'
commands, each of which registers its own parser."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from . import __version__, broker_versions, diff
from .errors import SpecError
from .format import (
    GeneratedCodeError,
    UnsafeTargetError,
    compare_package,
    package_name_problem,
    write_package,
)
from .history import HistoryError
from .library import BUNDLED_FACTS, DEFAULT_PACKAGE, PackageLacks, generate_files
from .selection import Selection, SelectionError
from .spec_options import add_spec_options, chosen_spec_set
from .view_kit import Flavour
from .fake_broker import command as fake_broker_command
from .capture import proxy as capture_proxy
from .pipeline import command as pipeline_command, report

#: Optional dependencies -> the extra that installs them.
EXTRA_OF = {
    "pyspark": "spark",
    "pyarrow": "spark",
    "pandas": "spark",
    "cryptography": "spark",
    "plotly": "spark",
    "black": "black",
}


class TerminalProgress:
    """``formatting 120/178 modules`` on stderr, rewritten in place: only on a terminal,
    and only once a run has taken long enough to wonder about."""

    def __init__(self, after: float = 1.5) -> None:
        self.started = time.monotonic()
        self.after = after
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        if time.monotonic() - self.started < self.after and not self.shown:
            return
        self.shown = True
        end = "\n" if done == total else ""
        print(f"\rformatting {done}/{total} modules", end=end, file=sys.stderr, flush=True)


def cmd_generate(args: argparse.Namespace) -> int:
    started = time.monotonic()
    progress = TerminalProgress() if sys.stderr.isatty() else None
    specs = chosen_spec_set(args)
    assert specs is not None  # argparse requires --specs or --release
    files = generate_files(
        specs,
        black=args.black,
        progress=progress,
        flavour=Flavour(args.flavour),
        facts=None if args.facts == "none" else args.facts,
        selection=Selection(split_list(args.listeners), split_list(args.apis)),
        package=args.package,
    )
    package_dir = Path(args.out) / args.package
    if args.check:
        differences = compare_package(files, package_dir)
        for line in differences:
            print(line)
        if differences:
            if args.release is not None:
                given = f"--release {args.release}"
            else:
                given = " ".join(f"--specs {path}" for path in args.specs)
            print(
                f"{package_dir} is out of date: regenerate it with `kafka-specgen generate "
                f"{given} --out {args.out} --package {args.package}`",
                file=sys.stderr,
            )
            return 1
        print(f"{package_dir} is up to date ({len(files)} files)")
        return 0
    report = write_package(files, package_dir, force=args.force)
    elapsed = time.monotonic() - started
    source = f" from {specs.label}" if specs.bundled else ""
    kept = f", {len(report.kept)} of others left alone" if report.kept else ""
    print(
        f"{package_dir}: {len(files)} files ({len(report.written)} written, "
        f"{len(report.unchanged)} unchanged, {len(report.removed)} stale removed{kept}){source} "
        f"in {elapsed:.1f} s"
    )
    return 0


def split_list(text: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (text or "").split(",") if part.strip())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kafka-specgen",
        description="Generate a typed pure-Python Kafka protocol package from JSON message specs.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    register_generate(commands)
    # Each side tool adds its own parser; heavy dependencies are imported when it runs.
    for tool in (
        capture_proxy,
        broker_versions,
        fake_broker_command,
        diff,
        pipeline_command,
        report,
    ):
        tool.register(commands)
    return parser


def register_generate(commands: Any) -> None:
    gen = commands.add_parser(
        "generate",
        help="generate the message package from specs",
        description="Read Kafka JSON message specs and write a Python package of codecs.",
    )
    add_spec_options(
        gen,
        "a folder searched recursively for *.json specs, or a .zip/.jar of them (repeatable)",
        required=True,
    )
    gen.add_argument(
        "--out", type=Path, required=True, metavar="DIR", help="folder to write the package into"
    )
    gen.add_argument(
        "--package",
        default=DEFAULT_PACKAGE,
        metavar="NAME",
        help=f"package name (default: {DEFAULT_PACKAGE}); not a keyword nor a standard-library "
        "module",
    )
    gen.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if DIR/NAME differs from what would be generated",
    )
    gen.add_argument(
        "--force",
        action="store_true",
        help="write into DIR/NAME even though it holds files kafka-specgen did not generate "
        "for NAME: generated files replace theirs of the same name, none is deleted (never "
        "through a symbolic link)",
    )
    gen.add_argument(
        "--facts",
        default=BUNDLED_FACTS,
        metavar="PATH|none",
        help="facts tables (api names, error codes, broker releases) for what the specs do "
        "not carry: a folder or file of them, or 'none' (default: the tool's own)",
    )
    gen.add_argument(
        "--flavour",
        choices=[f.value for f in Flavour],
        default=Flavour.PURE.value,
        help="pure: standard library only, vendorable (default); mypyc: shaped for a "
        "mypyc build (native constructors, librt reads; needs librt at run time)",
    )
    gen.add_argument(
        "--listeners",
        metavar="NAME,...",
        help="keep only the APIs whose requests list one of these of Kafka's listeners "
        "(zkBroker, broker, controller; 'broker' is what clients talk to), plus the headers "
        "and the data specs: a client-only package",
    )
    gen.add_argument(
        "--apis",
        metavar="NAME|KEY,...",
        help="keep only these APIs (e.g. Produce,Fetch,3), plus the headers and the data "
        "specs; with --listeners, both sets are kept",
    )
    gen.add_argument(
        "--black",
        action="store_true",
        help="also run black over the modules: they are laid out as black does already, so "
        "this only confirms it (needs black: pip install 'kafka-specgen[black]')",
    )
    gen.set_defaults(func=cmd_generate)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    problem = package_name_problem(args.package) if args.command == "generate" else None
    if problem is not None:
        print(f"kafka-specgen: --package {args.package!r} {problem}", file=sys.stderr)
        return 2
    try:
        return int(args.func(args))
    except BrokenPipeError:
        # The reader went away (`kafka-specgen diff ... | head`): not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (SelectionError, HistoryError, PackageLacks) as exc:
        print(f"kafka-specgen {args.command}: {exc}", file=sys.stderr)
        return 2
    except (SpecError, GeneratedCodeError, UnsafeTargetError) as exc:
        for line in str(exc).splitlines():
            print(f"kafka-specgen: error: {line}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as exc:
        top = (exc.name or "").split(".")[0]
        if top not in EXTRA_OF:
            raise
        print(
            f"kafka-specgen {args.command}: needs {top}, from the {EXTRA_OF[top]!r} extra: "
            f"pip install 'kafka-specgen[{EXTRA_OF[top]}]'",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
