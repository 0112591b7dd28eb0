"""``kafka-specgen diff OLD NEW``: the command line of the spec comparison."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..spec_options import spec_set_argument
from .compare import diff_paths
from .report import render


def cmd_diff(args: argparse.Namespace) -> int:
    diff = diff_paths(spec_set_argument(args.old), spec_set_argument(args.new))
    sys.stdout.write(render(diff, args.format))
    if args.fail_on_violation and diff.count("violation"):
        return 1
    return 0


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "diff",
        help="show what changed between two spec sets (a changelog for a spec bump)",
        description="Compare two spec sets (folders or .zip/.jar files, as for generate, or "
        "Kafka releases bundled with the tool, as for --release: diff 3.9 4.0): per API and "
        "message, versions added/removed, flexible-version changes, fields "
        "added/removed/retyped/renamed, nullability and tag changes, and violations of "
        "Kafka's evolution rules.",
    )
    parser.add_argument(
        "old", metavar="OLD", help="the old spec set: a path, or a release such as 3.9"
    )
    parser.add_argument(
        "new", metavar="NEW", help="the new spec set: a path, or a release such as 4.0"
    )
    parser.add_argument(
        "--format",
        choices=("text", "json", "markdown"),
        default="text",
        help="text for a terminal (default), json for tools, markdown for a changelog or a "
        "pull request",
    )
    parser.add_argument(
        "--fail-on-violation",
        action="store_true",
        help="exit 1 when a change breaks Kafka's evolution rules",
    )
    parser.set_defaults(func=cmd_diff)
