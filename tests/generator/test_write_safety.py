"""``generate`` is safe to point anywhere.

It replaces or deletes only files whose first line says kafka-specgen generated them for the
package being written; a folder of other files is refused unless ``--force``, and even then
nothing of theirs is deleted; it never writes through a symbolic link (a symlinked package
folder, subfolder or file is refused, forced or not) nor follows one while looking for stale
files; package names that are keywords or standard-library modules are refused. Each
refusal is one line on stderr, and nothing is written.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from kafka_specgen import __version__
from kafka_specgen.cli import main
from kafka_specgen.format import UnsafeTargetError, write_package
from kafka_specgen.headers import file_header, header_package, runtime_header
from kafka_specgen.render import GeneratedFile
from tests.support.genpkg import SPECS

PACKAGE = "kafka_messages"


def generate(
    out: Path, capsys: pytest.CaptureFixture[str], *extra: str, package: str = PACKAGE
) -> tuple[int, str, str]:
    code = main(
        ["generate", "--specs", str(SPECS), "--out", str(out), "--package", package, *extra]
    )
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink() and "__pycache__" not in p.parts
    }


def one_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture
def generated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """``tmp_path/out/kafka_messages``, freshly generated."""
    code, _, err = generate(tmp_path / "out", capsys)
    assert code == 0, err
    return tmp_path / "out" / PACKAGE


# --- package names --------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,reason",
    [
        ("os", "would shadow the standard library's os module"),
        ("json", "would shadow the standard library's json module"),
        ("class", "is a Python keyword"),
        ("my-package", "is not an ASCII Python identifier"),
        ("café", "is not an ASCII Python identifier"),
    ],
)
def test_package_names_that_shadow_or_cannot_be_imported_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, reason: str
) -> None:
    code, _, err = generate(tmp_path, capsys, package=name)
    assert code == 2
    assert one_line(err) == f"kafka-specgen: --package {name!r} {reason}"
    assert not any(tmp_path.iterdir()), "nothing may be written"


def test_write_package_refuses_a_standard_library_name_too(tmp_path: Path) -> None:
    with pytest.raises(UnsafeTargetError, match="would shadow the standard library's sys"):
        write_package([GeneratedFile("a.py", "")], tmp_path / "sys")


# --- folders of other files -----------------------------------------------------------


def test_a_folder_of_other_files_is_refused_and_left_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    package = tmp_path / "out" / PACKAGE
    package.mkdir(parents=True)
    (package / "mine.py").write_text("print('my own code')\n")
    (package / "data").mkdir()
    (package / "data" / "table.csv").write_text("a,b\n")
    before = snapshot(package)
    code, out, err = generate(tmp_path / "out", capsys)
    assert code == 1
    assert one_line(err) == (
        f"kafka-specgen: error: {package} holds files kafka-specgen did not generate for "
        f"package {PACKAGE} (data/table.csv, ...): generate into a new or empty folder, or "
        "pass --force to write beside them (none is deleted)"
    )
    assert out == ""
    assert snapshot(package) == before


def test_force_writes_beside_other_files_and_deletes_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    package = tmp_path / "out" / PACKAGE
    package.mkdir(parents=True)
    (package / "mine.py").write_text("print('my own code')\n")
    code, out, err = generate(tmp_path / "out", capsys, "--force")
    assert code == 0, err
    assert "1 of others left alone" in out
    assert (package / "mine.py").read_text() == "print('my own code')\n"
    assert (package / "registry.py").is_file()
    # Regenerating (no --force needed now: the folder holds this package) keeps it too.
    code, out, err = generate(tmp_path / "out", capsys)
    assert code == 0, err
    assert (package / "mine.py").read_text() == "print('my own code')\n"


def test_a_file_of_others_where_a_generated_file_goes_is_refused_unless_forced(
    generated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    registry = generated / "registry.py"
    registry.write_text("# my registry, not generated\n")
    code, _, err = generate(generated.parent, capsys)
    assert code == 1
    assert one_line(err) == (
        f"kafka-specgen: error: {registry} was not generated by kafka-specgen for package "
        f"{PACKAGE}: move it away, or pass --force to replace it"
    )
    assert registry.read_text() == "# my registry, not generated\n"
    code, _, err = generate(generated.parent, capsys, "--force")
    assert code == 0, err
    assert header_package(registry.read_text().splitlines()[0]) == PACKAGE


def test_stale_files_are_deleted_only_when_generated_for_this_package(
    generated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ours = file_header(PACKAGE, ["OldRequest.json"])
    (generated / "old_api.py").write_text(f"{ours}\n")
    (generated / "old_runtime.py").write_text(runtime_header(PACKAGE))
    # Written by a version that named no package: this package's own, too.
    legacy = "# generated by kafka-specgen 0.1.0 — do not edit\n"
    (generated / "legacy.py").write_text(legacy)
    (generated / "other_package.py").write_text(f"{file_header('other_messages', [])}\n")
    (generated / "notes.txt").write_text("mine\n")
    (generated / "almost.py").write_text("# generated by kafka-specgen, honest\n")
    code, out, err = generate(generated.parent, capsys)
    assert code == 0, err
    assert "3 stale removed, 3 of others left alone" in out
    for gone in ("old_api.py", "old_runtime.py", "legacy.py"):
        assert not (generated / gone).exists(), gone
    for kept in ("other_package.py", "notes.txt", "almost.py"):
        assert (generated / kept).exists(), kept


def test_generate_over_a_package_from_an_older_version_replaces_it(
    generated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`make generate` over a generated/ written before headers named the package."""
    expected = snapshot(generated)
    for path in generated.rglob("*.py"):
        first, _, rest = path.read_text(encoding="utf-8").partition("\n")
        old = (
            "# kafka-specgen 0.2.0 runtime, copied verbatim into every generated package"
            " — do not edit"
            if "runtime" in first
            else "# generated by kafka-specgen 0.2.0 — do not edit"
        )
        path.write_text(f"{old}\n{rest}", encoding="utf-8")
    (generated / "removed_api.py").write_text("# generated by kafka-specgen 0.2.0 — do not edit\n")
    code, _, err = generate(generated.parent, capsys)
    assert code == 0, err
    assert snapshot(generated) == expected


# --- symbolic links -------------------------------------------------------------------


@pytest.mark.parametrize("force", [False, True])
def test_a_symlinked_package_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], force: bool
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious.py").write_text("keep me\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / PACKAGE).symlink_to(elsewhere, target_is_directory=True)
    code, _, err = generate(out, capsys, *(["--force"] if force else []))
    assert code == 1
    assert one_line(err) == (
        f"kafka-specgen: error: {out / PACKAGE} is a symbolic link: kafka-specgen never "
        "writes through one (remove it, or point --out at the folder it links to)"
    )
    assert snapshot(elsewhere) == {"precious.py": b"keep me\n"}


@pytest.mark.parametrize("path", ["registry.py", "records", "records/_batch.py"])
@pytest.mark.parametrize("force", [False, True])
def test_a_symlink_where_a_generated_file_goes_is_refused(
    generated: Path, capsys: pytest.CaptureFixture[str], path: str, force: bool
) -> None:
    victim = generated.parent.parent / "victim"
    if path == "records":
        victim.mkdir()
        (victim / "_batch.py").write_text("victim\n")
        (generated / "records").rename(generated.parent.parent / "old_records")
    else:
        victim.write_text("victim\n")
        (generated / path).unlink()
    (generated / path).symlink_to(victim)
    before = snapshot(generated.parent.parent)
    code, _, err = generate(generated.parent, capsys, *(["--force"] if force else []))
    assert code == 1
    assert one_line(err) == (
        f"kafka-specgen: error: {generated / path} is a symbolic link: kafka-specgen never "
        "writes through one (remove it)"
    )
    assert snapshot(generated.parent.parent) == before


def test_symlinks_elsewhere_are_neither_followed_nor_deleted(
    generated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A link to a folder full of files this package once generated: stale-file removal
    does not walk into it, and the link itself stays."""
    outside = generated.parent.parent / "outside"
    outside.mkdir()
    (outside / "stale_looking.py").write_text(f"{file_header(PACKAGE, [])}\n")
    (outside / "notes.txt").write_text("mine\n")
    (generated / "linked").symlink_to(outside, target_is_directory=True)
    (generated / "link.py").symlink_to(outside / "stale_looking.py")
    code, out, err = generate(generated.parent, capsys)
    assert code == 0, err
    assert "0 stale removed, 2 of others left alone" in out
    assert (generated / "linked").is_symlink() and (generated / "link.py").is_symlink()
    assert snapshot(outside) == {
        "notes.txt": b"mine\n",
        "stale_looking.py": f"{file_header(PACKAGE, [])}\n".encode(),
    }


def test_a_fifo_in_the_folder_is_never_opened(
    generated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no fifos on this system")
    fifo = generated / "pipe"
    os.mkfifo(fifo)  # opening it to read blocks until a writer comes
    done = threading.Event()
    rescued = []

    def rescue() -> None:
        """Should generate open the fifo, be its writer after a while: the test then fails
        instead of hanging."""
        if done.wait(10):
            return
        while not done.is_set():
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                rescued.append(True)
            except OSError:
                time.sleep(0.05)

    helper = threading.Thread(target=rescue, daemon=True)
    helper.start()
    try:
        code, out, err = generate(generated.parent, capsys)
    finally:
        done.set()
        helper.join()
    assert not rescued, "generate opened the fifo"
    assert code == 0, err
    assert "1 of others left alone" in out
    assert fifo.exists()


def test_headers_name_the_tool_version_and_the_package() -> None:
    header = file_header("my_kafka", ["a/B.json"])
    assert header == (
        f"# generated by kafka-specgen {__version__} for package my_kafka — do not edit\n"
        "# source: a/B.json"
    )
    assert header_package(header.splitlines()[0]) == "my_kafka"
    assert header_package(runtime_header("my_kafka").rstrip("\n")) == "my_kafka"
    assert header_package("# generated by kafka-specgen 0.1.0 — do not edit") == ""
    assert header_package("# generated by someone else") is None


def test_files_generated_for_another_name_are_not_written_under_this_one(tmp_path: Path) -> None:
    """Their headers would name the wrong package, and the next run would refuse them."""
    files = [GeneratedFile("a.py", f"{file_header('kafka_messages', [])}\n")]
    with pytest.raises(ValueError, match="pass package='other_name' to generate_files"):
        write_package(files, tmp_path / "other_name")
    assert not (tmp_path / "other_name").exists()
