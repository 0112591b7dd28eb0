"""Facts tables (specs/facts/): validation rules, cross-checks, and what they generate."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from kafka_specgen.library import generate_files
from kafka_specgen.errors import SpecError
from kafka_specgen.facts import build_facts
from kafka_specgen.load import RawSpec, load_path
from tests.support.genpkg import GENERATED, SPECS, corpus_folders, kafka_python_specs

sys.path.insert(0, str(GENERATED))

from kafka_messages import registry  # noqa: E402
from kafka_messages.error_codes import ErrorCode, error_name  # noqa: E402

FACTS = SPECS / "facts"
SOURCE = "facts/x.json"


def table(kind: str, entries: list[dict[str, Any]], **extra: Any) -> RawSpec:
    return RawSpec(SOURCE, {"facts": kind, "entries": entries, **extra}, ())


def literal_assignment(source: str, name: str) -> Any:
    """The literal value assigned to the module-level ``name`` in ``source`` (however
    the generator lays the text out)."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == name:
            assert node.value is not None
            return ast.literal_eval(node.value)
        if isinstance(node, ast.Assign) and any(
            getattr(t, "id", None) == name for t in node.targets
        ):
            return ast.literal_eval(node.value)
    raise AssertionError(f"no assignment to {name}")


def reject(raw: RawSpec, rule: str, message: str) -> None:
    with pytest.raises(SpecError) as info:
        build_facts([raw])
    assert info.value.rule == rule
    assert str(info.value) == f"{SOURCE}: {message} [rule: {rule}]"


def test_shipped_tables_load() -> None:
    facts = build_facts(load_path(FACTS))
    assert [f.key for f in facts.api_keys] == list(range(93))
    assert facts.error_codes[0].code == -1
    assert [f.code for f in facts.error_codes] == list(range(-1, 134))
    # relative to the folder
    assert facts.sources == ("api-keys.json", "error-codes.json", "broker-releases.json")
    names = [(r.release, r.kind) for r in facts.broker_releases]
    assert names[:2] == [("0.8.0.0", "zookeeper"), ("0.8.1.0", "zookeeper")]
    assert names[-2:] == [("4.2.0", "kraft"), ("4.3.0", "kraft")]
    assert {q.id for q in facts.broker_release_quirks} >= {"KAFKA-18659", "telemetry"}


def test_rules_name_file_entry_and_rule() -> None:
    reject(
        table("api-keys", [{"key": 0, "name": "Produce", "nmae": 1}]),
        "unknown-key",
        "entries[0]: unknown key(s) 'nmae'",
    )
    reject(
        table("api-keys", [{"key": 0}]), "missing-key", "entries[0]: missing required key(s) 'name'"
    )
    reject(
        table("api-keys", [{"key": -1, "name": "Produce"}]),
        "bad-value",
        "entries[0].key: bad value -1: expected an integer api key from 0 to 32767",
    )
    reject(
        table("api-keys", [{"key": 1.0, "name": "Produce"}]),
        "bad-value",
        "entries[0].key: bad value 1.0: expected an integer api key from 0 to 32767",
    )
    reject(
        table("api-keys", [{"key": 0, "name": "produce;import os"}]),
        "bad-value",
        "entries[0].name: bad value 'produce;import os': expected an API name in "
        "UpperCamelCase (letters and digits, at most 100)",
    )
    reject(
        table("error-keys", [{"key": 0, "name": "Produce"}]),
        "bad-value",
        "facts: bad value 'error-keys': expected one of api-keys, error-codes, broker-releases",
    )
    reject(
        table("api-keys", []),
        "bad-value",
        "entries: bad value []: expected a non-empty array of entries",
    )
    reject(
        table("api-keys", [{"key": 0, "name": "A"}], extra=1),
        "unknown-key",
        "unknown key(s) 'extra'",
    )
    reject(
        table("api-keys", [{"key": 0, "name": "A"}, {"key": 0, "name": "B"}]),
        "duplicate-api-key",
        "entries: api key 0 appears more than once",
    )
    reject(
        table("api-keys", [{"key": 0, "name": "A"}, {"key": 1, "name": "A"}]),
        "duplicate-name",
        "entries: name 'A' appears more than once",
    )
    error = {"code": 1, "name": "X", "retriable": False, "description": "d"}
    reject(
        table("error-codes", [error, dict(error, name="Y")]),
        "duplicate-error-code",
        "entries: error code 1 appears more than once",
    )
    reject(
        table("error-codes", [error, dict(error, code=2)]),
        "duplicate-name",
        "entries: name 'X' appears more than once",
    )
    reject(
        table("error-codes", [dict(error, retriable="no")]),
        "bad-value",
        "entries[0].retriable: bad value 'no': expected true or false",
    )
    reject(
        table("error-codes", [dict(error, description='a"""\nimport os')]),
        "bad-value",
        'entries[0].description: bad value \'a"""\\nimport os\': expected a one-line '
        "description of 1 to 300 printable characters",
    )
    reject(
        table("error-codes", [dict(error, name="x")]),
        "bad-value",
        "entries[0].name: bad value 'x': expected an error name in UPPER_SNAKE_CASE "
        "(at most 100 characters)",
    )
    release = {"release": "3.8.0", "kind": "zookeeper", "advertised": [[0, 0, 11], [1, 0, 16]]}
    reject(
        table("broker-releases", [release, dict(release, advertised=[[2, 0, 1]])]),
        "duplicate-release",
        "entries: release 3.8.0 (zookeeper) appears more than once",
    )
    reject(
        table("broker-releases", [dict(release, advertised=[[0, 0, 11], [0, 1, 2]])]),
        "duplicate-api-key",
        "entries: release 3.8.0 (zookeeper): advertised: api key 0 appears more than once",
    )
    reject(
        table("broker-releases", [dict(release, advertised=[[0, 5, 4]])]),
        "bad-range",
        "entries: release 3.8.0 (zookeeper): advertised: api key 0 has min version 5 above max "
        "version 4",
    )
    reject(
        table("broker-releases", [dict(release, release="3.8")]),
        "bad-value",
        "entries[0].release: bad value '3.8': expected a Kafka release name such as 3.8.0 or "
        "0.10.2.0",
    )
    reject(
        table("broker-releases", [dict(release, advertised=[[0, 0]])]),
        "bad-value",
        "entries[0].advertised[0]: bad value [0, 0]: expected an [api key, min version, max "
        "version] triple of integers from 0 to 32767",
    )
    reject(
        table("broker-releases", [dict(release, kind="zk")]),
        "bad-value",
        "entries[0].kind: bad value 'zk': expected zookeeper or kraft",
    )
    reject(
        table("broker-releases", [dict(release, accepted=[[0, 0, 0]])]),
        "bad-row",
        "entries: release 3.8.0 (zookeeper): a broker that answers ApiVersions has advertised "
        "ranges (and no accepted); one that does not (api_versions closes or no answer) has "
        "accepted ranges only",
    )
    refusal = {"api_key": 0, "versions": [0, 2], "answer": "close", "quirk": "q"}
    reject(
        table("broker-releases", [dict(release, refused=[refusal])]),
        "unknown-quirk",
        "entries: release 3.8.0 (zookeeper): quirk 'q' is not in the table's quirks",
    )
    reject(
        table(
            "broker-releases",
            [dict(release, refused=[dict(refusal, versions=[0, 12])])],
            quirks={"q": {"about": "a", "source": "s"}},
        ),
        "bad-refusal",
        "entries: release 3.8.0 (zookeeper): refused api key 0 v0-12 is not within what it "
        "advertises",
    )
    features = {"epoch": "metadata offset", "supported": {"metadata.version": [1, 7]}}
    reject(
        table("broker-releases", [dict(release, features=dict(features, finalized={"x": 1}))]),
        "bad-feature",
        "entries: release 3.8.0 (zookeeper): finalized x 1 is not within its supported levels",
    )
    reject(
        table(
            "broker-releases",
            [
                dict(
                    release,
                    features=dict(
                        features,
                        finalized={"metadata.version": 7},
                        metadata_versions=[[7, "3.3-IV3", True]],
                    ),
                )
            ],
        ),
        "bad-feature",
        "entries: release 3.8.0 (zookeeper): metadata_versions lacks levels of 1-7",
    )
    reject(
        table(
            "broker-releases", [dict(release, features=dict(features, epoch="later", finalized={}))]
        ),
        "bad-value",
        "entries[0].features.epoch: bad value 'later': expected one of zookeeper, metadata "
        "offset, unknown",
    )
    # an api-keys entry in an error-codes table
    reject(
        table("error-codes", [{"key": 0, "name": "A"}]),
        "unknown-key",
        "entries[0]: unknown key(s) 'key'",
    )


def test_one_table_of_each_kind() -> None:
    raw = table("api-keys", [{"key": 0, "name": "A"}])
    with pytest.raises(SpecError) as info:
        build_facts([raw, RawSpec("facts/y.json", raw.data, ())])
    assert str(info.value) == (
        "facts/y.json: a second 'api-keys' table (the first is facts/x.json) "
        "[rule: duplicate-facts]"
    )


def test_bad_facts_file_fails_generation_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "facts.json").write_text(
        json.dumps({"facts": "api-keys", "entries": [{"key": 0, "name": "A", "about": "x"}]})
    )
    with pytest.raises(SpecError, match=r"^facts\.json: entries\[0\]: unknown key\(s\) 'about'"):
        generate_files([tmp_path], warn=False)


def test_error_codes_agree_with_kafka_python() -> None:
    """Codes, names and retriable flags against kafka-python 3.0.12's errors module.

    kafka-python keeps a few older names; Kafka marks CORRUPT_MESSAGE retriable
    (CorruptRecordException is a RetriableException) where kafka-python does not.
    """
    import inspect

    import kafka.errors as kerrors

    renamed = {
        -1: "UNKNOWN",
        0: "NO_ERROR",
        6: "NOT_LEADER_FOR_PARTITION",
        10: "MESSAGE_SIZE_TOO_LARGE",
        17: "INVALID_TOPIC",
        39: "INVALID_REPLICATION_ASSIGNMENT",
    }
    retriable_differs = {2}
    theirs = {
        cls.errno: cls
        for cls in vars(kerrors).values()
        if inspect.isclass(cls)
        and issubclass(cls, kerrors.BrokerResponseError)
        and cls.errno is not None
    }
    assert len(theirs) > 100
    for code, cls in theirs.items():
        ours = ErrorCode(code)
        assert renamed.get(code, ours.name) == cls.message, code
        assert (ours.retriable != cls.retriable) == (code in retriable_differs), code


def test_error_code_enum() -> None:
    assert ErrorCode.UNSUPPORTED_VERSION == 35
    assert ErrorCode(0) is ErrorCode.NONE
    assert ErrorCode(3).retriable and not ErrorCode(35).retriable
    assert ErrorCode.NOT_COORDINATOR.retriable
    assert ErrorCode(35).description == "The broker does not support this version of the API."
    assert all(code.description for code in ErrorCode)
    assert error_name(35) == "UNSUPPORTED_VERSION"
    assert error_name(31000) == "UNKNOWN_ERROR_CODE(31000)"


def test_api_names_agree_with_the_corpora() -> None:
    """Every request spec of kafka-python and of the newest corpus names its key as we do,
    but for the renames we know of (the facts hold the newest name)."""
    known_renames = {(2, "ListOffset"), (56, "AlterIsr"), (74, "ListClientMetricsResources")}
    folders = [kafka_python_specs()] + [f / "message" for f in corpus_folders()]
    checked = 0
    for folder in folders:
        if not folder.is_dir():
            continue
        for raw in load_path(folder):
            if raw.data.get("type") == "request":
                key, name = raw.data["apiKey"], raw.data["name"].removesuffix("Request")
                if (key, name) not in known_renames:
                    assert registry.API_NAMES[key] == name, (folder, key)
                checked += 1
    assert checked >= 75


def test_spec_name_wins_over_the_facts_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "names.json").write_text(
        json.dumps(
            {
                "facts": "api-keys",
                "entries": [{"key": 18, "name": "Versions"}, {"key": 7, "name": "Seven"}],
            }
        )
    )
    specs = [p for p in SPECS.glob("*.json")]
    files = generate_files([*specs, tmp_path], warn=True)
    err = capsys.readouterr().err
    assert (
        "warning: names.json: api key 18 is Versions in the facts table but ApiVersions "
        "in the specs; using ApiVersions [rule: api-name-mismatch]"
    ) in err
    registry_text = next(f.text for f in files if f.path == "registry.py")
    api_names = literal_assignment(registry_text, "API_NAMES")
    assert api_names[18] == "ApiVersions" and api_names[7] == "Seven"
    assert "# facts: names.json" in registry_text
    # The error codes the specs do not carry come from the tool's own table.
    error_codes = next(f.text for f in files if f.path == "error_codes.py")
    assert "# facts: error-codes.json" in error_codes
    assert "    UNSUPPORTED_VERSION = 35\n" in error_codes


def test_facts_none_leaves_the_tables_to_the_specs_and_the_runtime(tmp_path: Path) -> None:
    """--facts none: no bundled tables, yet error_codes and releases exist (the runtime
    imports them); the error codes are the runtime's own, the release table is empty."""
    specs = [p for p in SPECS.glob("*.json")]
    files = {f.path: f.text for f in generate_files(specs, facts=None)}
    assert "class ErrorCode(IntEnum):" in files["error_codes.py"]
    assert "    UNSUPPORTED_VERSION = 35\n" in files["error_codes.py"]
    assert "    UNKNOWN_TOPIC_OR_PARTITION = 3\n" not in files["error_codes.py"]
    assert literal_assignment(files["releases.py"], "BROKER_ROWS") == ()
    assert literal_assignment(files["releases.py"], "METADATA_VERSIONS") == {}
    assert "# facts:" not in files["registry.py"]
    names = literal_assignment(files["registry.py"], "API_NAMES")
    assert sorted(names) == [3, 18, 57]  # only what the specs name


def test_facts_path_replaces_the_bundled_tables(tmp_path: Path) -> None:
    (tmp_path / "codes.json").write_text(
        json.dumps(
            {
                "facts": "error-codes",
                "entries": [
                    {"code": 7, "name": "SEVEN", "retriable": True, "description": "Seven."}
                ],
            }
        )
    )
    specs = [p for p in SPECS.glob("*.json")]
    files = {f.path: f.text for f in generate_files(specs, facts=tmp_path)}
    assert "    SEVEN = 7\n" in files["error_codes.py"]
    assert " = 3\n" not in files["error_codes.py"]  # no bundled code but the runtime's
    assert literal_assignment(files["releases.py"], "BROKER_ROWS") == ()
