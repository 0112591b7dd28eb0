"""What the benchmarks share: where things are (the repo's files, Kafka's spec sets), and
the implementations the codec benchmark (``bench/run.py``) compares."""

from __future__ import annotations

from pathlib import Path

from kafka_specgen.library import extracted_bundle

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
GENERATED = ROOT / "generated"
#: The repo's own specs, from which ``generated/kafka_messages`` is generated.
SPECS = ROOT / "specs"
CACHE = ROOT / "build" / "bench"
KP_PACKAGE = "kp_bench_messages"
#: Kafka's spec sets, one folder per set, from the tool's bundle.
CORPORA = extracted_bundle()
#: The newest spec set that still has every version the golden captures use (Kafka 4.0
#: removed Produce v0-2, Fetch v0-3, ...).
TRUNK = CORPORA / "trunk-2024-10"
KP_SHARED = CORPORA / "kafka-python-3.0.12" / "message"

IMPLS = ("ours", "ours_compiled", "kio", "kafka_python")
OURS = ("ours", "ours_compiled")
PEERS = ("kio", "kafka_python")
LABELS = {
    "ours": "ours",
    "ours_compiled": "ours (mypyc)",
    "kio": "kio",
    "kafka_python": "kafka-python",
}
COMPILED_SUFFIX = "_mypyc"  # the compiled build's package name: kafka_messages_mypyc, ...
MEMORY_COUNT = 1000
