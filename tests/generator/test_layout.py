"""The templates lay code out as black would (``kafka_specgen.layout``), so the generated
bytes are final without black, whichever black a user has (or none): checked on every spec
set the tests have, in both flavours."""

from __future__ import annotations

import os
from pathlib import Path

import black
import pytest

from kafka_specgen.format import black_mode
from kafka_specgen.layout import (
    Call,
    Code,
    Kwarg,
    Tup,
    annotated,
    assignment,
    condition,
    lay_out,
    pybytes,
    pystr,
    signature,
    statement,
    targets,
)
from kafka_specgen.library import generate_files
from kafka_specgen.view_kit import Flavour
from tests.support import genpkg

ROOT = Path(__file__).resolve().parents[2]
# The newest corpus meets nearly every shape the templates write; `make test-layout` (run
# by CI) sets KAFKA_SPECGEN_LAYOUT=all to hold every corpus to it (about 2 minutes).
CORPORA = (
    genpkg.corpus_folders()
    if os.environ.get("KAFKA_SPECGEN_LAYOUT") == "all"
    else [genpkg.newest_corpus()]
)
SPEC_SETS = {
    "specs": ROOT / "specs",
    "all_features": ROOT / "tests" / "specs" / "all_features",
    **{folder.name: folder for folder in CORPORA},
}


def test_rendered_modules_are_already_black_formatted() -> None:
    """Every module of every spec set, in both flavours (each distinct text once: most
    modules are the same from one release to the next)."""
    texts: dict[str, str] = {}
    for name, folder in sorted(SPEC_SETS.items()):
        for flavour in Flavour:
            for f in generate_files([folder], warn=False, flavour=flavour):
                if f.path.endswith(".py") and not f.formatted:
                    texts.setdefault(f.text, f"{name} ({flavour.value}): {f.path}")
    assert len(SPEC_SETS) >= 3 and len(texts) > 100
    unstable = [where for text, where in texts.items() if black_of(text) != text]
    assert not unstable, f"black would change {unstable}"


def black_of(source: str) -> str:
    return black.format_str(source, mode=black_mode())


@pytest.mark.parametrize(
    "value", ["", "plain", "it's", 'say "hi"', "both ' and \"", "back\\slash", "tab\tnl\n", "é✓"]
)
def test_string_quotes_are_blacks(value: str) -> None:
    source = f"x = {pystr(value)}\n"
    assert eval(pystr(value)) == value
    assert black_of(source) == source


@pytest.mark.parametrize("value", [b"", b"abc", b"it's", b'a"b', b"\x00\xff\\", b"'\""])
def test_bytes_quotes_are_blacks(value: bytes) -> None:
    source = f"x = {pybytes(value)}\n"
    assert eval(pybytes(value)) == value
    assert black_of(source) == source


LONG = "a_rather_long_name_for_a_generated_function_of_some_struct_at_version"
SHAPES = [
    # calls and literals, short and long, nested
    lambda: "X = " + lay_out(Call("f", (Code("a"), Code("b"))), 0, 4) + "\n",
    lambda: "X = " + lay_out(Call("f", tuple(Code(f"{LONG}_{i}") for i in range(3))), 0, 4) + "\n",
    lambda: "_SOME_PLAN_CONSTANT_NAME = "
    + lay_out(Call("Plan", (Code("Cls"), Code(f"_read_{LONG}"), Code("flexible=False"))), 0, 26)
    + "\n",
    lambda: lay_out(
        Call(
            "bind",
            (
                Code("Cls"),
                Tup(("a", f"{LONG}_b:[]struct")),
                Tup(tuple(Tup((v, v + 1, Code(f"_{LONG.upper()}"))) for v in range(3))),
                Kwarg("structs", Tup((Code("Cls"),))),
            ),
            explode=True,
        )
    )
    + "\n",
    lambda: signature("_read_x", "buf: bytes, pos: int", "tuple[X, int]") + "\n    pass\n",
    lambda: signature(f"_read_{LONG}", "buf: bytes, pos: int", "tuple[Something, int]")
    + "\n    pass\n",
    lambda: "def f():\n    "
    + targets([f"obj.{c * 12}" for c in "abcdefg"], "_unpack_iiiiiii(buf, pos)", 4).replace(
        "\n", "\n    "
    )
    + "\n",
    lambda: "def f():\n    "
    + targets(["obj.a", "obj.b"], f"_unpack_{LONG}(buf, pos)", 4).replace("\n", "\n    ")
    + "\n",
    lambda: "def f():\n    for values in x:\n        "
    + targets([f"item.{c * 14}" for c in "abcdef"], "values", 8).replace("\n", "\n        ")
    + "\n",
    lambda: "def f():\n    "
    + statement(f"obj.value, pos = read_{LONG}(buf, pos)", 4).replace("\n", "\n    ")
    + "\n",
    lambda: "def f():\n    "
    + statement(f"{LONG}_item, pos = _read_{LONG}_and_more(buf, pos)", 4).replace("\n", "\n    ")
    + "\n",
    lambda: statement(f"_{LONG.upper()}_DEFAULT: Final = {LONG.title()}Struct()", 0) + "\n",
    lambda: "class C:\n    def __init__(self, x):\n        "
    + assignment("self.x", f"Cls() if x is _{LONG.upper()}_DEFAULT else x", 8).replace(
        "\n", "\n        "
    )
    + "\n",
    lambda: "class C:\n    "
    + annotated(f"{LONG}s", f"tuple[{LONG.title().replace('_', '')}, ...]", "", 4).replace(
        "\n", "\n    "
    )
    + "\n",
    lambda: "def f():\n    "
    + condition(f"obj.{LONG} != _{LONG.upper()}_DEFAULT", 4).replace("\n", "\n    ")
    + "\n        pass\n",
]


@pytest.mark.parametrize("shape", range(len(SHAPES)))
def test_each_shape_is_laid_out_as_black_lays_it_out(shape: int) -> None:
    source = SHAPES[shape]()
    assert black_of(source) == source


@pytest.mark.parametrize("facts", ["bundled", None])
def test_small_packages_are_black_formatted_too(tmp_path: Path, facts: str | None) -> None:
    """Tables with no rows or one (no APIs, no facts, one module) have layouts of their own."""
    (tmp_path / "OneData.json").write_text(
        '{"type": "data", "name": "OneData", "validVersions": "0", "flexibleVersions": "none",'
        ' "fields": [{"name": "X", "type": "int32", "versions": "0+"}]}'
    )
    files = generate_files([tmp_path], warn=False, facts=facts)
    modules = [f for f in files if f.path.endswith(".py") and not f.formatted]
    assert {"registry.py", "error_codes.py", "one_data.py"} <= {f.path for f in modules}
    assert [f.path for f in modules if black_of(f.text) != f.text] == []
