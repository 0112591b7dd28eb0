"""The cost of the connection layer per request, beside a bare framing round trip and beside
kafka-python's ``KafkaProtocol``, on the same frames (``make bench-connection``).

One round trip: a MetadataRequest v12 encoded into a frame, then the broker's answer (a
MetadataResponse v12 of 3 brokers and 10 topics of 6 partitions, prepared once per
correlation id) fed back and decoded. ``ClientConnection`` also matches correlation ids,
keeps the in-flight table, reads throttle times and makes a ``Response`` event; framing
alone does the encoding and decoding only; ``KafkaProtocol`` is what kafka-python 3 runs
between its client and the socket.

    python bench/connection_bench.py [--requests N] [--repeats R] [--json PATH] [--markdown PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "generated")]

from kafka_messages import framing  # noqa: E402
from kafka_messages.connection import ClientConnection, Response  # noqa: E402
from kafka_messages.headers import RequestHeader, ResponseHeader  # noqa: E402
from kafka_messages.metadata import (  # noqa: E402
    MetadataRequest,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)

VERSION = 12


def metadata_response() -> MetadataResponse:
    brokers = [MetadataResponseBroker(n, f"broker-{n}.example", 9092, None) for n in range(3)]
    topics = [
        MetadataResponseTopic(
            error_code=0,
            name=f"topic-{t}",
            partitions=[
                MetadataResponsePartition(
                    partition_index=p,
                    leader_id=p % 3,
                    replica_nodes=[0, 1, 2],
                    isr_nodes=[0, 1, 2],
                )
                for p in range(6)
            ],
        )
        for t in range(10)
    ]
    return MetadataResponse(brokers=brokers, cluster_id="bench", controller_id=0, topics=topics)


def answers(count: int, first: int) -> list[bytes]:
    """The broker's frames for correlation ids ``first`` on (ClientConnection numbers from
    0, kafka-python from 1): the same bytes but for the id."""
    body = metadata_response()
    return [
        framing.add_size_prefix(framing.encode_response(ResponseHeader(cid), body, 3, VERSION))
        for cid in range(first, first + count)
    ]


def ours(frames: list[bytes]) -> Callable[[], None]:
    def run() -> None:
        conn = ClientConnection(
            client_id="bench", broker_versions={3: (0, VERSION), 18: (0, 4)}, max_in_flight=1
        )
        conn.start(0.0)
        request = MetadataRequest(topics=None)
        for frame in frames:
            conn.send(request, 0.0, version=VERSION)
            conn.data_to_send()
            [event] = conn.receive_data(frame, 0.0)
            assert isinstance(event, Response)

    return run


def bare_framing(frames: list[bytes]) -> Callable[[], None]:
    def run() -> None:
        request = MetadataRequest(topics=None)
        for cid, frame in enumerate(frames, 1):
            header = RequestHeader(3, VERSION, cid, "bench")
            framing.add_size_prefix(framing.encode_request(header, request))
            framing.decode_response(frame[4:], 3, VERSION)

    return run


def kafka_python(frames: list[bytes]) -> Callable[[], None]:
    from kafka.protocol.metadata import MetadataRequest as KpMetadataRequest
    from kafka.protocol.parser import KafkaProtocol

    def run() -> None:
        protocol = KafkaProtocol(client_id="bench")
        for frame in frames:
            request = KpMetadataRequest[VERSION](
                topics=None,
                allow_auto_topic_creation=False,
                include_topic_authorized_operations=False,
            )
            protocol.send_request(request)
            protocol.send_bytes()
            [(_, response)] = protocol.receive_bytes(frame)

    return run


SIDES = {
    "ClientConnection": ours,
    "framing alone": bare_framing,
    "kafka-python KafkaProtocol": kafka_python,
}


def measure(requests: int, repeats: int) -> dict[str, Any]:
    frames = answers(requests, 1)
    runs = {
        name: make(answers(requests, 0) if name == "ClientConnection" else frames)
        for name, make in SIDES.items()
    }
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for run in runs.values():
        run()  # warm up
    for _ in range(repeats):  # round-robin: a noisy moment hits every side alike
        for name, run in runs.items():
            started = time.perf_counter()
            run()
            samples[name].append((time.perf_counter() - started) / requests * 1e6)
    us = {name: statistics.median(values) for name, values in samples.items()}
    ours_us = us["ClientConnection"]
    return {
        "requests": requests,
        "repeats": repeats,
        "response_bytes": len(frames[0]),
        "us_per_round_trip": {name: round(value, 2) for name, value in us.items()},
        "ours_vs": {
            name: round(value / ours_us, 2)
            for name, value in us.items()
            if name != "ClientConnection"
        },
    }


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "# The connection layer's cost",
        "",
        f"A MetadataRequest v{VERSION} out and a {result['response_bytes']}-byte MetadataResponse "
        f"v{VERSION} back, {result['requests']} round trips per run, median of "
        f"{result['repeats']} runs (`make bench-connection`).",
        "",
        "| side | µs per round trip | ClientConnection's speed relative to it |",
        "|---|---|---|",
    ]
    for name, value in result["us_per_round_trip"].items():
        ratio = result["ours_vs"].get(name)
        lines.append(f"| {name} | {value} | {'-' if ratio is None else f'{ratio}x'} |")
    lines += [
        "",
        "A ratio above 1 means ClientConnection is faster; framing alone is the floor that "
        "the connection's bookkeeping (correlation, in-flight table, events) adds to.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="round trips per run")
    parser.add_argument("--repeats", type=int, default=7, help="runs per side (median)")
    parser.add_argument("--json", type=Path, help="write the figures as JSON here")
    parser.add_argument("--markdown", type=Path, help="write a markdown table here")
    args = parser.parse_args(argv)
    result = measure(args.requests, args.repeats)
    text = markdown(result)
    print(text, end="")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    if args.markdown:
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
