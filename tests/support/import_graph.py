"""The import graph of a package, read with ``ast``: its cycles and its floors.

Every import counts, wherever it stands (top level, ``TYPE_CHECKING`` blocks, inside a
function): a cycle hidden in a function is still a cycle. ``from .pkg import name`` points
at the module ``pkg.name`` when there is one, else at ``pkg`` itself (its ``__init__``);
importing a submodule is not counted as importing its package's ``__init__`` (Python runs
it, but that is not a dependency the code chose).

Run it to print the picture: ``python -m tests.support.import_graph [FOLDER]`` (default:
the tool, ``generator/kafka_specgen``).
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "generator" / "kafka_specgen"


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int
    lazy: bool
    """Inside a function: runs when called, not when the module is imported."""


def module_names(package: Path) -> dict[str, Path]:
    """Dotted name (from the package's own name) -> file, ``__pycache__`` left out."""
    names = {}
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package.parent).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        if "__pycache__" not in parts:
            names[".".join(parts)] = path
    return names


def imports(package: Path) -> list[Import]:
    """Every import between two modules of ``package``."""
    modules = module_names(package)
    found: list[Import] = []
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node, lazy in walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = resolve(name, is_package, node.level, node.module)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in modules else base)
            for target in targets:
                while target not in modules and "." in target:
                    target = target.rsplit(".", 1)[0]  # `import a.b.c` of a package-less name
                if target in modules and target != name:
                    found.append(Import(name, target, node.lineno, lazy))
    return sorted(set(found), key=lambda i: (i.importer, i.imported, i.line))


def walk(
    tree: ast.AST, kinds: tuple[type[ast.AST], ...] = (ast.Import, ast.ImportFrom)
) -> list[tuple[ast.AST, bool]]:
    """Every node of ``kinds`` (imports), and whether it sits inside a function."""
    result: list[tuple[ast.AST, bool]] = []

    def visit(node: ast.AST, lazy: bool) -> None:
        if isinstance(node, kinds):
            result.append((node, lazy))
        inner = lazy or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, False)
    return result


def imports_of(folder: Path, package: str) -> list[Import]:
    """Every import of ``package`` or a module inside it by the modules of ``folder``:
    ``import`` and ``from`` wherever they stand, and ``importlib.import_module`` or
    ``__import__`` of a name written out."""
    found: list[Import] = []
    for name, path in module_names(folder).items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        targets: list[tuple[str, ast.AST, bool]] = []
        for node, lazy in walk(tree, (ast.Import, ast.ImportFrom, ast.Call)):
            if isinstance(node, ast.Import):
                targets += [(alias.name, node, lazy) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = resolve(name, is_package, node.level, node.module)
                targets += [(base, node, lazy)]
            elif isinstance(node, ast.Call) and _imported_by_name(node) is not None:
                targets += [(str(_imported_by_name(node)), node, lazy)]
        for target, node, lazy in targets:
            if target == package or target.startswith(package + "."):
                found.append(Import(name, target, getattr(node, "lineno", 0), lazy))
    return sorted(set(found), key=lambda i: (i.importer, i.imported, i.line))


def _imported_by_name(call: ast.Call) -> str | None:
    """The module ``importlib.import_module("...")`` or ``__import__("...")`` imports."""
    func = call.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if called not in ("import_module", "__import__") or not call.args:
        return None
    first = call.args[0]
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def resolve(importer: str, is_package: bool, level: int, module: str | None) -> str:
    if level == 0:
        return module or ""
    parts = importer.split(".")
    if not is_package:
        parts = parts[:-1]
    parts = parts[: len(parts) - (level - 1)]
    return ".".join([*parts, *([module] if module else [])])


def graph(found: list[Import]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for i in found:
        edges.setdefault(i.importer, set()).add(i.imported)
        edges.setdefault(i.imported, set())
    return edges


def cycles(found: list[Import]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), sorted."""
    edges = graph(found)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(edges[node]):
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for node in sorted(edges):
            if node not in index:
                connect(node)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(components)


def floors(found: list[Import]) -> dict[str, int]:
    """Each module's floor: 0 for a module that imports nothing of the package, else one
    above the highest module it imports (the members of a cycle share one floor)."""
    edges = graph(found)
    member_of = {m: tuple(c) for c in cycles(found) for m in c}
    floor: dict[str, int] = {}

    def height(node: str) -> int:
        if node in floor:
            return floor[node]
        group = member_of.get(node, (node,))
        for member in group:
            floor[member] = 0  # a provisional floor, so a cycle ends the walk
        below = [
            height(other) + 1 for member in group for other in edges[member] if other not in group
        ]
        for member in group:
            floor[member] = max(below, default=0)
        return floor[node]

    for node in sorted(edges):
        height(node)
    return floor


def back_up(found: list[Import]) -> list[Import]:
    """The imports that run back up: from a module to one on its own floor or above,
    which only the members of a cycle do."""
    floor = floors(found)
    return [i for i in found if floor[i.imported] >= floor[i.importer]]


def main(argv: list[str]) -> int:
    package = Path(argv[0]) if argv else TOOL
    found = imports(package)
    floor = floors(found)
    modules = module_names(package)
    print(
        f"{package}: {len(modules)} modules on {max(floor.values()) + 1} floors, "
        f"{len(found)} imports ({sum(i.lazy for i in found)} inside functions)"
    )
    for component in cycles(found):
        print("cycle: " + " <-> ".join(component))
    for i in back_up(found):
        print(f"back up: {i.importer} -> {i.imported} (line {i.line})")
    for i in found:
        if i.lazy:
            print(f"inside a function: {i.importer} -> {i.imported} (line {i.line})")
    return 1 if cycles(found) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
