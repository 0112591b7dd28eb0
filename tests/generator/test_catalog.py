"""The catalog stage: modules, API pairs, names and coordinator records, worked out once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_specgen.catalog import build_catalog, runtime_modules
from kafka_specgen.errors import SpecError, SpecErrors
from kafka_specgen.facts import ApiKeyFact, Facts
from kafka_specgen.library import SpecSet, load_specs

ROOT = Path(__file__).resolve().parents[2]


def spec(folder: Path, name: str, kind: str, key: int | None = None, **extra: object) -> None:
    data: dict[str, object] = {
        "type": kind,
        "name": name,
        "validVersions": "0-1",
        "flexibleVersions": "none",
        "fields": [{"name": "X", "type": "int32", "versions": "0+"}],
    }
    if key is not None:
        data["apiKey"] = key
    data.update(extra)
    (folder / f"{name}.json").write_text(json.dumps(data))


def test_modules_pairs_and_names_of_the_repo_specs() -> None:
    messages, facts = load_specs([ROOT / "specs"], warn=False)
    catalog = build_catalog(messages, facts)
    assert [m.name for m in catalog.modules] == [
        "api_versions",
        "headers",
        "metadata",
        "update_features",
    ]
    metadata = next(m for m in catalog.modules if m.name == "metadata")
    assert [m.name for m in metadata.messages] == ["MetadataRequest", "MetadataResponse"]
    assert [(q.api_key, q.name, r.name) for q, r in catalog.apis] == [
        (3, "MetadataRequest", "MetadataResponse"),
        (18, "ApiVersionsRequest", "ApiVersionsResponse"),
        (57, "UpdateFeaturesRequest", "UpdateFeaturesResponse"),
    ]
    assert catalog.api_names[0] == "Produce"  # from the facts: no spec for it here
    assert catalog.has_framing and catalog.coordinators == {}


def test_spec_names_win_over_the_facts_with_a_warning(tmp_path: Path) -> None:
    spec(tmp_path, "FooRequest", "request", 3)
    spec(tmp_path, "FooResponse", "response", 3)
    messages, _ = load_specs([tmp_path], warn=False, facts=None)
    facts = Facts(
        api_keys=(ApiKeyFact(3, "Metadata"), ApiKeyFact(4, "Other")), api_keys_source="table.json"
    )
    catalog = build_catalog(messages, facts)
    assert catalog.api_names == {3: "Foo", 4: "Other"}
    [warning] = catalog.warnings
    assert "api key 3 is Metadata in the facts table but Foo" in warning
    assert not catalog.has_framing


def test_removed_apis_have_no_module_but_keep_their_name() -> None:
    messages, facts = load_specs(SpecSet.of_release("4.3"), warn=False)
    catalog = build_catalog(messages, facts)
    assert "leader_and_isr" not in {m.name for m in catalog.modules}
    assert 4 not in {q.api_key for q, _ in catalog.apis}
    assert catalog.api_names[4] == "LeaderAndIsr"
    assert set(catalog.coordinators) == {"group", "share", "transaction"}
    group = catalog.coordinators["group"]
    assert [r.record_type for r in group] == sorted(r.record_type for r in group)
    assert all(r.key.type == "coordinator-key" and r.value.scope == r.key.scope for r in group)


def test_every_module_name_clash_is_reported(tmp_path: Path) -> None:
    assert {"framing", "records", "connection"} <= set(runtime_modules())
    spec(tmp_path, "Framing", "data")
    spec(tmp_path, "Registry", "data")
    messages, facts = load_specs([tmp_path], warn=False)
    with pytest.raises(SpecErrors) as info:
        build_catalog(messages, facts)
    assert [e.rule for e in info.value.errors] == ["module-name", "module-name"]
    assert isinstance(info.value, SpecError)
