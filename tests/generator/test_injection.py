"""Spec strings cannot inject code into generated modules: they arrive escaped."""

from __future__ import annotations

import ast
import inspect
import json
from pathlib import Path

from tests.support.genpkg import generate_package

HOSTILE_ABOUT = (
    'Ends early """\nimport os\nos.system("echo pwned")\n""" and a backslash \\ and \x00 and \'\'\''
)


def write_spec(folder: Path) -> None:
    spec = {
        "apiKey": 901,
        "type": "request",
        "name": "HostileRequest",
        "validVersions": "0",
        "flexibleVersions": "0+",
        "fields": [
            {
                "name": "Text",
                "type": "string",
                "versions": "0+",
                "about": HOSTILE_ABOUT,
                "default": '"); import os; ("',
            },
            {
                "name": "Items",
                "type": "[]Item",
                "versions": "0+",
                "about": HOSTILE_ABOUT,
                "fields": [
                    {"name": "Class", "type": "int32", "versions": "0+", "about": "\\N{x} \\u12"}
                ],
            },
        ],
    }
    response = dict(spec, type="response", name="HostileResponse", fields=[])
    (folder / "HostileRequest.json").write_text(json.dumps(spec))
    (folder / "HostileResponse.json").write_text(json.dumps(response))


def test_about_and_default_strings_stay_data(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    write_spec(specs)
    generate_package([specs], tmp_path / "out", "hostile_pkg")
    source = (tmp_path / "out" / "hostile_pkg" / "hostile.py").read_text()
    tree = ast.parse(source)
    imports = sorted(
        (node.module or "") if isinstance(node, ast.ImportFrom) else node.names[0].name
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
    )
    assert "os" not in imports
    assert not any(
        isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "system"
        for node in ast.walk(tree)
    )
    strings = {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    # The about text survives whole, as the value of a docstring.
    assert any(inspect.cleandoc(s).startswith(HOSTILE_ABOUT) for s in strings)
    module = __import__("hostile_pkg.hostile", fromlist=["hostile"])
    request = module.HostileRequest()
    assert request.text == '"); import os; ("'
    assert module.HostileRequest.decode(request.encode(0), 0) == request
    # A field named like a keyword gets a trailing underscore.
    assert module.HostileRequestItem(class_=3).class_ == 3
