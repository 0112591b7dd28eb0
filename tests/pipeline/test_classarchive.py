"""The driver JVM's class archive (``pipeline.classarchive``): written by a first run,
taken into use by the next once finished, never a half-written or foreign file."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from kafka_specgen.pipeline import classarchive


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KAFKA_SPECGEN_CACHE", str(tmp_path))
    return tmp_path / "jvm"


def dump(folder: Path, name: str, data: bytes, age: float) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(data)
    then = time.time() - age
    os.utime(path, (then, then))
    return path


def test_a_first_run_writes_the_archive_at_exit(cache: Path) -> None:
    [option] = classarchive.archive_options()
    name, _, path = option.partition("=")
    assert name == "-XX:ArchiveClassesAtExit"
    assert Path(path).parent == cache and cache.is_dir()
    assert Path(path).name.endswith(f".{os.getpid()}.dump")


def test_the_next_run_takes_the_finished_dump(cache: Path) -> None:
    [first] = classarchive.archive_options()
    written = Path(first.partition("=")[2])
    dump(cache, written.name, classarchive.MAGIC + b"classes", classarchive.DUMP_SECONDS + 1)
    [option] = classarchive.archive_options()
    name, _, path = option.partition("=")
    assert name == "-XX:SharedArchiveFile"
    assert Path(path).read_bytes() == classarchive.MAGIC + b"classes"
    assert not written.exists()
    assert classarchive.archive_options() == [option]  # and keeps it


def test_a_dump_still_being_written_is_left_alone(cache: Path) -> None:
    [first] = classarchive.archive_options()
    written = Path(first.partition("=")[2])
    dump(cache, written.name, classarchive.MAGIC, 1.0)
    assert classarchive.archive_options() == []  # no archive, and no second dump
    assert written.exists()


def test_a_dump_that_is_no_archive_is_removed(cache: Path) -> None:
    [first] = classarchive.archive_options()
    written = Path(first.partition("=")[2])
    dump(cache, written.name, b"\0" * 64, classarchive.DUMP_SECONDS + 1)
    [option] = classarchive.archive_options()
    assert option.startswith("-XX:ArchiveClassesAtExit=")
    assert not written.exists()
    assert not list(cache.glob("*.jsa"))


def test_another_java_has_an_archive_of_its_own(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    [default] = classarchive.archive_options()
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "java").write_text("")
    monkeypatch.setenv("JAVA_HOME", str(home))
    [other] = classarchive.archive_options()
    assert Path(other.partition("=")[2]).name != Path(default.partition("=")[2]).name
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "nothing"))
    assert classarchive.archive_options() == []


def test_a_cache_folder_that_cannot_be_written_means_no_archive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setenv("KAFKA_SPECGEN_CACHE", str(blocked))
    assert classarchive.archive_options() == []


def test_a_raced_dump_is_removed_once_the_archive_is_there(cache: Path) -> None:
    [first] = classarchive.archive_options()
    written = Path(first.partition("=")[2])
    old = classarchive.DUMP_SECONDS + 1
    dump(cache, written.name, classarchive.MAGIC + b"one", old)
    raced = dump(cache, written.name.replace(f".{os.getpid()}.", ".1."), classarchive.MAGIC, old)
    [option] = classarchive.archive_options()
    assert option.startswith("-XX:SharedArchiveFile=") and not raced.exists()
    assert not list(cache.glob("*.dump"))


def test_archives_of_installations_gone_are_removed(cache: Path) -> None:
    day = 86400.0
    others = [dump(cache, f"spark-{n:016x}.jsa", classarchive.MAGIC, n * day) for n in range(4)]
    [option] = classarchive.archive_options()  # a new installation: it writes one
    assert option.startswith("-XX:ArchiveClassesAtExit=")
    kept = others[: classarchive.KEEP_OTHERS]
    assert [a.exists() for a in others] == [a in kept for a in others]
