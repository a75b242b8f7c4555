"""Server-drawn SVG charts for an agent's pictures (docs/reference.md#13-dashboard,
docs/issues.md#issue-13): no chart library and no script, so they work under the dashboard's CSP and
print as they look. This module computes the geometry; ``_chart.html`` writes the SVG (colours
come from CSS classes, never inline styles), with a data table beside each chart
for screen readers and exact figures."""

from __future__ import annotations

from dataclasses import dataclass, field

from chalicelib.models.overview import DayPoint

WIDTH = 640
HEIGHT = 240
LEFT = 72
RIGHT = 12
TOP = 14
BOTTOM = 30
NARROW_FONT = 20
"""The axis labels' font size (SVG units) on a narrow screen (``dashboard.css``): the
chart is drawn at 640 units and scaled down to the phone's width, so its labels are
drawn larger there; every label must fit and stay apart at this size."""
CHAR_WIDTH = 0.62 * NARROW_FONT
"""A generous width of one digit or dash of the system sans-serif at ``NARROW_FONT``."""
LABEL_GAP = 10
"""The least room between two axis labels (SVG units)."""
DATE_LABEL = 5 * CHAR_WIDTH
"""The width of an x label (``MM-DD``)."""


@dataclass(frozen=True)
class Tick:
    """An axis label at a position (``anchor``: SVG ``text-anchor``)."""

    position: float
    label: str
    anchor: str = "middle"


@dataclass(frozen=True)
class Line:
    """One series as an SVG polyline (``points`` is ``"x,y x,y …"``)."""

    name: str
    css: str
    points: str


@dataclass(frozen=True)
class Bar:
    """One bar."""

    x: float
    y: float
    width: float
    height: float
    label: str
    value: int
    css: str = "bar"


@dataclass(frozen=True)
class Chart:
    """A drawn chart: its size, gridlines, ticks and either lines or bars."""

    width: int = WIDTH
    height: int = HEIGHT
    y_ticks: list[Tick] = field(default_factory=list)
    x_ticks: list[Tick] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)
    bars: list[Bar] = field(default_factory=list)
    cap_y: float | None = None
    plot_left: int = LEFT
    plot_right: int = WIDTH - RIGHT
    baseline: float = HEIGHT - BOTTOM


def nice_top(value: int) -> int:
    """The top of a y axis of four equal steps: 4 times the smallest "round" step (1,
    2, 2.5 or 5 times a power of ten, a whole number) that reaches ``value``; at
    least 4, so every tick is a whole number."""
    needed = max(1, -(-value // 4))
    magnitude = 1
    while magnitude * 10 <= needed:
        magnitude *= 10
    for factor in (1, 2, 2.5, 5, 10):
        step = factor * magnitude
        if step == int(step) and step >= needed:
            return int(step) * 4
    return 40 * magnitude  # pragma: no cover - factor 10 always reaches it


def _y(value: float, top: int) -> float:
    return round(HEIGHT - BOTTOM - (value / top) * (HEIGHT - BOTTOM - TOP), 1)


def count_label(value: float) -> str:
    """A y label of at most 5 characters, so it fits left of the plot at ``NARROW_FONT``:
    ``9,750``, then ``12.5k``, ``250k``, ``2.5M``."""
    number = round(value)
    if number < 10_000:
        return f"{number:,}"
    if number < 1_000_000:
        return f"{number / 1000:.4g}k"
    return f"{number / 1_000_000:.3g}M"


def _y_ticks(top: int) -> list[Tick]:
    return [Tick(_y(top * i / 4, top), count_label(top * i / 4)) for i in range(5)]


def _x_ticks(points: list[DayPoint], position: list[float]) -> list[Tick]:
    """Date labels far enough apart to never overlap at ``NARROW_FONT``: every ``every``
    point (at most about 6 labels), and the last point when it has room."""
    if not points:
        return []
    step = (position[-1] - position[0]) / max(1, len(points) - 1) or float(WIDTH)
    # One and a half labels apart: the first may start at its tick, the last end at it.
    needed = -(-(1.5 * DATE_LABEL + LABEL_GAP) // step)
    every = int(max(1, -(-len(points) // 6), needed))
    chosen = list(range(0, len(points), every))
    last = len(points) - 1
    # The last label ends at its tick (it never runs past the right edge): it is shown
    # only when it has room after the previous one, so the labels stay evenly spaced.
    if chosen[-1] != last and position[last] - position[chosen[-1]] >= 1.5 * DATE_LABEL + LABEL_GAP:
        chosen.append(last)
    return [Tick(position[i], points[i].date[5:], _anchor(i, last, position[i])) for i in chosen]


def _anchor(index: int, last: int, position: float) -> str:
    """``end`` for the last label and one that would run past the right edge (it ends at
    its tick); ``start`` for a label that would reach left of the plot, under the y axis's
    labels; else ``middle``."""
    if (index == last and index > 0) or position + DATE_LABEL / 2 > WIDTH:
        return "end"
    if position - DATE_LABEL / 2 < LEFT:
        return "start"
    return "middle"


def line_chart(series: list[tuple[str, str, list[DayPoint]]]) -> Chart:
    """Lines over dates; every series has the same dates (oldest first).

    Args:
        series: ``(name, css class, points)`` for each line.
    """
    dates = series[0][2] if series else []
    top = nice_top(max((p.value for _, _, points in series for p in points), default=0))
    span = WIDTH - LEFT - RIGHT
    step = span / max(1, len(dates) - 1)
    xs = [round(LEFT + i * step, 1) for i in range(len(dates))]
    # Each line is drawn over the ones before it, narrower than they are (``layer-N``,
    # dashboard.css), so a line equal to an earlier one leaves it visible as an edge.
    last = len(series) - 1
    lines = [
        Line(
            name,
            f"{css} layer-{last - index}",
            " ".join(f"{x},{_y(p.value, top)}" for x, p in zip(xs, points, strict=True)),
        )
        for index, (name, css, points) in enumerate(series)
    ]
    return Chart(y_ticks=_y_ticks(top), x_ticks=_x_ticks(dates, xs), lines=lines)


def bar_chart(points: list[DayPoint], cap: int | None = None) -> Chart:
    """Bars over dates (oldest first); with ``cap`` the axis reaches it, a dashed line
    marks it, and a bar at the cap is drawn as full."""
    top = nice_top(max([p.value for p in points] + [cap or 0]))
    span = WIDTH - LEFT - RIGHT
    slot = span / max(1, len(points))
    width = max(1.0, round(slot * 0.7, 1))
    bars = []
    centers = []
    for i, point in enumerate(points):
        x = round(LEFT + i * slot + (slot - width) / 2, 1)
        y = _y(point.value, top)
        centers.append(round(x + width / 2, 1))
        full = cap is not None and point.value >= cap
        bars.append(
            Bar(
                x,
                y,
                width,
                round(HEIGHT - BOTTOM - y, 1),
                point.date,
                point.value,
                "bar-full" if full else "bar",
            )
        )
    return Chart(
        y_ticks=_y_ticks(top),
        x_ticks=_x_ticks(points, centers),
        bars=bars,
        cap_y=None if cap is None else _y(cap, top),
    )
