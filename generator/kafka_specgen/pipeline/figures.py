"""The report's figures (plotly), from the rows of the pipeline's tables: API version
usage per client as a heatmap, conformance per API, and record batches per client by
message format and codec."""

from __future__ import annotations

import html
import math
from collections import defaultdict
from typing import Any

from .readiness import BREAKS, client_label


def ratio(uncompressed: int, wire: int) -> str:
    """The compression ratio, ``3.2x``: uncompressed bytes per byte on the wire."""
    return f"{uncompressed / wire:.1f}x" if wire else "-"


def client_of(row: dict[str, Any]) -> str:
    """A client's label: ``software version at address (client ids)``."""
    return client_label(
        row.get("software_name"),
        row.get("software_version"),
        row.get("address"),
        row.get("client_ids"),
    )


def shown(label: str) -> str:
    """A label as plotly shows it: plotly reads a subset of HTML in text (``<b>``, ``<br>``,
    entities), so a client id such as ``<b>x`` is escaped to show as written."""
    return html.escape(label, quote=False)


def api_label(name: str | None, key: int | None) -> str:
    return f"{name or 'api key'} ({key})" if name else f"api key {key}"


def usage_heatmap(usage: list[dict[str, Any]], readiness: list[dict[str, Any]] | None) -> Any:
    """Client x API: requests (log colour), versions as text; crosses where the target
    lacks a version the client used."""
    import plotly.graph_objects as go  # type: ignore[import-untyped]  # no py.typed

    requests: dict[tuple[str, tuple[int, str]], int] = defaultdict(int)
    versions: dict[tuple[str, tuple[int, str]], set[int]] = defaultdict(set)
    for row in usage:
        if not row.get("requests"):
            continue
        cell = (client_of(row), (row["api_key"], api_label(row.get("api_name"), row["api_key"])))
        requests[cell] += row["requests"]
        versions[cell].add(row["api_version"])
    unsupported: dict[tuple[str, tuple[int, str]], list[str]] = defaultdict(list)
    for row in readiness or ():
        if row["kind"] == "api" and row["verdict"] == BREAKS:
            cell = (
                client_of(row),
                (row["api_key"], api_label(row.get("api_name"), row["api_key"])),
            )
            unsupported[cell].append(f"v{row['api_version']}")
    clients = sorted({c for c, _ in requests})
    apis = sorted({a for _, a in requests})
    x = [a[1] for a in apis]
    z: list[list[float | None]] = []
    text: list[list[str]] = []
    hover: list[list[str]] = []
    for client in clients:
        z_row: list[float | None] = []
        t_row: list[str] = []
        h_row: list[str] = []
        for api in apis:
            n = requests.get((client, api))
            if n is None:
                z_row.append(None)
                t_row.append("")
                h_row.append("")
                continue
            vs = ",".join(f"v{v}" for v in sorted(versions[(client, api)]))
            z_row.append(math.log10(n))
            t_row.append(vs)
            bad = unsupported.get((client, api))
            h_row.append(
                f"{html.escape(client)}<br>{html.escape(api[1])}: {vs}<br>{n} requests"
                + (f"<br><b>not accepted by the target: {', '.join(bad)}</b>" if bad else "")
            )
        z.append(z_row)
        text.append(t_row)
        hover.append(h_row)
    top = max((math.log10(n) for n in requests.values()), default=1.0)
    ticks = [v for v in (1, 10, 100, 1000, 10_000, 100_000, 1_000_000) if math.log10(v) <= top]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=x,
            y=[shown(c) for c in clients],
            text=text,
            texttemplate="%{text}",
            textfont={"size": 9},
            customdata=hover,
            hovertemplate="%{customdata}<extra></extra>",
            colorscale="Blues",
            zmin=0,
            zmax=max(top, 1.0),
            xgap=1,
            ygap=1,
            colorbar={
                "title": {"text": "requests"},
                "tickvals": [math.log10(v) for v in ticks],
                "ticktext": [f"{v:,}" for v in ticks],
            },
        )
    )
    if unsupported:
        cells = sorted(unsupported)
        xs, ys = [a[1] for _, a in cells], [shown(c) for c, _ in cells]
        # a white cross under the red one: visible on the darkest cell too
        for colour, width, size, name in (
            ("#ffffff", 6, 20, None),
            ("#cf222e", 2, 16, "not accepted by the target"),
        ):
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="markers",
                    marker={
                        "symbol": "x-thin-open",
                        "size": size,
                        "color": colour,
                        "line": {"width": width, "color": colour},
                    },
                    name=name or "",
                    showlegend=name is not None,
                    hoverinfo="skip" if name is None else None,
                    hovertemplate=(
                        None
                        if name is None
                        else "%{y}<br>%{x}: not accepted by the target<extra></extra>"
                    ),
                )
            )
    fig.update_layout(
        height=max(420, 24 * len(clients) + 260),
        margin={"l": 20, "r": 20, "t": 30, "b": 20},
        xaxis={"side": "top", "tickangle": -45, "categoryorder": "array", "categoryarray": x},
        yaxis={
            "autorange": "reversed",
            "categoryorder": "array",
            "categoryarray": [shown(c) for c in clients],
        },
        legend={"orientation": "h", "y": -0.02},
        plot_bgcolor="#ffffff",
    )
    return fig


def conformance_chart(conformance: list[dict[str, Any]]) -> Any:
    """Per API: the share of frames re-encoded byte-exact, decoded but different, not decoded."""
    import plotly.graph_objects as go

    totals: dict[tuple[int, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for row in conformance:
        key = (
            row["api_key"] if row["api_key"] is not None else -1,
            (
                api_label(row.get("api_name"), row["api_key"])
                if row["api_key"] is not None
                else "no api key (orphan or unreadable)"
            ),
        )
        t = totals[key]
        t[0] += row["frames"] or 0
        t[1] += row["reencoded_equal"] or 0
        t[2] += row["mismatches"] or 0
        t[3] += row["errors"] or 0
    apis = sorted(totals)
    labels = [a[1] for a in apis]
    fig = go.Figure()
    for index, (name, colour) in enumerate(
        (
            ("byte-exact", "#2da44e"),
            ("re-encoded differently", "#d4a72c"),
            ("not decoded", "#cf222e"),
        ),
        start=1,
    ):
        shares = [100.0 * totals[a][index] / totals[a][0] if totals[a][0] else 0.0 for a in apis]
        counts = [f"{totals[a][index]} of {totals[a][0]} frames" for a in apis]
        fig.add_trace(
            go.Bar(
                y=labels,
                x=shares,
                orientation="h",
                name=name,
                marker_color=colour,
                customdata=counts,
                hovertemplate="%{y}: %{x:.1f} % " + name + " (%{customdata})<extra></extra>",
            )
        )
    fig.update_layout(
        barmode="stack",
        height=max(360, 22 * len(apis) + 140),
        margin={"l": 20, "r": 20, "t": 30, "b": 40},
        xaxis={"title": {"text": "% of frames"}, "range": [0, 100]},
        yaxis={"autorange": "reversed"},
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"},
    )
    return fig


def records_chart(record_usage: list[dict[str, Any]]) -> Any:
    """Per client: bytes of record data on the wire per message format x codec (stacked);
    batches, records and the compression ratio (uncompressed / on the wire) in the hover."""
    import plotly.graph_objects as go

    cells: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for row in record_usage:
        kind = f"magic {row['magic']} · {row['compression']}"
        c = cells[(client_of(row), kind)]
        c[0] += row["batches"] or 0
        c[1] += row["records"] or 0
        c[2] += row["bytes"] or 0
        c[3] += row.get("uncompressed_bytes") or 0
    clients = sorted({c for c, _ in cells})
    kinds = sorted({k for _, k in cells})
    palette = {
        "none": "#8c959f",
        "gzip": "#0969da",
        "snappy": "#8250df",
        "lz4": "#bf3989",
        "zstd": "#1a7f37",
    }
    fig = go.Figure()
    for kind in kinds:
        codec = kind.rsplit(" ", 1)[-1]
        legacy = not kind.startswith("magic 2")
        values = [cells.get((c, kind), [0, 0, 0, 0]) for c in clients]
        fig.add_trace(
            go.Bar(
                y=[shown(c) for c in clients],
                x=[v[2] for v in values],
                orientation="h",
                name=kind + ("  (legacy format)" if legacy else ""),
                marker={
                    "color": palette.get(codec, "#57606a"),
                    "pattern": {"shape": "x" if legacy else ""},
                },
                customdata=[
                    [v[0], v[1], v[3] or "?", ratio(v[3], v[2]) if v[3] else "?"] for v in values
                ],
                hovertemplate="%{y}<br>"
                + kind
                + ": %{x} bytes on the wire (%{customdata[2]} uncompressed, ratio "
                "%{customdata[3]}), %{customdata[0]} batches, %{customdata[1]} records"
                "<extra></extra>",
            )
        )
    fig.update_layout(
        barmode="stack",
        height=max(360, 22 * len(clients) + 160),
        margin={"l": 20, "r": 20, "t": 30, "b": 40},
        xaxis={"title": {"text": "bytes of record data on the wire"}},
        yaxis={"autorange": "reversed"},
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom"},
    )
    return fig
