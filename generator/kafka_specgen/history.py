"""Kafka's spec history, bundled with the tool: the JSON specs of every release from 2.4.

``specs/history/kafka-specs.xz`` holds every spec set the tool knows (the releases 2.4.0 to
4.3.1, a trunk snapshot and kafka-python's set), each file once however many sets share
it. It is one xz stream: a line of JSON, the index, then the distinct files' bytes back to
back, in the index's order::

    {"format": 1,
     "sets": [{"name": "2.4.0", "origin": "apache/kafka tag 2.4.0", "commit": "77a8...",
               "files": {"message/AddOffsetsToTxnRequest.json": "<git blob id>", ...}}, ...],
     "texts": [["<git blob id>", <size in bytes>], ...]}

A set's files are keyed by their path inside the set (``message/``, ``metadata/``, ... as
in Kafka's tree); a file is named by its git blob id (``git hash-object``), so each one can
be checked against Kafka's history. ``tools/history_bundle.py`` writes the bundle.

The bundle is read once per process. ``release_data("4.1.1")`` says which set serves a
release; ``set_specs`` parses a set (sources like ``4.1.2/message/FetchRequest.json``);
``extract`` writes sets out as folders.
"""

from __future__ import annotations

import functools
import hashlib
import json
import lzma
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from .load import RawSpec, parse_spec_text
from .release_names import Release, ReleaseNameError
from .resources import package_folder
from .union import union_specs

BUNDLE_FILE = "kafka-specs.xz"
FORMAT = 1
#: ``--release all``: every release at once (``all_specs``).
ALL = "all"

# xz with explicit settings, so equal input gives equal bytes (for a given liblzma): the
# files are text, hence a literal context of 4 bits and no position bits.
_FILTERS = [
    {
        "id": lzma.FILTER_LZMA2,
        "preset": 9 | lzma.PRESET_EXTREME,
        "lc": 4,
        "lp": 0,
        "pb": 0,
        "nice_len": 273,
    }
]


class HistoryError(ValueError):
    """A release or set the bundle cannot serve, or a damaged bundle (one line)."""


@dataclass(frozen=True)
class BundledSet:
    """One spec set of the bundle: where it comes from and its files."""

    name: str
    """``2.4.0``, ``4.1.2``, ``trunk-2024-10``, ``kafka-python-3.0.12``."""
    origin: str
    """Where the files were taken from, e.g. ``apache/kafka tag 2.4.0``."""
    commit: str | None
    """The Kafka commit the files are from (None for kafka-python's set)."""
    files: Mapping[str, str]
    """Path inside the set (``message/FetchRequest.json``) -> git blob id."""

    @property
    def release(self) -> Release | None:
        """The Kafka release this set is, or None (a trunk snapshot, kafka-python's set)."""
        try:
            return Release.parse(self.name)
        except ReleaseNameError:
            return None


@dataclass(frozen=True)
class Bundle:
    """The decoded bundle: its sets in order (releases oldest first, then the others by
    name) and every distinct file, by git blob id."""

    sets: tuple[BundledSet, ...]
    texts: Mapping[str, bytes]

    def set(self, name: str) -> BundledSet:
        for spec_set in self.sets:
            if spec_set.name == name:
                return spec_set
        raise HistoryError(
            f"no bundled spec set {name!r} (bundled: {', '.join(s.name for s in self.sets)})"
        )

    def files(self, name: str) -> dict[str, bytes]:
        """Path -> bytes of every file of set ``name``, by path."""
        return {path: self.texts[blob] for path, blob in sorted(self.set(name).files.items())}


def blob_id(content: bytes) -> str:
    """The git blob id of ``content`` (what ``git hash-object`` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def set_order(name: str) -> tuple[int, tuple[int, int, int, int], str]:
    """Releases oldest first, then the other sets by name."""
    try:
        return (0, Release.parse(name).parts, name)
    except ReleaseNameError:
        return (1, (0, 0, 0, 0), name)


def encode_bundle(bundle: Bundle) -> bytes:
    """The bundle's bytes. Texts follow each other sorted by file name (then by the first
    set that has them), so the versions of one spec sit side by side for the compressor."""
    first_seen: dict[str, tuple[str, int]] = {}
    for number, spec_set in enumerate(bundle.sets):
        for path, blob in sorted(spec_set.files.items()):
            first_seen.setdefault(blob, (path.rsplit("/", 1)[-1], number))
    order = sorted(first_seen, key=lambda blob: (*first_seen[blob], blob))
    index = {
        "format": FORMAT,
        "sets": [
            {
                "name": s.name,
                "origin": s.origin,
                "commit": s.commit,
                "files": dict(sorted(s.files.items())),
            }
            for s in bundle.sets
        ],
        "texts": [[blob, len(bundle.texts[blob])] for blob in order],
    }
    header = json.dumps(index, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    body = b"".join(bundle.texts[blob] for blob in order)
    return lzma.compress(header + b"\n" + body, format=lzma.FORMAT_XZ, filters=_FILTERS)


def decode_bundle(data: bytes) -> Bundle:
    """The bundle in ``data``; ``HistoryError`` if it is not one this tool can read."""
    try:
        raw = lzma.decompress(data)
        header, _, body = raw.partition(b"\n")
        index: dict[str, Any] = json.loads(header)
    except (lzma.LZMAError, ValueError) as error:
        raise HistoryError(f"the spec history bundle is unreadable: {error}") from None
    if index.get("format") != FORMAT:
        raise HistoryError(f"the spec history bundle has format {index.get('format')!r}")
    texts: dict[str, bytes] = {}
    offset = 0
    for blob, size in index["texts"]:
        texts[blob] = body[offset : offset + size]
        offset += size
    if offset != len(body):
        raise HistoryError("the spec history bundle is truncated or has trailing bytes")
    sets = tuple(
        BundledSet(s["name"], s["origin"], s["commit"], dict(s["files"])) for s in index["sets"]
    )
    missing = {blob for s in sets for blob in s.files.values()} - texts.keys()
    if missing:
        raise HistoryError(f"the spec history bundle lacks {len(missing)} of its files")
    return Bundle(sets, texts)


def bundle_path() -> Path:
    """The bundle file, in the checkout's ``specs/history`` or the installed package."""
    return package_folder("specs") / "history" / BUNDLE_FILE


@functools.lru_cache(maxsize=1)
def bundle() -> Bundle:
    """The bundle, read once per process."""
    return decode_bundle(bundle_path().read_bytes())


def set_names() -> list[str]:
    """Every bundled set: the releases oldest first, then the others by name."""
    return [s.name for s in bundle().sets]


def releases() -> list[Release]:
    """The Kafka releases among the bundled sets, oldest first."""
    return [r for r in (s.release for s in bundle().sets) if r is not None]


def oldest_set() -> str:
    """The oldest release's set (``2.4.0``): for callers that serve releases before it
    with its codecs, capped to that release's own ranges."""
    return str(releases()[0])


def set_specs(name: str) -> list[RawSpec]:
    """The parsed specs of bundled set ``name``, as ``load`` reads a folder of them: by
    path, displayed as ``4.1.2/message/FetchRequest.json``."""
    return [
        parse_spec_text(content.decode("utf-8"), f"{name}/{path}")
        for path, content in bundle().files(name).items()
    ]


@dataclass(frozen=True)
class ReleaseData:
    """The spec data that serves a Kafka release: a bundled release's set."""

    release: Release
    """The release asked for (``4.1`` is 4.1.0)."""
    set_name: str
    """The bundled set holding its specs (``4.1.2``)."""

    @property
    def label(self) -> str:
        """What commands print: ``Kafka 4.1.1 (spec data of 4.1.2)``, ``Kafka 4.0.0``."""
        if str(self.release) == self.set_name:
            return f"Kafka {self.release}"
        return f"Kafka {self.release} (spec data of {self.set_name})"

    def specs(self) -> list[RawSpec]:
        return set_specs(self.set_name)


def release_data(name: str | Release) -> ReleaseData:
    """The bundled spec data of Kafka release ``name`` (``X.Y`` is X.Y.0).

    A bundled release is its own set. Another release of a bundled line takes the line's
    first set released after it, or else the line's newest: 4.0.1 takes 4.0.2's (4.0.1
    restored JoinGroup v0-1, which 4.0.0 had dropped), 4.1.0 takes 4.1.2's, 3.9.1 takes
    3.9.0's. Releases before 2.4 have no JSON specs; lines newer than the bundle's are not
    known. Both raise ``HistoryError``.
    """
    try:
        release = name if isinstance(name, Release) else Release.parse(name)
    except ReleaseNameError as error:
        raise HistoryError(str(error)) from None
    bundled = releases()
    if release < bundled[0]:
        raise HistoryError(
            f"Kafka's JSON specs start at {bundled[0].short}: release {release} has none "
            f"(the bundle has {bundled[0].short} to {bundled[-1].short}; give specs with --specs)"
        )
    line = [r for r in bundled if r.line == release.line]
    if not line:
        raise HistoryError(
            f"no bundled spec data for Kafka {release}: the bundle has the releases "
            f"{bundled[0].short} to {bundled[-1].short} (give newer specs with --specs)"
        )
    later = [r for r in line if r >= release]
    return ReleaseData(release, str(later[0] if later else line[-1]))


def all_specs() -> list[RawSpec]:
    """``--release all``: one spec set that decodes every version of every API and record
    format that any bundled release defines, the older releases providing what newer ones
    removed (``union.union_specs``; trunk and kafka-python's set are not releases)."""
    return union_specs([(str(r), set_specs(str(r))) for r in releases()])


def extract(dest: Path | str, names: Sequence[str] | None = None) -> dict[str, Path]:
    """Write bundled sets (``names``, default all) as folders ``dest/<set>/<path>``, byte
    for byte; return each set's folder. Existing files are overwritten."""
    folders: dict[str, Path] = {}
    for name in set_names() if names is None else names:
        folder = Path(dest) / name
        for path, content in bundle().files(name).items():
            target = folder / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        folders[name] = folder
    return folders


def bundle_problems(found: Bundle, sources: Iterable[tuple[str, Mapping[str, bytes]]]) -> list[str]:
    """What differs between ``found`` and spec sets read from disk (set name -> path ->
    bytes); also every text whose git blob id is not its key. Empty when they agree."""
    problems = [
        f"text {blob}: its git blob id is {blob_id(text)}"
        for blob, text in found.texts.items()
        if blob_id(text) != blob
    ]
    expected = dict(sources)
    names = [s.name for s in found.sets]
    for name in sorted(expected.keys() - set(names)):
        problems.append(f"set {name}: not in the bundle")
    for name in names:
        if name not in expected:
            problems.append(f"set {name}: in the bundle, not in the source")
            continue
        have, want = found.files(name), expected[name]
        for path in sorted(have.keys() | want.keys()):
            if path not in want:
                problems.append(f"{name}/{path}: in the bundle, not in the source")
            elif path not in have:
                problems.append(f"{name}/{path}: not in the bundle")
            elif have[path] != want[path]:
                problems.append(f"{name}/{path}: differs from the source")
    return problems
