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


# --- sizes and depths: every bad spec is one line --------------------------------------
# Each case is refused through the command line with exactly one line naming the file,
# what is over and the cap (kafka_specgen.limits), never a traceback or gigabytes.


def nested_fields(depth: int) -> dict[str, Any]:
    """A field holding a struct holding a struct ... ``depth`` levels deep, inline."""
    inner = field("Leaf")
    for level in reversed(range(depth)):
        inner = field(f"Level{level}", f"Level{level}", fields=[inner])
    return inner


def chained_common_structs(depth: int) -> dict[str, Any]:
    """A message whose field is common struct C0, holding C1, ... C{depth - 1}: nesting
    that is shallow JSON."""
    commons = [
        {"name": f"C{i}", "versions": "0+", "fields": [field("Next", f"C{i + 1}")]}
        for i in range(depth - 1)
    ]
    commons.append({"name": f"C{depth - 1}", "versions": "0+", "fields": [field("Leaf")]})
    return {**data_spec("ChainData", [field("Top", "C0")]), "commonStructs": commons}


def cli_error(specs: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """The one line ``generate`` prints for ``specs`` (it must fail, writing nothing)."""
    from kafka_specgen.cli import main

    code = main(["generate", "--specs", str(specs), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1, err
    assert not out.exists(), "a refused spec set must write nothing"
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


def write_text(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder


ONE_MIB = 1024 * 1024


def test_inline_structs_150_deep_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    specs = write(tmp_path / "s", [data_spec("DeepData", [nested_fields(150)])])
    text = (specs / "DeepData.json").read_text()
    # The bracket that opens level 65 (json.dumps writes no bracket inside these strings).
    column = [i for i, ch in enumerate(text) if ch in "[{"][64] + 1
    assert text[:column].count("[") + text[:column].count("{") == 65
    assert "]" not in text[:column] and "}" not in text[:column]
    assert cli_error(specs, tmp_path / "out", capsys) == (
        f"kafka-specgen: error: DeepData.json: line 1, column {column}: arrays and objects "
        "nested deeper than the cap of 64 levels [rule: json-depth]"
    )


def test_very_deep_json_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    specs = write_text(tmp_path / "s", "Deep.json", '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert cli_error(specs, tmp_path / "out", capsys) == (
        "kafka-specgen: error: Deep.json: line 1, column 70: arrays and objects nested deeper "
        "than the cap of 64 levels [rule: json-depth]"
    )


def test_brackets_inside_strings_are_not_nesting(tmp_path: Path) -> None:
    about = "[" * 100 + "{" * 100
    specs = write(tmp_path, [data_spec("BracketData", [field("A", about=about)])])
    assert load_messages([specs])[0].root.fields[0].about == about


def test_common_structs_chained_past_the_cap_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    specs = write(tmp_path / "s", [chained_common_structs(150)])
    assert cli_error(specs, tmp_path / "out", capsys) == (
        "kafka-specgen: error: ChainData.json: struct C32: nested 33 levels deep, over the "
        "cap of 32 [rule: struct-depth]"
    )


def test_structs_nested_to_the_cap_generate_and_round_trip(tmp_path: Path) -> None:
    specs = write(tmp_path / "s", [chained_common_structs(32)])
    generate_package([specs], tmp_path / "o", "chain_pkg")
    import importlib

    module = importlib.import_module("chain_pkg.chain_data")
    leaf = module.ChainDataC31(leaf=7)
    obj = leaf
    for i in reversed(range(31)):
        obj = getattr(module, f"ChainDataC{i}")(next=obj)
    message = module.ChainData(top=obj)
    for version in (0, 1):
        assert module.ChainData.decode(message.encode(version), version) == message


def test_a_common_struct_that_contains_itself_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = {
        **data_spec("TreeData", [field("Root", "Node")]),
        "commonStructs": [{"name": "Node", "versions": "0+", "fields": [field("Kids", "[]Node")]}],
    }
    specs = write(tmp_path / "s", [spec])
    assert cli_error(specs, tmp_path / "out", capsys) == (
        "kafka-specgen: error: TreeData.json: struct Node: contains itself: Node -> Node "
        "[rule: struct-cycle]"
    )


def test_a_50_mb_about_is_refused_by_the_file_size_cap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import tracemalloc

    about = "x" * (50 * ONE_MIB)
    specs = write(tmp_path / "s", [data_spec("HugeData", [field("Text", about=about)])])
    size = (specs / "HugeData.json").stat().st_size
    del about
    tracemalloc.start()
    try:
        line = cli_error(specs, tmp_path / "out", capsys)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert line == (
        f"kafka-specgen: error: HugeData.json: file of {size} bytes, over the cap of "
        f"{ONE_MIB} bytes per spec file [rule: spec-size]"
    )
    assert peak < 8 * ONE_MIB, f"refusing it took {peak} bytes"


def test_an_about_past_the_text_cap_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inner = field("Inner", "[]Item", fields=[field("Text", "string", about="y" * 16385)])
    specs = write(tmp_path / "s", [data_spec("LongData", [field("A"), inner])])
    assert cli_error(specs, tmp_path / "out", capsys) == (
        "kafka-specgen: error: LongData.json: struct LongData, field Text: about is 16385 "
        "characters, over the cap of 16384 [rule: text-size]"
    )


@pytest.mark.parametrize(
    "where,expected",
    [
        ("default", "struct LongData, field A: default is 16385 characters"),
        ("name", "struct LongData: name is 16385 characters"),
        ("key", "struct LongData, field A: a key of 16385 characters"),
        ("listener", "struct LongData: listeners is 16385 characters"),
        ("common", "struct Common: about is 16385 characters"),
    ],
)
def test_every_string_and_key_is_held_to_the_text_cap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, expected: str
) -> None:
    long = "z" * 16385
    a = field("A", "string")
    spec = data_spec("LongData", [a])
    if where == "default":
        a["default"] = long
    elif where == "name":
        a["name"] = long
    elif where == "key":
        a[long] = 1
    elif where == "listener":
        spec = {**spec, "listeners": [long]}
    else:
        spec["commonStructs"] = [
            {"name": "Common", "versions": "0+", "about": long, "fields": [field("B")]}
        ]
    specs = write_text(tmp_path / "s", "LongData.json", json.dumps(spec))
    assert cli_error(specs, tmp_path / "out", capsys) == (
        f"kafka-specgen: error: LongData.json: {expected}, over the cap of 16384 "
        "[rule: text-size]"
    )


def test_leading_comments_past_the_text_cap_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    comments = "".join(f"// {'w' * 97}\n" for _ in range(200))
    text = comments + json.dumps(data_spec("NotesData", [field("A")]))
    specs = write_text(tmp_path / "s", "NotesData.json", text)
    assert cli_error(specs, tmp_path / "out", capsys) == (
        "kafka-specgen: error: NotesData.json: the comments before the first field are "
        "19599 characters, over the cap of 16384 [rule: text-size]"
    )


def test_a_zip_entry_past_the_cap_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import zipfile

    archive = tmp_path / "specs.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr("message/Ok.json", json.dumps(data_spec("OkData", [field("A")])))
        zipped.writestr("message/Big.json", " " * (ONE_MIB + 1))
    assert cli_error(archive, tmp_path / "out", capsys) == (
        f"kafka-specgen: error: specs.zip!/message/Big.json: zip entry of {ONE_MIB + 1} bytes, "
        f"over the cap of {ONE_MIB} bytes per spec file [rule: spec-size]"
    )


def test_a_1_gib_zip_entry_is_refused_without_reading_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An entry whose header says 1 GiB (its bytes need not exist: nothing is read)."""
    import struct
    import zipfile

    archive = tmp_path / "specs.jar"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as zipped:
        zipped.writestr("Bomb.json", "{}")
    data = bytearray(archive.read_bytes())
    central = data.rindex(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 24, 1 << 30)  # the uncompressed size
    archive.write_bytes(bytes(data))
    assert zipfile.ZipFile(archive).getinfo("Bomb.json").file_size == 1 << 30
    assert cli_error(archive, tmp_path / "out", capsys) == (
        f"kafka-specgen: error: specs.jar!/Bomb.json: zip entry of {1 << 30} bytes, over the "
        f"cap of {ONE_MIB} bytes per spec file [rule: spec-size]"
    )


@pytest.mark.parametrize("char", sorted("\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"))
def test_docstrings_escape_every_line_break_python_knows(tmp_path: Path, char: str) -> None:
    """``str.splitlines`` ends lines at these; in a docstring each is escaped (U+2028 once
    became the text " 28"), so the code's lines are the text's lines."""
    about = f"before{char}after"
    specs = write(tmp_path / "s", [data_spec("BreakData", [field("Text", "string", about=about)])])
    generate_package([specs], tmp_path / "o", f"break_pkg_{ord(char):x}")
    source = (tmp_path / "o" / f"break_pkg_{ord(char):x}" / "break_data.py").read_text()
    assert source.splitlines() == source.split("\n")[:-1]
    escaped = f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"
    assert f"before{escaped}after" in source
    texts = {
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    assert any(text.startswith(about) for text in texts), "the docstring holds the character"
