"""cProfile of our hot paths, for optimising the templates (issue 6).

    python bench/profile_codecs.py [--case metadata_response_v12] [--op decode] [--n 200] [--top 15]

Builds the case as ``bench/run.py`` does and profiles ``n`` encodes or decodes of it,
printing the top functions by own time (tottime) and by cumulative time.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import run  # noqa: E402
from bench.cases import CASES  # noqa: E402
from tests.genpkg import SPECS  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--case", default="metadata_response_v12", choices=sorted(CASES))
    ap.add_argument("--op", default="decode", choices=("encode", "decode"))
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args(argv)
    case = CASES[args.case]
    if case.package == "repo":
        side = run.Side("kafka_messages", sorted(SPECS.glob("*.json")))
    else:
        side = run.Side(run.kp_package(lambda m: print(m, file=sys.stderr)), [run.kp_corpus()])
    _message, cls = side.message_class(case.message)
    obj = case.build(cls)
    wire = obj.encode(case.version)
    version = case.version
    if args.op == "encode":

        def fn() -> object:
            return obj.encode(version)

    else:

        def fn() -> object:
            return cls.decode(wire, version)

    fn()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(args.n):
        fn()
    prof.disable()
    print(f"== {args.case} {args.op} x{args.n} ({len(wire):,} bytes) ==")
    stats = pstats.Stats(prof).strip_dirs()
    stats.sort_stats("tottime").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
