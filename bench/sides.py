"""The packages under test: the committed ``kafka_messages`` and the ones generated for the
bench (cached by input hash), their mypyc builds, and ``Side``, one package as the cases
use it."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from bench.cases import Case, Frames, FrameSet
from bench.common import BENCH, CACHE, COMPILED_SUFFIX, KP_PACKAGE, KP_SHARED, ROOT, SPECS, TRUNK
from bench.compile import build, package_modules
from kafka_specgen.library import load_specs

#: The packages generated for the bench (beside the committed ``generated/kafka_messages``):
#: side label -> (package name, its spec corpus).
GENERATED_SIDES: dict[str, tuple[str, Path]] = {
    "kp": (KP_PACKAGE, KP_SHARED),  # kafka-python 3.0.12's specs: Produce, Fetch
    "newest": ("newest_bench_messages", TRUNK),  # reads every golden frame
}


def _tree_hash(paths: list[Path], extra: str = "") -> str:
    h = hashlib.sha256(extra.encode())
    for root in paths:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for f in files:
            if "__pycache__" in f.parts:
                continue
            h.update(str(f.relative_to(root.parent)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def generated_package(label: str, log: Callable[[str], None]) -> str:
    """Generate (once, cached by input hash) side ``label``'s corpus (``GENERATED_SIDES``),
    as users get it, and put it on ``sys.path``; return the package name."""
    package, corpus = GENERATED_SIDES[label]
    key = _tree_hash([corpus, ROOT / "generator", ROOT / "templates"])
    out = CACHE / f"{label}-{key}"
    if not (out / package / "__init__.py").is_file():
        from kafka_specgen.library import generate_files
        from kafka_specgen.format import write_package

        log(f"generating {corpus} into {out} (cached for the next runs) ...")
        t0 = time.perf_counter()
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=CACHE, prefix="tmp-gen-"))
        try:
            files = generate_files([corpus], warn=False, package=package)
            write_package(files, tmp / package)
            if out.exists():
                shutil.rmtree(out)
            tmp.rename(out)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        log(f"  done in {time.perf_counter() - t0:.1f} s")
        for old in CACHE.glob(f"{label}-*"):
            if old != out:
                shutil.rmtree(old, ignore_errors=True)
    if str(out) not in sys.path:
        sys.path.insert(0, str(out))
    return package


def mypyc_package(
    label: str, source: Path, modules: list[str] | None, log: Callable[[str], None]
) -> dict[str, Any]:
    """Compile the generated package folder ``source`` with mypyc as ``<name>_mypyc`` (once,
    cached by a hash of its sources, bench/compile.py and the toolchain), put it on
    ``sys.path`` and return what results.json records of it. Raises ``BuildError``."""
    from importlib.metadata import PackageNotFoundError, version

    package = source.name + COMPILED_SUFFIX
    try:
        mypy_version = version("mypy")
    except PackageNotFoundError:
        mypy_version = "none"  # build() then fails with mypyc's own message
    # The extensions are tied to the interpreter and to mypyc's runtime: both in the key.
    key = _tree_hash(
        [source, BENCH / "compile.py"], extra=f"{sys.version} mypy {mypy_version} {modules}"
    )
    out = CACHE / f"mypyc-{label}-{key}"
    manifest = out / "BUILD.json"
    if manifest.is_file():
        info: dict[str, Any] = json.loads(manifest.read_text())
        info["cached"] = True
    else:
        count = len(modules) if modules is not None else len(package_modules(source))
        log(f"compiling {package} ({count} modules) with mypyc (cached for the next runs) ...")
        t0 = time.perf_counter()
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=CACHE, prefix="tmp-mypyc-"))
        try:
            compiled = build(source, tmp, package, modules)
            info = {
                "package": package,
                "source": os.path.relpath(source, ROOT),
                "modules": compiled,
                "compile_s": round(time.perf_counter() - t0, 1),
            }
            (tmp / "BUILD.json").write_text(json.dumps(info, indent=2) + "\n")
            if out.exists():
                shutil.rmtree(out)
            tmp.rename(out)  # the build does not depend on its folder's name
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        log(f"  done in {info['compile_s']:.1f} s")
        info["cached"] = False
        for old in CACHE.glob(f"mypyc-{label}-*"):
            if old != out:
                shutil.rmtree(old, ignore_errors=True)
    if str(out) not in sys.path:
        sys.path.insert(0, str(out))
    return {**info, "dir": os.path.relpath(out, ROOT)}


class Side:
    """One package under test: its name, the generator model of its messages, and the name
    of its mypyc build (``compiled``) once that is built."""

    def __init__(self, package: str, spec_paths: list[Path]) -> None:
        from kafka_specgen.catalog import module_name

        self.package = package
        self.compiled: str | None = None
        self.messages = {m.name: m for m in load_specs(spec_paths, warn=False)[0]}
        self._module_name = module_name
        self._frames: dict[str, Frames] = {}

    @property
    def source(self) -> Path:
        """The package's folder."""
        return Path(importlib.import_module(self.package).__path__[0])

    def module(self, name: str) -> str:
        """The module (inside the package) that holds message ``name``."""
        return str(self._module_name(self.messages[name]))

    def message_class(self, name: str, package: str | None = None) -> tuple[Any, Any]:
        module = importlib.import_module(f"{package or self.package}.{self.module(name)}")
        return self.messages[name], getattr(module, name)

    def frames(self, case: FrameSet) -> Frames:
        """A frame set's bodies as this package reads them (loaded once)."""
        if case.id not in self._frames:
            self._frames[case.id] = case.load(self.package)
        return self._frames[case.id]

    def modules_for(self, case: Case | FrameSet) -> list[str]:
        """The modules (inside the package) a case's messages live in."""
        if isinstance(case, Case):
            return [self.module(case.message)]
        return sorted({self.module(b.cls.__name__) for b in self.frames(case).bodies})


def open_side(which: str, log: Callable[[str], None]) -> tuple[Side, list[Path]]:
    """Side ``which`` ("repo": the committed ``kafka_messages``; else one of
    ``GENERATED_SIDES``, generated once) and the specs it is generated from."""
    if which == "repo":
        return Side("kafka_messages", sorted(SPECS.glob("*.json"))), [SPECS]
    corpus = GENERATED_SIDES[which][1]
    return Side(generated_package(which, log), [corpus]), [corpus]
