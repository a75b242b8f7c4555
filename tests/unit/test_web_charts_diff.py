"""The dashboard's SVG chart geometry and history diffs (docs/issues.md#issue-13)."""

from __future__ import annotations

import difflib

import pytest

from chalicelib.models.overview import DayPoint
from chalicelib.web.charts import HEIGHT, bar_chart, line_chart, nice_top
from chalicelib.web.diff import word_diff


@pytest.mark.parametrize(
    ("value", "top"),
    [(0, 4), (1, 4), (4, 4), (5, 8), (15, 20), (99, 100), (101, 200), (7784, 8000)],
)
def test_axis_top_is_round_and_reaches_the_value(value: int, top: int) -> None:
    assert nice_top(value) == top
    assert nice_top(value) >= value and nice_top(value) % 4 == 0


def test_bars_are_proportional_and_the_cap_marks_full_days() -> None:
    points = [DayPoint("2026-11-28", 0), DayPoint("2026-11-29", 4000), DayPoint("2026-11-30", 8000)]
    chart = bar_chart(points, cap=8000)
    empty, half, full = chart.bars
    assert empty.height == 0
    assert full.height == pytest.approx(2 * half.height, abs=0.2)
    assert full.css == "bar-full" and half.css == "bar"
    assert chart.cap_y == full.y
    assert chart.x_ticks[-1].anchor == "end"
    assert all(0 <= bar.y <= HEIGHT for bar in chart.bars)


def test_lines_have_one_point_per_date_and_higher_values_are_higher() -> None:
    live = [DayPoint(f"2026-11-{day:02d}", day) for day in range(1, 11)]
    flat = [DayPoint(point.date, 0) for point in live]
    chart = line_chart([("live", "series-live", live), ("archived", "series-archived", flat)])
    points = [tuple(map(float, pair.split(","))) for pair in chart.lines[0].points.split()]
    assert len(points) == 10
    assert [y for _, y in points] == sorted((y for _, y in points), reverse=True)
    assert {pair.split(",")[1] for pair in chart.lines[1].points.split()} == {
        str(float(chart.baseline))
    }


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("Staging deploys go through bastion-2", "Staging deploys go through bastion-3 now"),
        ("a b c", "a b c"),
        ("", "new text"),
        ("line one\nline two", "line one\nline 2\nline three"),
    ],
)
def test_word_diff_rebuilds_both_texts(before: str, after: str) -> None:
    parts = word_diff(before, after)
    assert "".join(p.text for p in parts if p.kind != "ins") == before
    assert "".join(p.text for p in parts if p.kind != "del") == after
    # Parity with difflib's own opinion of whether anything changed.
    changed = difflib.SequenceMatcher(a=before, b=after).ratio() < 1.0
    assert changed == any(p.kind != "same" for p in parts)


def test_word_diff_marks_the_replaced_word() -> None:
    parts = word_diff("through bastion-2 today", "through bastion-3 today")
    assert [(p.kind, p.text) for p in parts] == [
        ("same", "through "),
        ("del", "bastion-2"),
        ("ins", "bastion-3"),
        ("same", " today"),
    ]
