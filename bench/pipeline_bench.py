"""Pipeline benchmark (``make bench-pipeline``): frames per second of the PySpark pipeline
on synthetic pcap files, beside a plain single-process Python loop over the same frames,
each without and with the record tables (record batches read: ``batches/``,
``record_usage/``).

The capture (``--frames``, default 1,000,000) is ``--conns`` TCP connections written as
rotated pcap files of ``--file-mb`` MiB each (``tcpdump -C``: streams go on in the next
file), so the pipeline runs its TCP-shuffle design: the segments of every file are read
in parallel, shuffled by connection, sorted and reassembled, then decoded. Each
connection is a producer-and-consumer conversation taken from the golden captures
(kafka-python 3.0.12 against Tansu): ApiVersions v4, then rounds of Metadata v12,
Produce v9 with a gzip and an uncompressed record batch of 5 records, and Fetch v12
returning them, requests and responses (correlation ids rewritten).

Both sides do the same work per frame (``pipeline.decode.Decoder``: decode, re-encode,
compare bytes, ``to_dict`` as JSON; with records, read each partition's record batches),
decoding with a package generated from kafka-python's (Kafka 4.x-era) specs; the plain
loop reassembles the streams with ``capture.pcap.pcap_rows``. The pipeline also writes
every table. Spark's start-up (JVM and session) and a warm-up run over 50,000 frames (the
JIT and the Python workers' imports) are on lines of their own, not in frames/s.

End to end, as a user runs it: ``kafka-specgen pipeline`` in a process of its own
(Spark's start included) over small capture files of 22, 255 and 1,000 frames (whole
golden captures, the last one cut), decoding with Kafka's trunk specs of 2024-10 (the
kafka-python wheel's where the corpora are missing) and judging readiness against Kafka
4.0; twice each, the best and the mean kept. ``--end-to-end-only`` runs just these.

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
from typing import Any, BinaryIO

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import TRUNK  # noqa: E402
from bench.cpu_time import CpuSampler  # noqa: E402
from bench.golden import GOLDEN  # noqa: E402

#: (file, direction, api key, api version) of the frames a conversation is made of.
ROUND = (
    ("kafka_python_records_gzip.jsonl", 3, 12),
    ("kafka_python_records_gzip.jsonl", 0, 9),
    ("kafka_python_records_none.jsonl", 0, 9),
    ("kafka_python_records_gzip.jsonl", 1, 12),
    ("kafka_python_records_none.jsonl", 1, 12),
)
OPENING = ("kafka_python_records_gzip.jsonl", 18, 4)


def kafka_python_specs() -> Path:
    import kafka

    return Path(kafka.__file__).parent / "protocol" / "schemas" / "resources"


def golden_pair(name: str, api_key: int, version: int) -> tuple[bytes, bytes]:
    """A request frame and its response from a golden capture (the first with records,
    for Produce and Fetch)."""
    recs = [json.loads(line) for line in (GOLDEN / name).open(encoding="utf-8")]
    for req in recs:
        if (req["dir"], req["api_key"], req["api_version"]) != ("request", api_key, version):
            continue
        resp = next(
            (
                r
                for r in recs
                if r["dir"] == "response"
                and r["conn"] == req["conn"]
                and r["correlation_id"] == req["correlation_id"]
            ),
            None,
        )
        if resp is None:
            continue
        request, response = bytes.fromhex(req["frame"]), bytes.fromhex(resp["frame"])
        if api_key == 1 and len(response) < 600:  # a Fetch that returned no records
            continue
        return request, response
    raise LookupError(f"{name}: no {api_key} v{version} pair")


def conversation() -> list[tuple[bytes, bytes]]:
    return [golden_pair(*OPENING)] + [golden_pair(*kind) for kind in ROUND]


# --- pcap writing ---------------------------------------------------------------------------


class RotatingPcap:
    """Writes Ethernet/IPv4/TCP packets to ``cap0.pcap``, ``cap1.pcap``, ... of at most
    ``limit`` bytes each (the next file starts with the next packet)."""

    def __init__(self, folder: Path, limit: int) -> None:
        self.folder, self.limit = folder, limit
        self.files: list[Path] = []
        self.out: BinaryIO | None = None
        self.size = 0

    def _next(self) -> BinaryIO:
        if self.out is not None:
            self.out.close()
        path = self.folder / f"cap{len(self.files)}.pcap"
        self.files.append(path)
        self.out = path.open("wb")
        self.out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))
        self.size = 24
        return self.out

    def packet(
        self,
        ts: float,
        src: tuple[int, int],
        dst: tuple[int, int],
        seq: int,
        flags: int,
        payload: bytes = b"",
    ) -> None:
        out = self.out if self.out is not None and self.size < self.limit else self._next()
        ip_len = 40 + len(payload)
        ether = b"\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x01\x08\x00"
        ip = struct.pack(">BBHHHBBHII", 0x45, 0, ip_len, 0, 0x4000, 64, 6, 0, src[0], dst[0])
        tcp = struct.pack(">HHIIBBHHH", src[1], dst[1], seq % 2**32, 0, 5 << 4, flags, 65535, 0, 0)
        data = ether + ip + tcp + payload
        sec = int(ts)
        out.write(struct.pack("<IIII", sec, int((ts - sec) * 1e6), len(data), len(data)))
        out.write(data)
        self.size += 16 + len(data)

    def close(self) -> None:
        if self.out is not None:
            self.out.close()


def write_pcaps(folder: Path, frames: int, conns: int, file_mb: int) -> tuple[list[Path], int]:
    """``frames`` frames over ``conns`` interleaved connections; returns files and bytes."""
    pairs = conversation()
    writer = RotatingPcap(folder, file_mb << 20)
    client_ip, broker_ip, broker_port = 0x7F000001, 0x7F000002, 9092
    per_conn = -(-frames // conns)  # every connection carries at most this many frames
    state = []  # per connection: [port, client seq, broker seq, frames written]
    ts = 1.7e9
    for n in range(conns):
        port = 20000 + n
        writer.packet(ts, (client_ip, port), (broker_ip, broker_port), 1000, 0x02)
        writer.packet(ts, (broker_ip, broker_port), (client_ip, port), 5000, 0x12)
        state.append([port, 1001, 5001, 0])
    written = 0
    while written < frames:
        for conn in state:  # round robin: the connections' packets interleave in time
            port, cseq, bseq, done = conn
            if written >= frames or done >= per_conn:
                continue
            pair = done // 2
            request, response = pairs[0] if pair == 0 else pairs[1 + (pair - 1) % len(ROUND)]
            corr = struct.pack(">i", pair + 1)
            ts += 0.00005
            if done % 2 == 0:
                frame = request[:4] + corr + request[8:]
                wire = struct.pack(">i", len(frame)) + frame
                writer.packet(ts, (client_ip, port), (broker_ip, broker_port), cseq, 0x18, wire)
                conn[1] = cseq + len(wire)
            else:
                frame = corr + response[4:]
                wire = struct.pack(">i", len(frame)) + frame
                writer.packet(ts, (broker_ip, broker_port), (client_ip, port), bseq, 0x18, wire)
                conn[2] = bseq + len(wire)
            conn[3] = done + 1
            written += 1
    writer.close()
    return writer.files, sum(f.stat().st_size for f in writer.files)


# --- the two sides -------------------------------------------------------------------------------


def plain_loop(files: list[Path], package: str, records: bool) -> tuple[float, int, int, int]:
    """Reassemble and decode in one process: ``(seconds, frames, byte-exact, batches)``."""
    from kafka_specgen.pipeline.decode import Decoder
    from kafka_specgen.capture.pcap import pcap_rows

    decoder = Decoder(package, records=records)
    started, cpu = time.perf_counter(), time.process_time()
    n = ok = batches = 0
    for row in pcap_rows([str(f) for f in files]):
        out = decoder.decode(row.direction, row.api_key, row.api_version, row.frame, row.error)
        n += 1
        ok += out.status == "decoded" and out.reencoded_equal is True
        batches += len(out.batches or ())
    PLAIN_CPU[records] = time.process_time() - cpu
    return time.perf_counter() - started, n, ok, batches


#: The plain loop's CPU seconds, by ``records``.
PLAIN_CPU: dict[bool, float] = {}


#: Frames of the small captures timed end to end.
SMALL_SIZES = (22, 255, 1000)


def small_capture(folder: Path, frames: int) -> Path:
    """A folder of golden capture files holding ``frames`` frames (the last file cut)."""
    folder.mkdir(parents=True)
    left = frames
    for path in sorted(GOLDEN.glob("*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        (folder / path.name).write_text("".join(lines[:left]), encoding="utf-8")
        left -= min(left, len(lines))
        if not left:
            return folder
    raise ValueError(f"the golden captures hold fewer than {frames} frames")


def decode_specs() -> Path:
    """Kafka's trunk of 2024-10, from the tool's bundle: it reads every golden frame."""
    return TRUNK / "message"


def end_to_end(work: Path, runs: int = 2) -> dict[str, Any]:
    """``kafka-specgen pipeline`` in a fresh process per run: seconds per capture size."""
    import subprocess

    results: dict[str, Any] = {}
    for frames in SMALL_SIZES:
        folder = small_capture(work / f"small_{frames}", frames)
        times = []
        for run in range(runs):
            out = work / f"small_out_{frames}_{run}"
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "kafka_specgen.cli", "pipeline", "--input", str(folder)]
                + ["--out", str(out), "--specs", str(decode_specs())]
                + ["--target-release", "4.0", "--quiet"],
                capture_output=True,
                text=True,
                timeout=600,
            )
            times.append(time.perf_counter() - started)
            if done.returncode != 0 or f"{frames} frames read" not in done.stdout:
                raise RuntimeError(
                    f"pipeline on {frames} frames failed:\n{done.stdout}{done.stderr}"
                )
            shutil.rmtree(out, ignore_errors=True)
        results[str(frames)] = {
            "best_s": round(min(times), 2),
            "mean_s": round(sum(times) / runs, 2),
        }
        print(f"end to end, {frames} frames: {[round(t, 1) for t in times]} s", file=sys.stderr)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--conns", type=int, default=1000)
    parser.add_argument("--file-mb", type=int, default=64, help="size of each rotated pcap file")
    parser.add_argument("--master", default="local[*]")
    parser.add_argument(
        "--end-to-end-only",
        action="store_true",
        help="time only the small captures end to end (updates that part of --out)",
    )
    parser.add_argument(
        "--skip-end-to-end", action="store_true", help="do not time the small captures"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "pipeline_results.json")
    args = parser.parse_args()

    from kafka_specgen.library import generated_package
    from kafka_specgen.pipeline import stage
    from kafka_specgen.pipeline.job import run_pipeline
    from kafka_specgen.pipeline.spark import spark_session

    load_start = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    work = Path(tempfile.mkdtemp(prefix="kafka-specgen-pipeline-bench-"))
    runs: dict[str, Any] = {}
    try:
        small = {} if args.skip_end_to_end else end_to_end(work)
    finally:
        if args.end_to_end_only:
            shutil.rmtree(work, ignore_errors=True)
    if args.end_to_end_only:
        previous = json.loads(args.out.read_text()) if args.out.is_file() else {}
        previous["end_to_end"] = {
            "load_average_at_start": round(load_start, 2) if load_start is not None else None,
            "seconds": small,
        }
        args.out.write_text(json.dumps(previous, indent=2) + "\n")
        print_end_to_end(small)
        return 0
    try:
        captures = work / "pcap"
        captures.mkdir()
        t = time.perf_counter()
        files, size = write_pcaps(captures, args.frames, args.conns, args.file_mb)
        print(
            f"synthetic capture: {args.frames} frames, {args.conns} connections, "
            f"{len(files)} pcap files, {size / 1e6:.0f} MB in {time.perf_counter() - t:.1f} s",
            file=sys.stderr,
        )
        specs = [kafka_python_specs()]
        generated = generated_package(specs)
        generated.module()
        package = generated.name

        t = time.perf_counter()
        spark = spark_session(
            args.master, conf={"spark.driver.memory": "4g", "spark.ui.enabled": "false"}
        )
        spark.sparkContext.setLogLevel("ERROR")
        spark.range(1).count()  # the first job pays for class loading
        startup = time.perf_counter() - t
        cores = spark.sparkContext.defaultParallelism
        try:
            # a warm-up run on a small capture: the JVM's JIT and the Python workers' imports
            # would otherwise land in whichever timed run comes first. It takes the timed
            # runs' path (the data source and the shuffle), not the driver's of small input.
            warm = work / "warm"
            warm.mkdir()
            write_pcaps(warm, min(50_000, args.frames), 100, args.file_mb)
            t = time.perf_counter()
            small_input = stage.SMALL_INPUT
            stage.SMALL_INPUT = -1
            try:
                run_pipeline(
                    [warm],
                    work / "out_warm",
                    specs=specs,
                    spark=spark,
                    workdir=work / "pipeline",
                    progress=False,
                )
            finally:
                stage.SMALL_INPUT = small_input
            warm_up = time.perf_counter() - t
            for records in (False, True):
                label = "with_records" if records else "without_records"
                plain_s, plain_n, plain_ok, plain_batches = plain_loop(files, package, records)
                print(
                    f"plain loop ({label}): {plain_n} frames, {plain_batches} record batches "
                    f"in {plain_s:.1f} s",
                    file=sys.stderr,
                )
                load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
                with CpuSampler() as cpu:
                    summary = run_pipeline(
                        [captures],
                        work / f"out_{label}",
                        specs=specs,
                        spark=spark,
                        workdir=work / "pipeline",
                        progress=True,
                        records=records,
                    )
                decode_cpu = cpu.used_by(summary.decode_s)
                assert summary.nothing_lost and summary.frames_read == plain_n, summary
                assert summary.reencoded_equal == plain_ok, (summary, plain_ok)
                assert summary.batches == plain_batches, (summary, plain_batches)
                shutil.rmtree(work / f"out_{label}", ignore_errors=True)
                runs[label] = {
                    "plain_loop_s": round(plain_s, 2),
                    "plain_loop_frames_per_s": round(plain_n / plain_s),
                    "pipeline_decode_s": summary.decode_s,
                    "pipeline_decode_frames_per_s": round(plain_n / summary.decode_s),
                    "pipeline_decode_frames_per_s_per_core": round(
                        plain_n / summary.decode_s / cores
                    ),
                    "pipeline_total_s": summary.job_s,
                    "pipeline_total_frames_per_s": round(plain_n / summary.job_s),
                    "record_batches": summary.batches,
                    "load_average_at_start": round(load, 2) if load is not None else None,
                }
                if decode_cpu and records in PLAIN_CPU:
                    # load-independent: CPU seconds of the decode stage (driver, JVM, Python
                    # workers) beside the plain loop's
                    runs[label].update(
                        {
                            "plain_loop_cpu_s": round(PLAIN_CPU[records], 2),
                            "pipeline_decode_cpu_s": round(decode_cpu, 2),
                            "pipeline_decode_frames_per_cpu_s": round(plain_n / decode_cpu),
                            "cpu_ratio": round(PLAIN_CPU[records] / decode_cpu, 2),
                        }
                    )
        finally:
            spark.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    result = {
        "frames": args.frames,
        "connections": args.conns,
        "pcap_files": len(files),
        "pcap_mb": round(size / 1e6),
        "cores": cores,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "load_average_at_start": round(load_start, 2) if load_start is not None else None,
        "load_average_at_end": round(load, 2) if load is not None else None,
        "spark_startup_s": round(startup, 2),
        "warm_up_run_s": round(warm_up, 2),
        **runs,
    }
    if small:
        result["end_to_end"] = {
            "load_average_at_start": round(load_start, 2) if load_start is not None else None,
            "seconds": small,
        }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(
        f"\n{args.frames:,} frames in {len(files)} rotated pcap files ({size / 1e6:.0f} MB), "
        f"Spark master {args.master} ({cores} cores); {result['machine']}\n"
    )
    print("| run | seconds | frames/s |")
    print("|---|---:|---:|")
    for label, r in runs.items():
        what = "with record tables" if label == "with_records" else "without record tables"
        print(
            f"| plain Python loop, 1 process ({what}) | {r['plain_loop_s']:.1f} | "
            f"{r['plain_loop_frames_per_s']:,} |"
        )
        print(
            f"| pipeline, read + shuffle + decode stage ({what}) | {r['pipeline_decode_s']:.1f} | "
            f"{r['pipeline_decode_frames_per_s']:,} ({r['pipeline_decode_frames_per_s_per_core']:,}"
            " per core) |"
        )
        print(
            f"| pipeline, whole job incl. all tables ({what}) | {r['pipeline_total_s']:.1f} | "
            f"{r['pipeline_total_frames_per_s']:,} |"
        )
    print(f"| Spark start-up (fixed, not in frames/s) | {startup:.1f} | |")
    print(f"| warm-up run, 50,000 frames (not in frames/s) | {warm_up:.1f} | |")
    print()
    for label, r in runs.items():
        per_core = r["pipeline_decode_frames_per_s_per_core"] / r["plain_loop_frames_per_s"]
        line = f"{label}: decode per core {per_core:.2f}x the plain loop (wall clock)"
        if "cpu_ratio" in r:
            line += (
                f"; {r['pipeline_decode_cpu_s']:.1f} CPU-s against the loop's "
                f"{r['plain_loop_cpu_s']:.1f}: {r['cpu_ratio']:.2f}x per CPU-second"
            )
        print(line)
    if small:
        print_end_to_end(small)
    print(f"\nwritten to {args.out}")
    return 0


def print_end_to_end(small: dict[str, Any]) -> None:
    print("\n| capture, end to end (Spark start included) | best s | mean s |")
    print("|---|---:|---:|")
    for frames, result in small.items():
        print(f"| {int(frames):,} frames | {result['best_s']:.1f} | {result['mean_s']:.1f} |")


if __name__ == "__main__":
    sys.exit(main())
