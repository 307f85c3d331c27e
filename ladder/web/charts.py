"""Rating-history charts as inline SVG, drawn on the server (no JavaScript needed to read them).

Pure: no Django, no I/O, no clock. A chart is one SVG of stacked panels (small multiples: one panel per
ladder when a bot plays several); a panel holds one or more series, each a line with an optional
confidence band (the rating interval), an optional dashed second line of the value the board ranks by
(`Point.ranked`, the conservative rating mu - 3 sigma, named in the legend) and a hover text per point
(an SVG `<title>`, which browsers show as a tooltip and screen readers read). The x axis is dates (UTC)
when points carry datetimes, else game numbers; a date axis spans at least ten minutes, so a chart of one
game does not read as a one-second axis. Colours come from the Okabe-Ito palette, which stays distinct
under the common colour-vision deficiencies; its yellow is left out (too faint on white).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from html import escape

# Okabe & Ito (2008), "Color Universal Design": blue, vermillion, bluish green, reddish purple, orange,
# sky blue, black.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")

PANEL_HEIGHT = 220
LEFT, RIGHT, TOP = 56, 16, 28
AXIS_SPACE = 40
LEGEND_ROW = 18
MAX_DOTS = 60  # visible dots up to this many points; hover targets always
MAX_HOVER = 400  # hover targets per series at most (evenly thinned beyond)
MIN_DATE_SPAN = 600.0  # seconds: the narrowest date axis (ten minutes)
RANKED_LABEL = "\u03bc \u2212 3\u03c3, dashed: what the board ranks by"

_TIME_STEPS = (
    1,
    2,
    5,
    10,
    15,
    30,
    60,
    300,
    900,
    1800,
    3600,
    3 * 3600,
    6 * 3600,
    12 * 3600,
    86400,
    2 * 86400,
    7 * 86400,
    14 * 86400,
    30 * 86400,
    91 * 86400,
    182 * 86400,
    365 * 86400,
)


@dataclass(frozen=True)
class Point:
    x: float | datetime  # when the game finished (datetime) or its number
    value: float
    low: float | None = None  # confidence band, when known
    high: float | None = None
    hover: str = ""
    ranked: float | None = None  # the value the board ranks by (mu - 3 sigma), drawn dashed when known


@dataclass(frozen=True)
class Series:
    label: str
    points: Sequence[Point | tuple[float | datetime, float]]
    start: float | None = None  # the start rating, drawn at game 0 (game-number axes only)
    color: str | None = None


@dataclass(frozen=True)
class Marker:
    """A vertical line with a label (a new bot version, a season's start)."""

    x: float | datetime
    label: str


@dataclass(frozen=True)
class Panel:
    title: str
    series: Sequence[Series]
    markers: Sequence[Marker] = field(default_factory=tuple)
    y_label: str = ""


def _points(series: Series) -> list[Point]:
    return [p if isinstance(p, Point) else Point(p[0], p[1]) for p in series.points]


def _x(value: float | datetime) -> float:
    return value.timestamp() if isinstance(value, datetime) else float(value)


def _nice_step(span: float, target: int = 5) -> float:
    raw = span / max(target, 1)
    magnitude = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * magnitude:
            return factor * magnitude
    return 10 * magnitude


def _time_ticks(lo: float, hi: float, target: int = 6) -> tuple[list[float], str]:
    """Tick positions (epoch seconds, UTC-aligned) and their strftime format."""
    span = max(hi - lo, 1.0)
    step = next((s for s in _TIME_STEPS if span / s <= target), _TIME_STEPS[-1])
    first = math.ceil(lo / step) * step
    ticks = []
    t = first
    while t <= hi + 1e-6:
        ticks.append(float(t))
        t += step
    if step < 60:
        fmt = "%H:%M:%S"
    elif step < 86400:
        fmt = "%H:%M"
    elif step < 30 * 86400:
        fmt = "%d %b"
    else:
        fmt = "%b %Y"
    return ticks, fmt


def _when(t: float, fmt: str) -> str:
    return datetime.fromtimestamp(t, UTC).strftime(fmt)


def rating_chart_svg(
    series: Sequence[Series], *, width: int = 720, height: int = PANEL_HEIGHT, title: str = "Elo"
) -> str:
    """One panel holding every series (kept for callers with a single ladder)."""
    return rating_panels_svg([Panel(title="", series=series, y_label=title)], width=width, height=height)


def rating_panels_svg(
    panels: Sequence[Panel], *, width: int = 720, height: int = PANEL_HEIGHT, label: str = "Rating history"
) -> str:
    """An SVG of stacked panels with axes, grid, bands, hover texts and legends; an explanatory empty
    chart when there is nothing to draw."""
    drawn = [p for p in panels if any(_points(s) for s in p.series)]
    if not drawn:
        return (
            f'<svg class="chart" viewBox="0 0 {width} 120" role="img" aria-label="{escape(label)}" '
            f'xmlns="http://www.w3.org/2000/svg"><rect x="0" y="0" width="{width}" height="120" '
            f'class="chart-bg"/><text x="{width / 2}" y="64" text-anchor="middle" class="chart-empty">'
            "No rated games yet</text></svg>"
        )
    parts: list[str] = []
    y = 0
    colour_index = 0
    for panel in drawn:
        panel_parts, used, panel_height = _panel(panel, y, width, height, colour_index)
        parts += panel_parts
        colour_index += used
        y += panel_height
    head = (
        f'<svg class="chart" viewBox="0 0 {width} {y}" role="img" aria-label="{escape(label)}" '
        f'xmlns="http://www.w3.org/2000/svg" preserveAspectRatio="xMidYMid meet">'
    )
    return head + "".join(parts) + "</svg>"


def _panel(panel: Panel, y0: int, width: int, height: int, colour_index: int) -> tuple[list[str], int, int]:
    """The panel's SVG parts, how many palette colours it used, and its height."""
    series = [(s, _points(s)) for s in panel.series if _points(s)]
    legend_h = LEGEND_ROW * len(series)
    top = y0 + (TOP if panel.title else 12)
    plot_w, plot_h = width - LEFT - RIGHT, height - (top - y0) - AXIS_SPACE
    panel_height = height + legend_h + 8
    dates = isinstance(series[0][1][0].x, datetime)
    xs = [_x(p.x) for _, pts in series for p in pts]
    ys: list[float] = []
    for s, pts in series:
        for p in pts:
            ys.append(p.value)
            ys += [v for v in (p.low, p.high, p.ranked) if v is not None]
        if s.start is not None and not dates:
            ys.append(s.start)
    if dates:
        x_lo, x_hi = min(xs), max(xs)
        if x_hi - x_lo < MIN_DATE_SPAN:
            middle = (x_lo + x_hi) / 2
            x_lo, x_hi = middle - MIN_DATE_SPAN / 2, middle + MIN_DATE_SPAN / 2
    else:
        x_lo, x_hi = 0.0, max(max(xs), 1.0)
    y_min, y_max = min(ys), max(ys)
    if y_max - y_min < 1e-9:
        y_min, y_max = y_min - 1, y_max + 1
    step = _nice_step(y_max - y_min)
    y_lo = math.floor(y_min / step) * step
    y_hi = math.ceil(y_max / step) * step

    def px(x: float) -> float:
        return LEFT + plot_w * (x - x_lo) / (x_hi - x_lo)

    def py(v: float) -> float:
        return top + plot_h * (1 - (v - y_lo) / (y_hi - y_lo))

    parts = [f'<g class="chart-panel" data-panel="{escape(panel.title)}">']
    if panel.title:
        parts.append(f'<text x="{LEFT}" y="{y0 + 18}" class="chart-title">{escape(panel.title)}</text>')
    parts.append(f'<rect x="{LEFT}" y="{top}" width="{plot_w}" height="{plot_h}" class="chart-bg"/>')
    value = y_lo
    while value <= y_hi + 1e-9:
        yy = py(value)
        parts.append(
            f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{yy:.1f}" y2="{yy:.1f}" class="chart-grid"/>'
        )
        parts.append(
            f'<text x="{LEFT - 6}" y="{yy + 4:.1f}" text-anchor="end" class="chart-tick">{value:g}</text>'
        )
        value += step
    if panel.y_label:
        parts.append(
            f'<text x="14" y="{top + plot_h / 2:.1f}" text-anchor="middle" class="chart-axis" '
            f'transform="rotate(-90 14 {top + plot_h / 2:.1f})">{escape(panel.y_label)}</text>'
        )
    base = top + plot_h
    if dates:
        ticks, fmt = _time_ticks(x_lo, x_hi)
        for t in ticks:
            parts.append(
                f'<text x="{px(t):.1f}" y="{base + 16}" text-anchor="middle" class="chart-tick">'
                f"{_when(t, fmt)}</text>"
            )
        caption = f"UTC, {_when(min(xs), '%d %b %Y %H:%M')} to {_when(max(xs), '%d %b %Y %H:%M')}"
    else:
        x_step = max(1, int(_nice_step(x_hi, 6)))
        for game in range(0, int(x_hi) + 1, x_step):
            parts.append(
                f'<text x="{px(game):.1f}" y="{base + 16}" text-anchor="middle" class="chart-tick">'
                f"{game}</text>"
            )
        caption = "games played"
    parts.append(
        f'<text x="{LEFT + plot_w / 2}" y="{base + 31}" text-anchor="middle" class="chart-axis">'
        f"{escape(caption)}</text>"
    )
    for marker in panel.markers:
        mx = _x(marker.x)
        if not x_lo <= mx <= x_hi:
            continue
        parts.append(
            f'<line x1="{px(mx):.1f}" x2="{px(mx):.1f}" y1="{top}" y2="{base}" class="chart-marker">'
            f"<title>{escape(marker.label)}</title></line>"
        )
        parts.append(
            f'<text x="{px(mx) + 3:.1f}" y="{top + 11}" class="chart-marker-label">{escape(marker.label)}</text>'
        )
    used = 0
    for index, (s, pts) in enumerate(series):
        color = s.color or PALETTE[(colour_index + used) % len(PALETTE)]
        if s.color is None:
            used += 1
        parts += _series(s, pts, color, px, py, dates)
        legend_y = base + AXIS_SPACE + 8 + LEGEND_ROW * index
        parts.append(f'<rect x="{LEFT}" y="{legend_y - 9}" width="10" height="10" fill="{color}"/>')
        parts.append(
            f'<text x="{LEFT + 16}" y="{legend_y}" class="chart-legend">{escape(_legend(s, pts))}</text>'
        )
    parts.append("</g>")
    return parts, used, panel_height


def _legend(s: Series, pts: list[Point]) -> str:
    last = pts[-1]
    if last.ranked is None:
        return f"{s.label} ({last.value:.1f})"
    return (
        f"{s.label}: \u03bc {last.value:.1f}, band \u03bc \u00b1 2\u03c3; {RANKED_LABEL} ({last.ranked:.2f})"
    )


def _series(
    s: Series,
    pts: list[Point],
    color: str,
    px: Callable[[float], float],
    py: Callable[[float], float],
    dates: bool,
) -> list[str]:
    parts = []
    banded = [p for p in pts if p.low is not None and p.high is not None]
    if len(banded) >= 1:
        upper = [(px(_x(p.x)), py(p.high)) for p in banded if p.high is not None]
        lower = [(px(_x(p.x)), py(p.low)) for p in reversed(banded) if p.low is not None]
        if len(banded) == 1:  # a band needs width: draw a short bar
            (x, hi), (_, lo) = upper[0], lower[0]
            upper, lower = [(x - 3, hi), (x + 3, hi)], [(x + 3, lo), (x - 3, lo)]
        outline = " ".join(f"{x:.1f},{y:.1f}" for x, y in upper + lower)
        parts.append(f'<polygon points="{outline}" fill="{color}" class="chart-band"/>')
    line = ([] if dates or s.start is None else [(0.0, s.start)]) + [(_x(p.x), p.value) for p in pts]
    path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in line)
    parts.append(
        f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2" class="chart-line"/>'
    )
    ranked = [(px(_x(p.x)), py(p.ranked)) for p in pts if p.ranked is not None]
    if ranked:
        dashed = " ".join(f"{x:.1f},{y:.1f}" for x, y in ranked)
        parts.append(
            f'<polyline points="{dashed}" fill="none" stroke="{color}" stroke-width="1.5" '
            f'stroke-dasharray="5 3" class="chart-line chart-ranked"><title>{escape(s.label)}: '
            f"{RANKED_LABEL}</title></polyline>"
        )
    every = max(1, math.ceil(len(pts) / MAX_HOVER))
    for i, p in enumerate(pts):
        if i % every and i != len(pts) - 1:
            continue
        x, y = px(_x(p.x)), py(p.value)
        if p.hover:
            text = p.hover
        elif dates:
            text = f"{s.label}: {_when(_x(p.x), '%d %b %Y %H:%M UTC')}, {p.value:.1f}"
        else:
            text = f"{s.label}: game {_x(p.x):g}, {p.value:.1f}"
        dot = f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{color}"/>' if len(pts) <= MAX_DOTS else ""
        parts.append(
            f'<g class="chart-point">{dot}<circle cx="{x:.1f}" cy="{y:.1f}" r="7" class="chart-hit" '
            f'stroke="{color}"><title>{escape(text)}</title></circle></g>'
        )
    return parts
