"""An agent's memory list as of a moment (docs/reference.md#as-of-a-moment,
docs/issues.md#issue-46-item-4): ``GET /agents/{id}?asOf=…`` from the list's "As of"
picker, read-only, with a banner and a way back to now.

The picker is a plain ``<input type="datetime-local">``: it sends a time without a zone
(``2026-11-30T12:00`` or with seconds), which the dashboard reads as UTC, the zone every
dashboard time is shown in. A time with a zone is taken as it is.
"""

from __future__ import annotations

import re
from typing import Any

from chalicelib.errors import InvalidRequest
from chalicelib.ids import to_rfc3339
from chalicelib.limits import DASHBOARD_PAGE_SIZE
from chalicelib.models.as_of import AsOfListQuery
from chalicelib.services.paging import encode_next_token
from chalicelib.web.context import WebContext
from chalicelib.web.http import WebResponse

_LOCAL = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?$")
AS_OF_STATUSES = {
    "active": ("active", "false"),
    "archived": ("archived", "false"),
    "all": (None, "true"),
}


def picker_time(raw: str) -> str:
    """The picker's value as ``asOf``: a zoneless ``YYYY-MM-DDTHH:MM[:SS[.fff]]`` gets
    seconds if missing and ``Z`` (UTC); anything else is passed on as sent (the service
    checks it: ``as_of_invalid``)."""
    text = raw.strip()
    if _LOCAL.match(text) is None:
        return text
    return (text if text.count(":") == 2 else f"{text}:00") + "Z"


def agent_memories_as_of(web: WebContext, agent_id: str, raw: str) -> WebResponse:
    """``GET /agents/{agent_id}?asOf=…``: the agent's memories as they were then, newest
    first, 50 a page (``after``), filtered by ``status`` then (``active`` by default,
    ``archived``, ``all``).

    Raises:
        AsOfInvalid, AsOfInFuture, AsOfBeforeWorkspace: the time (the error page says
            which). InvalidRequest: a bad ``status`` or ``after``. NotFound: no such agent
            in the workspace.
    """
    agent = web.services.dashboard.workspace.agent(web.principal, agent_id)
    status = web.request.param("status") or "active"
    if status not in AS_OF_STATUSES:
        raise InvalidRequest(f"status must be one of {', '.join(AS_OF_STATUSES)}.")
    only, every = AS_OF_STATUSES[status]
    after = web.request.param("after") or None
    query = AsOfListQuery.model_validate(
        {
            "agentId": agent.id,
            "asOf": picker_time(raw),
            "status": only,
            "all": every,
            "limit": str(DASHBOARD_PAGE_SIZE),
            "nextToken": encode_next_token(after),
        }
    )
    page = web.services.as_of.list(web.principal, query)
    context: dict[str, Any] = {
        "agent": agent,
        "tab": "memories",
        "next_path": web.here(),
        "page": page,
        "status_then": status,
        "after": after,
        "as_of": to_rfc3339(page.moment),
        "picker_value": page.moment.strftime("%Y-%m-%dT%H:%M:%S"),
        "moment": page.moment,
    }
    return web.page("agent_memories_as_of.html", nav="agents", **context)
