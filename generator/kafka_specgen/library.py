"""The library API: spec sets in, validated models or generated files out.

``load_specs`` runs load -> schema -> model; ``generate_files`` adds catalog -> plan and
views -> render -> format.
The command line, the pipeline, the side tools and the tests all come through here.
"""

from __future__ import annotations

import hashlib
import importlib
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Callable, Sequence, Union

from . import history
from .errors import each
from .catalog import build_catalog
from .facts import Facts, build_facts, split_raws, with_fallback
from .format import cache_dir, format_files, write_package
from .load import RawSpec, load_paths
from .model import Message
from .model_builder import build_messages
from .package_views import build_views
from .render import GeneratedFile, render_package
from .resources import package_folder
from .selection import Selection
from .view_kit import Flavour
from .schema import validate_spec


@dataclass(frozen=True)
class SpecSet:
    """A spec set to read: the user's files (``--specs``) or Kafka's spec data bundled with
    the tool (``--release``). Every function here that takes a spec set takes one of these
    or, as before, a list of paths."""

    label: str
    """What commands print: ``Kafka 4.1.1 (spec data of 4.1.2)``, or the paths."""
    paths: tuple[Path, ...] = ()
    """The user's folders, files or archives (empty for bundled data)."""
    bundled: tuple[str, ...] = ()
    """The bundled sets whose data this is (``("4.1.2",)``; every release for ``all``)."""
    release: str | None = None
    """The release asked for (``4.1.1``, ``all``), None for paths and other bundled sets."""

    @classmethod
    def of_paths(cls, paths: Sequence[Path | str]) -> SpecSet:
        chosen = tuple(Path(p) for p in paths)
        return cls(", ".join(str(p) for p in chosen), paths=chosen)

    @classmethod
    def of_release(cls, name: str) -> SpecSet:
        """``--release NAME``: a Kafka release (``X.Y`` is X.Y.0, or ``X.Y.Z``), ``all``, or
        the name of another bundled set (``trunk-2024-10``); ``history.HistoryError`` (one
        line) if the bundle cannot serve it."""
        name = name.strip()
        if name == history.ALL:
            releases = [str(r) for r in history.releases()]
            return cls(
                f"every Kafka release, {releases[0]} to {releases[-1]}",
                bundled=tuple(releases),
                release=history.ALL,
            )
        if name in history.set_names() and history.bundle().set(name).release is None:
            return cls(f"{name} (bundled spec set)", bundled=(name,))
        data = history.release_data(name)
        return cls(data.label, bundled=(data.set_name,), release=str(data.release))

    def raws(self) -> list[RawSpec]:
        """Every spec file, read (not yet validated)."""
        if self.release == history.ALL:
            return history.all_specs()
        if self.bundled:
            return [raw for name in self.bundled for raw in history.set_specs(name)]
        return load_paths(self.paths)

    def key_parts(self) -> list[tuple[str, bytes]]:
        """(name, bytes) of what the set is made of, for ``spec_set_key``: each file's path
        and bytes, or the bundled files' paths and git blob ids."""
        if not self.bundled:
            return [part for path in self.paths for part in _file_parts(path)]
        parts = [("bundled", (self.release if self.release == history.ALL else "").encode())]
        for name in self.bundled:
            files = sorted(history.bundle().set(name).files.items())
            parts += [(f"{name}/{path}", blob.encode()) for path, blob in files]
        return parts


SpecSource = Union[SpecSet, Path, str, Sequence[Path | str]]
"""What the functions here take as a spec set: a ``SpecSet``, or paths as before."""


def spec_set(specs: SpecSource) -> SpecSet:
    """``specs`` as a ``SpecSet``: paths (or one path) are wrapped, a ``SpecSet`` is
    returned as it is."""
    if isinstance(specs, SpecSet):
        return specs
    return SpecSet.of_paths([specs] if isinstance(specs, (str, Path)) else specs)


DEFAULT_PACKAGE = "kafka_messages"
"""The name of a generated package unless told otherwise (``generate --package``)."""
BUNDLED_FACTS = "bundled"
"""``load_specs(facts=...)``: the tool's own facts tables (api names, error codes, broker
releases), so a package generated from upstream specs has them too."""


def load_specs(
    spec_paths: SpecSource,
    *,
    warn: bool = True,
    facts: Path | str | None = BUNDLED_FACTS,
    selection: Selection = Selection(),
) -> tuple[list[Message], Facts]:
    """Run load -> schema -> model: the validated messages and facts tables of a spec set.

    Facts tables (a top-level ``"facts"`` key) take their own path: facts.schema.json. A
    table the specs carry wins; the others come from ``facts``: the bundled tables, a
    folder or file of tables, or None for none. ``selection`` keeps part of the messages
    (every spec is still validated).
    """
    raws, fact_raws = split_raws(spec_set(spec_paths).raws())
    spec_facts = build_facts(fact_raws)
    if facts is None:
        fallback = Facts()
    else:
        folder = bundled_specs() / "facts" if facts == BUNDLED_FACTS else Path(facts)
        fallback = build_facts(split_raws(load_paths([folder]))[1])
    facts_used = with_fallback(spec_facts, fallback)
    each(raws, validate_spec)  # every file's schema errors, then the model's
    messages = selection.apply(build_messages(raws))
    if warn:
        warnings = [w for raw in raws for w in raw.warnings]
        warnings += [w for message in messages for w in message.warnings]
        print_warnings(warnings)
    return messages, facts_used


def print_warnings(warnings: Sequence[str]) -> None:
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)


def generate_files(
    spec_paths: SpecSource,
    *,
    warn: bool = True,
    black: bool = False,
    progress: Callable[[int, int], None] | None = None,
    flavour: Flavour = Flavour.PURE,
    facts: Path | str | None = BUNDLED_FACTS,
    selection: Selection = Selection(),
    package: str = DEFAULT_PACKAGE,
) -> list[GeneratedFile]:
    """Run load -> schema -> model -> catalog -> plan and views -> render -> format; return
    the files of the package ``package`` (every file's header names it).

    ``black=True`` also runs black over the modules (they are laid out as black does
    already: it only confirms it; needs black installed); ``progress(done, total)`` follows
    it. ``facts``: as for ``load_specs``.
    """
    messages, facts_used = load_specs(spec_paths, warn=warn, facts=facts, selection=selection)
    catalog = build_catalog(messages, facts_used)
    if warn:
        print_warnings(catalog.warnings)
    files = render_package(build_views(catalog, flavour, package))
    return format_files(files, black=black, progress=progress)


def bundled_specs() -> Path:
    """The specs shipped with the tool (``specs/`` of the repo): the default spec set of
    the commands that need a generated package (broker-versions, pipeline)."""
    return package_folder("specs")


def extracted_bundle() -> Path:
    """Every spec set of the tool's bundle as a folder of files (``2.4.0/``, ...,
    ``trunk-2024-10/``, ``kafka-python-3.0.12/``, each as in Kafka's tree: ``message/...``),
    for tools that read spec files from disk: extracted once per bundle version into the
    cache folder (``history.extract``), then reused."""
    digest = hashlib.sha256(history.bundle_path().read_bytes()).hexdigest()[:16]
    folder = cache_dir() / "kafka-specs" / digest
    if not folder.is_dir():
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix="staging-", dir=folder.parent))
        history.extract(staging)
        try:
            staging.rename(folder)
        except OSError:  # another run got there first: its copy is the same
            shutil.rmtree(staging, ignore_errors=True)
    return folder


class PackageLacks(ValueError):
    """A generated package without what a tool needs of it (one line: what it lacks, and
    why it is needed)."""


@dataclass(frozen=True)
class GeneratedPackage:
    """A package generated from a spec set, written to disk and importable: the one
    handle through which the tools that talk Kafka (broker-versions, fake-broker, the
    pipeline) and the tests reach generated code."""

    name: str
    folder: Path
    """The folder holding the package (what goes on ``sys.path``)."""

    @property
    def path(self) -> Path:
        """The package's own folder."""
        return self.folder / self.name

    def has(self, module: str) -> bool:
        """Whether the package has ``module`` (e.g. ``framing`` needs both headers)."""
        return (self.path / f"{module}.py").is_file() or (self.path / module).is_dir()

    def module(self, module: str = "") -> ModuleType:
        """Import the package, or one of its modules (``registry``, ``connection``, ...)."""
        if str(self.folder) not in sys.path:
            sys.path.insert(0, str(self.folder))
        return importlib.import_module(f"{self.name}.{module}" if module else self.name)

    def require(self, *api_keys: int, because: str, framing: bool = True) -> None:
        """Raise ``PackageLacks`` unless the package has the classes of every api key of
        ``api_keys`` and, with ``framing``, framing and the connection (which need the
        request and response headers): ``the spec set lacks Produce, Fetch and the request
        and response headers: <because>``."""
        registry = self.module("registry")
        lacking = [str(registry.api_name(k)) for k in api_keys if k not in registry.API_KEYS]
        if framing and not self.has("framing"):
            lacking.append("the request and response headers")
        if lacking:
            listed = ", ".join(lacking[:-1]) + " and " if len(lacking) > 1 else ""
            raise PackageLacks(f"the spec set lacks {listed}{lacking[-1]}: {because}")


def generated_package(spec_paths: SpecSource) -> GeneratedPackage:
    """The package generated from ``spec_paths``, generated once per spec set and tool
    version into the cache folder and reused: tools call this on every run."""
    key = spec_set_key(spec_paths)
    package = GeneratedPackage(f"kafka_messages_{key[:12]}", cache_dir() / "packages" / key[:16])
    if not (package.path / "registry.py").is_file():
        files = generate_files(spec_paths, warn=False, package=package.name)
        package.folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix="staging-", dir=package.folder.parent))
        write_package(files, staging / package.name)
        try:
            staging.rename(package.folder)
        except OSError:  # another run got there first: its copy is the same
            shutil.rmtree(staging, ignore_errors=True)
    return package


def spec_set_key(spec_paths: SpecSource, tool: Sequence[Path] | None = None) -> str:
    """A hash of the spec set (every file's path and bytes; for bundled data, its files'
    paths and git blob ids) and of the tool (``tool``: its templates, with the runtime,
    and its own code, by default this installation's): equal keys generate equal
    packages."""
    if tool is None:
        tool = [package_folder("templates"), Path(__file__).parent]
    digest = hashlib.sha256()
    parts = spec_set(spec_paths).key_parts()
    for name, content in parts + [part for path in tool for part in _file_parts(Path(path))]:
        digest.update(name.encode() + b"\0" + content + b"\0")
    return digest.hexdigest()


def _file_parts(path: Path) -> list[tuple[str, bytes]]:
    """(name, bytes) of a file, or of every file under a folder (by relative path)."""
    path = Path(path)
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    return [
        (file.relative_to(path).as_posix() if path.is_dir() else file.name, file.read_bytes())
        for file in files
        if "__pycache__" not in file.parts
    ]
