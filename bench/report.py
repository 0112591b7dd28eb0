"""The report: one row per target and case (met or not), and RESULTS.md from results.json's
figures."""

from __future__ import annotations

import re
from typing import Any

from bench.common import LABELS, OURS, PEERS

# The speed targets, and two of generation (generation time, size).
# Where a row has no case, it is about one figure, else it is checked on every case.
TARGETS = {
    "decode_kafka_python": "pure decode >= 2x kafka-python 3 (stretch: 3x)",
    "decode_kio": "pure decode >= 0.5x kio",
    "decode_compiled_kio": "compiled (mypyc) decode >= 1.5x kio",
    "memory": "memory of 1,000 decoded MetadataResponse v12 <= kio's",
    "encode": "encode stays >= 2x the fastest peer",
    "import": "importing one API module (kafka_messages.metadata) < 15 ms",
    "generate": "cold generation of the whole trunk corpus < 5 s",
    "size": "trunk output <= 4.0 MB of .py",
    "encode_compiled": "compiled (mypyc) encode vs the fastest peer (no target: information)",
}
MAX_OUTPUT_BYTES = 4_000_000  # 4.0 MB (decimal) of generated .py files


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per target and case (or per target, for a single figure): ``met`` is True,
    False, or None (not a target, or not measurable); ``ratio`` is the figure the verdict
    compares, for the summary's worst case."""
    rows: list[dict[str, Any]] = []

    def row(key: str, case: str, value: str, met: bool | None, ratio: float | None) -> None:
        rows.append(
            {
                "key": key,
                "target": TARGETS[key],
                "case": case,
                "value": value,
                "met": met,
                "ratio": ratio,
            }
        )

    timed = {cid: c["timings"] for cid, c in results["cases"].items() if c.get("timings")}

    def decode_vs(me: str, peer: str) -> list[tuple[str, float]]:
        return [
            (cid, t["decode"][me][f"speedup_vs_{peer}"])
            for cid, t in timed.items()
            if me in t["decode"] and f"speedup_vs_{peer}" in t["decode"][me]
        ]

    def encode_vs_fastest(me: str) -> list[tuple[str, float, str]]:
        out = []
        for cid, t in timed.items():
            mine = t["encode"].get(me, {})
            vs = {p: mine[f"speedup_vs_{p}"] for p in PEERS if f"speedup_vs_{p}" in mine}
            if vs:  # the fastest peer is the one we are least faster than
                fastest = min(vs, key=lambda p: vs[p])
                out.append((cid, vs[fastest], fastest))
        return out

    for cid, s in decode_vs("ours", "kafka_python"):
        stretch = "met" if s >= 3.0 else "not met"
        row("decode_kafka_python", cid, f"{s:.2f}x (stretch 3x: {stretch})", s >= 2.0, s)
    for cid, s in decode_vs("ours", "kio"):
        row("decode_kio", cid, f"{s:.2f}x", s >= 0.5, s)
    for cid, s in decode_vs("ours_compiled", "kio"):
        row("decode_compiled_kio", cid, f"{s:.2f}x", s >= 1.5, s)
    mem = results.get("memory") or {}
    if "ours" in mem and "kio" in mem:
        ours, kio = mem["ours"]["kept_bytes"], mem["kio"]["kept_bytes"]
        extra = (
            f"; mypyc {mem['ours_compiled']['kept_bytes']:,} B" if "ours_compiled" in mem else ""
        )
        row(
            "memory",
            "metadata_response_v12",
            f"{ours:,} B vs kio {kio:,} B{extra}",
            ours <= kio,
            kio / ours,
        )
    for cid, s, fastest in encode_vs_fastest("ours"):
        row("encode", cid, f"{s:.2f}x vs {LABELS[fastest]}", s >= 2.0, s)
    imp = (results.get("import") or {}).get("kafka_messages.metadata")
    if imp and "median_ms" in imp:
        ms = imp["median_ms"]
        row("import", "-", f"{ms:.1f} ms", ms < 15, 15 / ms)
    gen = results.get("generate") or {}
    if "median_s" in gen:
        value = f"{gen['median_s']:.1f} s cold ({gen['warm_median_s']:.1f} s warm)"
        row("generate", "-", value, gen["median_s"] < 5, 5 / gen["median_s"])
        size = gen["py_bytes"]
        row(
            "size",
            "-",
            f"{size:,} bytes ({size / 1e6:.2f} MB) in {gen['modules']} .py files",
            size <= MAX_OUTPUT_BYTES,
            MAX_OUTPUT_BYTES / size,
        )
    for cid, s, fastest in encode_vs_fastest("ours_compiled"):
        row("encode_compiled", cid, f"{s:.2f}x vs {LABELS[fastest]}", None, s)
    return rows


def _ns(v: float) -> str:
    return f"{v:,.0f}"


def _first_error(output: str) -> str:
    """The line of a failed build's output that says why: mypy's ``file:line: error: ...``
    or setuptools' ``error: command 'gcc' failed ...`` (not a compiler flag like -Werror)."""
    lines = output.strip().splitlines()
    return next((line for line in lines if re.search(r"(^|: )error:", line)), lines[0])


def _compiled_note(results: dict[str, Any]) -> str:
    comp = results.get("compiled") or {}
    if "skipped" in comp:
        return f"- ours (mypyc): not measured ({comp['skipped']})"
    built = {w: c for w, c in comp.items() if "package" in c}
    failed = {w: _first_error(c["error"]) for w, c in comp.items() if "error" in c}
    parts = [
        f"`{c['package']}` ({len(c['modules'])} modules compiled"
        + (f" in {c['compile_s']:.0f} s" if "compile_s" in c else "")
        + ")"
        for c in built.values()
    ]
    parts += [f"{w}: mypyc build failed ({reason})" for w, reason in failed.items()]
    return (
        "- ours (mypyc): `make compiled`'s build (`bench/compile.py`, mypyc) of the same "
        "generated sources, timed in the same loops: " + ("; ".join(parts) or "not needed")
    )


TARGETS_INTRO = [
    "The project's speed targets (the last two are of generation), each checked",
    "under [Targets](#targets) from this run's figures:",
    "",
    "- pure-Python decode >= 2x kafka-python 3 on every case (stretch: 3x), and >= 0.5x kio;",
    "- compiled (mypyc flavour) decode >= 1.5x kio on every case;",
    "- memory of 1,000 decoded MetadataResponse v12 <= kio's;",
    "- encode stays >= 2x the fastest peer on every case;",
    "- importing one API module stays < 15 ms;",
    "- cold generation of the whole trunk corpus < 5 s on this machine, and trunk output",
    "  <= 4.0 MB of `.py`.",
]


def _verdict(rows: list[dict[str, Any]]) -> tuple[str, str]:
    """A target's verdict over its rows (every case must meet it), and its worst row."""
    judged = [r for r in rows if r["met"] is not None]
    worst = min(rows, key=lambda r: r["ratio"] if r["ratio"] is not None else float("inf"))
    where = f"{worst['case']}: {worst['value']}" if worst["case"] != "-" else worst["value"]
    if not judged:
        return "-", where
    met = sum(1 for r in judged if r["met"])
    verdict = "met" if met == len(judged) else "**not met**"
    if len(judged) > 1:
        verdict += f" ({met} of {len(judged)} cases)"
    return verdict, where


def _left_out(reasons: dict[str, int]) -> str:
    """``{"not in the peer: FetchRequest v1": 27, ...}`` -> "not in the peer: FetchRequest
    v1 x27, ..." (reasons grouped, most frequent first)."""
    groups: dict[str, list[tuple[str, int]]] = {}
    for reason, n in reasons.items():
        why, _, what = reason.partition(": ")
        groups.setdefault(why, []).append((what, n))
    parts = []
    for why, items in sorted(groups.items(), key=lambda g: -sum(n for _, n in g[1])):
        items.sort(key=lambda item: (-item[1], item[0]))
        parts.append(f"{why}: " + ", ".join(f"{what} x{n}" for what, n in items))
    return "; ".join(parts)


def _frame_set_notes(cid: str, c: dict[str, Any]) -> list[str]:
    f = c["frames"]
    n = f["bodies"]
    lines = [
        f"- {cid}: {n:,} of {f['captured']:,} captured frames are read by `{c['package']}`"
        + (f" (left out: {_left_out(f['left_out'])})" if f["left_out"] else "")
        + "; only their bodies are timed, one op being a pass over all of them."
    ]
    for p in PEERS:
        r = f["peers"].get(p)
        if r is None:
            continue
        for op, verb in (("decode", "decodes to our values"), ("encode", "re-encodes identically")):
            left = r["left_out"].get(op) or {}
            lines.append(
                f"  - {LABELS[p]} {verb} {r[op]:,} of {n:,}"
                + (f" (left out: {_left_out(left)})" if left else "")
            )
    return lines


def markdown(results: dict[str, Any]) -> str:
    m = results["machine"]
    # The compiled build's columns only when some case has its numbers.
    compiled = any(
        "ours_compiled" in c.get("timings", {}).get("decode", {}) for c in results["cases"].values()
    )
    mine = list(OURS) if compiled else ["ours"]
    sets = {cid: c for cid, c in results["cases"].items() if "frames" in c}
    lines = [
        "# Benchmark results",
        "",
        *TARGETS_INTRO,
        "",
        "Written by `make bench` (`bench/run.py`); regenerate rather than edit. Speed-ups are",
        "`peer ns / our ns` from the same run (2.0x: we are twice as fast; 0.5x: half as fast).",
        "",
        _compiled_note(results),
        f"- Machine: {m['cpu']}, {m['cores']} cores, {m['platform']}",
        f"- Python {m['python']} ({m['implementation']}); kio {m['kio']}, "
        f"kafka-python {m['kafka_python']}",
        f"- Load average at start: {', '.join(map(str, m['load_average_start']))}; "
        f"at end: {', '.join(map(str, results.get('load_average_end', [])))}",
        f"- Run: {m['date']}, commit {m['git_commit']}, "
        f"{'quick' if results['options']['quick'] else 'full'} mode, "
        f"{results['options']['repeats']} repeats per measurement (median shown)",
        "",
        "## Targets",
        "",
        "The pure-Python build, except where a target names the compiled build (mypyc); a",
        "target on every case is met when every case meets it (per case: the last table).",
        "",
        "| target | verdict | worst |",
        "|---|---|---|",
    ]
    by_target: dict[str, list[dict[str, Any]]] = {}
    for row in results["targets"]:
        by_target.setdefault(row["target"], []).append(row)
    for target, rows in by_target.items():
        verdict, worst = _verdict(rows)
        lines.append(f"| {target} | {verdict} | {worst} |")
    lines += [
        "",
        "## Byte identity",
        "",
        "| case | shape | bytes | " + " | ".join(LABELS[i] for i in [*mine[1:], *PEERS]) + " |",
        "|---|---|---:|" + "---|" * (len(mine) - 1 + len(PEERS)),
    ]
    for cid, c in results["cases"].items():
        cells = []
        if compiled:  # prepare() stops the run if the compiled build's bytes differ
            cells.append("identical" if c.get("compiled") else "not built")
        for p in PEERS:
            if p in c["excluded"]:
                cells.append(f"excluded: {c['excluded'][p]}")
            elif cid in sets:
                r, n = c["frames"]["peers"][p], c["frames"]["bodies"]
                cells.append(f"decode {r['decode']:,} / encode {r['encode']:,} of {n:,}")
            else:
                cells.append("identical")
        lines.append(f"| {cid} | {c['shape']} | {c['bytes']:,} | " + " | ".join(cells) + " |")
    if sets:
        lines.append("")
        for cid, c in sets.items():
            lines += _frame_set_notes(cid, c)
    for op in ("encode", "decode"):
        impls = [*mine, *PEERS]
        vs = [(me, p) for me in mine for p in PEERS]
        lines += [
            "",
            f"## {op.capitalize()} (ns/op, median)",
            "",
            "| case | "
            + " | ".join(LABELS[i] for i in impls)
            + " | "
            + " | ".join(f"{LABELS[me]} vs {LABELS[p]}" for me, p in vs)
            + " |",
            "|---|" + "---:|" * (len(impls) + len(vs)),
        ]
        for cid, c in results["cases"].items():
            t = c.get("timings", {}).get(op, {})
            if "ours" not in t:
                continue
            cells = [_ns(t[i]["ns_per_op"]) if i in t else "-" for i in impls]
            cells += [
                f"{t[me][f'speedup_vs_{p}']:.2f}x" if me in t and p in t else "-" for me, p in vs
            ]
            lines.append(f"| {cid} | " + " | ".join(cells) + " |")
        for cid, c in sets.items():
            t = c.get("timings", {}).get(op, {})
            if "ours" in t:
                counts = ", ".join(
                    f"{LABELS[i]} {t[i]['bodies']:,}" for i in [*mine, *PEERS] if i in t
                )
                lines += [
                    "",
                    f"{cid}: ns per pass over the bodies each implementation takes part in "
                    f"({counts}); a speed-up compares the same bodies on both sides.",
                ]
    mem = results.get("memory")
    lines += ["", "## Memory: 1,000 decoded MetadataResponse v12 kept in a list (tracemalloc)", ""]
    if mem and "skipped" not in mem:
        lines += [
            "| implementation | kept by 1,000 | per message | measured on |",
            "|---|---:|---:|---:|",
        ]
        for impl, r in mem.items():
            scaled = " (scaled)" if r["scaled"] else ""
            lines.append(
                f"| {LABELS[impl]} | {r['kept_bytes']:,} B{scaled} | "
                f"{r['kept_bytes_per_message']:,} B | {r['count']:,} messages |"
            )
    else:
        lines.append(f"skipped{': ' + mem['skipped'] if mem else ''}")
    imp = results.get("import")
    lines += ["", "## Import time (fresh interpreter, bytecode cached, median)", ""]
    if imp and "skipped" not in imp:
        lines += ["| import | median | min | runs |", "|---|---:|---:|---:|"]
        for label, r in imp.items():
            if "median_ms" in r:
                lines.append(
                    f"| `{r['statement']}` | {r['median_ms']:.1f} ms | "
                    f"{r['min_ms']:.1f} ms | {r['runs']} |"
                )
            else:
                lines.append(f"| {label} | error: {r.get('error')} | | |")
    else:
        lines.append("skipped")
    gen = results.get("generate") or {}
    lines += ["", "## Generating the whole trunk corpus", ""]
    if "median_s" in gen:
        lines.append(
            f"`kafka-specgen generate --specs {gen['corpus']}` (fresh process, empty cache "
            f"folders): {gen['median_s']:.1f} s (runs: {gen['samples_s']}); "
            f"{gen['warm_median_s']:.1f} s again into the same folder. Output: "
            f"{gen['modules']} `.py` files, {gen['py_bytes']:,} bytes."
        )
    else:
        lines.append(f"skipped: {gen.get('skipped', '')}")
    lines += [
        "",
        "## Targets per case",
        "",
        "| target | case | value | met |",
        "|---|---|---|---|",
    ]
    for row in results["targets"]:
        met = "-" if row["met"] is None else "met" if row["met"] else "**not met**"
        lines.append(f"| {row['target']} | {row['case']} | {row['value']} | {met} |")
    return "\n".join(lines) + "\n"
