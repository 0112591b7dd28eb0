"""Stage 1 (kafka_specgen.load): lenient parsing, normalisation and finding spec files."""

from __future__ import annotations

import ast
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from kafka_specgen.errors import SpecError
from kafka_specgen.load import load_path, load_paths, parse_spec_text

SOURCE = "message/FooRequest.json"


def parse(text: str) -> dict[str, Any]:
    return parse_spec_text(text, SOURCE).data


def spec_text(fields: Any, **top: Any) -> str:
    return json.dumps({"type": "request", "name": "FooRequest", "fields": fields, **top})


def rejection(text: str) -> SpecError:
    with pytest.raises(SpecError) as caught:
        parse_spec_text(text, SOURCE)
    assert caught.value.source == SOURCE
    return caught.value


# --- comments -------------------------------------------------------------------------


def test_comment_markers_inside_strings_are_kept() -> None:
    text = r"""{
      "about": "see http://kafka.apache.org // not a comment /* nor this */",
      "quoted": "a \"// quoted\" marker, then a backslash \\",
      "after": "// still a string"
    }"""
    data = parse(text)
    assert data["about"] == "see http://kafka.apache.org // not a comment /* nor this */"
    assert data["quoted"] == 'a "// quoted" marker, then a backslash \\'
    assert data["after"] == "// still a string"


def test_line_and_block_comments_are_stripped() -> None:
    text = """// Licensed to the Apache Software Foundation
    {
      // a note inside the object
      "name": "FooRequest", // after a value
      /* a block
         over lines */ "type": "request",
      "fields": [ /* inside an array */ ]
    }
    // trailing comment"""
    data = parse(text)
    assert data == {"name": "FooRequest", "type": "request", "fields": []}
    assert parse_spec_text(text, SOURCE).warnings == ()


def test_comments_keep_line_numbers_of_later_syntax_errors() -> None:
    text = '{\n/* one\ntwo\nthree */\n"name": "x",\n"type" "request"\n}'
    error = rejection(text)
    assert error.rule == "json-syntax"
    assert error.message.startswith("line 6, column 8: Expecting ':' delimiter")


def test_unterminated_block_comment_is_rejected() -> None:
    error = rejection('{\n  "name": "x" /* never closed\n}')
    assert error.rule == "json-syntax"
    assert error.message == "line 2, column 15: unterminated /* comment"
    assert rejection('{"name": "x"} /*/').message == "line 1, column 15: unterminated /* comment"


# --- JSON level -----------------------------------------------------------------------


def test_syntax_error_names_line_and_column() -> None:
    error = rejection('{\n  "name": "x",\n  "type": "request",,\n}')
    assert error.rule == "json-syntax"
    assert error.message == "line 3, column 21: Expecting property name enclosed in double quotes"
    assert str(error).startswith(f"{SOURCE}: line 3, column 21: ")


def test_trailing_tokens_give_a_warning_not_an_error() -> None:
    # Shaped like Kafka 2.8.0's DescribeProducersRequest.json, which ends in an extra "]}".
    text = '{\n  "name": "FooRequest",\n  "fields": []}\n  ]\n}\n'
    raw = parse_spec_text(text, SOURCE)
    assert raw.data == {"name": "FooRequest", "fields": []}
    assert raw.warnings == (
        f"{SOURCE}: line 4, column 3: ignored trailing tokens after the root object: "
        "']\\n}' [rule: trailing-tokens]",
    )


def test_duplicate_keys_last_one_wins() -> None:
    assert parse('{"versions": "0+", "versions": "1+"}') == {"versions": "1+"}


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("[1, 2]", "an array"),
        ('"spec"', "a string"),
        ("null", "null"),
        ("3", "a number"),
    ],
)
def test_root_must_be_an_object(text: str, kind: str) -> None:
    error = rejection(text)
    assert error.rule == "root-not-object"
    assert error.message == f"the root must be a JSON object, not {kind}"


def test_empty_text_is_a_syntax_error() -> None:
    assert rejection("  // nothing but a comment\n").rule == "json-syntax"


def test_nan_and_infinity_are_not_json() -> None:
    error = rejection('{"fields": [{"name": "X", "default": NaN}]}')
    assert (error.rule, error.message) == ("json-syntax", "NaN is not valid JSON")


# --- normalisation --------------------------------------------------------------------


def test_string_tags_become_ints_and_other_strings_stay() -> None:
    fields = [
        {"name": "A", "tag": "0"},
        {"name": "B", "tag": "12"},
        {"name": "C", "tag": 3},
        {"name": "D", "tag": "-1"},
        {"name": "E", "tag": "x"},
    ]
    tags = [field["tag"] for field in parse(spec_text(fields))["fields"]]
    assert tags == [0, 12, 3, "-1", "x"]


def test_ignorable_and_latest_version_unstable_words_become_bools() -> None:
    fields = [
        {"name": "A", "ignorable": "false"},
        {"name": "B", "ignorable": "TRUE"},
        {"name": "C", "ignorable": True},
        {"name": "D", "ignorable": "yes"},
    ]
    data = parse(spec_text(fields, latestVersionUnstable="False"))
    assert [field["ignorable"] for field in data["fields"]] == [
        False,
        True,
        True,
        "yes",
    ]
    assert data["latestVersionUnstable"] is False
    assert parse(spec_text([], latestVersionUnstable="true"))["latestVersionUnstable"] is True


def test_defaults_become_strings_and_null_means_none() -> None:
    fields = [
        {"name": "Int", "default": -1},
        {"name": "Zero", "default": 0},
        {"name": "Float", "default": 1.5},
        {"name": "True", "default": True},
        {"name": "False", "default": False},
        {"name": "JsonNull", "default": None},
        {"name": "StringNull", "default": "null"},
        {"name": "Hex", "default": "0x7fffffff"},
    ]
    defaults = {field["name"]: field.get("default") for field in parse(spec_text(fields))["fields"]}
    assert defaults == {
        "Int": "-1",
        "Zero": "0",
        "Float": "1.5",
        "True": "true",
        "False": "false",
        "JsonNull": None,
        "StringNull": "null",
        "Hex": "0x7fffffff",
    }
    json_null = parse(spec_text(fields))["fields"][5]
    assert "default" not in json_null


def test_normalisation_reaches_nested_and_common_struct_fields() -> None:
    nested = {"name": "Inner", "tag": "1", "ignorable": "true", "default": -2}
    outer = {
        "name": "Outer",
        "type": "[]Outer",
        "fields": [{"name": "Mid", "fields": [nested]}],
    }
    common = {"name": "Common", "versions": "0+", "fields": [dict(nested)]}
    data = parse(spec_text([outer], commonStructs=[common]))
    expected = {"name": "Inner", "tag": 1, "ignorable": True, "default": "-2"}
    assert data["fields"][0]["fields"][0]["fields"][0] == expected
    assert data["commonStructs"][0]["fields"][0] == expected


def test_malformed_containers_are_left_for_the_schema() -> None:
    data = parse(spec_text({"not": "a list"}, commonStructs="nope"))
    assert data["fields"] == {"not": "a list"}
    assert data["commonStructs"] == "nope"
    assert parse(spec_text(["just a string"]))["fields"] == ["just a string"]


# --- files, folders, archives -----------------------------------------------------------


def write_spec(path: Path, name: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'// header\n{{"name": "{name}", "fields": []}}\n', encoding="utf-8")


def test_a_single_file_is_named_by_its_file_name(tmp_path: Path) -> None:
    write_spec(tmp_path / "FooRequest.json", "FooRequest")
    [raw] = load_path(tmp_path / "FooRequest.json")
    assert raw.source == "FooRequest.json"
    assert raw.data["name"] == "FooRequest"


def test_folders_are_searched_recursively_in_sorted_order(tmp_path: Path) -> None:
    for relative in [
        "message/b.json",
        "a.json",
        "metadata/deep/c.json",
        "message/a.json",
    ]:
        write_spec(tmp_path / relative, relative.replace("/", "").replace(".json", ""))
    (tmp_path / "notes.txt").write_text("not a spec", encoding="utf-8")
    (tmp_path / "folder.json").mkdir()  # a folder that only looks like a spec
    sources = [raw.source for raw in load_path(tmp_path)]
    assert sources == [
        "a.json",
        "message/a.json",
        "message/b.json",
        "metadata/deep/c.json",
    ]


def make_archive(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        # Written out of order on purpose; loading must sort them.
        archive.writestr("common/message/ZRequest.json", '{"name": "Z"}')
        archive.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
        archive.writestr("common/message/", "")
        archive.writestr("common/message/ARequest.json", '// c\n{"name": "A"}')
        archive.writestr("BRequest.json", '{"name": "B"}')
    return path


@pytest.mark.parametrize("archive_name", ["specs.zip", "kafka-clients.jar"])
def test_archives_are_read_in_sorted_member_order(tmp_path: Path, archive_name: str) -> None:
    specs = load_path(make_archive(tmp_path / archive_name))
    assert [raw.source for raw in specs] == [
        f"{archive_name}!/BRequest.json",
        f"{archive_name}!/common/message/ARequest.json",
        f"{archive_name}!/common/message/ZRequest.json",
    ]
    assert [raw.data["name"] for raw in specs] == ["B", "A", "Z"]


def test_a_broken_archive_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "broken.jar").write_bytes(b"not a zip at all")
    with pytest.raises(SpecError) as caught:
        load_path(tmp_path / "broken.jar")
    assert (caught.value.source, caught.value.rule) == ("broken.jar", "bad-archive")


def test_load_paths_keeps_the_order_of_its_inputs(tmp_path: Path) -> None:
    write_spec(tmp_path / "one" / "Z.json", "Z")
    write_spec(tmp_path / "two" / "A.json", "A")
    specs = load_paths([tmp_path / "one", tmp_path / "two"])
    assert [raw.data["name"] for raw in specs] == ["Z", "A"]


def test_errors_name_the_file_inside_a_folder(tmp_path: Path) -> None:
    (tmp_path / "message").mkdir()
    (tmp_path / "message" / "Bad.json").write_text('{"name": }', encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        load_path(tmp_path)
    assert caught.value.source == "message/Bad.json"
    assert caught.value.rule == "json-syntax"


def test_missing_path_has_no_specs(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(SpecError) as caught:
        load_path(missing)
    assert (caught.value.rule, caught.value.message) == (
        "no-specs",
        "no such file or folder",
    )
    assert caught.value.source == str(missing)


def test_folder_without_specs_has_no_specs(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("specs live elsewhere", encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        load_path(tmp_path)
    assert (caught.value.rule, caught.value.message) == (
        "no-specs",
        "no *.json spec files found",
    )


def test_archive_without_specs_has_no_specs(tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "empty.zip", "w") as archive:
        archive.writestr("README.md", "nothing here")
    with pytest.raises(SpecError) as caught:
        load_path(tmp_path / "empty.zip")
    assert caught.value.rule == "no-specs"


def test_a_file_that_is_not_utf8_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "Latin1.json").write_bytes(b'{\n "about": "caf\xe9"\n}')
    with pytest.raises(SpecError) as caught:
        load_path(tmp_path / "Latin1.json")
    assert caught.value.rule == "encoding"
    assert caught.value.message == "line 2: not valid UTF-8 (byte offset 16)"


def test_a_utf8_byte_order_mark_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "Bom.json").write_bytes(b'\xef\xbb\xbf{"name": "Bom"}')
    [raw] = load_path(tmp_path / "Bom.json")
    assert raw.data == {"name": "Bom"}


NOTES_SPEC = """// Licensed to the Apache Software Foundation (ASF) under one or more
// contributor license agreements.
//
// See the License for the specific language governing permissions.

{
  "apiKey": 900, "type": "request", "name": "NotesRequest",
  // Version 0 is the first version.
  // Version 1 adds Extra, whose about
  // goes on over two lines.
  //
  // A note after an empty comment line.
  "validVersions": "0-1", "flexibleVersions": "none",
  "fields": [
    // Kafka's own files keep their version history here, before the first field.
    { "name": "Extra", "type": "int32", "versions": "1+" },
    // Comments after the first field are about fields, not the message.
    { "name": "Other", "type": "int32", "versions": "1+" }
  ]
}
"""


def test_leading_comments_become_notes_without_the_licence() -> None:
    raw = parse_spec_text(NOTES_SPEC, "message/NotesRequest.json")
    assert raw.notes == (
        "Version 0 is the first version.\n\n"
        "Version 1 adds Extra, whose about goes on over two lines.\n\n"
        "A note after an empty comment line.\n\n"
        "Kafka's own files keep their version history here, before the first field."
    )


def test_generated_class_docstring_carries_the_spec_notes() -> None:
    # Read from the source: a mypyc build (KAFKA_MESSAGES_COMPILED=1) keeps no __doc__.
    source = Path(__file__).resolve().parents[2] / "generated/kafka_messages/metadata.py"
    tree = ast.parse(source.read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "MetadataRequest")
    doc = ast.get_docstring(cls) or ""
    assert "Version 4 adds the AllowAutoTopicCreation flag." in doc
    assert "Licensed" not in doc
