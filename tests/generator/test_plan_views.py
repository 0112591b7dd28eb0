"""The plan and views stages on one small spec whose versions differ in every way a plan
can: a field added, a nullable one, flexible versions with a tagged field, an ignorable
field that goes away, and a nested struct."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_specgen.library import load_specs
from kafka_specgen.plan import MessagePlans, plan_message
from kafka_specgen.steps import FixedRunStep, Step, StringStep, StructArrayStep
from kafka_specgen.view_builder import ModuleBuilder
from kafka_specgen.view_kit import Flavour

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
    view = ModuleBuilder(plans=[plans], flavour=flavour).build("# header", "doc")
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
    view = ModuleBuilder(plans=both).build("# header", "doc")
    assert view.response_links == (("ShapeRequest", "ShapeResponse"),)


@pytest.mark.parametrize("flavour", list(Flavour))
def test_each_step_kind_has_its_own_view(plans: MessagePlans, flavour: Flavour) -> None:
    """v1's steps: Id (a run of one int32), Label (a string), Old (a run of one int16),
    Items (an array of structs); v2 makes Label nullable and drops Old; v4 is compact."""
    view = ModuleBuilder(plans=[plans], flavour=flavour).build("# header", "doc")
    by_function = {p.function: p for p in view.plans}
    v1 = by_function["shape_request_v1"].steps
    assert [type(s) for s in v1] == [FixedRunStep, StringStep, FixedRunStep, StructArrayStep]
    run, label, old, items = v1
    assert isinstance(run, FixedRunStep) and isinstance(old, FixedRunStep)
    assert (run.format, run.size, run.attrs, run.members) == (
        "i",
        4,
        ("id",),
        (("id", "int32", 0),),
    )
    assert (old.format, old.size, old.attrs) == ("h", 2, ("old",))
    assert isinstance(label, StringStep)
    assert (label.kind, label.width, label.nullable, label.compact) == ("string", 2, False, False)
    assert label.reader == "read_string" and label.writer == "write_string"
    # Label is nullable in v2+, not here: writing None at v1 is refused by name
    assert label.null_check
    assert isinstance(items, StructArrayStep) and items.count_reader == "read_count"
    assert items.element_reader == "_read_shape_request_item_v0"
    # an Item is one int32: the pure flavour reads the whole array with one iter_unpack
    assert (items.fixed_structs is not None) is (flavour is Flavour.PURE)
    v2 = by_function["shape_request_v2"].steps
    assert [type(s) for s in v2] == [FixedRunStep, StringStep, StructArrayStep]
    assert isinstance(v2[1], StringStep) and v2[1].nullable and not v2[1].null_check
    assert v2[1].reader == "read_nullable_string"
    v4 = by_function["shape_request_v4"].steps
    label4, items4 = v4[1], v4[2]
    assert isinstance(label4, StringStep) and label4.compact and label4.nullable
    assert isinstance(items4, StructArrayStep) and items4.count_reader == "read_compact_count"
    assert {s.step for s in (*v1, *v2, *v4)} == {Step.FIXED_RUN, Step.STRING, Step.STRUCT_ARRAY}
