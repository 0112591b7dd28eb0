"""The golden captures (``tests/golden/*.jsonl``): frames recorded between real clients
(librdkafka, kafka-python, aiokafka, hand-made requests) and a real broker (Tansu), read
as ``Frame`` values, with the captures' known quirks: a client that pads a request with
trailing bytes, a broker answer that breaks the protocol. The golden tests check every
frame; the codec benchmark times their bodies."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator

GOLDEN = Path(__file__).resolve().parents[1] / "tests" / "golden"


@dataclass(frozen=True)
class Frame:
    file: str
    line: int
    client: str
    dir: str
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    data: bytes

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


CLIENTS = ("librdkafka", "kafka_python", "aiokafka", "handmade")


def client_of(stem: str) -> str:
    for client in CLIENTS:
        if stem.startswith(client):
            return client
    return stem.split("_")[0]


def read_capture(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


@lru_cache(maxsize=None)
def golden_frames() -> tuple[Frame, ...]:
    frames = []
    for path in sorted(GOLDEN.glob("*.jsonl")):
        for i, rec in enumerate(read_capture(path), 1):
            if rec["api_key"] is None:
                continue  # a response whose request was not seen: nothing to decode it with
            frames.append(
                Frame(
                    path.name,
                    i,
                    client_of(path.stem),
                    rec["dir"],
                    rec["api_key"],
                    rec["api_version"],
                    rec["correlation_id"],
                    rec["client_id"],
                    bytes.fromhex(rec["frame"]),
                )
            )
    return tuple(frames)


#: Frames where Tansu breaks the protocol, so a strict decoder must refuse them:
#: (api key, direction, version) -> the start of the DecodeError message expected.
BROKER_VIOLATIONS = {
    # a null ``Results`` array, which the spec does not allow to be null (Tansu answers
    # DescribeUserScramCredentials as it answers CreateAcls)
    (50, "response", 0): "DescribeUserScramCredentialsResponse.results: null in a non-nullable",
}


#: Requests where a client sends bytes after the body (Kafka's broker does not check for
#: them; our framing is strict and refuses them): (client, api key, version) -> how many.
#: Everything before them must still round-trip byte-exact.
CLIENT_TRAILING_BYTES = {
    # librdkafka 2.16's all-topics MetadataRequest v12 (list_topics): 3 bytes (01 00 00)
    # after the body's tag section
    ("librdkafka", 3, 12): 3,
}


def trailing_bytes(frame: Frame, pkg: ModuleType) -> int:
    """How many bytes a known client quirk put after the body of this frame (0: none)."""
    extra = CLIENT_TRAILING_BYTES.get((frame.client, frame.api_key, frame.api_version), 0)
    if frame.dir != "request" or not extra:
        return 0
    try:
        pkg.framing.decode_request(frame.data)
        return 0
    except pkg.errors.DecodeError as exc:
        return extra if str(exc).startswith(f"{type_name(frame, pkg)}: {extra} trailing") else 0


def type_name(frame: Frame, pkg: ModuleType) -> str:
    entry = pkg.registry.API_KEYS[frame.api_key]
    return str((entry.request if frame.dir == "request" else entry.response).__name__)
