"""``--release``: Kafka's bundled spec data wherever a spec set is taken, as a
``library.SpecSet``; here ``generate`` and the library (diff: test_diff.py; broker-versions:
test_broker_versions.py; pipeline: test_pipeline_errors.py and test_pipeline_spark.py)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from kafka_specgen import history
from kafka_specgen.cli import main
from kafka_specgen.library import SpecSet, generated_package, load_specs, spec_set, spec_set_key

ROOT = Path(__file__).resolve().parents[2]


def tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.fixture(scope="module")
def from_release(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, bytes], str]:
    """``generate --release 4.1``: the files and what the command printed."""
    out = tmp_path_factory.mktemp("release")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["generate", "--release", "4.1", "--out", str(out)]) == 0
    return tree(out / "kafka_messages"), printed.getvalue()


def test_generate_release_names_the_data_it_used(
    from_release: tuple[dict[str, bytes], str],
) -> None:
    files, printed = from_release
    assert printed.endswith(" s\n") and "from Kafka 4.1.0 (spec data of 4.1.2) in " in printed
    fetch = files["fetch.py"].decode()
    assert "# source: 4.1.2/message/FetchRequest.json\n" in fetch


def test_generate_release_equals_generating_the_release_folder(
    from_release: tuple[dict[str, bytes], str], tmp_path: Path
) -> None:
    """The same bytes as the 4.1.2 files generated from a folder: byte for byte from a
    folder holding ``4.1.2/`` (the sources read the same), and but for the ``4.1.2/`` of the
    source lines from the ``4.1.2`` folder itself."""
    files, _ = from_release
    folder = history.extract(tmp_path / "sets", ["4.1.2"])["4.1.2"]
    assert main(["generate", "--specs", str(tmp_path / "sets"), "--out", str(tmp_path / "a")]) == 0
    assert tree(tmp_path / "a" / "kafka_messages") == files
    assert main(["generate", "--specs", str(folder), "--out", str(tmp_path / "b")]) == 0
    plain = tree(tmp_path / "b" / "kafka_messages")
    assert sorted(plain) == sorted(files)
    for path, content in files.items():
        assert content.replace(b"4.1.2/", b"") == plain[path], path


def test_generate_check_with_a_release(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["generate", "--release", "4.0.0", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["generate", "--release", "4.0.0", "--out", str(tmp_path), "--check"]) == 0
    assert "is up to date" in capsys.readouterr().out
    # 4.0.1 is not 4.0.0: JoinGroup v0-1 came back
    assert main(["generate", "--release", "4.0.1", "--out", str(tmp_path), "--check"]) == 1
    captured = capsys.readouterr()
    assert "join_group.py" in captured.out
    assert (
        "regenerate it with `kafka-specgen generate --release 4.0.1 --out "
        f"{tmp_path} --package kafka_messages`" in captured.err
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--release", "2.3"], "kafka-specgen generate: Kafka's JSON specs start at 2.4: "),
        (["--release", "9.0"], "kafka-specgen generate: no bundled spec data for Kafka 9.0.0"),
        (["--release", "latest"], "kafka-specgen generate: 'latest' is not a Kafka release"),
    ],
)
def test_generate_release_mistakes_are_one_line(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["generate", *args, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1, err
    assert not any(tmp_path.iterdir())


def test_generate_takes_specs_or_a_release_not_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["generate", "--specs", "specs", "--release", "4.1", "--out", str(tmp_path)])
    assert info.value.code == 2
    assert "argument --release: not allowed with argument --specs" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["generate", "--out", str(tmp_path)])
    assert "one of the arguments --specs --release is required" in capsys.readouterr().err


# --- the library's spec sets ----------------------------------------------------------------


def test_spec_sets_name_what_they_hold() -> None:
    assert SpecSet.of_release("4.1.1") == SpecSet(
        "Kafka 4.1.1 (spec data of 4.1.2)", bundled=("4.1.2",), release="4.1.1"
    )
    assert SpecSet.of_release("3.9").label == "Kafka 3.9.0"
    assert SpecSet.of_release("trunk-2024-10") == SpecSet(
        "trunk-2024-10 (bundled spec set)", bundled=("trunk-2024-10",)
    )
    paths = spec_set([Path("a"), "b.zip"])
    assert (paths.label, paths.paths, paths.bundled) == ("a, b.zip", (Path("a"), Path("b.zip")), ())
    assert spec_set(paths) is paths
    assert spec_set(Path("a")).paths == (Path("a"),)


def test_a_release_loads_as_its_folder_does(tmp_path: Path) -> None:
    folder = history.extract(tmp_path, ["3.9.0"])["3.9.0"]
    by_release = load_specs(SpecSet.of_release("3.9"), warn=False)[0]
    by_folder = load_specs([folder], warn=False)[0]
    assert [m.name for m in by_release] == [m.name for m in by_folder]
    assert {m.source for m in by_release} == {f"3.9.0/{m.source}" for m in by_folder}


def test_the_package_cache_key_follows_the_data() -> None:
    tool = [ROOT / "templates"]
    key = spec_set_key(SpecSet.of_release("4.1.1"), tool)
    assert spec_set_key(SpecSet.of_release("4.1"), tool) == key  # the same data: 4.1.2's
    assert spec_set_key(SpecSet.of_release("4.0.0"), tool) != spec_set_key(
        SpecSet.of_release("4.0.1"), tool
    )
    assert spec_set_key(SpecSet.of_release("trunk-2024-10"), tool) != key
    # the tool's part counts too
    assert spec_set_key(SpecSet.of_release("4.1"), [ROOT / "specs" / "facts"]) != key


def test_a_generated_package_from_a_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KAFKA_SPECGEN_CACHE", str(tmp_path))
    package = generated_package(SpecSet.of_release("4.0.0"))
    registry = package.module("registry")
    assert registry.API_KEYS[11].min_version == 2  # JoinGroup: 4.0.0 dropped v0-1
    again = generated_package(SpecSet.of_release("4.0"))
    assert again == package


def test_generate_release_all_holds_every_version_of_every_release(tmp_path: Path) -> None:
    """``--release all``: Produce from v0 (gone in 4.0) to 4.3's v13, the ZooKeeper-era
    LeaderAndIsr, and ListOffsets v0's MaxNumOffsets (a field 4.0 dropped), in one package
    whose summary names what it holds."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["generate", "--release", "all", "--out", str(tmp_path)]) == 0
    assert "from every Kafka release, 2.4.0 to 4.3.1 in " in printed.getvalue()
    package = generated_package(SpecSet.of_release("all"))
    produce = package.module("produce").ProduceRequest
    assert (produce.MIN_VERSION, produce.MAX_VERSION) == (0, 13)
    assert package.module("registry").api_name(4) == "LeaderAndIsr"
    offsets = package.module("list_offsets")
    partition = offsets.ListOffsetsRequestListOffsetsPartition(partition_index=3, max_num_offsets=7)
    request = offsets.ListOffsetsRequest(
        topics=[offsets.ListOffsetsRequestListOffsetsTopic(name="t", partitions=[partition])]
    )
    assert offsets.ListOffsetsRequest.decode(request.encode(0), 0) == request
    assert (tmp_path / "kafka_messages" / "produce.py").read_bytes() == (
        package.path / "produce.py"
    ).read_bytes().replace(package.name.encode(), b"kafka_messages")
