"""A class-data-sharing archive (HotSpot's AppCDS) for the driver JVM of local mode.

Spark's JVM loads and verifies some ten thousand classes at every start: seconds of the
start-up and of the first job. The first run's JVM writes the classes it loaded to an
archive when it exits (``-XX:ArchiveClassesAtExit``, into a file of its own); the next run
takes the finished file into use and maps the classes from it (``-XX:SharedArchiveFile``),
which on a 2-core machine starts the session about 2 s sooner and runs the first job
about 1 s sooner. The archive (about 170 MB) is kept in the tool's cache folder
(``format.cache_dir``), one per Java and PySpark installation: a JVM that finds the
archive does not match (another Java, changed jars) ignores it and loads its classes as
usual. The archives of ``KEEP_OTHERS`` other installations are kept, the last used.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from pathlib import Path

#: A dump younger than this may still be written by a JVM that is exiting.
DUMP_SECONDS = 60.0
#: Archives kept for other installations (another Java or PySpark), the last used.
KEEP_OTHERS = 2
#: What a finished dynamic archive starts with (HotSpot's ``CDS_DYNAMIC_ARCHIVE_MAGIC``).
MAGIC = (0xF00BABA8).to_bytes(4, "little")


def archive_options() -> list[str]:
    """The JVM options that use the archive, or that write it when there is none yet
    (none where the cache folder cannot be written: the JVM starts as usual)."""
    try:
        return _options()
    except OSError:
        return []


def _options() -> list[str]:
    key = _installation_key()
    if key is None:
        return []
    from ..format import cache_dir

    folder = cache_dir() / "jvm"
    archive = folder / f"spark-{key}.jsa"
    _take_finished_dump(folder, archive)
    if archive.is_file():
        try:
            os.utime(archive)  # used now: the archives of other installations go first
        except OSError:
            pass
        return [f"-XX:SharedArchiveFile={archive}"]
    if any(_age(dump) < DUMP_SECONDS for dump in _dumps(folder, archive)):
        return []  # another run's JVM is writing one
    folder.mkdir(parents=True, exist_ok=True)
    _forget_others(folder, archive)
    return [f"-XX:ArchiveClassesAtExit={folder / f'{archive.stem}.{os.getpid()}.dump'}"]


def _installation_key() -> str | None:
    """What an archive is valid for: the Java binary Spark starts (as ``spark-class``
    finds it) and the PySpark installation whose jars it loads."""
    import pyspark

    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java or not os.path.isfile(java):
        return None
    java = os.path.realpath(java)
    jars = Path(pyspark.__file__).resolve().parent / "jars"
    facts = [java, str(os.stat(java).st_mtime_ns), str(jars), pyspark.__version__]
    return hashlib.sha256("\n".join(facts).encode()).hexdigest()[:16]


def _dumps(folder: Path, archive: Path) -> list[Path]:
    return sorted(folder.glob(f"{archive.stem}.*.dump")) if folder.is_dir() else []


def _age(path: Path) -> float:
    try:
        return time.time() - path.stat().st_mtime
    except OSError:
        return 0.0


def _take_finished_dump(folder: Path, archive: Path) -> None:
    """Where there is no archive yet, make the newest dump old enough to be finished the
    archive; remove the other finished dumps (of runs that raced to write one)."""
    finished = [d for d in _dumps(folder, archive) if _age(d) >= DUMP_SECONDS]
    finished.sort(key=_age)
    taken = archive.is_file()
    for dump in finished:
        try:
            with open(dump, "rb") as f:
                whole = f.read(len(MAGIC)) == MAGIC
            if whole and not taken:
                os.replace(dump, archive)
                taken = True
            else:
                dump.unlink()
        except OSError:
            pass  # another run took it


def _forget_others(folder: Path, archive: Path) -> None:
    """Keep the archives of ``KEEP_OTHERS`` other installations (the last used): a
    PySpark upgraded or a venv removed leaves an archive no run will use again."""
    others = sorted((a for a in folder.glob("spark-*.jsa") if a != archive), key=_age)
    for old in others[KEEP_OTHERS:]:
        try:
            old.unlink()
        except OSError:
            pass
