"""The rating chart says what it plots: OpenSkill mu with its band and, dashed, the conservative rating
mu - 3 sigma the leaderboard ranks by, both named in the legend; a chart of one game has a readable axis."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from ladder.web.charts import RANKED_LABEL, Panel, Point, Series, rating_panels_svg


def test_the_chart_draws_and_names_the_ranked_value_beside_mu():
    t0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
    points = [
        Point(t0 + timedelta(minutes=5 * i), 25 + i, 20 + i, 30 + i, f"game {i}", ranked=10 + i)
        for i in range(4)
    ]
    svg = rating_panels_svg([Panel("Two players", [Series("a", points)])])
    assert svg.count("chart-ranked") == 1 and 'stroke-dasharray="5 3"' in svg
    legend = re.search(r'class="chart-legend">([^<]*)<', svg)
    assert legend is not None
    assert (
        "\u03bc 28.0" in legend.group(1) and RANKED_LABEL in legend.group(1) and "(13.00)" in legend.group(1)
    )


def test_a_chart_of_one_game_spans_minutes_not_a_second():
    t0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
    svg = rating_panels_svg([Panel("", [Series("a", [Point(t0, 25, 20, 30, ranked=0.0)])])])
    ticks = re.findall(r'class="chart-tick">(\d\d:\d\d(?::\d\d)?)<', svg)
    assert ticks and all(len(t) == 5 for t in ticks), ticks  # minutes, not seconds
    assert len(set(ticks)) >= 2
