"""The agents overview (docs/reference.md#13-dashboard, docs/issues.md#issue-13): every agent of the
person's workspace with its live, expired and archived facts, today's day-log fill, last recall,
routine and pending review actions; found by name, 25 to a page."""

from __future__ import annotations

from chalicelib.errors import InvalidRequest
from chalicelib.limits import DAY_LOG_MAX_CHARS
from chalicelib.models.totals import ListTotal
from chalicelib.web.context import WebContext
from chalicelib.web.http import WebResponse
from chalicelib.web.views.learnings import proposed_count
from chalicelib.web.views.pending import pending_count

AGENTS_PER_PAGE = 25


def overview(web: WebContext) -> WebResponse:
    """``GET /``: the agents overview; ``q`` finds agents by name or id, ``page`` pages."""
    dashboard = web.services.dashboard
    wanted = (web.request.param("q") or "").strip()
    page = _page_number(web.request.param("page"))
    agents = dashboard.workspace.agents(web.principal, wanted)
    pages = max(1, -(-len(agents) // AGENTS_PER_PAGE))
    page = min(page, pages)
    shown = agents[(page - 1) * AGENTS_PER_PAGE : page * AGENTS_PER_PAGE]
    rows = dashboard.overview.rows(web.principal, shown)
    return web.page(
        "agents.html",
        nav="agents",
        workspace=dashboard.workspace.workspace(web.principal),
        rows=rows,
        total=len(agents),
        shown_total=ListTotal.whole(len(agents), before=(page - 1) * AGENTS_PER_PAGE),
        q=wanted,
        page=page,
        pages=pages,
        day_cap=DAY_LOG_MAX_CHARS,
        proposed_learnings=proposed_count(web),
        pending_actions=pending_count(web),
    )


def _page_number(value: str | None) -> int:
    """A page number from 1 (absent: 1).

    Raises:
        InvalidRequest: not a whole number from 1.
    """
    if value is None or value == "":
        return 1
    if not value.isdigit() or int(value) < 1 or len(value) > 6:
        raise InvalidRequest("page must be a whole number from 1.")
    return int(value)
