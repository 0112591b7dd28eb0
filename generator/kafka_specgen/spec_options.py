"""The command line's two ways to name a spec set: ``--specs PATH`` or ``--release NAME``.

Every command that takes a spec set adds both with ``add_spec_options`` (giving both is an
error, as argparse reports it) and turns them into a ``library.SpecSet`` with
``chosen_spec_set``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from . import history
from .library import SpecSet
from .release_names import Release, ReleaseNameError

RELEASE_HELP = (
    "Kafka's own specs of a release, bundled with the tool: X.Y (that is X.Y.0) or X.Y.Z, "
    "2.4 to 4.3; a patch release without its own data takes its line's (4.0.1 and later "
    "4.0.x: 4.0.2's; 4.1.1: 4.1.2's). 'all': every release at once. Also the name of "
    "another bundled set (trunk-2024-10, kafka-python-3.0.12)"
)


def add_spec_options(parser: Any, specs_help: str, *, required: bool = False) -> None:
    """``--specs PATH`` (repeatable) and ``--release NAME``, one or the other."""
    group = parser.add_mutually_exclusive_group(required=required)
    group.add_argument("--specs", action="append", type=Path, metavar="PATH", help=specs_help)
    group.add_argument("--release", metavar="X.Y[.Z]", help=RELEASE_HELP)


def chosen_spec_set(args: argparse.Namespace) -> SpecSet | None:
    """The spec set the options name, or None when neither was given. An unknown release
    raises ``history.HistoryError`` (one line)."""
    if args.release is not None:
        return SpecSet.of_release(args.release)
    if args.specs:
        return SpecSet.of_paths(args.specs)
    return None


def spec_set_argument(text: str) -> SpecSet:
    """A positional spec set (``diff OLD NEW``): an existing path is a path, anything
    else a release name; raises ``history.HistoryError`` if it is neither."""
    path = Path(text)
    if path.exists():
        return SpecSet.of_paths([path])
    if text != history.ALL and text not in history.set_names():
        try:
            Release.parse(text)
        except ReleaseNameError:
            raise history.HistoryError(
                f"{text!r}: no such file or folder, and not a Kafka release (like 3.9 or 4.1.1)"
            ) from None
    return SpecSet.of_release(text)
