"""Build ``specs/facts/broker-releases.json``: what a broker of each Kafka release, 0.8 to
4.3, advertises in ApiVersions and what it accepts, by broker kind (ZooKeeper, KRaft), with
its quirks and feature levels.

Sources, by row (``tools/release_data.py`` says which row takes which):

- kafka-python 3's captured ApiVersions answers (``BROKER_API_VERSIONS``, Apache-2.0) for
  ZooKeeper brokers and for 4.x;
- the release's own specs for KRaft brokers before 4.0 (listener ``broker``, stable
  versions), and for every row from 2.4 the versions hidden unless enabled (telemetry,
  ``latestVersionUnstable``);
- reviewed facts from Kafka's source (``tools/release_data.py``): rows without ApiVersions,
  quirks, feature levels.

    python tools/release_table.py --corpora DIR [--check]

``--corpora`` is a folder of spec sets named like ``3.8.0`` (default: ``KAFKA_SPECGEN_CORPORA``,
else the tool's bundled history, extracted into a temporary folder); a row takes the set of its release line at or above its
release. ``--check`` writes nothing and exits 1 if the table on disk differs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import release_data as data  # noqa: E402
from kafka_specgen import history  # noqa: E402
from kafka_specgen.library import load_specs  # noqa: E402
from kafka_specgen.release_names import Release  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "specs" / "facts" / "broker-releases.json"
CORPUS_NAME = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+\Z")
LISTENER = {"zookeeper": "zkBroker", "kraft": "broker"}
TELEMETRY_APIS = (71, 72)
WIDTH = 100
ABOUT = (
    "What a broker of each Apache Kafka release advertises in ApiVersions and what it "
    "accepts, by broker kind, built by tools/release_table.py from kafka-python 3's captured "
    "answers, the release's specs and reviewed facts from Kafka's source (tools/release_data.py)."
    " A row stands for its release and the patch releases after it up to the next row. "
    "Ranges are [api key, min version, max version]. advertised: the default configuration's "
    "answer; telemetry: added when a client-telemetry receiver is configured; unstable: the "
    "ranges with unstable.api.versions.enable; refused: advertised versions the broker "
    "refuses; accepted (rows without ApiVersions): what the broker handles. features: the "
    "ApiVersions v3+ feature part (levels; metadata_versions are [level, name, metadata "
    "changed])."
)

Ranges = dict[int, tuple[int, int]]


def kafka_python_key(release: Release) -> tuple[int, ...]:
    """kafka-python's key for a release: ``(0, 10, 2)``, ``(0, 9)``, ``(2, 8)``."""
    from kafka.protocol.broker_version_data import BROKER_API_VERSIONS

    line = release.line
    for key in (line, line[:-1] if line[-1] == 0 else line):
        if key in BROKER_API_VERSIONS:
            return tuple(key)
    raise SystemExit(f"release_table: kafka-python has no row for {release}")


def kafka_python_ranges(release: Release) -> Ranges:
    from kafka.protocol.broker_version_data import BROKER_API_VERSIONS

    table = BROKER_API_VERSIONS[kafka_python_key(release)]
    return {int(key): (lo, hi) for key, (lo, hi) in sorted(table.items())}


def corpus_folder(corpora: Path, release: Release) -> Path | None:
    """The spec set of ``release``'s line at or above it (the line's specs did not change
    but for 4.0.0 -> 4.0.1, which both have a set); None before 2.4 (no JSON specs)."""
    if release < Release.parse("2.4"):
        return None
    folders = sorted(
        (Release.parse(p.name), p)
        for p in corpora.iterdir()
        if p.is_dir() and CORPUS_NAME.match(p.name)
    )
    for version, folder in folders:
        if version.line == release.line and version >= release:
            return folder
    raise SystemExit(
        f"release_table: no spec set for {release} (line {release.short}) in {corpora}"
    )


@cache
def spec_ranges(folder: Path, listener: str, unstable: bool) -> Ranges:
    """What a broker of this spec set, on ``listener``, would advertise from the specs alone:
    requests whose listeners include it (all requests before 2.8: no listeners), at their
    valid versions, less an unstable latest version unless ``unstable``."""
    ranges: Ranges = {}
    for message in load_specs([folder], warn=False, facts=None)[0]:
        if message.type != "request" or message.removed or message.api_key is None:
            continue
        if message.listeners and listener not in message.listeners:
            continue
        versions = message.valid_versions
        hi = versions.hi
        if message.latest_version_unstable and not unstable:
            hi -= 1
        if hi >= versions.lo:
            ranges[message.api_key] = (versions.lo, hi)
    return dict(sorted(ranges.items()))


def build_row(spec: data.RowSpec, corpora: Path) -> dict[str, Any]:
    release = Release.parse(spec.release)
    folder = corpus_folder(corpora, release)
    listener = LISTENER[spec.kind]
    row: dict[str, Any] = {"release": str(release), "kind": spec.kind}
    sources: list[str] = []
    if spec.base == "fixed":
        row["api_versions"] = spec.api_versions
        row["accepted"] = triples(spec.accepted)
        key = kafka_python_key(release)
        sources.append(f"kafka-python: BROKER_API_VERSIONS[{key}] (synthesized)")
        return finish(row, spec, sources, release)
    if spec.base == "kafka-python":
        advertised = kafka_python_ranges(release)
        sources.append(f"kafka-python: BROKER_API_VERSIONS[{kafka_python_key(release)}]")
    else:
        assert folder is not None, spec
        advertised = dict(spec_ranges(folder, listener, False))
        sources.append(f"specs: {folder.name}, listener {listener}, stable versions")
    for key, value in spec.changes.items():
        if value is None:
            advertised.pop(key, None)
        else:
            advertised[key] = value
    telemetry: Ranges = {}
    unstable: Ranges = {}
    if folder is not None:
        stable = spec_ranges(folder, listener, False)
        if spec.kind == "kraft":
            telemetry = {k: stable[k] for k in TELEMETRY_APIS if k in stable}
            for key in telemetry:
                advertised.pop(key, None)
        unstable = {
            key: r for key, r in spec_ranges(folder, listener, True).items() if stable.get(key) != r
        }
        hidden = [name for name, part in (("telemetry", telemetry), ("unstable", unstable)) if part]
        if hidden:
            sources.append(f"specs: {folder.name}, {' and '.join(hidden)} versions")
    row["advertised"] = triples(advertised)
    if telemetry:
        row["telemetry"] = triples(telemetry)
    if unstable:
        row["unstable"] = triples(unstable)
    if spec.refused:
        row["refused"] = [
            {
                "api_key": r.api_key,
                "versions": list(r.versions),
                "answer": r.answer,
                "quirk": r.quirk,
            }
            for r in spec.refused
        ]
    return finish(row, spec, sources, release)


def finish(
    row: dict[str, Any], spec: data.RowSpec, sources: list[str], release: Release
) -> dict[str, Any]:
    quirks = list(spec.quirks)
    if "unstable" in row:
        quirks.append("unstable")
    features = feature_facts(spec.kind, release)
    if features is not None:
        row["features"] = features
        if spec.kind == "kraft" and release >= Release.parse(data.KRAFT_FEATURE_VERSIONS_FROM):
            sources.append(
                f"kafka: {release.short}.0 MetadataVersion.java, BrokerFeatures, feature classes"
            )
    row["quirks"] = quirks
    if quirks:
        sources.append("kafka: the quirks' sources")
    if spec.notes:
        sources.append("kafka: as the notes say")
    row["sources"] = sources
    if spec.notes:
        row["notes"] = list(spec.notes)
    return row


def feature_facts(kind: str, release: Release) -> dict[str, Any] | None:
    """The ApiVersions v3+ feature part of a broker of ``release``; None before 2.7."""
    if release < Release.parse(data.FEATURES_FROM):
        return None
    if kind == "zookeeper":
        return {"epoch": "zookeeper", "supported": {}, "finalized": {}}
    if release < Release.parse(data.KRAFT_FEATURE_VERSIONS_FROM):
        return {"epoch": "unknown", "supported": {}, "finalized": {}}
    line = release.short
    facts = data.KRAFT_FEATURES[line]
    supported = facts["supported"]
    out: dict[str, Any] = {"epoch": "metadata offset", "supported": ranges_by_name(supported)}
    if "supported_unstable" in facts:
        out["supported_unstable"] = ranges_by_name(facts["supported_unstable"])
    out["finalized"] = dict(facts["finalized"])  # type: ignore[call-overload]
    out["metadata_version_floor"] = facts["floor"]
    out["metadata_versions"] = [list(level) for level in data.METADATA_VERSIONS[line]]
    return out


def ranges_by_name(ranges: object) -> dict[str, list[int]]:
    assert isinstance(ranges, dict)
    return {name: list(r) for name, r in ranges.items()}


def triples(ranges: Ranges) -> list[list[int]]:
    return [[key, lo, hi] for key, (lo, hi) in sorted(ranges.items())]


def build(corpora: Path) -> dict[str, Any]:
    return {
        "facts": "broker-releases",
        "about": ABOUT,
        "sources": data.SOURCES,
        "quirks": data.QUIRKS,
        "epochs": data.EPOCHS,
        "entries": [build_row(spec, corpora) for spec in data.ROWS],
    }


def dump(value: Any, indent: int = 0, lead: int = 0) -> str:
    """JSON laid out for reading: a value on one line when it fits (``lead``: the width of
    what precedes it on its line), else one item per line, with short items (numbers,
    ranges) packed into full lines."""
    flat = json.dumps(value)
    if indent + lead + len(flat) <= WIDTH or not isinstance(value, (list, dict)) or not value:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = [
            f"{pad}{json.dumps(k)}: {dump(v, indent + 2, len(json.dumps(k)) + 3)}"
            for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    parts = [dump(item, indent + 2) for item in value]
    if all("\n" not in p and len(p) <= 40 for p in parts):
        lines, line = [], ""
        for part in parts:
            if line and len(pad) + len(line) + len(part) + 3 > WIDTH:
                lines.append(line + ",")
                line = ""
            line = f"{line}, {part}" if line else part
        lines.append(line)
        return "[\n" + "\n".join(pad + l for l in lines) + "\n" + " " * indent + "]"
    return "[\n" + ",\n".join(pad + p for p in parts) + "\n" + " " * indent + "]"


def table_text(corpora: Path) -> str:
    return dump(build(corpora)) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    default = os.environ.get("KAFKA_SPECGEN_CORPORA")
    parser.add_argument(
        "--corpora",
        type=Path,
        default=Path(default) if default else None,
        help="folder of spec sets (3.8.0, ...); default: the bundled history",
    )
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if the table differs; write nothing"
    )
    args = parser.parse_args(argv)
    if args.corpora is None:
        with tempfile.TemporaryDirectory() as folder:
            history.extract(folder)
            text = table_text(Path(folder))
    elif not args.corpora.is_dir():
        raise SystemExit(f"release_table: no folder {args.corpora} (give --corpora)")
    else:
        text = table_text(args.corpora)
    if args.check:
        same = TABLE.is_file() and TABLE.read_text(encoding="utf-8") == text
        print(f"{TABLE.relative_to(ROOT)}: {'up to date' if same else 'differs'}")
        return 0 if same else 1
    TABLE.write_text(text, encoding="utf-8")
    print(f"wrote {TABLE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
