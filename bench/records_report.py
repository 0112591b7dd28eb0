"""``records_bench``'s report: the targets, met or not, and the tables (RECORDS.md and the
terminal's summary)."""

from __future__ import annotations

from typing import Any

from bench.records_impls import CODECS, PURE_CODECS

TARGET_PURE = 1.5  # pure decode and build vs kafka-python's pure reader and builder
TARGET_ACCEL = 0.5  # decode with accelerators vs aiokafka's Cython
TARGET_CRC = 100.0  # MB/s, pure, 1 MiB


def ratio(table: dict[str, dict[str, float]], codec: str, ours: str, peer: str) -> float | None:
    row = table.get(codec, {})
    if ours not in row or peer not in row:
        return None
    return row[ours] / row[peer]


def targets(
    decode: dict[str, dict[str, float]],
    build: dict[str, dict[str, float]],
    crc: dict[str, dict[str, float]],
) -> list[dict[str, Any]]:
    kp, ai = "kafka-python (pure)", "aiokafka (Cython)"
    out = []
    for what, table in (("decode", decode), ("build", build)):
        for codec in PURE_CODECS:
            value = ratio(table, codec, "ours (pure)", kp)
            out.append(
                {
                    "target": f"pure {what} >= {TARGET_PURE}x kafka-python's pure ({codec})",
                    "value": value,
                    "unit": "x",
                    "met": value is not None and value >= TARGET_PURE,
                }
            )
    mb = crc["1 MiB"]["ours pure"]
    out.append(
        {
            "target": f"pure CRC-32C >= {TARGET_CRC:.0f} MB/s (1 MiB)",
            "value": mb,
            "unit": "MB/s",
            "met": mb >= TARGET_CRC,
        }
    )
    for name in ("ours (+accel)", "ours (mypyc +accel)"):
        for codec in CODECS:
            value = ratio(decode, codec, name, ai)
            if value is None:
                continue
            out.append(
                {
                    "target": f"{name} decode >= {TARGET_ACCEL}x aiokafka's Cython ({codec})",
                    "value": value,
                    "unit": "x",
                    "met": value >= TARGET_ACCEL,
                }
            )
    return out


def markdown(results: dict[str, Any]) -> str:
    m, r = results["machine"], results["run"]
    kp, ai = "kafka-python (pure)", "aiokafka (Cython)"
    lines = [
        "## Record batches",
        "",
        "Written by `make bench-records` (`bench/records_bench.py`); regenerate rather than "
        "edit. Ratios are ours / peer in records/s from the same run (2.00x: twice as fast).",
        "",
        f"- Workload: {r['records']:,} records (16-byte key, 100-byte value, one in ten with a "
        f"header), {r['records_per_batch']} per batch; decode checks each batch's CRC",
        f"- Machine: {m['processor']}, {m['cpus']} cores, {m['platform']}; Python "
        f"{m['python']} ({m['implementation']})",
        f"- Load average at start: {', '.join(map(str, m['load_average_start']))}; at end: "
        f"{', '.join(map(str, m['load_average_end']))} (a shared machine: the ratios, measured "
        "round-robin, hold better than the absolute figures)",
        f"- Run: {r['when']}, {r['seconds']} s, {r['repeats']} repeats per figure (median)",
        f"- ours (mypyc +accel): {r['compiled']}",
        f"- Packages: CRC-32C {r['crc32c_backend']}; codecs {r['codec_packages']}",
        "",
    ]
    for title, key in (("Decode", "decode_records_per_s"), ("Build", "build_records_per_s")):
        table = results[key]
        names = [n for n in next(iter(table.values()))]
        lines += [
            f"### {title} (records/s, median)",
            "",
            "| codec | " + " | ".join(names) + " | pure vs kafka-python | +accel vs aiokafka "
            "| mypyc vs aiokafka | pure vs kafka-python (+crc32c) |",
            "|---|" + "---:|" * (len(names) + 4),
        ]
        for codec, row in table.items():
            cells = [f"{row[n]:,.0f}" if n in row else "n/a" for n in names]
            ratios = [
                ratio(table, codec, "ours (pure)", kp),
                ratio(table, codec, "ours (+accel)", ai),
                ratio(table, codec, "ours (mypyc +accel)", ai),
                ratio(table, codec, "ours (pure)", "kafka-python (+crc32c)"),
            ]
            cells += ["n/a" if x is None else f"{x:.2f}x" for x in ratios]
            lines.append(f"| {codec} | " + " | ".join(cells) + " |")
        lines += ["", "ours (pure) has gzip only among the codecs (the standard library's).", ""]
    crc = results["crc32c_mb_per_s"]
    names = list(next(iter(crc.values())))
    lines += [
        "### CRC-32C (MB/s, median)",
        "",
        "| size | " + " | ".join(names) + " |",
        "|---|" + "---:|" * len(names),
    ]
    for size, row in crc.items():
        lines.append(f"| {size} | " + " | ".join(f"{row[n]:,.1f}" for n in names) + " |")
    lines += ["", "### Targets", "", "| target | value | met |", "|---|---:|---|"]
    for t in results["targets"]:
        value = t["value"]
        if value is None:
            shown = "n/a"
        elif t["unit"] == "x":
            shown = f"{value:.2f}x"
        else:
            shown = f"{value:,.1f} {t['unit']}"
        lines.append(f"| {t['target']} | {shown} | {'met' if t['met'] else 'NOT met'} |")
    lines += ["", NOTES]
    return "\n".join(lines) + "\n"


NOTES = """\
Where the time goes. The interpreted reader spends about a microsecond per record in
bytecode: five zigzag varints (decoded inline, one- and two-byte forms), two slices for key
and value, one `Record`. aiokafka does the same in C, so with the accelerators alone
(which speed up the CRC and the codecs, not the per-record work) the interpreted reader
stays at a quarter to a half of aiokafka's speed. The same source compiled with mypyc, as the
package ships, does the per-record work natively and passes aiokafka. kafka-python's pure
reader is held back mostly by its byte-at-a-time CRC-32C (about 6 MB/s); beside
kafka-python with the `crc32c` package our pure reader is still the faster one."""


def table_text(results: dict[str, Any]) -> str:
    out = []
    for title, key in (("decode", "decode_records_per_s"), ("build", "build_records_per_s")):
        out.append(f"{title} (records/s):")
        for codec, row in results[key].items():
            cells = "  ".join(f"{name} {value:>12,.0f}" for name, value in row.items())
            out.append(f"  {codec:<6} {cells}")
    out.append("CRC-32C (MB/s):")
    for size, row in results["crc32c_mb_per_s"].items():
        out.append(f"  {size:<6} " + "  ".join(f"{n} {v:,.1f}" for n, v in row.items()))
    out.append("targets:")
    for t in results["targets"]:
        value = "n/a" if t["value"] is None else f"{t['value']:.2f}"
        out.append(f"  {'met    ' if t['met'] else 'NOT MET'}  {t['target']}: {value}")
    return "\n".join(out)
