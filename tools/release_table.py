"""Build ``specs/facts/broker-releases.json``: the API ranges each Kafka release's broker
advertises in ApiVersions, from that release's own specs.

A broker advertises every request whose ``listeners`` include ``broker`` or ``zkBroker``
(specs before 2.8 have no listeners: every request was a broker's), at its valid versions,
less a latest version marked ``latestVersionUnstable`` (brokers hide it unless told
otherwise). Removed APIs (``validVersions: none``) are not advertised.

    python tools/release_table.py [--corpora DIR] [--check]

``--corpora`` is a folder of release folders named like ``3.8.0`` (default: the test
corpora, ``KAFKA_SPECGEN_CORPORA`` or ``../shared/kafka-specs``); other folders are
skipped. ``--check`` writes nothing and exits 1 if the table on disk differs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from kafka_specgen.library import load_specs
from kafka_specgen.model import Message

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "specs" / "facts" / "broker-releases.json"
RELEASE = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+\Z")
BROKER_LISTENERS = frozenset({"broker", "zkBroker"})
ABOUT = (
    "The API ranges a broker of each Apache Kafka release advertises in its ApiVersions "
    "response, built from that release's specs by tools/release_table.py: every request "
    "whose listeners include broker or zkBroker (all requests before 2.8, whose specs have "
    "no listeners), at its valid versions less a latest version marked unstable. Each api "
    "is [api key, min version, max version]."
)


def advertised(messages: list[Message]) -> list[tuple[int, int, int]]:
    """``(api key, min, max)`` of every API a broker of this spec set advertises."""
    apis = []
    for message in messages:
        if message.type != "request" or message.removed or message.api_key is None:
            continue
        if message.listeners and not BROKER_LISTENERS & set(message.listeners):
            continue
        versions = message.valid_versions
        hi = versions.hi - 1 if message.latest_version_unstable else versions.hi
        if hi >= versions.lo:
            apis.append((message.api_key, versions.lo, hi))
    return sorted(apis)


def release_folders(corpora: Path) -> list[Path]:
    folders = [p for p in corpora.iterdir() if p.is_dir() and RELEASE.match(p.name)]
    return sorted(folders, key=lambda p: tuple(int(x) for x in p.name.split(".")))


def table_text(corpora: Path) -> str:
    """The JSON text of the table: one release per entry, one line per ten APIs."""
    entries = []
    for folder in release_folders(corpora):
        apis = advertised(load_specs([folder], warn=False)[0])
        rows = [
            ", ".join(json.dumps(list(api)) for api in apis[i : i + 10])
            for i in range(0, len(apis), 10)
        ]
        body = ",\n      ".join(rows)
        entries.append(f'    {{"release": "{folder.name}", "apis": [\n      {body}\n    ]}}')
    if not entries:
        raise SystemExit(f"release_table: no release folders (like 3.8.0) in {corpora}")
    header = f'{{\n  "facts": "broker-releases",\n  "about": {json.dumps(ABOUT)},\n'
    return header + '  "entries": [\n' + ",\n".join(entries) + "\n  ]\n}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = os.environ.get("KAFKA_SPECGEN_CORPORA") or ROOT.parent / "shared" / "kafka-specs"
    parser.add_argument(
        "--corpora", type=Path, default=Path(default), help="folder of release folders"
    )
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if the table differs; write nothing"
    )
    args = parser.parse_args(argv)
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
