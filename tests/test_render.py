"""Render-stage rules: where modules go, and what a module may not be called."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.cli import generate_files
from generator.errors import SpecError


def write_data_spec(folder: Path, name: str) -> None:
    spec = {
        "type": "data",
        "name": name,
        "validVersions": "0",
        "flexibleVersions": "none",
        "fields": [{"name": "Value", "type": "int32", "versions": "0+"}],
    }
    (folder / f"{name}.json").write_text(json.dumps(spec))


@pytest.mark.parametrize("name", ["Registry", "Framing", "Errors", "SparkSchemas", "Headers"])
def test_a_spec_cannot_take_a_runtime_module_name(tmp_path: Path, name: str) -> None:
    write_data_spec(tmp_path, name)
    with pytest.raises(SpecError) as info:
        generate_files([tmp_path], warn=False, formatted=False)
    assert info.value.rule == "module-name"
    assert f"{name}.json" in str(info.value) and "uses for itself" in str(info.value)


def test_data_messages_get_a_module_of_their_own(tmp_path: Path) -> None:
    write_data_spec(tmp_path, "PartitionRecordLike")
    paths = {f.path for f in generate_files([tmp_path], warn=False, formatted=False)}
    assert "partition_record_like.py" in paths
    # no request/response headers in this set: no framing module to offer
    assert "framing.py" not in paths and "registry.py" in paths
