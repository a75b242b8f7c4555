"""An agent's pictures (docs/reference.md#13-dashboard, docs/issues.md#issue-13): live, expired and
archived facts over time, recalls per day, and the day-log fill per date, for the last 7, 30 or 90
days (server-drawn SVG, ``chalicelib.web.charts``)."""

from __future__ import annotations

from chalicelib.errors import InvalidRequest
from chalicelib.limits import DAY_LOG_MAX_CHARS
from chalicelib.services.overview.pictures import PICTURE_SPANS
from chalicelib.web.charts import bar_chart, line_chart
from chalicelib.web.context import WebContext
from chalicelib.web.http import WebResponse


def pictures(web: WebContext, agent_id: str) -> WebResponse:
    """``GET /agents/{agent_id}/pictures``: the three pictures; ``days`` picks the span."""
    dashboard = web.services.dashboard
    agent = dashboard.workspace.agent(web.principal, agent_id)
    days_text = web.request.param("days") or "30"
    if not days_text.isdigit() or int(days_text) not in PICTURE_SPANS:
        raise InvalidRequest(f"days must be one of {', '.join(map(str, PICTURE_SPANS))}.")
    days = int(days_text)
    series = dashboard.pictures.pictures(web.principal, agent.id, days)
    facts = line_chart(
        [
            ("live", "series-live", series.live_facts),
            ("expired (of live)", "series-expired", series.expired_facts),
            ("archived", "series-archived", series.archived_facts),
        ]
    )
    return web.page(
        "agent_pictures.html",
        nav="agents",
        agent=agent,
        tab="pictures",
        days=days,
        spans=PICTURE_SPANS,
        series=series,
        facts_chart=facts,
        recalls_chart=bar_chart(series.recalls),
        fill_chart=bar_chart(series.day_fill, cap=DAY_LOG_MAX_CHARS),
        day_cap=DAY_LOG_MAX_CHARS,
        facts_rows=[
            (live.date, live.value, expired.value, gone.value)
            for live, expired, gone in zip(
                series.live_facts, series.expired_facts, series.archived_facts, strict=True
            )
        ],
        recall_rows=[(point.date, point.value) for point in series.recalls],
        fill_rows=[(point.date, point.value) for point in series.day_fill],
    )
