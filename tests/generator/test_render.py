"""Render-stage rules: where modules go, and what a module may not be called."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_specgen.library import generate_files
from kafka_specgen.errors import SpecError


def write_data_spec(folder: Path, name: str) -> None:
    spec = {
        "type": "data",
        "name": name,
        "validVersions": "0",
        "flexibleVersions": "none",
        "fields": [{"name": "Value", "type": "int32", "versions": "0+"}],
    }
    (folder / f"{name}.json").write_text(json.dumps(spec))


@pytest.mark.parametrize(
    # Records: a runtime subpackage (templates/runtime/records/)
    "name",
    ["Registry", "ErrorCodes", "Framing", "Negotiation", "Errors", "Headers", "Records"],
)
def test_a_spec_cannot_take_a_runtime_module_name(tmp_path: Path, name: str) -> None:
    write_data_spec(tmp_path, name)
    with pytest.raises(SpecError) as info:
        generate_files([tmp_path], warn=False)
    assert info.value.rule == "module-name"
    assert f"{name}.json" in str(info.value) and "uses for itself" in str(info.value)


def test_data_messages_get_a_module_of_their_own(tmp_path: Path) -> None:
    write_data_spec(tmp_path, "PartitionRecordLike")
    paths = {f.path for f in generate_files([tmp_path], warn=False)}
    assert "partition_record_like.py" in paths
    # no request/response headers in this set: no framing, nor what is built on it
    for module in ("framing", "client", "aio"):
        assert f"{module}.py" not in paths, module
    for package in ("connection", "cluster"):
        assert f"{package}/__init__.py" not in paths, package
    assert {"registry.py", "sasl/__init__.py", "errors.py"} <= paths


def test_generated_modules_import_only_what_they_use() -> None:
    """Imports follow what the module's code uses (not its docstrings or comments)."""
    import ast

    from tests.support.genpkg import GENERATED

    for path in sorted((GENERATED / "kafka_messages").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {
            (alias.asname or alias.name).split(".")[0]
            for node in tree.body
            if isinstance(node, (ast.Import, ast.ImportFrom))
            and getattr(node, "module", None) != "__future__"
            for alias in node.names
        }
        # annotations stay expressions in the tree even under `from __future__ import annotations`
        used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        used |= {  # re-exports
            item.value
            for node in tree.body
            if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__"
            for item in ast.walk(node.value)
            if isinstance(item, ast.Constant)
        }
        assert imported <= used, f"{path.name} imports {sorted(imported - used)} without using them"


def write_header_spec(folder: Path, name: str, struct: str) -> None:
    spec = {
        "type": "header",
        "name": name,
        "validVersions": "0",
        "flexibleVersions": "none",
        "fields": [
            {
                "name": "Items",
                "type": f"[]{struct}",
                "versions": "0+",
                "fields": [{"name": "Value", "type": "int32", "versions": "0+"}],
            }
        ],
    }
    (folder / f"{name}.json").write_text(json.dumps(spec))


def test_two_messages_of_one_module_cannot_define_one_class(tmp_path: Path) -> None:
    # Both land in ``headers``: RequestHeader + XFoo and RequestHeaderX + Foo are one name.
    write_header_spec(tmp_path, "RequestHeader", "XFoo")
    write_header_spec(tmp_path, "RequestHeaderX", "Foo")
    with pytest.raises(SpecError) as info:
        generate_files([tmp_path], warn=False)
    assert info.value.rule == "class-name"
    assert "would both define class RequestHeaderXFoo in one module" in str(info.value)


def test_struct_classes_sit_beside_their_message(tmp_path: Path) -> None:
    write_header_spec(tmp_path, "RequestHeader", "Item")
    write_header_spec(tmp_path, "ResponseHeader", "Item")
    files = {f.path: f.text for f in generate_files([tmp_path], warn=False)}
    text = files["headers.py"]
    # Same struct name in both messages: each gets its message's prefix, at module level.
    assert "\nclass RequestHeaderItem(Struct):" in text
    assert "\nclass ResponseHeaderItem(Struct):" in text
    # A struct comes before the message whose field default builds it.
    assert text.index("\nclass RequestHeaderItem(") < text.index("\nclass RequestHeader(")
