"""cProfile of our hot paths, for optimising the templates.

    python bench/profile_codecs.py [--case metadata_response_v12] [--op decode] [--n 200] [--top 15]

Builds the case as ``bench/run.py`` does and profiles ``n`` encodes or decodes of it,
printing the top functions by own time (tottime). For a frame set (``golden_frames``) one
encode or decode is a pass over all its bodies (use a small ``--n``, e.g. 5).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "generated")]  # bench, the committed kafka_messages

from bench.cases import CASES, FrameSet  # noqa: E402
from bench.sides import open_side  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--case", default="metadata_response_v12", choices=sorted(CASES))
    ap.add_argument("--op", default="decode", choices=("encode", "decode"))
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args(argv)
    case = CASES[args.case]

    def log(msg: str) -> None:
        print(msg, file=sys.stderr)

    side, _ = open_side(case.package, log)
    if isinstance(case, FrameSet):
        bodies = side.frames(case).bodies
        objs = [(b.cls.decode(b.data, b.version), b.version) for b in bodies]
        size = sum(len(b.data) for b in bodies)
        what = f"{len(bodies):,} bodies, {size:,} bytes"

        def encode_all() -> object:
            return [obj.encode(version) for obj, version in objs]

        def decode_all() -> object:
            return [b.cls.decode(b.data, b.version) for b in bodies]

        fn = encode_all if args.op == "encode" else decode_all
    else:
        _message, cls = side.message_class(case.message)
        obj = case.build(cls)
        wire = obj.encode(case.version)
        version = case.version
        what = f"{len(wire):,} bytes"

        def encode_one() -> object:
            return obj.encode(version)

        def decode_one() -> object:
            return cls.decode(wire, version)

        fn = encode_one if args.op == "encode" else decode_one

    fn()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(args.n):
        fn()
    prof.disable()
    print(f"== {args.case} {args.op} x{args.n} ({what}) ==")
    stats = pstats.Stats(prof).strip_dirs()
    stats.sort_stats("tottime").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
