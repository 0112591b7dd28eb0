"""``kafka-specgen report DIR``: one self-contained HTML page from the pipeline's tables.

::

    kafka-specgen report DIR [--out FILE]      (default FILE: DIR/report.html)
    kafka-specgen pipeline ... --report        (the same, after the tables are written)

The page reads the Parquet tables under ``DIR`` (pyarrow; no Spark) and shows:

- the readiness verdict against the ``--target-specs`` of the run (``readiness/``), with a
  table of the offending clients, what they send and why the target lacks it;
- API version usage per client x API as a heatmap (``usage/``): colour is the number of
  requests (log scale), the cell text the versions used; with ``readiness/``, a red cross
  marks a client x API that uses a version the target does not support;
- conformance per API (``conformance/``): the share of frames that re-encoded byte-exact,
  that decoded but re-encoded differently, and that did not decode;
- compression and message-format usage per client (``record_usage/``): record batches per
  magic x codec, stacked.

Plotly draws the charts; its JavaScript is embedded in the page (no network needed to view
it, nothing fetched). A table that is absent (e.g. no ``readiness/`` without
``--target-specs``) leaves its section out with a line saying why.
"""

from __future__ import annotations

import argparse
import sys
import html
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterable, Sequence

from .figures import (
    api_label,
    client_of,
    conformance_chart,
    ratio,
    records_chart,
    usage_heatmap,
)
from .readiness import BREAKS, ReadinessRow, label_of, what
from .verdict import BROKEN, READY, verdict

#: The file name ``pipeline --report`` writes into DIR.
REPORT = "report.html"

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px 32px;
       color: #1f2328; max-width: 1500px; }
h1 { font-size: 24px; margin-bottom: 4px; }
h2 { font-size: 19px; margin-top: 36px; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; }
.sub { color: #59636e; margin-top: 0; }
.facts { display: flex; flex-wrap: wrap; gap: 12px; margin: 16px 0; }
.fact { border: 1px solid #d0d7de; border-radius: 6px; padding: 8px 14px; min-width: 130px; }
.fact b { display: block; font-size: 20px; }
.verdict { border-radius: 6px; padding: 12px 16px; font-size: 16px; margin: 12px 0; }
.verdict.bad { background: #ffebe9; border: 1px solid #ff8182; }
.verdict.good { background: #dafbe1; border: 1px solid #4ac26b; }
.verdict.unsure { background: #fff8c5; border: 1px solid #d4a72c; }
h3 { font-size: 16px; margin-top: 20px; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
.note { color: #59636e; font-size: 13px; }
"""


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "report",
        help="write one self-contained HTML page from the pipeline's tables",
        description="Read the Parquet tables `kafka-specgen pipeline` wrote under DIR and "
        "write one HTML page (charts embedded, viewable offline): readiness verdict, API "
        "version usage per client, conformance per API, compression and message formats.",
    )
    parser.add_argument("dir", type=Path, metavar="DIR", help="the pipeline's --out folder")
    parser.add_argument(
        "--out", type=Path, metavar="FILE", help=f"where the page goes (default: DIR/{REPORT})"
    )
    parser.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    try:
        path = write_report(args.dir, args.out)
    except FileNotFoundError as exc:
        print(f"kafka-specgen report: {exc}", file=sys.stderr)
        return 2
    print(f"kafka-specgen report: wrote {path} ({path.stat().st_size / 1e6:.1f} MB)")
    return 0


# --- reading the tables -------------------------------------------------------------------------


def read_table(folder: Path, name: str) -> list[dict[str, Any]] | None:
    """The rows of table ``name`` under ``folder``; ``None`` if it is not there."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]  # no stubs or py.typed

    path = folder / name
    if not path.is_dir():
        return None
    rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
    return rows


def compression_table(record_usage: list[dict[str, Any]]) -> str:
    """Per codec: bytes on the wire, uncompressed bytes and the ratio (unknown where a
    batch's uncompressed size is: legacy wrappers the pipeline could not open)."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for row in record_usage:
        t = totals[str(row["compression"])]
        t[0] += row["bytes"] or 0
        t[2] += row["records"] or 0
        if row.get("uncompressed_bytes") is None:
            t[3] += 1
        else:
            t[1] += row["uncompressed_bytes"]
    return _table(
        ("codec", "bytes on the wire", "uncompressed bytes", "ratio", "records"),
        (
            (
                codec,
                f"{wire:,}",
                "unknown" if unknown else f"{raw:,}",
                "-" if unknown else ratio(raw, wire),
                f"{n:,}",
            )
            for codec, (wire, raw, n, unknown) in sorted(totals.items())
        ),
    )


# --- the page -------------------------------------------------------------------------------------


class Html(str):
    """Table cell text that is HTML already (escaped where it was built)."""


def folded(items: list[str], shown_at_most: int = 3) -> str:
    """``items`` as HTML: all of them when few, else the first few and the rest behind a
    ``<details>`` that opens on a click."""
    escaped = [html.escape(item) for item in items]
    if len(items) <= shown_at_most:
        return ", ".join(escaped)
    return (
        f"{', '.join(escaped[:shown_at_most])} <details><summary>and "
        f"{len(items) - shown_at_most} more</summary>{', '.join(escaped[shown_at_most:])}"
        "</details>"
    )


def _cell(value: Any) -> str:
    if isinstance(value, Html):
        return str(value)
    return html.escape("" if value is None else str(value))


def _table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def utc(ts: float | None) -> str:
    return "-" if ts is None else time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ts))


def clients_section(usage: list[dict[str, Any]]) -> str:
    """One row per client: when it was first and last seen, and what it sent."""
    seen: dict[str, list[Any]] = {}
    for row in usage:
        entry = seen.setdefault(client_of(row), [None, None, 0, set()])
        first, last = row.get("first_ts"), row.get("last_ts")
        if first is not None and (entry[0] is None or first < entry[0]):
            entry[0] = first
        if last is not None and (entry[1] is None or last > entry[1]):
            entry[1] = last
        entry[2] += row.get("requests") or 0
        entry[3].add(api_label(row.get("api_name"), row.get("api_key")))
    rows = [
        (client, utc(first), utc(last), requests, len(apis))
        for client, (first, last, requests, apis) in sorted(seen.items())
    ]
    table = _table(("client", "first seen (UTC)", "last seen (UTC)", "requests", "APIs"), rows)
    if len(rows) > 20:
        return f"<details><summary>{len(rows)} clients</summary>{table}</details>"
    return table


def _figure(fig: Any, div_id: str) -> str:
    html_text: str = fig.to_html(
        full_html=False,
        include_plotlyjs=False,
        div_id=div_id,
        config={"displaylogo": False, "responsive": True},
    )
    return html_text


def _readiness_section(readiness: list[dict[str, Any]]) -> str:
    rows = [ReadinessRow._make(r.get(f) for f in ReadinessRow._fields) for r in readiness]
    result = verdict(rows, (rows[0].target if rows else None) or "the target spec set")
    css = {READY: "good", BROKEN: "bad"}.get(result.state, "unsure")
    # The box says the verdict; what breaks, and for whom, is the table under it.
    parts = [
        f'<div class="verdict {css}" id="verdict"><b>{html.escape(result.headline())}</b></div>'
    ]
    bad = [r for r in rows if r.verdict == BREAKS]
    if bad:
        grouped: dict[str, list[ReadinessRow]] = defaultdict(list)
        for r in bad:
            grouped[what(r)].append(r)
        parts.append(
            _table(
                ("what", "clients", "requests / batches", "target's versions", "reason"),
                (
                    (
                        item,
                        Html(folded(sorted({label_of(r) for r in group}))),
                        sum((r.requests if r.kind == "api" else r.batches) or 0 for r in group),
                        group[0].target_versions,
                        group[0].reason,
                    )
                    for item, group in sorted(grouped.items(), key=lambda kv: (-len(kv[1]), kv[0]))
                ),
            )
        )
    if result.fixes:
        parts.append('<h3 id="fixes-title">What to do</h3>')
        parts.append(
            _table(
                ("client", "fix"),
                ((client, fix) for client, fixes in result.fixes.items() for fix in fixes),
            )
        )
    if result.bugs:
        parts.append('<h3 id="bugs-title">Known client bugs that bite on the target</h3>')
        parts.append(
            _table(
                ("client", "bug"),
                ((client, bug) for client, bugs in result.bugs.items() for bug in bugs),
            )
        )
    if result.gaps:
        parts.append('<h3 id="gaps-title">Not observed</h3>')
        parts.append(
            _table(
                ("what the capture does not show", "clients"),
                ((gap.text, Html(folded(gap.clients))) for gap in result.gaps),
            )
        )
    counts = Counter(r.verdict for r in rows)
    logged = sum(1 for r in rows if r.source == "request log")
    parts.append(
        f'<p class="note">{len(rows)} readiness rows ('
        + ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
        + "): client x API version and client x message format, the gaps and the known bugs "
        "(readiness/)"
        + (
            f"; {logged} rest on the broker's request log (no bytes: versions and client "
            "software only)"
            if logged
            else ""
        )
        + ".</p>"
    )
    return "".join(parts)


def render_report(folder: Path) -> str:
    """The HTML page of the tables under ``folder``."""
    from plotly.offline import get_plotlyjs  # type: ignore[import-untyped]  # no py.typed

    usage = read_table(folder, "usage")
    conformance = read_table(folder, "conformance")
    record_usage = read_table(folder, "record_usage")
    readiness = read_table(folder, "readiness")
    errors = read_table(folder, "errors")
    if usage is None and conformance is None:
        raise FileNotFoundError(f"{folder}: no usage/ or conformance/ table (run the pipeline)")

    frames = sum(r["frames"] for r in conformance or ())
    exact = sum(r["reencoded_equal"] or 0 for r in conformance or ())
    decoded = sum(r["decoded"] or 0 for r in conformance or ())
    batches = sum(r["batches"] for r in record_usage or ())
    records = sum(r["records"] or 0 for r in record_usage or ())
    clients = {client_of(r) for r in usage or ()}
    starts = [r["first_ts"] for r in usage or () if r.get("first_ts") is not None]
    ends = [r["last_ts"] for r in usage or () if r.get("last_ts") is not None]
    window = f"{utc(min(starts))} to {utc(max(ends))} UTC" if starts and ends else "n/a"
    facts = [
        ("capture window", window),
        ("frames", f"{frames:,}"),
        ("decoded", f"{decoded:,}"),
        ("byte-exact", f"{100.0 * exact / decoded:.1f} %" if decoded else "n/a"),
        ("errors rows", f"{len(errors):,}" if errors is not None else "n/a"),
        ("clients", f"{len(clients):,}"),
        ("record batches", f"{batches:,}" if record_usage is not None else "n/a"),
        ("records", f"{records:,}" if record_usage is not None else "n/a"),
    ]
    sections = []
    sections.append('<h2 id="readiness-title">Upgrade readiness</h2>')
    if readiness is not None:
        sections.append(_readiness_section(readiness))
    else:
        sections.append(
            '<p class="note">No readiness/ table: run the pipeline with --target-release X.Y '
            "(e.g. 4.0) or --target-specs PATH.</p>"
        )
    sections.append('<h2 id="clients-title">Clients</h2>')
    if usage:
        sections.append(clients_section(usage))
    else:
        sections.append('<p class="note">No usage/ rows.</p>')
    sections.append('<h2 id="usage-title">API version usage per client</h2>')
    if usage:
        sections.append(
            '<p class="note">Requests per client (software and version from ApiVersions v3+, '
            "and client id) and API; the cell text lists the versions used.</p>"
        )
        sections.append(_figure(usage_heatmap(usage, readiness), "usage-heatmap"))
    else:
        sections.append('<p class="note">No usage/ rows.</p>')
    sections.append('<h2 id="conformance-title">Conformance: byte-exact share per API</h2>')
    if conformance:
        sections.append(
            '<p class="note">Each frame is decoded and re-encoded; byte-exact means the '
            "same bytes came back.</p>"
        )
        sections.append(_figure(conformance_chart(conformance), "conformance-chart"))
    else:
        sections.append('<p class="note">No conformance/ rows.</p>')
    sections.append('<h2 id="records-title">Compression and message formats per client</h2>')
    if record_usage:
        sections.append(
            '<p class="note">Record data in Produce requests and Fetch responses, in bytes on '
            "the wire, by message format (magic) and codec; hatched bars are the legacy formats "
            "(magic 0 and 1), which Kafka 4.0 removed. The ratio is uncompressed bytes per "
            "byte on the wire.</p>"
        )
        sections.append(compression_table(record_usage))
        sections.append(_figure(records_chart(record_usage), "records-chart"))
    elif record_usage is None:
        sections.append(
            '<p class="note">No record_usage/ table: the pipeline ran with --no-records.</p>'
        )
    else:
        sections.append('<p class="note">No record batches in this traffic.</p>')

    title = "Kafka traffic report"
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    facts_html = "".join(
        f'<div class="fact">{html.escape(k)}<b>{html.escape(v)}</b></div>' for k, v in facts
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{title}</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{_CSS}</style>"
        f'<script type="text/javascript">{get_plotlyjs()}</script>'
        "</head><body>"
        f"<h1>{title}</h1>"
        f'<p class="sub">Tables in {html.escape(str(folder))}, written by kafka-specgen '
        f"pipeline; page made {when}.</p>"
        f'<div class="facts">{facts_html}</div>' + "".join(sections) + "</body></html>\n"
    )


def write_report(folder: Path, out: Path | None = None) -> Path:
    """Write the page for the tables under ``folder`` to ``out`` (default
    ``folder/report.html``); returns its path."""
    target = out or folder / REPORT
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_report(folder), encoding="utf-8")
    return target
