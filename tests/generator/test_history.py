"""The bundle of Kafka's spec history (``specs/history``, ``kafka_specgen.history``) and the
tool that writes it (``tools/history_bundle.py``).

The bundle is checked on its own every run (each text's git blob id recomputed, every
set's files present); it is compared with the folder it was built from only where that
folder is (``KAFKA_SPECGEN_CORPORA`` or ``../shared/kafka-specs``): it is the bundle's
source, not a test input.
"""

from __future__ import annotations

import lzma
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_specgen import history
from kafka_specgen.history import Bundle, BundledSet, HistoryError, blob_id
from kafka_specgen.library import extracted_bundle
from kafka_specgen.load import load_path
from kafka_specgen.release_names import Release

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "history_bundle.py"
SOURCE = Path(os.environ.get("KAFKA_SPECGEN_CORPORA") or ROOT.parent / "shared" / "kafka-specs")

RELEASES = [
    *("2.4.0", "2.5.0", "2.6.0", "2.7.0", "2.8.0"),
    *("3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0", "3.6.0", "3.7.0", "3.8.0", "3.9.0"),
    *("4.0.0", "4.0.2", "4.1.2", "4.2.1", "4.3.1"),
]


def run_tool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(TOOL), *args], capture_output=True, text=True, timeout=300
    )


# --- the bundle itself ----------------------------------------------------------------------


def test_the_bundle_holds_every_release_and_the_two_other_sets() -> None:
    assert history.set_names() == [*RELEASES, "kafka-python-3.0.12", "trunk-2024-10"]
    assert [str(r) for r in history.releases()] == RELEASES
    bundle = history.bundle()
    for spec_set in bundle.sets:
        if spec_set.name == "kafka-python-3.0.12":
            assert spec_set.commit is None and "kafka-python 3.0.12" in spec_set.origin
        else:
            assert spec_set.commit is not None and len(spec_set.commit) == 40
            assert spec_set.origin.startswith("apache/kafka ")
    assert bundle.set("2.4.0").commit == "77a89fcf8d7fa01831683327727f11f4bed97319"
    assert bundle.set("4.3.1").commit == "26b251a451ce941d3d7a55e6487bcb7f16b5ad48"
    # Kafka's own file counts (one per spec file of the release's tree)
    counts = {s.name: len(s.files) for s in bundle.sets}
    assert (counts["2.4.0"], counts["3.9.0"], counts["4.3.1"]) == (98, 241, 281)
    assert sum(counts.values()) == 4212 and len(bundle.texts) == 1048


def test_every_text_is_its_git_blob_and_every_file_is_there() -> None:
    bundle = history.bundle()
    for blob, text in bundle.texts.items():
        assert blob_id(text) == blob
    used = {blob for s in bundle.sets for blob in s.files.values()}
    assert used == set(bundle.texts)  # none missing, none unused
    # Apache's licence header, kept byte for byte in every Kafka file
    header = b"// Licensed to the Apache Software Foundation (ASF) under one or more\n"
    produce = bundle.files("4.3.1")["message/ProduceRequest.json"]
    assert produce.startswith(header)
    assert history.bundle_problems(bundle, []) == [
        f"set {s.name}: in the bundle, not in the source" for s in bundle.sets
    ]


def test_a_damaged_text_is_named() -> None:
    bundle = history.bundle()
    blob = bundle.set("2.4.0").files["message/FetchRequest.json"]
    texts = {**bundle.texts, blob: bundle.texts[blob] + b" "}
    damaged = Bundle(bundle.sets, texts)
    problems = history.bundle_problems(damaged, [("2.4.0", bundle.files("2.4.0"))])
    assert problems[0] == f"text {blob}: its git blob id is {blob_id(texts[blob])}"
    assert "2.4.0/message/FetchRequest.json: differs from the source" in problems


def test_the_bytes_are_deterministic_and_read_back_the_same() -> None:
    data = history.bundle_path().read_bytes()
    bundle = history.decode_bundle(data)
    again = history.encode_bundle(bundle)
    assert history.encode_bundle(bundle) == again
    # the same index and texts (the compressed bytes may differ between liblzma versions)
    assert lzma.decompress(again) == lzma.decompress(data)
    assert len(data) < 120_000


def test_a_bundle_that_is_not_one_is_one_line() -> None:
    with pytest.raises(HistoryError, match="unreadable"):
        history.decode_bundle(b"not xz")
    good = lzma.decompress(history.bundle_path().read_bytes())
    with pytest.raises(HistoryError, match="truncated"):
        history.decode_bundle(lzma.compress(good[:-10]))


# --- reading sets ---------------------------------------------------------------------------


def test_a_set_parses_as_the_same_files_in_a_folder(tmp_path: Path) -> None:
    [folder] = history.extract(tmp_path, ["4.1.2"]).values()
    assert folder == tmp_path / "4.1.2"
    from_folder = load_path(folder)
    from_bundle = history.set_specs("4.1.2")
    assert [f"4.1.2/{raw.source}" for raw in from_folder] == [raw.source for raw in from_bundle]
    assert [raw.data for raw in from_folder] == [raw.data for raw in from_bundle]
    assert "4.1.2/message/FetchRequest.json" in {raw.source for raw in from_bundle}
    # extracted byte for byte
    for path, blob in history.bundle().set("4.1.2").files.items():
        assert blob_id((folder / path).read_bytes()) == blob


def test_the_extracted_bundle_is_written_once_per_bundle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KAFKA_SPECGEN_CACHE", str(tmp_path / "cache"))
    folder = extracted_bundle()
    assert folder.parent == tmp_path / "cache" / "kafka-specs"
    assert sorted(p.name for p in folder.iterdir()) == sorted(history.set_names())
    for name in ("2.4.0", "kafka-python-3.0.12"):
        for path, blob in history.bundle().set(name).files.items():
            assert blob_id((folder / name / path).read_bytes()) == blob
    assert list(folder.parent.iterdir()) == [folder]  # no staging folder left behind
    # reused, not written again: a file changed in the cache stays changed
    marker = folder / "4.1.2" / "message" / "FetchRequest.json"
    marker.write_text("{}")
    assert extracted_bundle() == folder and marker.read_text() == "{}"


def test_releases_map_to_their_spec_data() -> None:
    expected = {
        "4.0": ("4.0.0", "Kafka 4.0.0"),
        "4.0.0": ("4.0.0", "Kafka 4.0.0"),
        "4.0.1": ("4.0.2", "Kafka 4.0.1 (spec data of 4.0.2)"),
        "4.0.2": ("4.0.2", "Kafka 4.0.2"),
        "4.0.7": ("4.0.2", "Kafka 4.0.7 (spec data of 4.0.2)"),
        "4.1": ("4.1.2", "Kafka 4.1.0 (spec data of 4.1.2)"),
        "4.1.1": ("4.1.2", "Kafka 4.1.1 (spec data of 4.1.2)"),
        "3.9.1": ("3.9.0", "Kafka 3.9.1 (spec data of 3.9.0)"),
        "2.4": ("2.4.0", "Kafka 2.4.0"),
        "3.7.2": ("3.7.0", "Kafka 3.7.2 (spec data of 3.7.0)"),
        "4.3.1": ("4.3.1", "Kafka 4.3.1"),
    }
    for name, (set_name, label) in expected.items():
        data = history.release_data(name)
        assert (data.set_name, data.label) == (set_name, label), name
    assert history.release_data(Release.parse("4.2")).set_name == "4.2.1"


def test_4_0_0_is_not_4_0_1() -> None:
    """Kafka 4.0.0 dropped JoinGroup v0-1; 4.0.1 put them back (4.0.2's data has them)."""

    def join_group(release: str) -> str:
        [raw] = [
            r
            for r in history.release_data(release).specs()
            if r.source.endswith("/message/JoinGroupRequest.json")
        ]
        return str(raw.data["validVersions"])

    assert join_group("4.0.0") == "2-9"
    assert join_group("4.0.1") == join_group("4.0.2") == "0-9"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("2.3", "Kafka's JSON specs start at 2.4: release 2.3.0 has none"),
        ("0.10.2", "Kafka's JSON specs start at 2.4: release 0.10.2.0 has none"),
        ("1.1.1", "Kafka's JSON specs start at 2.4: release 1.1.1 has none"),
        ("4.4", "no bundled spec data for Kafka 4.4.0: the bundle has the releases 2.4 to 4.3"),
        ("5.0.1", "no bundled spec data for Kafka 5.0.1"),
        ("four", "'four' is not a Kafka release (like 3.9, 4.1.1 or 0.10.2)"),
        ("4.1.1.1", "'4.1.1.1': releases since 1.0 have three parts at most"),
    ],
)
def test_releases_the_bundle_cannot_serve(name: str, message: str) -> None:
    with pytest.raises(HistoryError) as info:
        history.release_data(name)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_the_oldest_set_serves_older_releases() -> None:
    assert history.oldest_set() == "2.4.0"
    with pytest.raises(HistoryError, match="no bundled spec set 'nope'"):
        history.set_specs("nope")


# --- the tool -------------------------------------------------------------------------------


def small_corpora(folder: Path) -> Path:
    """Two sets in a folder as the tool reads them: 2.4.0 (with its README row) and
    kafka-python's."""
    history.extract(folder, ["2.4.0", "kafka-python-3.0.12"])
    commit = history.bundle().set("2.4.0").commit
    (folder / "README.md").write_text(
        "| Folder | Kafka ref | Commit id |\n|---|---|---|\n"
        f"| `2.4.0/` | tag `2.4.0` | `{commit}` |\n"
    )
    return folder


def test_the_tool_builds_and_checks_a_bundle(tmp_path: Path) -> None:
    corpora = small_corpora(tmp_path / "corpora")
    target = tmp_path / "bundle.xz"
    built = run_tool("--corpora", str(corpora), "--bundle", str(target))
    assert built.returncode == 0, built.stderr
    bundle = history.decode_bundle(target.read_bytes())
    assert [s.name for s in bundle.sets] == ["2.4.0", "kafka-python-3.0.12"]
    assert bundle.set("2.4.0") == BundledSet(
        "2.4.0",
        "apache/kafka tag 2.4.0",
        history.bundle().set("2.4.0").commit,
        history.bundle().set("2.4.0").files,
    )
    check = run_tool("--corpora", str(corpora), "--bundle", str(target), "--check")
    assert check.returncode == 0, check.stdout
    assert "matches (2 sets, 206 files" in check.stdout
    # the same input, the same bytes
    again = tmp_path / "again.xz"
    run_tool("--corpora", str(corpora), "--bundle", str(again))
    assert again.read_bytes() == target.read_bytes()
    # a file changed, added or missing in the source: named, exit 1
    (corpora / "2.4.0" / "message" / "FetchRequest.json").write_bytes(b"{}")
    (corpora / "2.4.0" / "message" / "NewRequest.json").write_bytes(b"{}")
    (corpora / "kafka-python-3.0.12" / "message" / "ProduceRequest.json").unlink()
    check = run_tool("--corpora", str(corpora), "--bundle", str(target), "--check")
    assert check.returncode == 1
    assert check.stdout.splitlines()[:3] == [
        "2.4.0/message/FetchRequest.json: differs from the source",
        "2.4.0/message/NewRequest.json: not in the bundle",
        "kafka-python-3.0.12/message/ProduceRequest.json: in the bundle, not in the source",
    ]


def test_the_tool_refuses_a_set_of_unknown_origin(tmp_path: Path) -> None:
    corpora = small_corpora(tmp_path / "corpora")
    history.extract(corpora, ["4.3.1"])  # no README row
    result = run_tool("--corpora", str(corpora), "--bundle", str(tmp_path / "b.xz"))
    assert result.returncode == 1
    assert "4.3.1/ has no commit in" in result.stderr


@pytest.mark.skipif(
    not (SOURCE / "README.md").is_file(),
    reason="the bundle's source folder (KAFKA_SPECGEN_CORPORA or ../shared/kafka-specs) is not "
    "here; the bundle's own integrity is checked above",
)
def test_the_bundle_is_its_source_folder() -> None:
    result = run_tool("--corpora", str(SOURCE), "--check")
    assert result.returncode == 0, result.stdout
