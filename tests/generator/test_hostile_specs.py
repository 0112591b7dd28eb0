"""Hostile specs: names, ``about`` texts and defaults written to break the generated code.

Every spec string must either be rejected with a clear error naming the file and field,
or arrive in the generated code as data: the module parses, compiles without warnings,
passes black and ``mypy --strict``, imports exactly what a benign module imports, and the
strings survive unchanged (docstrings and default values). tests/generator/test_injection.py has
the first such test; this file widens it.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from kafka_specgen.errors import SpecError
from tests.support.genpkg import generate_package, load_messages, mypy_strict

PYTHON = sys.executable

HOSTILE_ABOUTS = [
    'Ends early """\nimport os\nos.system("echo pwned")\n"""',
    "Single quotes ''' then\nimport subprocess\n'''",
    'ends with a quote"',
    "ends with a backslash \\",
    'ends with an escaped quote \\"',
    "\\N{BULLET} \\u12 \\x \\ escapes that are not escapes",
    "control \x00 \x07 \x1b[31m \r\n carriage \u2028 line sep \u2029 \x0c feed",
    "{{ jinja }} {% if x %} {# comment #} ${shell} `backticks`",
    "tab\tand trailing spaces   ",
    '""""""""" nine quotes',
    'f\'{__import__("os").system("x")}\'',
]

HOSTILE_DEFAULTS = [
    '"""; import os; """',
    "'''\nimport os\n'''",
    "back\\slash \\",
    "quote \" and ' both",
    "{0} {x} %s",
    "nul \x00 and newline \n end",
]


def field(name: str, ftype: str = "int32", **extra: Any) -> dict[str, Any]:
    return {"name": name, "type": ftype, "versions": "0+", **extra}


def write(folder: Path, specs: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for spec in specs:
        (folder / f"{spec['name']}.json").write_text(json.dumps(spec))
    return folder


def data_spec(name: str, fields: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "type": "data",
        "name": name,
        "validVersions": "0-1",
        "flexibleVersions": "1+",
        "fields": fields,
    }


def imports_of(source: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.update(f"{'.' * node.level}{node.module or ''}:{a.name}" for a in node.names)
    return found


def compile_strictly(source: str, name: str) -> None:
    """Compile with every warning an error (invalid escapes are a SyntaxWarning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compile(source, name, "exec")


# --- about texts ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def hostile_pkg(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One package with every hostile about/default, one benign twin to compare with."""
    root = tmp_path_factory.mktemp("hostile")
    hostile_fields = (
        [field(f"Text{i}", "string", about=about) for i, about in enumerate(HOSTILE_ABOUTS)]
        + [
            field(f"Default{i}", "string", default=value, about=HOSTILE_ABOUTS[0])
            for i, value in enumerate(HOSTILE_DEFAULTS)
        ]
        + [
            field(
                "Items",
                "[]Item",
                about=HOSTILE_ABOUTS[1],
                fields=[
                    field("Value", "int64", about=HOSTILE_ABOUTS[2]),
                ],
            ),
        ]
    )
    benign_fields = [
        field(
            f["name"], f["type"], **({"fields": [field("Value", "int64")]} if "fields" in f else {})
        )
        for f in hostile_fields
    ]
    write(root / "hostile_specs", [data_spec("HostileData", hostile_fields)])
    write(root / "benign_specs", [data_spec("HostileData", benign_fields)])
    generate_package([root / "hostile_specs"], root / "out", "hostile_specs_pkg")
    generate_package([root / "benign_specs"], root / "benign", "benign_specs_pkg")
    return root / "out" / "hostile_specs_pkg", root / "benign" / "benign_specs_pkg"


def test_hostile_module_imports_nothing_new(hostile_pkg: tuple[Path, Path]) -> None:
    hostile, benign = hostile_pkg
    source = (hostile / "hostile_data.py").read_text()
    assert imports_of(source) == imports_of((benign / "hostile_data.py").read_text())
    tree = ast.parse(source)
    calls = {
        getattr(node.func, "attr", getattr(node.func, "id", ""))
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
    }
    assert not calls & {"system", "__import__", "exec", "eval", "run"}
    # Top-level statements: the same kinds and number as the benign twin.
    benign_tree = ast.parse((benign / "hostile_data.py").read_text())
    assert [type(n).__name__ for n in tree.body] == [type(n).__name__ for n in benign_tree.body]


def test_hostile_module_compiles_without_warnings(hostile_pkg: tuple[Path, Path]) -> None:
    hostile, _ = hostile_pkg
    for path in sorted(hostile.glob("*.py")):
        compile_strictly(path.read_text(), str(path))


def test_about_texts_survive_as_docstrings(hostile_pkg: tuple[Path, Path]) -> None:
    import importlib

    module = importlib.import_module("hostile_specs_pkg.hostile_data")
    source = (hostile_pkg[0] / "hostile_data.py").read_text()
    docstrings = [
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]
    blob = "\n".join(docstrings)
    for about in HOSTILE_ABOUTS:
        # Docstrings may re-indent lines and drop control characters, but the words
        # and every quote, backslash and brace are still there, as data.
        for word in ("import", "pwned", "escapes", "jinja", "nine quotes", "backslash"):
            if word in about:
                assert word in blob
    assert module.HostileData.__doc__ is not None


def test_hostile_defaults_survive_exactly(hostile_pkg: tuple[Path, Path]) -> None:
    import importlib

    module = importlib.import_module("hostile_specs_pkg.hostile_data")
    obj = module.HostileData()
    for i, value in enumerate(HOSTILE_DEFAULTS):
        assert getattr(obj, f"default{i}") == value
    for version in (0, 1):
        assert module.HostileData.decode(obj.encode(version), version) == obj


def test_hostile_package_passes_black_and_mypy_strict(hostile_pkg: tuple[Path, Path]) -> None:
    hostile, _ = hostile_pkg
    black = subprocess.run(
        [PYTHON, "-m", "black", "--check", "-q", "--line-length", "100", str(hostile)],
        capture_output=True,
        text=True,
    )
    assert black.returncode == 0, black.stderr
    mypy_problems = mypy_strict(hostile.name, hostile.parent)
    assert mypy_problems is None, mypy_problems


# --- names ----------------------------------------------------------------------------

BAD_NAMES = ["Bad-Name", "1abc", "Naïve", "A\nimport os", "A B", "A.b", "_Private", 'X"""', "A;B"]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_field_names_that_are_not_identifiers_are_rejected(tmp_path: Path, name: str) -> None:
    specs = write(tmp_path, [data_spec("NamesData", [field("Ok"), field(name)])])
    with pytest.raises(SpecError) as info:
        load_messages([specs])
    text = str(info.value)
    assert "NamesData.json" in text and f"field {name}" in text
    assert info.value.field == name


@pytest.mark.parametrize("name", ["Bad-Name", "1Data", 'X"""', "A B"])
def test_message_and_struct_names_that_are_not_identifiers_are_rejected(
    tmp_path: Path, name: str
) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "Msg.json").write_text(json.dumps(data_spec(name, [field("A")])))
    with pytest.raises(SpecError) as info:
        load_messages([tmp_path / "m"])
    assert "Msg.json" in str(info.value)
    specs = write(
        tmp_path / "s",
        [data_spec("StructData", [field("Items", f"[]{name}", fields=[field("A")])])],
    )
    with pytest.raises(SpecError) as info:
        load_messages([specs])
    assert "StructData.json" in str(info.value) and "Items" in str(info.value)


KEYWORD_FIELDS = [
    "Class",
    "Def",
    "Import",
    "From",
    "Lambda",
    "Global",
    "Await",
    "Async",
    "Match",
    "Case",
    "Type",
    "None",
    "True",
    "Self",
    "Encode",
    "Decode",
    "ToDict",
    "FromDict",
    "UnknownTaggedFields",
    "Version",
    "Data",
]


def test_keyword_and_reserved_field_names_are_escaped(tmp_path: Path) -> None:
    specs = write(
        tmp_path / "s",
        [
            data_spec(
                "KeywordData",
                [field(name, "int16") for name in KEYWORD_FIELDS]
                + [field("Nested", "[]Inner", fields=[field("Class", "string"), field("Await")])],
            )
        ],
    )
    generate_package([specs], tmp_path / "o", "keyword_pkg")
    import importlib

    module = importlib.import_module("keyword_pkg.keyword_data")
    cls = module.KeywordData
    attrs = set(cls.__dataclass_fields__)
    for expected in (
        "class_",
        "def_",
        "import_",
        "from_",
        "lambda_",
        "global_",
        "await_",
        "async_",
        "match_",
        "case_",
        "self_",
        "encode_",
        "decode_",
        "to_dict_",
        "from_dict_",
        "unknown_tagged_fields_",
        "version_",
        "data_",
    ):
        assert expected in attrs, expected
    assert {"none", "true", "type"} <= attrs  # not keywords in lower case (type: soft in 3.12)
    obj = cls(
        class_=1,
        def_=2,
        await_=3,
        to_dict_=4,
        nested=[module.KeywordDataInner(class_="c", await_=5)],
    )
    for version in (0, 1):
        assert cls.decode(obj.encode(version), version) == obj
    assert cls.from_dict(json.loads(json.dumps(obj.to_dict()))) == obj
    source = (tmp_path / "o" / "keyword_pkg" / "keyword_data.py").read_text()
    compile_strictly(source, "keyword_data.py")
    mypy_problems = mypy_strict("keyword_pkg", tmp_path / "o")
    assert mypy_problems is None, mypy_problems


SHADOWING_NAMES = ["UUID", "Any", "ClassVar", "DecodeError", "RawTaggedField", "Buffer", "None"]


def test_struct_names_that_would_shadow_imports_are_prefixed(tmp_path: Path) -> None:
    """Struct classes carry their message's name, so a struct called ``UUID`` or ``None``
    neither shadows the module's imports nor breaks the ``class`` statement."""
    structs = [
        field(f"Items{i}", f"[]{name}", fields=[field("A")])
        for i, name in enumerate(SHADOWING_NAMES)
    ]
    specs = write(tmp_path / "s", [data_spec("ShadowData", [field("Id", "uuid"), *structs])])
    generate_package([specs], tmp_path / "o", "shadow_pkg")
    import importlib
    import uuid

    module = importlib.import_module("shadow_pkg.shadow_data")
    assert module.UUID is uuid.UUID
    items = {
        f"items{i}": [getattr(module, f"ShadowData{name}")(a=i)]
        for i, name in enumerate(SHADOWING_NAMES)
    }
    obj = module.ShadowData(id=uuid.UUID(int=7), **items)
    assert module.ShadowData.decode(obj.encode(0), 0) == obj


@pytest.mark.parametrize("name", [*SHADOWING_NAMES, "True", "False", "Mapping"])
def test_message_names_that_break_the_module_are_rejected(tmp_path: Path, name: str) -> None:
    """A message named None/True/False would generate ``class None:``, one named Mapping or
    UUID would shadow the module's import: the model rejects them."""
    (tmp_path / "M.json").write_text(json.dumps(data_spec(name, [field("A")])))
    with pytest.raises(SpecError) as info:
        load_messages([tmp_path])
    assert info.value.rule == "reserved-name"
    assert f"message name {name!r} clashes" in str(info.value)


# --- defaults -------------------------------------------------------------------------

BAD_DEFAULTS = [
    ("int32", "abc", "not a number"),
    ("int32", "1; import os", "not a number"),
    ("int8", "300", "outside -128..127"),
    ("int16", "0x10000", "outside"),
    ("uint16", "-1", "outside"),
    ("int64", "9223372036854775808", "outside"),
    ("bool", "maybe", "true or false"),
    ("bool", "__import__('os')", "true or false"),
    ("uuid", "xyz", "base64"),
    ("float64", "1.2.3", "not a number"),
    ("bytes", "abc", "empty or 'null'"),
    ("string", "null", "nullableVersions"),
    ("[]int32", "[1]", ""),
]


@pytest.mark.parametrize(
    "ftype,default,reason", BAD_DEFAULTS, ids=[f"{t}={d!r}" for t, d, _ in BAD_DEFAULTS]
)
def test_defaults_invalid_for_their_type_are_rejected(
    tmp_path: Path, ftype: str, default: str, reason: str
) -> None:
    specs = write(tmp_path, [data_spec("DefaultsData", [field("Value", ftype, default=default)])])
    with pytest.raises(SpecError) as info:
        load_messages([specs])
    text = str(info.value)
    assert "DefaultsData.json" in text and "field Value" in text
    assert reason in text
    assert info.value.field == "Value"


def test_struct_default_other_than_empty_or_null_is_rejected(tmp_path: Path) -> None:
    specs = write(
        tmp_path,
        [data_spec("DefaultsData", [field("Inner", "Inner", default="x", fields=[field("A")])])],
    )
    with pytest.raises(SpecError) as info:
        load_messages([specs])
    assert "field Inner" in str(info.value)
