"""``portq summary --html FILE``: the ledger as one self-contained HTML page.

One file a maintainer can open from disk or attach anywhere: verdict counts
per row, an inline-SVG chart of flagged entries per wave over time, and the
open entries with links to their reports and to the upstream commit (the
``web`` template of ``portq.toml``). No script, no network, no CDN: styles are
inline and the chart is drawn here as SVG rectangles.

Commit titles and paths are untrusted: the template environment autoescapes
every value as HTML, links are only relative report paths or URLs from the
checked ``web`` template, and nothing from a commit is ever compiled as
template source. It reads the overview ``portq.reporting.dashboard`` builds and writes
one file; it decides nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from portq.core.model import FLAGGED, VERDICTS
from portq.reporting import reports
from portq.reporting.dashboard import ledger_overview
from portq.reporting.markdown import visible

CHART_WIDTH = 640
CHART_HEIGHT = 220
CHART_MARGIN = 36
COLOURS = {"REAL_GAP": "#c0392b", "NEEDS_REVIEW": "#d68910", "INERT": "#7f8c8d"}
"""Bar colours per flagged verdict (most severe at the bottom of a stack)."""


def chart(waves: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Bar geometry of flagged entries per wave, stacked by verdict, in SVG user units."""
    top = max([w["flagged"] for w in waves] + [1])
    plot_width = CHART_WIDTH - 2 * CHART_MARGIN
    plot_height = CHART_HEIGHT - 2 * CHART_MARGIN
    slot = plot_width / max(len(waves), 1)
    bars = []
    for index, wave in enumerate(waves):
        x = CHART_MARGIN + index * slot + slot * 0.15
        base = CHART_HEIGHT - CHART_MARGIN
        segments = []
        for verdict in (v for v in VERDICTS if v in FLAGGED):
            count = wave["counts"][verdict]
            if not count:
                continue
            height = plot_height * count / top
            base -= height
            segments.append({"verdict": verdict, "count": count, "y": round(base, 1), "height": round(height, 1),
                             "colour": COLOURS[verdict]})
        bars.append({"x": round(x, 1), "width": round(slot * 0.7, 1), "segments": segments, "label": wave["wave"],
                     "upstream": wave["upstream"], "flagged": wave["flagged"], "label_x": round(x + slot * 0.35, 1),
                     "total_y": round(base - 4, 1)})
    return {"width": CHART_WIDTH, "height": CHART_HEIGHT, "margin": CHART_MARGIN, "top": top, "bars": bars,
            "axis_y": CHART_HEIGHT - CHART_MARGIN, "colours": COLOURS}


def page_context(ledger, out_dir: Path, html_path: Path, web: Mapping[str, str] | None = None) -> dict[str, Any]:
    overview = ledger_overview(ledger, out_dir, web)
    html_dir = html_path.resolve().parent
    for group in overview["open_by_row"]:
        for item in group["entries"]:
            item["report_href"] = (Path(os.path.relpath(item["report_path"], html_dir)).as_posix()
                                   if item.get("report_path") else None)
    return {**overview, "chart": chart(overview["waves"]), "verdicts": list(VERDICTS)}


def environment() -> jinja2.Environment:
    """HTML-autoescaping sandbox over the shipped templates."""
    env = ImmutableSandboxedEnvironment(
        loader=jinja2.FileSystemLoader(str(reports.TEMPLATES_DIR)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        # Every value the page shows gets the terminal's policy: controls, bidi
        # overrides and line separators as visible escapes, whichever field it is.
        finalize=lambda value: visible(value) if isinstance(value, str) else value,
    )
    env.filters["visible"] = visible
    return env


def render_page(context: Mapping[str, Any]) -> str:
    try:
        return environment().get_template("summary.html.j2").render(**context)
    except jinja2.TemplateError as exc:
        raise reports.ReportError(f"template summary.html.j2: {type(exc).__name__}: {exc}", 1) from None


def write_page(ledger, html_path: Path, out_dir: Path, web: Mapping[str, str] | None = None) -> bool:
    """Render the page and write it to ``html_path`` (``--html FILE``)."""
    text = render_page(page_context(ledger, out_dir, html_path, web))
    try:
        return reports.write_report(html_path, text)
    except reports.ReportError:
        raise reports.ReportError(f"--html {html_path}: cannot write the page there (expected a writable file path)") from None
