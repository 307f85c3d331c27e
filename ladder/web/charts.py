"""Rating-history charts as inline SVG, drawn on the server (no JavaScript needed to see them).

Pure: no Django, no I/O. Input: one series per ladder of (game number, Elo after) points.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

PALETTE = ("#c2410c", "#0f766e", "#7c3aed", "#b45309", "#1d4ed8", "#be123c", "#4d7c0f")


@dataclass(frozen=True)
class Series:
    label: str
    points: Sequence[tuple[int, float]]  # (game number, rating)
    start: float | None = None  # the ladder's start rating, drawn as game 0


def _nice_step(span: float, target: int = 5) -> float:
    raw = span / max(target, 1)
    magnitude = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * magnitude:
            return factor * magnitude
    return 10 * magnitude


def rating_chart_svg(
    series: Sequence[Series], *, width: int = 720, height: int = 280, title: str = "Elo"
) -> str:
    """An SVG line chart with axes, grid and a legend; an explanatory empty chart when there is no data."""
    drawn = [s for s in series if s.points]
    legend_h = 18 * len(drawn)
    height += legend_h
    left, right, top, bottom = 56, 16, 16, 40 + legend_h
    plot_w, plot_h = width - left - right, height - top - bottom
    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)} history" '
        f'xmlns="http://www.w3.org/2000/svg" preserveAspectRatio="xMidYMid meet">',
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" class="chart-bg"/>',
    ]
    if not drawn:
        parts.append(
            f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle" class="chart-empty">'
            "No rated games yet</text></svg>"
        )
        return "".join(parts)
    xs: list[float] = [0.0]
    ys: list[float] = []
    for s in drawn:
        xs.extend(p[0] for p in s.points)
        ys.extend(p[1] for p in s.points)
        if s.start is not None:
            ys.append(s.start)
    x_max = max(max(xs), 1)
    y_min, y_max = min(ys), max(ys)
    if y_max - y_min < 20:
        mid = (y_max + y_min) / 2
        y_min, y_max = mid - 10, mid + 10
    step = _nice_step(y_max - y_min)
    y_lo = math.floor(y_min / step) * step
    y_hi = math.ceil(y_max / step) * step

    def px(x: float) -> float:
        return left + plot_w * x / x_max

    def py(y: float) -> float:
        return top + plot_h * (1 - (y - y_lo) / (y_hi - y_lo))

    value = y_lo
    while value <= y_hi + 1e-9:
        y = py(value)
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" class="chart-grid"/>')
        parts.append(
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" class="chart-tick">{value:g}</text>'
        )
        value += step
    x_step = max(1, int(_nice_step(x_max, 6)))
    for game in range(0, int(x_max) + 1, x_step):
        x = px(game)
        parts.append(
            f'<text x="{x:.1f}" y="{top + plot_h + 16}" text-anchor="middle" class="chart-tick">{game}</text>'
        )
    parts.append(
        f'<text x="{left + plot_w / 2}" y="{top + plot_h + 30}" text-anchor="middle" class="chart-axis">'
        "games played</text>"
    )
    for index, s in enumerate(drawn):
        color = PALETTE[index % len(PALETTE)]
        points = ([(0, s.start)] if s.start is not None else []) + list(s.points)
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in points)
        parts.append(
            f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2" class="chart-line"/>'
        )
        if len(points) <= 60:
            for x, y in points[1:]:
                parts.append(
                    f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2.5" fill="{color}">'
                    f"<title>{escape(s.label)}: game {x}, {y:.1f}</title></circle>"
                )
        legend_y = top + plot_h + 44 + 18 * index
        parts.append(f'<rect x="{left}" y="{legend_y - 9}" width="10" height="10" fill="{color}"/>')
        last = points[-1][1]
        parts.append(
            f'<text x="{left + 16}" y="{legend_y}" class="chart-legend">{escape(s.label)} ({last:.0f})</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
