"""The pictures' axis labels fit and stay apart on a phone (docs/issues.md#issue-27-item-7):
at the narrow-screen font every label lies inside the chart and no two x labels touch,
for any number of days and any count."""

from __future__ import annotations

from itertools import pairwise

import pytest

from chalicelib.models.overview import DayPoint
from chalicelib.web.charts import (
    CHAR_WIDTH,
    WIDTH,
    Chart,
    Tick,
    bar_chart,
    count_label,
    line_chart,
)


def days(count: int, value: int) -> list[DayPoint]:
    return [
        DayPoint(date=f"2026-{1 + i // 28:02d}-{1 + i % 28:02d}", value=value) for i in range(count)
    ]


def extent(tick: Tick) -> tuple[float, float]:
    width = len(tick.label) * CHAR_WIDTH
    if tick.anchor == "end":
        return tick.position - width, tick.position
    if tick.anchor == "start":
        return tick.position, tick.position + width
    return tick.position - width / 2, tick.position + width / 2


def check(chart: Chart) -> None:
    spans = sorted(extent(tick) for tick in chart.x_ticks)
    for left, right in spans:
        # Right of the y labels (they end 6 units left of the plot), inside the chart.
        assert left >= chart.plot_left - 4 and right <= WIDTH, spans
    for (_, right), (left, _) in pairwise(spans):
        assert left - right >= 4, spans
    for tick in chart.y_ticks:  # drawn end-anchored 6 units left of the plot
        assert chart.plot_left - 6 - len(tick.label) * CHAR_WIDTH >= 0, tick.label


@pytest.mark.parametrize("count", [1, 2, 3, 7, 8, 14, 29, 30, 31, 45, 60, 61, 89, 90, 91, 120])
@pytest.mark.parametrize("value", [0, 7, 999, 9_999, 12_345, 987_654, 12_345_678])
def test_labels_fit_and_never_overlap_at_the_narrow_font(count: int, value: int) -> None:
    points = days(count, value)
    line = line_chart([("live", "series-live", points)])
    bars = bar_chart(points, cap=value // 2 or None)
    check(line)
    check(bars)
    assert line.x_ticks[0].label == points[0].date[5:]  # the first day is always named
    assert len(line.x_ticks) >= min(count, 2)


def test_counts_are_written_short_but_exact_below_ten_thousand() -> None:
    assert [count_label(n) for n in (0, 2_500, 9_750, 12_500, 250_000, 2_500_000)] == [
        "0",
        "2,500",
        "9,750",
        "12.5k",
        "250k",
        "2.5M",
    ]
