"""Build ``specs/history/kafka-specs.xz``, the bundle of Kafka's spec sets, or check it.

    python tools/history_bundle.py [--corpora DIR] [--bundle FILE] [--check]

``--corpora`` is a folder with one folder per spec set (``2.4.0/``, ``trunk-2024-10/``,
``kafka-python-3.0.12/``, ...; inside each, Kafka's module folders such as ``message/``)
and a ``README.md`` whose table gives each Kafka folder's ref and commit id, one row per
folder::

    | `2.4.0/` | tag `2.4.0` | `77a89fcf8d7fa01831683327727f11f4bed97319` |

Default: ``KAFKA_SPECGEN_CORPORA``, else ``../shared/kafka-specs``. Every ``*.json`` file of
every set folder is taken, byte for byte. ``--bundle`` is the file to write or check
(default: the tool's own). ``--check`` writes nothing: it exits 1 unless the bundle holds
exactly those files and each text's git blob id is its key.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from kafka_specgen.history import (
    Bundle,
    BundledSet,
    blob_id,
    bundle_path,
    bundle_problems,
    decode_bundle,
    encode_bundle,
    set_order,
)

ROOT = Path(__file__).resolve().parents[1]
#: ``| `2.4.0/` | tag `2.4.0` | `77a8...` |``: a set folder, its Kafka ref, its commit.
ROW = re.compile(r"^\| `(?P<name>[^`/]+)/` \| (?P<ref>.+?) \| `(?P<commit>[0-9a-f]{40})` \|$")
#: Sets that are not a Kafka commit: where they come from.
OTHER_ORIGINS = {
    "kafka-python-3.0.12": "the spec files PyPI kafka-python 3.0.12 ships "
    "(kafka/protocol/schemas/resources/; Apache-2.0)",
}


def read_sets(corpora: Path) -> list[tuple[BundledSet, dict[str, bytes]]]:
    """Every set folder of ``corpora`` with its origin and files, in the bundle's order."""
    readme = corpora / "README.md"
    if not readme.is_file():
        raise SystemExit(f"history_bundle: {readme} is missing (it names each set's commit)")
    commits = {}
    for line in readme.read_text(encoding="utf-8").splitlines():
        match = ROW.match(line.strip())
        if match:
            ref = match["ref"].replace("`", "")
            commits[match["name"]] = (f"apache/kafka {ref}", match["commit"])
    found = []
    for folder in sorted(
        (p for p in corpora.iterdir() if p.is_dir()), key=lambda p: set_order(p.name)
    ):
        if folder.name in commits:
            origin, commit = commits[folder.name]
        elif folder.name in OTHER_ORIGINS:
            origin, commit = OTHER_ORIGINS[folder.name], None
        else:
            raise SystemExit(
                f"history_bundle: {folder.name}/ has no commit in {readme} and no known origin"
            )
        files = {
            path.relative_to(folder).as_posix(): path.read_bytes()
            for path in sorted(folder.rglob("*.json"))
            if path.is_file()
        }
        if not files:
            raise SystemExit(f"history_bundle: {folder} holds no *.json files")
        blobs = {path: blob_id(content) for path, content in files.items()}
        found.append((BundledSet(folder.name, origin, commit, blobs), files))
    if not found:
        raise SystemExit(f"history_bundle: no spec set folders in {corpora}")
    return found


def build(corpora: Path) -> Bundle:
    sets = read_sets(corpora)
    texts = {s.files[path]: content for s, files in sets for path, content in files.items()}
    return Bundle(tuple(s for s, _ in sets), texts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = os.environ.get("KAFKA_SPECGEN_CORPORA") or ROOT.parent / "shared" / "kafka-specs"
    parser.add_argument(
        "--corpora", type=Path, default=Path(default), help="folder of spec set folders"
    )
    parser.add_argument(
        "--bundle", type=Path, default=bundle_path(), help="the bundle file (default: the tool's)"
    )
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 unless the bundle matches"
    )
    args = parser.parse_args(argv)
    target = args.bundle.resolve()
    shown = target.relative_to(ROOT) if target.is_relative_to(ROOT) else target
    if args.check:
        if not target.is_file():
            print(f"{shown}: missing")
            return 1
        sets = read_sets(args.corpora)
        found = decode_bundle(target.read_bytes())
        problems = bundle_problems(found, [(s.name, files) for s, files in sets])
        for problem in problems:
            print(problem)
        files = sum(len(s.files) for s in found.sets)
        verdict = f"{len(problems)} problems" if problems else "matches"
        print(
            f"{shown}: {verdict} ({len(found.sets)} sets, {files} files, {len(found.texts)} texts)"
        )
        return 1 if problems else 0
    data = encode_bundle(build(args.corpora))
    target.write_bytes(data)
    print(f"wrote {shown} ({len(data):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
