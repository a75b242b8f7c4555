"""One memory (docs/reference.md#13-dashboard, docs/issues.md#issue-13): every field, the supersede
chain both ways, its history as a timeline (who, when, what, a word diff for edits), and the forms
that edit, veto, archive and bring it back (Undo; docs/reference.md#unarchive-rules, enforced by
``MemoryService``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from chalicelib.errors import InvalidRequest, PineworkError
from chalicelib.ids import from_rfc3339
from chalicelib.limits import ARCHIVE_REASON_MAX_CHARS, DAY_LOG_MAX_CHARS, FACT_MAX_CHARS
from chalicelib.models.memory import AuditRecord, MemoryKind
from chalicelib.models.requests import EditRequest
from chalicelib.services.memory.chain import supersede_chain
from chalicelib.web.context import FormError, WebContext
from chalicelib.web.diff import DiffPart, word_diff
from chalicelib.web.http import WebResponse
from chalicelib.web.views.memories import archive_request, row

HISTORY_PAGE = 100
Action = Literal["veto", "archive", "unarchive"]
DONE = {"veto": "vetoed", "archive": "archived", "unarchive": "restored"}
ROW_NOTICE = {
    "veto": "Vetoed.",
    "archive": "Archived.",
    "unarchive": "Brought back.",
}


@dataclass(frozen=True)
class TimelineEntry:
    """One audit record as the timeline shows it."""

    record: AuditRecord
    text_diff: list[DiffPart] | None
    expiry_change: tuple[str, str] | None


def timeline_entry(record: AuditRecord) -> TimelineEntry:
    """What changed in one record: a word diff of the text, the expiry before/after."""
    before, after = record.before or {}, record.after or {}
    diff = None
    if before and after and before.get("text") != after.get("text"):
        diff = word_diff(str(before.get("text", "")), str(after.get("text", "")))
    expiry = None
    if before and after and before.get("expiresAt") != after.get("expiresAt"):
        expiry = (_shown_time(before.get("expiresAt")), _shown_time(after.get("expiresAt")))
    return TimelineEntry(record, diff, expiry)


def memory_page(
    web: WebContext,
    memory_id: str,
    *,
    errors: dict[str, FormError] | None = None,
    form: dict[str, str] | None = None,
) -> WebResponse:
    """``GET /memories/{memory_id}``: the memory, its chain and its history."""
    services = web.services
    memory = services.memories.get(web.principal, memory_id)
    agent = services.dashboard.workspace.agent(web.principal, memory.agent_id)
    after = web.request.param("history_after")
    if after is not None and not after.startswith("aud_"):
        raise InvalidRequest("history_after must be an aud_ id from this page.")
    records, more = services.memories.history(web.principal, memory_id, HISTORY_PAGE, after)
    errors = errors or {}
    status = next(iter(errors.values())).status if errors else 200
    return web.page(
        "memory.html",
        status=status,
        nav="agents",
        memory=memory,
        agent=agent,
        chain=supersede_chain(services.memories, web.principal, memory),
        timeline=[timeline_entry(record) for record in records],
        history_more=more,
        history_after=after,
        errors=errors,
        form=form or {},
        text_max=FACT_MAX_CHARS if memory.kind is MemoryKind.FACT else DAY_LOG_MAX_CHARS,
        reason_max=ARCHIVE_REASON_MAX_CHARS,
        expires_date=memory.expires_at.date().isoformat(),
    )


def edit(web: WebContext, memory_id: str) -> WebResponse:
    """``POST /memories/{memory_id}/edit``: a person edits text and/or expiry
    (docs/reference.md#7-http-api
    ``PATCH /memories/{id}``). The expiry is sent only when the person changed the
    date shown (a date means the end of that UTC day).

    The form also carries the version it was made from (``version``): once ``PATCH``
    takes ``If-Match`` (issue "API contract"), it is passed on so a stale form is
    refused instead of overwriting a newer edit.
    """
    form = web.request.form()
    before = web.services.memories.get(web.principal, memory_id)
    expires = form.get("expires", "")
    request = EditRequest.model_validate(
        {
            "text": form.get("text"),
            "expiresAt": expires if expires and expires != form.get("expires_was") else None,
        }
    )
    try:
        after = web.services.memories.edit(web.principal, memory_id, request)
    except PineworkError as error:
        return memory_page(web, memory_id, errors={"edit": FormError.of(error, "edit")}, form=form)
    done = "edited" if after.version != before.version else None
    return web.back({}, f"/memories/{memory_id}", done=done)


def lifecycle(web: WebContext, memory_id: str, action: Action) -> WebResponse:
    """``POST /memories/{memory_id}/{veto|archive|unarchive}``.

    From a list row (htmx, ``from=row``) the answer is the row itself, with the outcome
    and, after a veto or archive, the Undo button; otherwise a redirect back, or this
    memory's page with the error next to the form.
    """
    form = web.request.form()
    from_row = web.request.htmx and form.get("from") == "row"
    memories = web.services.memories
    try:
        if action == "veto":
            note = form.get("note", "").strip() or None
            memory = memories.veto(web.principal, memory_id, note)
        elif action == "archive":
            memory = memories.archive(web.principal, memory_id, archive_request(form))
        else:
            memory = memories.unarchive(web.principal, memory_id)
    except PineworkError as error:
        failure = FormError.of(error, action)
        if from_row:
            current = memories.get(web.principal, memory_id)
            return row(web, current, error=failure, status=failure.status)
        return memory_page(web, memory_id, errors={action: failure}, form=form)
    if from_row:
        return row(web, memory, notice=ROW_NOTICE[action])
    return web.back(form, f"/memories/{memory_id}", done=DONE[action])


def _shown_time(value: Any) -> str:
    if not value:
        return "none"
    return from_rfc3339(str(value)).strftime("%Y-%m-%d %H:%M UTC")
