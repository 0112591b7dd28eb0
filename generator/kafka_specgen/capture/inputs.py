"""The pipeline's input files, found and checked before Spark starts (standard library only):
a typo in a path or an empty capture is one line and a non-zero exit, not a green run of
zero frames.

Three kinds: ``pcap`` (pcap or pcapng, by magic number), ``capture`` (``kafka-specgen
capture``'s JSON lines: ``*.jsonl``, ``*.json``) and ``request log`` (a broker's request
log, ``requestlog``: a file whose first 64 KiB hold a ``Completed request:`` line). In
folders, other files are ignored; a file named explicitly is a capture file unless its
bytes say otherwise.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

from .frames import MAX_LINE, file_lines
from .pcap import is_pcap
from .requestlog import MARKER, looks_like_request_log

CAPTURE_SUFFIXES = (".jsonl", ".json")
#: A pcap's global header; a file no longer than it holds no packets.
PCAP_HEADER = 24


class InputError(ValueError):
    """Input the pipeline cannot read anything from (one line for the command line)."""


PCAP, CAPTURE, REQUEST_LOG = "pcap", "capture", "request log"


def input_files(paths: Sequence[str]) -> list[tuple[str, str]]:
    """``(path, kind)`` of every input file (kind: ``PCAP``, ``CAPTURE``, ``REQUEST_LOG``),
    sorted within each folder. The paths are absolute: executors (on a cluster) open them
    from another working folder."""
    found: list[tuple[str, str]] = []
    for path in map(os.path.abspath, paths):
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs.sort()
                for name in sorted(files):
                    full = os.path.join(root, name)
                    kind = _kind(full, named=False)
                    if kind is not None:
                        found.append((full, kind))
        elif os.path.isfile(path):
            found.append((path, _kind(path, named=True) or CAPTURE))
        else:
            raise InputError(f"no such file or folder: {path}")
    return found


def _kind(path: str, named: bool) -> str | None:
    try:
        if is_pcap(path):
            return PCAP
        if path.endswith(CAPTURE_SUFFIXES):
            return CAPTURE
        if looks_like_request_log(path):
            return REQUEST_LOG
    except OSError as exc:
        if named:
            raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return None


def check_inputs(paths: Sequence[str]) -> list[tuple[str, str]]:
    """``input_files``, refusing input with no Kafka frame to read: no files at all, or
    only capture files without a frame line and pcap files without packets."""
    files = input_files(paths)
    if not files:
        raise InputError(
            "no capture files (.jsonl), pcap files or broker request logs in "
            + ", ".join(map(str, paths))
        )
    if not any(_has_frames(path, kind) for path, kind in files):
        raise InputError(
            f"no Kafka frames in {len(files)} input file(s) ({files[0][0]}, ...): the capture "
            "files hold no frame lines, the pcap files no packets and the request logs no "
            "requests"
        )
    return files


def _has_frames(path: str, kind: str) -> bool:
    if kind == PCAP:
        return os.path.getsize(path) > PCAP_HEADER
    if kind == REQUEST_LOG:
        return any(MARKER in line for _, line, _ in file_lines(path))
    for _, line, size in file_lines(path):
        if size > MAX_LINE:
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict) and record.get("frame"):
            return True
    return False
