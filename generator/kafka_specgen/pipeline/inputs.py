"""The pipeline's input files, found and checked before Spark starts (standard library only):
a typo in a path or an empty capture is one line and a non-zero exit, not a green run of
zero frames."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

from .pcap import is_pcap

CAPTURE_SUFFIXES = (".jsonl", ".json")
#: A pcap's global header; a file no longer than it holds no packets.
PCAP_HEADER = 24


class InputError(ValueError):
    """Input the pipeline cannot read anything from (one line for the command line)."""


def input_files(paths: Sequence[str]) -> list[tuple[str, str]]:
    """``(path, "pcap" | "capture")`` of every input file, sorted within each folder. The
    paths are absolute: executors (on a cluster) open them from another working folder."""
    found: list[tuple[str, str]] = []
    for path in map(os.path.abspath, paths):
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs.sort()
                for name in sorted(files):
                    full = os.path.join(root, name)
                    if is_pcap(full):
                        found.append((full, "pcap"))
                    elif name.endswith(CAPTURE_SUFFIXES):
                        found.append((full, "capture"))
        elif os.path.isfile(path):
            found.append((path, "pcap" if is_pcap(path) else "capture"))
        else:
            raise InputError(f"no such file or folder: {path}")
    return found


def check_inputs(paths: Sequence[str]) -> list[tuple[str, str]]:
    """``input_files``, refusing input with no Kafka frame to read: no files at all, or
    only capture files without a frame line and pcap files without packets."""
    files = input_files(paths)
    if not files:
        raise InputError(f"no capture files (.jsonl) or pcap files in {', '.join(map(str, paths))}")
    if not any(_has_frames(path, kind) for path, kind in files):
        raise InputError(
            f"no Kafka frames in {len(files)} input file(s) ({files[0][0]}, ...): the capture "
            "files hold no frame lines and the pcap files no packets"
        )
    return files


def _has_frames(path: str, kind: str) -> bool:
    if kind == "pcap":
        return os.path.getsize(path) > PCAP_HEADER
    with open(path, "rb") as lines:
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and record.get("frame"):
                return True
    return False
