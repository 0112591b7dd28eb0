"""``kafka-specgen diff OLD NEW``: the command line of the spec comparison."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .compare import diff_paths
from .report import render


def cmd_diff(args: argparse.Namespace) -> int:
    diff = diff_paths(args.old, args.new)
    sys.stdout.write(render(diff, args.format))
    if args.fail_on_violation and diff.count("violation"):
        return 1
    return 0


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "diff",
        help="show what changed between two spec sets (a changelog for a spec bump)",
        description="Compare two spec sets (folders or .zip/.jar files, as for generate): "
        "per API and message, versions added/removed, flexible-version changes, fields "
        "added/removed/retyped/renamed, nullability and tag changes, and violations of "
        "Kafka's evolution rules.",
    )
    parser.add_argument("old", type=Path, metavar="OLD", help="the old spec set")
    parser.add_argument("new", type=Path, metavar="NEW", help="the new spec set")
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
