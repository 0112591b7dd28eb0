"""The plan and views stages on one small spec whose versions differ in every way a plan
can: a field added, a nullable one, flexible versions with a tagged field, an ignorable
field that goes away, and a nested struct."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_specgen.library import load_specs
from kafka_specgen.plan import MessagePlans, plan_message
from kafka_specgen.views import Flavour, ModuleBuilder

SPEC = {
    "apiKey": 1000,
    "type": "request",
    "name": "ShapeRequest",
    "validVersions": "0-4",
    "flexibleVersions": "3+",
    "fields": [
        {"name": "Id", "type": "int32", "versions": "0+"},
        {"name": "Label", "type": "string", "versions": "1+", "nullableVersions": "2+"},
        {"name": "Old", "type": "int16", "versions": "0-1", "ignorable": True},
        {"name": "Hint", "type": "int64", "versions": "4+", "taggedVersions": "4+", "tag": 0},
        {
            "name": "Items",
            "type": "[]Item",
            "versions": "0+",
            "fields": [{"name": "Size", "type": "int32", "versions": "0+"}],
        },
    ],
}


@pytest.fixture(scope="module")
def plans(tmp_path_factory: pytest.TempPathFactory) -> MessagePlans:
    folder = tmp_path_factory.mktemp("shape")
    (folder / "ShapeRequest.json").write_text(json.dumps(SPEC))
    response = {**SPEC, "type": "response", "name": "ShapeResponse", "fields": []}
    (folder / "ShapeResponse.json").write_text(json.dumps(response))
    messages, _ = load_specs([folder], warn=False)
    [request] = [m for m in messages if m.name == "ShapeRequest"]
    return plan_message(request)


def fields_of(plan: object) -> list[str]:
    return [p.field.name for p in plan.regular]  # type: ignore[attr-defined]


def test_one_plan_per_distinct_layout(plans: MessagePlans) -> None:
    root = plans.root
    assert sorted(root) == [0, 1, 2, 3, 4]
    # every version differs: v1 adds Label, v2 makes it nullable, v3 is flexible (and drops
    # Old), v4 adds the tagged Hint
    assert len({id(root[v]) for v in root}) == 5
    assert fields_of(root[0]) == ["Id", "Old", "Items"]
    assert fields_of(root[1]) == ["Id", "Label", "Old", "Items"]
    label = {v: next(p for p in root[v].regular if p.field.name == "Label") for v in (1, 2)}
    assert (label[1].nullable, label[2].nullable) == (False, True)
    assert [(root[v].flexible, fields_of(root[v])) for v in (3, 4)] == [
        (True, ["Id", "Label", "Items"]),
        (True, ["Id", "Label", "Items"]),
    ]
    assert [p.field.name for p in root[4].tagged] == ["Hint"]
    assert [f.name for f in root[3].guarded] == ["Hint"]  # not ignorable: must be default
    assert "Old" not in [f.name for f in root[3].guarded]  # ignorable: dropped silently
    assert root[3].invalid_tags == (0,)  # Hint's tag is known, but not valid at v3


def test_nested_structs_share_plans_across_versions(plans: MessagePlans) -> None:
    items = plans.struct_versions["Item"]
    assert sorted(items) == [0, 1, 2, 3, 4]
    plain, compact = items[0], items[3]
    assert {id(items[v]) for v in (0, 1, 2)} == {id(plain)}
    assert {id(items[v]) for v in (3, 4)} == {id(compact)}
    assert (plain.flexible, compact.flexible) == (False, True)
    assert plain.version_label == "0-2" and compact.version_label == "3-4"
    # children come before their parents, so a reader exists before its caller
    order = [id(p) for p in plans.plans]
    assert order.index(id(plain)) < order.index(id(plans.root[0]))
    assert (
        plans.root[4].function == "shape_request_v4" and plain.function == "shape_request_item_v0"
    )


@pytest.mark.parametrize("flavour", list(Flavour))
def test_the_module_view(plans: MessagePlans, flavour: Flavour) -> None:
    view = ModuleBuilder([plans], flavour).build("# header", "doc")
    assert [c.class_name for c in view.classes] == ["ShapeRequestItem", "ShapeRequest"]
    facts = view.classes[1].facts
    assert facts is not None
    assert (facts.api_key, facts.min_version, facts.max_version, facts.flexible_min) == (
        1000,
        0,
        4,
        3,
    )
    assert facts.response_class is None  # the response lives in another module here
    assert view.response_links == ()
    assert len(view.plans) == len(plans.plans)
    assert view.native is (flavour is Flavour.MYPYC)
    # fixed-size fields are read with bound struct methods, declared once per format
    assert view.formats and all(f in view.unpacks or f in view.packs for f in view.formats)


def test_a_request_and_its_response_in_one_module_are_linked(tmp_path: Path) -> None:
    (tmp_path / "ShapeRequest.json").write_text(json.dumps(SPEC))
    response = {**SPEC, "type": "response", "name": "ShapeResponse", "fields": []}
    (tmp_path / "ShapeResponse.json").write_text(json.dumps(response))
    messages, _ = load_specs([tmp_path], warn=False)
    both = [plan_message(m) for m in sorted(messages, key=lambda m: m.type)]
    view = ModuleBuilder(both).build("# header", "doc")
    assert view.response_links == (("ShapeRequest", "ShapeResponse"),)
