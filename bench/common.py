"""What the parts of the codec benchmark (``bench/run.py``) share: where things are, and
the implementations it compares."""

from __future__ import annotations

from pathlib import Path

from tests.support.genpkg import CORPORA

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
GENERATED = ROOT / "generated"
CACHE = ROOT / "build" / "bench"
KP_PACKAGE = "kp_bench_messages"
#: Spec sets from the tool's bundle (tests.support.genpkg extracts them).
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
