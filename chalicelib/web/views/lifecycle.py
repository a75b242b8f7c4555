"""A person's erasure of an agent and exports in the dashboard
(docs/reference.md#a-person-erases-an-agent, docs/reference.md#exports-for-a-person,
docs/issues.md#issue-24-item-8): the agent's Data tab (export it, erase it), the
workspace's export on the settings page, and one page per export and per erasure to
follow it, and the workspace's past erasures. The same service as the API's routes;
the lifecycle worker runs both."""

from __future__ import annotations

from typing import Any

from chalicelib.errors import InvalidRequest, PineworkError
from chalicelib.ids import from_rfc3339
from chalicelib.services.lifecycle.requests import ERASURE_TOKEN
from chalicelib.services.paging import decode_next_token, encode_next_token
from chalicelib.web.context import FormError, WebContext
from chalicelib.web.http import WebResponse, redirect


def data_tab(
    web: WebContext,
    agent_id: str,
    *,
    error: FormError | None = None,
    form: dict[str, str] | None = None,
) -> WebResponse:
    """``GET /agents/{agent_id}/data``: export the agent, or erase it (reason, and its
    name typed to confirm). Before the person confirms, the form names the learnings the
    erasure takes: those the agent proposed (deleted), those the review learned from its
    facts alone (retired and blanked), those that keep their text and lose its facts
    from their evidence, and says that the learnings persons wrote stay
    (docs/reference.md#learnings-and-erasure)."""
    agent = web.services.dashboard.workspace.agent(web.principal, agent_id)
    learnings = web.services.sources.plan(agent.workspace_id, agent_id=agent.id)
    return web.page(
        "agent_data.html",
        status=error.status if error else 200,
        nav="agents",
        agent=agent,
        tab="data",
        learnings=learnings,
        error=error,
        form=form or {},
    )


def export_agent(web: WebContext, agent_id: str) -> WebResponse:
    """``POST /agents/{agent_id}/export``: start the agent's export (or, while another
    export of the workspace is queued or running, follow that one); on to its page."""
    agent = web.services.dashboard.workspace.agent(web.principal, agent_id)
    export, _ = web.services.lifecycle.start_export(web.principal, agent.id)
    return redirect(web.request, f"/exports/{export['id']}")


def export_workspace(web: WebContext) -> WebResponse:
    """``POST /exports``: start the workspace's export (or follow the one queued or
    running); on to its page."""
    export, _ = web.services.lifecycle.start_export(web.principal, None)
    return redirect(web.request, f"/exports/{export['id']}")


def export_page(web: WebContext, export_id: str) -> WebResponse:
    """``GET /exports/{export_id}``: where the export stands; once done, its download
    link (15 minutes; the page makes a new one each time it is shown)."""
    export = web.services.lifecycle.export(web.principal, export_id)
    shown = _with_times(export, "requestedAt", "finishedAt", "expiresAt", "urlExpiresAt")
    return web.page("export.html", nav="agents", export=shown, target=_target(web, export))


def erase_agent(web: WebContext, agent_id: str) -> WebResponse:
    """``POST /agents/{agent_id}/erase``: the form's ``reason`` and ``confirm`` (the
    agent's name, typed) are required. Queued: on to the erasure's page; refused: the
    Data tab with the error and the reason kept."""
    form = web.request.form()
    kept = {"reason": form.get("reason", "")}
    try:
        agent = web.services.dashboard.workspace.agent(web.principal, agent_id)
        if form.get("confirm", "").strip() != agent.name.strip():
            raise InvalidRequest("Type the agent's name to confirm: an erasure cannot be undone.")
        web.services.lifecycle.erase_agent(web.principal, agent_id, form.get("reason", ""))
    except PineworkError as error:
        return data_tab(web, agent_id, error=FormError.of(error, "erase"), form=kept)
    return redirect(web.request, f"/erasures/{agent_id}")


ERASED_KINDS = {
    "MEMORY": "facts and day logs",
    "AUDIT": "history records of facts and day logs",
    "DAYLOG": "day-log pointers",
    "RECALLS": "recall log entries",
    "RECALLCOUNT": "recall counters",
    "SESSION": "run-start sessions",
    "TOKEN": "tokens (two records each)",
    "TOKENID": "tokens (two records each)",
    "WORKSPACE": "the workspace's records (its entry, its list of agents)",
    "AGENT": "agents",
    "PERSON": "persons",
    "PERSONEMAIL": "persons' e-mail addresses",
    "KV": "key-value entries and their usage",
    "ROUTINE": "review routines",
    "REVIEWDATE": "reviews' dates",
    "REVIEWS": "review reports",
    "REVIEW": "review details, decisions and undos",
    "LIFT": "day-log lines lifted into facts",
    "REJECTED": "review actions a person rejected",
    "PENDING": "review actions waiting for a person",
    "VETO": "vetoed texts (what an agent may not save again)",
    "RECALLINDEX": "recall index entries",
    "RETENTION": "retention sweep marks",
    "EXPORT": "exports",
    "LEARNINGS": "learnings and their counters",
    "LEARNING": "history records of learnings",
    "WEBSESSION": "dashboard sessions",
    "SIGNIN": "sign-in codes",
    "IDEMPOTENCY": "answers kept for retried requests",
    "ERASURE": "records of earlier erasures",
    "OWNED": "marks naming what belongs to whom",
    "SAMEFACT": "entries of the index of facts other agents also hold",
    "SAMEFACTS": "entries of the index of facts other agents also hold",
    "MEMORYTAGS": "entries of the index of facts by tag",
    "MEMORYMETA": "entries of the index of facts by metadata value",
    "BULK": "bulk actions on memories (for their undo)",
    "WIKISECTIONS": "sections of the wiki's published pages (the recall index of pages)",
    "EVENTS": "change events (the pull feed)",
    "AGENTEVENTS": "change events (the pull feed)",
    "WEBHOOKS": "webhook endpoints and their recent deliveries",
    "WEBHOOKDIR": "webhook endpoints (the delivery worker's list)",
}
"""What a person calls each kind of item an erasure counts (``item_kind``: the stored
item's partition prefix, docs/reference.md#erasing-an-agent-a-person-or-a-workspace)."""


def erased_kinds(items: dict[str, int]) -> list[tuple[str, int]]:
    """The erasure's counts by kind as a person reads them: ``[("facts and day logs",
    12), …]``, most first, kinds of the same words added up; a kind without words shows
    as ``other records (KIND)``."""
    totals: dict[str, int] = {}
    for kind, number in items.items():
        label = ERASED_KINDS.get(kind, f"other records ({kind})")
        totals[label] = totals.get(label, 0) + int(number)
    return sorted(totals.items(), key=lambda pair: (-pair[1], pair[0]))


def erasure_page(web: WebContext, target_id: str) -> WebResponse:
    """``GET /erasures/{target_id}``: the erasure's status and counts (in a person's words,
    ``erased_kinds``), then its tombstone."""
    erasure = web.services.lifecycle.erasure(web.principal, target_id)
    shown = _with_times(erasure, "requestedAt", "finishedAt")
    kinds = erased_kinds(erasure.get("items") or {})
    return web.page("erasure.html", nav="agents", erasure=shown, kinds=kinds)


ERASURES_PER_PAGE = 50
"""Erasures listed on one page of ``/erasures``."""


def erasures_page(web: WebContext) -> WebResponse:
    """``GET /erasures``: the workspace's past erasures (memories, agents, persons),
    newest first, 50 to a page: who asked, what, the reason, when it was asked, started
    and finished, its state, and a link to each erasure's page (a memory's: its
    tombstone's page); ``after`` (the "Older" link) continues the list
    (docs/reference.md#past-erasures).

    Raises:
        InvalidRequest: ``after`` is not a cursor this page made (400).
    """
    after = web.request.param("after") or None
    start = decode_next_token(after, pattern=ERASURE_TOKEN)
    erasures, more = web.services.lifecycle.erasures(web.principal, ERASURES_PER_PAGE, start)
    shown = [_with_times(erasure, "requestedAt", "startedAt", "finishedAt") for erasure in erasures]
    return web.page(
        "erasures.html",
        nav="settings",
        erasures=shown,
        more=encode_next_token(more),
        after=after,
    )


def _with_times(wire: dict[str, Any], *names: str) -> dict[str, Any]:
    """A wire object with its RFC 3339 fields as datetimes (for the ``when`` filter)."""
    return {
        **wire,
        **{name: from_rfc3339(str(wire[name])) if wire.get(name) else None for name in names},
    }


def _target(web: WebContext, export: dict[str, Any]) -> Any:
    """The exported agent (None for the workspace, or an agent erased since)."""
    if export["kind"] != "agent":
        return None
    try:
        return web.services.dashboard.workspace.agent(web.principal, export["targetId"])
    except PineworkError:
        return None
