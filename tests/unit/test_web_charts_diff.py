"""The dashboard's SVG chart geometry and history diffs (docs/issues.md#issue-13)."""

from __future__ import annotations

import difflib
import random
import re
from pathlib import Path

import pytest

from chalicelib.limits import DAY_LOG_MAX_CHARS, HISTORY_DIFF_MAX_STEPS
from chalicelib.models.overview import DayPoint
from chalicelib.web.charts import HEIGHT, bar_chart, line_chart, nice_top
from chalicelib.web.diff import _TOKENS, DiffBudget, DiffPart, _edit_script, word_diff


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


def test_equal_lines_stay_visible_each_drawn_narrower_than_the_ones_under_it() -> None:
    """Three series with the same values drew one line: the last hid the others."""
    same = [DayPoint(f"2026-11-{day:02d}", 3) for day in range(1, 8)]
    chart = line_chart(
        [
            ("live", "series-live", same),
            ("expired", "series-expired", same),
            ("archived", "series-archived", same),
        ]
    )
    assert [line.css.split()[1] for line in chart.lines] == ["layer-2", "layer-1", "layer-0"]
    css = (Path(__file__).parents[2] / "chalicelib/web/static/dashboard.css").read_text()
    widths = {
        layer: float(re.search(rf"\.chart \.{layer} {{ stroke-width: ([0-9.]+); }}", css)[1])
        for layer in ("layer-1", "layer-2")
    }
    assert 2 < widths["layer-1"] < widths["layer-2"]  # the series classes draw 2 wide


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
    assert parts is not None
    assert "".join(p.text for p in parts if p.kind != "ins") == before
    assert "".join(p.text for p in parts if p.kind != "del") == after
    # Parity with difflib's own opinion of whether anything changed.
    changed = difflib.SequenceMatcher(a=before, b=after).ratio() < 1.0
    assert changed == any(p.kind != "same" for p in parts)


def test_word_diff_marks_the_replaced_word() -> None:
    parts = word_diff("through bastion-2 today", "through bastion-3 today")
    assert parts is not None
    assert [(p.kind, p.text) for p in parts] == [
        ("same", "through "),
        ("del", "bastion-2"),
        ("ins", "bastion-3"),
        ("same", " today"),
    ]


def _words(rng: random.Random, chars: int, vocabulary: list[str]) -> str:
    words: list[str] = []
    while sum(len(word) + 1 for word in words) < chars:
        words.append(rng.choice(vocabulary))
    return " ".join(words)[:chars]


@pytest.mark.parametrize("seed", range(40))
def test_word_diff_keeps_at_least_as_much_as_difflib(seed: int) -> None:
    # A stand-in for difflib (docs/conventions.md#rule-12): the same texts rebuilt,
    # and at least as many tokens kept (a shortest edit script keeps the most).
    rng = random.Random(seed)
    vocabulary = ["a", "b", "deploy", "staging", "\n", "x", "bastion-2", "vpn"][: 2 + seed % 7]
    before = _words(rng, rng.randint(0, 300), vocabulary)
    after = _words(rng, rng.randint(0, 300), vocabulary)
    parts = word_diff(before, after, DiffBudget(remaining=10**9, per_diff=10**9))
    assert parts is not None
    assert "".join(p.text for p in parts if p.kind != "ins") == before
    assert "".join(p.text for p in parts if p.kind != "del") == after
    old, new = _TOKENS.findall(before), _TOKENS.findall(after)
    script, _ = _edit_script(old, new, 10**9)
    assert script is not None
    assert [token for kind, token in script if kind != "ins"] == old
    kept = sum(1 for kind, _ in script if kind == "same")
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    assert kept >= sum(block.size for block in matcher.get_matching_blocks())


def test_large_unrelated_texts_get_the_plain_before_and_after() -> None:
    # Two unrelated maximal day rows: quadratic for a word diff, so none is made.
    rng = random.Random(7)
    vocabulary = [f"w{number}" for number in range(300)]
    before = _words(rng, DAY_LOG_MAX_CHARS, vocabulary)
    after = _words(rng, DAY_LOG_MAX_CHARS, vocabulary)
    budget = DiffBudget()
    assert word_diff(before, after, budget) is None
    spent = DiffBudget().remaining - budget.remaining
    assert HISTORY_DIFF_MAX_STEPS <= spent <= HISTORY_DIFF_MAX_STEPS + DAY_LOG_MAX_CHARS
    # The same, built to defeat a bound on length alone: one repeated word each.
    assert word_diff("a " * 4000, "b " * 4000) is None


def test_a_small_edit_of_a_full_day_row_still_gets_a_word_diff() -> None:
    rng = random.Random(3)
    lines = [_words(rng, 60, ["step", "checked", "deploy", "PIN-7"]) for _ in range(120)]
    before = "\n".join(lines)[:DAY_LOG_MAX_CHARS]
    after = before.replace(lines[5], lines[5] + " fixed", 1).replace(
        lines[100], "rewritten line", 1
    )
    parts = word_diff(before, after)
    assert parts is not None
    assert [p.text for p in parts if p.kind == "ins"] == [" fixed", "rewritten line"]
    assert [p.text for p in parts if p.kind == "del"] == [lines[100]]


def test_a_spent_page_budget_shows_later_records_plain() -> None:
    budget = DiffBudget(remaining=HISTORY_DIFF_MAX_STEPS + 10)
    assert word_diff("a " * 4000, "b " * 4000, budget) is None
    assert budget.allowance() == 0
    assert word_diff("one two three", "one 2 three", budget) is None
    assert word_diff("same text", "same text", budget) == [DiffPart("same", "same text")]
