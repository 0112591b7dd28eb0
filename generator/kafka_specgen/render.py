"""The render stage: the views of a package in, the text of every generated file out.

Python decides structure (which module holds what, which function serves which version:
``package_views`` and ``view_builder``); the jinja2 templates in ``templates/`` write every
character of code that depends on the specs. The runtime modules (``templates/runtime/``)
are copied verbatim, behind a one-line header.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import jinja2

from .catalog import runtime_modules
from .runtime_names import RUNTIME
from .docstrings import docstring
from .headers import runtime_header
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
from .package_views import PackageView
from .resources import package_folder
from .view_kit import pylit
from .wiretypes import WIRE_TYPES

TEMPLATES = package_folder("templates")
#: Runtime modules a package gets only when it has the request and response headers:
#: framing and everything built on it.
FRAMING_MODULES = frozenset({"framing", "connection", "client", "aio", "cluster"})


@dataclass(frozen=True)
class GeneratedFile:
    path: str
    """Path inside the package, POSIX style."""
    text: str
    formatted: bool = False
    """Already laid out as black would (runtime copies): the format stage leaves it."""


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
        wire_types=WIRE_TYPES,
        signature=signature,
        targets=targets,
        assignment=assignment,
        import_from=import_from,
        statement=statement,
        annotated=annotated,
        condition=condition,
    )
    return env


def render_package(package: PackageView) -> list[GeneratedFile]:
    """Every file of the package: one module per API, the rendered tables, the runtime."""
    env = environment()
    module = env.get_template("module.py.j2")
    files = [GeneratedFile(f"{name}.py", module.render(v=view)) for name, view in package.modules]
    # The tables' templates take their view's fields as names.
    for name, table in (
        ("registry", package.registry),
        ("error_codes", package.error_codes),
        ("releases", package.releases),
    ):
        files.append(
            GeneratedFile(f"{name}.py", env.get_template(f"{name}.py.j2").render(vars(table)))
        )
    return files + runtime_files(package.package, package.framing)


def runtime_files(package: str, framing: bool) -> list[GeneratedFile]:
    """The hand-written runtime, copied verbatim (framing only with both headers): each
    module, and each module of each subpackage at the same path inside the package, every
    one behind its header (``__pycache__`` left out), in sorted order."""
    skip = set() if framing else FRAMING_MODULES
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
    header = runtime_header(package)
    files = [
        GeneratedFile(
            path.relative_to(RUNTIME).as_posix(),
            header + path.read_text(encoding="utf-8"),
            formatted=True,
        )
        for path in sources
    ]
    return files + [GeneratedFile("py.typed", "", formatted=True)]
