"""Pipeline benchmark (``make bench-pipeline``): frames per second of the PySpark pipeline on
a synthetic capture, beside a plain single-process Python loop over the same frames.

The capture (``--frames``, default 1,000,000) is one capture file of ``--conns``
connections, each starting with ApiVersions v3 and then Metadata v12 requests (3 topics)
and their responses (3 brokers, 3 topics of 4 partitions), encoded with the repo's
``kafka_messages``. Both sides do the same work per frame (``pipeline.decode.Decoder``:
decode, re-encode, compare bytes, ``to_dict`` as JSON); the pipeline also reads the file
in 64 MiB partitions and writes every table (usage/, conformance/, messages/, errors/).
Spark's start-up (the JVM and the session) is reported on its own line, not in frames/s.

Writes ``bench/pipeline_results.json`` and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import struct
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kafka_messages import framing  # noqa: E402
from kafka_messages.api_versions import (  # noqa: E402
    ApiVersionsRequest,
    ApiVersionsResponse,
    ApiVersionsResponseApiVersion,
)
from kafka_messages.headers import RequestHeader, ResponseHeader  # noqa: E402
from kafka_messages.metadata import (  # noqa: E402
    MetadataRequest,
    MetadataRequestTopic,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)


def templates() -> list[tuple[str, int, int, bytes, bytes]]:
    """``(dir, api_key, version, header prefix before the correlation id, rest)`` per kind."""
    topics = [f"orders-{i}" for i in range(3)]
    md_req = MetadataRequest(topics=[MetadataRequestTopic(name=t) for t in topics])
    P = MetadataResponsePartition
    md_resp = MetadataResponse(
        brokers=[MetadataResponseBroker(node_id=n, host=f"b{n}", port=9092) for n in range(3)],
        cluster_id="bench",
        controller_id=0,
        topics=[
            MetadataResponseTopic(
                name=t,
                partitions=[
                    P(
                        partition_index=p,
                        leader_id=p % 3,
                        replica_nodes=[0, 1, 2],
                        isr_nodes=[0, 1, 2],
                    )
                    for p in range(4)
                ],
            )
            for t in topics
        ],
    )
    av_req = ApiVersionsRequest(client_software_name="bench-client", client_software_version="1.0")
    av_resp = ApiVersionsResponse(
        api_keys=[
            ApiVersionsResponseApiVersion(api_key=k, min_version=0, max_version=v)
            for k, v in ((3, 12), (18, 4))
        ]
    )
    out = []
    for direction, key, version, body in (
        ("request", 18, 3, av_req),
        ("response", 18, 3, av_resp),
        ("request", 3, 12, md_req),
        ("response", 3, 12, md_resp),
    ):
        if direction == "request":
            frame = framing.encode_request(
                RequestHeader(
                    request_api_key=key,
                    request_api_version=version,
                    correlation_id=0,
                    client_id="bench",
                ),
                body,
            )
            out.append((direction, key, version, frame[:4], frame[8:]))
        else:
            frame = framing.encode_response(ResponseHeader(correlation_id=0), body, key, version)
            out.append((direction, key, version, b"", frame[4:]))
    return out


def write_capture(path: Path, frames: int, conns: int) -> None:
    kinds = templates()
    per_conn = max(2, frames // conns)
    written = 0
    ts = 1.7e9
    with path.open("w", encoding="utf-8") as f:
        conn = 0
        while written < frames:
            conn += 1
            for i in range(min(per_conn, frames - written)):
                pair, corr = i // 2, i // 2 + 1
                kind = kinds[(0 if pair == 0 else 2) + (i % 2)]
                direction, key, version, prefix, rest = kind
                frame = prefix + struct.pack(">i", corr) + rest
                ts += 0.0001
                f.write(
                    json.dumps(
                        {
                            "ts": round(ts, 6),
                            "conn": conn,
                            "dir": direction,
                            "api_key": key,
                            "api_version": version,
                            "correlation_id": corr,
                            "client_id": "bench",
                            "frame": frame.hex(),
                        },
                        separators=(", ", ": "),
                    )
                    + "\n"
                )
            written += min(per_conn, frames - written)


def plain_loop(path: Path) -> tuple[float, int, int]:
    from kafka_specgen.pipeline.decode import Decoder
    from kafka_specgen.pipeline.frames import capture_rows

    decoder = Decoder("kafka_messages")
    started = time.perf_counter()
    n = ok = 0
    for row in capture_rows(str(path)):
        out = decoder.decode(row.direction, row.api_key, row.api_version, row.frame, row.error)
        n += 1
        ok += out.status == "decoded" and out.reencoded_equal is True
    return time.perf_counter() - started, n, ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--conns", type=int, default=1000)
    parser.add_argument("--master", default="local[*]")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "pipeline_results.json")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="kafka-specgen-pipeline-bench-"))
    try:
        capture = work / "synthetic.jsonl"
        t = time.perf_counter()
        write_capture(capture, args.frames, args.conns)
        print(
            f"synthetic capture: {args.frames} frames, {capture.stat().st_size / 1e6:.0f} MB "
            f"in {time.perf_counter() - t:.1f} s",
            file=sys.stderr,
        )

        plain_s, plain_n, plain_ok = plain_loop(capture)
        print(f"plain loop: {plain_n} frames in {plain_s:.1f} s", file=sys.stderr)

        from kafka_specgen.pipeline.job import run_pipeline, spark_session

        t = time.perf_counter()
        spark = spark_session(
            args.master, conf={"spark.driver.memory": "4g", "spark.ui.enabled": "false"}
        )
        spark.sparkContext.setLogLevel("ERROR")
        spark.range(1).count()  # the first job pays for class loading
        startup = time.perf_counter() - t
        cores = spark.sparkContext.defaultParallelism
        try:
            summary = run_pipeline([capture], work / "out", spark=spark, progress=True)
        finally:
            spark.stop()
        assert summary["nothing_lost"] and summary["frames_read"] == plain_n, summary
        assert summary["reencoded_equal"] == plain_ok, (summary, plain_ok)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    n = plain_n
    result = {
        "frames": n,
        "cores": cores,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "spark_startup_s": round(startup, 2),
        "plain_loop_s": round(plain_s, 2),
        "plain_loop_frames_per_s": round(n / plain_s),
        "pipeline_decode_s": summary["decode_s"],
        "pipeline_decode_frames_per_s": round(n / summary["decode_s"]),
        "pipeline_total_s": summary["job_s"],
        "pipeline_total_frames_per_s": round(n / summary["job_s"]),
        "pipeline_decode_frames_per_s_per_core": round(n / summary["decode_s"] / cores),
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\n{n:,} frames, Spark master {args.master} ({cores} cores); {result['machine']}\n")
    print("| run | seconds | frames/s |")
    print("|---|---:|---:|")
    print(
        f"| plain Python loop (1 process: read, decode, re-encode, to_dict) | {plain_s:.1f} "
        f"| {n / plain_s:,.0f} |"
    )
    print(
        f"| pipeline: read + decode stage ({cores} cores) | {summary['decode_s']:.1f} | "
        f"{n / summary['decode_s']:,.0f} ({n / summary['decode_s'] / cores:,.0f} per core) |"
    )
    print(
        f"| pipeline: whole job incl. all tables | {summary['job_s']:.1f} | "
        f"{n / summary['job_s']:,.0f} |"
    )
    print(f"| Spark start-up (fixed, not in frames/s) | {startup:.1f} | |")
    print(f"\nwritten to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
