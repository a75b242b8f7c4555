"""An agent's day logs by date (docs/reference.md#13-dashboard, docs/issues.md#issue-13): each
date's fill against the 8,000-character cap, and the lines of the date a person opens."""

from __future__ import annotations

import re
from datetime import date

from chalicelib.errors import InvalidRequest
from chalicelib.limits import DAY_LOG_MAX_CHARS
from chalicelib.web.context import WebContext
from chalicelib.web.http import WebResponse

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def day_logs(web: WebContext, agent_id: str) -> WebResponse:
    """``GET /agents/{agent_id}/days``: every date with its fill; ``date`` opens one
    (default: the newest).

    Raises:
        InvalidRequest: ``date`` is not a real ``YYYY-MM-DD`` date (a 400 page).
    """
    dashboard = web.services.dashboard
    agent = dashboard.workspace.agent(web.principal, agent_id)
    rows = dashboard.day_logs.day_rows(web.principal, agent.id)
    wanted = web.request.param("date")
    if wanted is not None and not _real_date(wanted):
        raise InvalidRequest(f"date must be a real date, YYYY-MM-DD (got {wanted[:40]!r}).")
    # The live row of the date comes first (``day_rows``); without a date, the newest.
    chosen = next((row for row in rows if wanted in (None, row.date)), None)
    opened = web.services.memories.get(web.principal, chosen.id) if chosen else None
    return web.page(
        "agent_days.html",
        nav="agents",
        agent=agent,
        tab="days",
        rows=rows,
        wanted=wanted,
        opened=opened,
        day_cap=DAY_LOG_MAX_CHARS,
    )


def _real_date(text: str) -> bool:
    """``YYYY-MM-DD`` naming a day of the calendar (``2026-13-45`` and ``2026-02-30``
    are not)."""
    if not _DATE.match(text):
        return False
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True
