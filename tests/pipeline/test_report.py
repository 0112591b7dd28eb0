"""``kafka-specgen report``: the HTML page from small hand-made tables (pyarrow, no Spark),
and the same page in headless Chromium. The page from the golden captures' tables is
loaded in Chromium in test_pipeline_spark.py."""

from __future__ import annotations

import re
import struct
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kafka_specgen.cli import main
from kafka_specgen.capture.columns import arrow_schema
from kafka_specgen.pipeline.readiness import ReadinessRow, Target, judge_rows
from kafka_specgen.pipeline.report import folded, REPORT, render_report, write_report
from tests.support import genpkg
from tests.support.chromium import load_page

#: A client id that would run script if the page put it into HTML unescaped.
EVIL = (
    '</script><script>window.__alerted=true</script><img src=x onerror="window.__alerted=true"><b>'
)


PLOTS_READY = "document.querySelectorAll('.js-plotly-plot .main-svg').length >= 3"
FACTS = """({
  plots: document.querySelectorAll('.js-plotly-plot').length,
  heatmapRows: (() => { const d = document.getElementById('usage-heatmap');
                        return d && d.data ? d.data[0].y.length : -1; })(),
  verdict: (document.getElementById('verdict') || {}).innerText || null,
  tickTexts: Array.from(document.querySelectorAll('#usage-heatmap .ytick text'))
                  .map(t => t.textContent),
  alerted: window.__alerted === true,
})"""


def loaded_resources(page: str) -> list[str]:
    """``src``/``href`` of the page's elements (script bodies are not parsed as HTML)."""
    from html.parser import HTMLParser

    found: list[str] = []

    class Parser(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.extend(f"{tag} {v}" for k, v in attrs if k in ("src", "href") and v)

    Parser().feed(page)
    return found


def write(folder: Path, name: str, rows: list[dict[str, Any]]) -> None:
    (folder / name).mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), folder / name / "part-0.parquet")


def usage_row(
    software: str | None, client: str, key: int, name: str, version: int, n: int
) -> dict[str, Any]:
    return {
        "software_name": software,
        "software_version": "1.0" if software else None,
        "address": None,
        "client_ids": [client],
        "api_key": key,
        "api_name": name,
        "api_version": version,
        "frames": 2 * n,
        "requests": n,
        "first_ts": 1.0,
        "last_ts": 2.0,
    }


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tables")
    usage = [
        usage_row("librdkafka", "rd", 0, "Produce", 10, 80),
        usage_row("librdkafka", "rd", 18, "ApiVersions", 3, 1),
        usage_row(None, "old", 0, "Produce", 2, 12),
        usage_row(None, EVIL, 3, "Metadata", 1, 3),
    ]
    write(out, "usage", usage)
    write(
        out,
        "conformance",
        [
            {
                "api_key": 0,
                "api_name": "Produce",
                "direction": "request",
                "api_version": 10,
                "frames": 80,
                "decoded": 80,
                "reencoded_equal": 80,
                "mismatches": 0,
                "errors": 0,
            },
            {
                "api_key": 3,
                "api_name": "Metadata",
                "direction": "request",
                "api_version": 1,
                "frames": 4,
                "decoded": 3,
                "reencoded_equal": 2,
                "mismatches": 1,
                "errors": 1,
            },
        ],
    )
    write(
        out,
        "record_usage",
        [
            {
                "software_name": "librdkafka",
                "software_version": "1.0",
                "address": None,
                "client_ids": ["rd"],
                "direction": "request",
                "magic": 2,
                "compression": "zstd",
                "batches": 80,
                "records": 400,
                "bytes": 9000,
                "uncompressed_bytes": 36000,
            },
            {
                "software_name": None,
                "software_version": None,
                "address": None,
                "client_ids": ["old"],
                "direction": "request",
                "magic": 1,
                "compression": "gzip",
                "batches": 3,
                "records": 15,
                "bytes": 700,
            },
        ],
    )
    write(out, "errors", [{"kind": "frame", "reason": "x"}])
    target = Target([genpkg.kafka_python_specs()], label="kafka-python 4.x specs")
    rows = judge_rows(
        target,
        [dict(u) for u in usage],
        [
            {
                "software_name": None,
                "software_version": None,
                "address": None,
                "client_ids": ["old"],
                "magic": 1,
                "batches": 3,
            },
        ],
    )
    arrow = arrow_schema(ReadinessRow)
    (out / "readiness").mkdir()
    pq.write_table(
        pa.Table.from_pylist([r._asdict() for r in rows], schema=arrow),
        out / "readiness" / "part-0.parquet",
    )
    return out


def test_the_page_holds_everything_it_needs(tables: Path) -> None:
    page = render_report(tables)
    assert page.startswith("<!DOCTYPE html>")
    # plotly.js is inline: no element of the page loads anything
    assert loaded_resources(page) == []
    assert len(page) > 3_000_000  # the bundle itself
    assert page.count("Plotly.newPlot") == 3  # heatmap, conformance, records
    assert "1 of 3 clients would break on the target (kafka-python 4.x specs)" in page
    assert "Produce v2" in page and "message format v1" in page
    assert "Kafka 4.0 removed message formats v0 and v1" in page
    assert EVIL not in page  # escaped, shown as text (test_the_page_in_chromium)
    # the verdict box says the verdict; the table under it says what breaks for whom
    assert re.search(
        r'<div class="verdict bad" id="verdict"><b>1 of 3 clients would break '
        r"on the target \(kafka-python 4\.x specs\)</b></div>",
        page,
    )
    # the capture's time window, and each client's first and last time seen
    assert "capture window<b>1970-01-01 00:00:01 to 1970-01-01 00:00:02 UTC</b>" in page
    assert (
        "<td>&#x27;rd&#x27; (librdkafka 1.0)</td><td>1970-01-01 00:00:01</td><td>1970-01-01 00:00:02</td><td>81</td><td>2</td>"
        in page
    )
    # compression in bytes, with the ratio
    assert "<td>zstd</td><td>9,000</td><td>36,000</td><td>4.0x</td><td>400</td>" in page
    assert "<td>gzip</td><td>700</td><td>unknown</td><td>-</td><td>15</td>" in page


def test_long_client_lists_fold() -> None:
    assert folded(["a", "b"]) == "a, b"
    five = folded(["a", "b", "c", "<d>", "e"])
    assert five.startswith("a, b, c <details><summary>and 2 more</summary>")
    assert "&lt;d&gt;, e</details>" in five


def test_missing_tables_leave_their_sections_out(tmp_path: Path) -> None:
    write(tmp_path, "usage", [usage_row("x", "c", 18, "ApiVersions", 3, 1)])
    page = render_report(tmp_path)
    assert "No readiness/ table: run the pipeline with --target-release X.Y" in page
    assert "No record_usage/ table" in page and "No conformance/ rows" in page
    with pytest.raises(FileNotFoundError):
        render_report(tmp_path / "nothing")


def test_report_command(tables: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tables), "--out", str(tmp_path / "r.html")]) == 0
    assert "wrote" in capsys.readouterr().out
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    assert write_report(tables) == tables / REPORT


def test_the_page_in_chromium(tables: Path, tmp_path: Path) -> None:
    page = write_report(tables, tmp_path / "report.html")
    shot = tmp_path / "report.png"
    result = load_page(page, shot, ready_js=PLOTS_READY, facts_js=FACTS)
    assert result.ready, "the three charts did not render"
    assert result.console_errors == []
    assert all(u.startswith(("file:", "data:")) for u in result.requests), result.requests
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", shot.read_bytes()[16:24])
    assert width == 1400 and height > 1500 and len(result.screenshot) > 50_000
    facts = result.facts
    assert facts["plots"] == 3 and facts["heatmapRows"] == 3
    assert facts["verdict"].startswith("1 of 3 clients would break")
    assert any(EVIL in t for t in facts["tickTexts"]), facts["tickTexts"]  # shown as text
    assert not facts["alerted"]
