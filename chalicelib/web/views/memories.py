"""An agent's memories (docs/reference.md#13-dashboard, docs/issues.md#issue-13): facts and day rows
newest first, with filters (kind, status, expired), text search and paging, a form to save a fact
for the agent, and the row actions (veto with a note, archive with a reason, Undo).

Every change calls ``MemoryService`` as the signed-in person; its error codes and
messages are shown next to the form or row that caused them.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from chalicelib.errors import InvalidRequest, PineworkError
from chalicelib.ids import MEMORY_ID
from chalicelib.limits import (
    ARCHIVE_REASON_MAX_CHARS,
    DASHBOARD_PAGE_SIZE,
    FACT_MAX_CHARS,
    SEARCH_SCAN_MAX,
)
from chalicelib.models.memory import Memory
from chalicelib.models.requests import ArchiveRequest, SaveFactRequest
from chalicelib.services.memory.browse import BrowseFilters
from chalicelib.services.run_context import RunContext
from chalicelib.web.context import FormError, WebContext
from chalicelib.web.http import WebResponse
from chalicelib.web.views.as_of import agent_memories_as_of

SEARCH_MAX_CHARS = 200
STATUS_CHOICES = {"active": "active", "archived": "archived", "all": None}
KIND_CHOICES = {"": None, "fact": "fact", "day": "day"}
EXPIRED_CHOICES = {"": None, "yes": True, "no": False}


def list_state(web: WebContext) -> dict[str, Any]:
    """The list's filters as the page shows them (``kind``, ``status``, ``expired``,
    ``q``, ``tag``, ``after``), checked (a tag's own rules when the page is read:
    ``memory_tag_invalid``).

    Raises:
        InvalidRequest: a value outside the choices; a bad ``after`` id.
    """
    request = web.request
    state = {
        "kind": request.param("kind") or "",
        "status": request.param("status") or "active",
        "expired": request.param("expired") or "",
        "q": (request.param("q") or "").strip(),
        "tag": (request.param("tag") or "").strip(),
        "after": request.param("after") or "",
    }
    for name, choices in (
        ("kind", KIND_CHOICES),
        ("status", STATUS_CHOICES),
        ("expired", EXPIRED_CHOICES),
    ):
        if state[name] not in choices:
            raise InvalidRequest(f"{name} must be one of {', '.join(c or 'any' for c in choices)}.")
    if len(state["q"]) > SEARCH_MAX_CHARS:
        raise InvalidRequest(f"Search for at most {SEARCH_MAX_CHARS} characters.")
    if state["after"] and not MEMORY_ID.match(state["after"]):
        raise InvalidRequest("after must be a mem_ id from a page of this list.")
    return state


def agent_memories(
    web: WebContext,
    agent_id: str,
    *,
    save_error: FormError | None = None,
    save_form: dict[str, str] | None = None,
) -> WebResponse:
    """``GET /agents/{agent_id}``: the memory list (a fragment for htmx's filter and
    paging requests, the whole page otherwise)."""
    if (as_of := web.request.param("asOf")) is not None:
        return agent_memories_as_of(web, agent_id, as_of)  # docs/reference.md#as-of-a-moment
    dashboard = web.services.dashboard
    agent = dashboard.workspace.agent(web.principal, agent_id)
    state = list_state(web)
    filters = BrowseFilters(
        kind=KIND_CHOICES[state["kind"]],  # type: ignore[arg-type]
        status=STATUS_CHOICES[state["status"]],  # type: ignore[arg-type]
        expired=EXPIRED_CHOICES[state["expired"]],
        text=state["q"],
        tags=state["tag"],
    )
    page = dashboard.browser.page(
        web.principal,
        agent.id,
        filters,
        limit=DASHBOARD_PAGE_SIZE,
        after_id=state["after"] or None,
    )
    context: dict[str, Any] = {
        "agent": agent,
        "next_path": web.here(),
        "tab": "memories",
        "state": state,
        "page": page,
        "scan_max": SEARCH_SCAN_MAX,
        "fact_max": FACT_MAX_CHARS,
        "reason_max": ARCHIVE_REASON_MAX_CHARS,
        "save_error": save_error,
        "save_form": save_form or {},
    }
    if web.request.htmx and web.request.headers.get("hx-target") == "memory-list":
        return web.page("_memory_list.html", **context)
    status = save_error.status if save_error else 200
    return web.page("agent_memories.html", status=status, nav="agents", **context)


def save_fact(web: WebContext, agent_id: str) -> WebResponse:
    """``POST /agents/{agent_id}/facts``: a person saves a fact for the agent
    (docs/reference.md#7-http-api
    ``POST /memories`` with ``agentId``)."""
    form = web.request.form()
    try:
        request = SaveFactRequest.model_validate(
            {
                "text": form.get("text", ""),
                "expiresAt": form.get("expires") or None,
                "supersedes": form.get("supersedes", "").strip() or None,
                "agentId": agent_id,
            }
        )
    except ValidationError as error:  # pragma: no cover - every field is a string
        raise InvalidRequest("The form is not complete.") from error
    try:
        memory = web.services.memories.save(web.principal, request, RunContext())
    except PineworkError as error:
        return agent_memories(web, agent_id, save_error=FormError.of(error, "save"), save_form=form)
    return web.back({}, f"/memories/{memory.id}", done="saved")


def row(
    web: WebContext,
    memory: Memory,
    *,
    notice: str | None = None,
    error: FormError | None = None,
    status: int = 200,
    form: dict[str, str] | None = None,
) -> WebResponse:
    """One row of the list after an action (htmx swaps it in place), with the outcome
    next to it; after an error its forms are open and keep what was typed (``form``'s
    ``note`` and ``reason``), and carry the memory's version as it is now."""
    return web.page(
        "_memory_row.html",
        status=status,
        memory=memory,
        row_notice=notice,
        row_error=error,
        row_form=form or {},
        reason_max=ARCHIVE_REASON_MAX_CHARS,
        # Where the row's plain forms return to (without JavaScript): the agent's list.
        next_path=f"/agents/{memory.agent_id}",
    )


def archive_request(form: dict[str, str]) -> ArchiveRequest:
    """The archive form as the API's request (``reason``)."""
    return ArchiveRequest.model_validate({"reason": form.get("reason", "")})
