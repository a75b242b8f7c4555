"""One memory (docs/reference.md#13-dashboard, docs/issues.md#issue-13): every field, the supersede
chain both ways, its history as a timeline (who, when, what, a bounded word diff for edits:
docs/reference.md#history-diff), and the forms that edit, veto, archive and bring it back (Undo;
docs/reference.md#unarchive-rules, enforced by ``MemoryService``). Each form carries the version
it was shown at; a stale one changes nothing (docs/reference.md#stale-forms)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from chalicelib.errors import (
    InvalidRequest,
    MemoryMetadataInvalid,
    PineworkError,
    PreconditionFailed,
)
from chalicelib.ids import from_rfc3339
from chalicelib.limits import ARCHIVE_REASON_MAX_CHARS, DAY_LOG_MAX_CHARS, FACT_MAX_CHARS
from chalicelib.models.memory import AuditRecord, Memory, MemoryKind
from chalicelib.models.principal import Principal
from chalicelib.models.requests import EditRequest
from chalicelib.services.memory.chain import supersede_chain
from chalicelib.services.review.apply import absorbed_by, absorbed_id
from chalicelib.web.context import FormError, WebContext
from chalicelib.web.diff import DiffBudget, DiffPart, word_diff
from chalicelib.web.http import WebResponse
from chalicelib.web.views.memories import archive_request, row
from chalicelib.web.views.stale import conflict_page, form_version, stale_error, text_changed
from chalicelib.wiring import Services

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
    """One audit record as the timeline shows it.

    Attributes:
        record: the audit record.
        text_diff: the word diff of a text change, when it fit the budget.
        text_plain: the text before and after, when the word diff did not
            (docs/reference.md#history-diff).
        expiry_change: the expiry before and after, as shown.
        text_erased: the record carried a text that an erasure blanked (shown as words,
            never as an empty box or ``None``).
        absorbed: on an ``absorb`` record, the fact the review merged into this one.
    """

    record: AuditRecord
    text_diff: list[DiffPart] | None
    expiry_change: tuple[str, str] | None
    text_plain: tuple[str, str] | None = None
    text_erased: bool = False
    absorbed: str | None = None


@dataclass(frozen=True)
class AbsorbedFact:
    """A fact a review merged into the memory shown (docs/reference.md#audit-record).

    Attributes:
        memory_id: the absorbed fact.
        memory: it now (None when it is gone from the workspace).
        review_id: the review whose merge absorbed it (its page has the Undo).
        at: when.
        still_absorbed: it is still superseded by the memory shown (not undone).
        action: the review's action: ``merge``, ``replace`` or ``resolve_conflict``.
        approved_by: the person who approved it, or None (the review alone).
    """

    memory_id: str
    memory: Memory | None
    review_id: str | None
    at: datetime
    still_absorbed: bool
    action: str = "merge"
    approved_by: str | None = None


def timeline_entry(record: AuditRecord, budget: DiffBudget | None = None) -> TimelineEntry:
    """What changed in one record: a word diff of the text (or, past ``budget``, the
    plain before and after), the expiry before/after."""
    before, after = record.before or {}, record.after or {}
    texts = [side["text"] for side in (before, after) if "text" in side]
    # an erasure blanks every text of the memory's records (None or "")
    erased = bool(texts) and not any(isinstance(text, str) and text for text in texts)
    diff, plain = None, None
    old, new = before.get("text"), after.get("text")
    if isinstance(old, str) and isinstance(new, str) and old and new and old != new:
        diff = word_diff(old, new, budget)
        plain = (old, new) if diff is None else None
    expiry = None
    if before and after and before.get("expiresAt") != after.get("expiresAt"):
        expiry = (_shown_time(before.get("expiresAt")), _shown_time(after.get("expiresAt")))
    return TimelineEntry(record, diff, expiry, plain, erased, absorbed_id(record))


def absorbed_facts(
    services: Services, principal: Principal, memory: Memory, records: list[AuditRecord]
) -> list[AbsorbedFact]:
    """The facts the ``absorb`` records of ``records`` name, each read now (a merge's
    kept fact shows what it absorbed, docs/reference.md#audit-record)."""
    found: list[AbsorbedFact] = []
    for record in records:
        absorbed = absorbed_id(record)
        if absorbed is None:
            continue
        try:
            now: Memory | None = services.memories.get(principal, absorbed)
        except PineworkError:
            now = None  # erased, or no longer of this workspace
        action, approved_by = absorbed_by(record)
        found.append(
            AbsorbedFact(
                memory_id=absorbed,
                memory=now,
                review_id=record.actor_id,
                at=record.at,
                still_absorbed=now is not None and now.superseded_by == memory.id,
                action=action,
                approved_by=approved_by,
            )
        )
    return found


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
    budget = DiffBudget()  # one budget for the whole page's diffs
    errors = errors or {}
    status = next(iter(errors.values())).status if errors else 200
    return web.page(
        "memory.html",
        status=status,
        nav="agents",
        memory=memory,
        agent=agent,
        chain=supersede_chain(services.memories, web.principal, memory),
        superseded_by_review=(
            last_review(services, web.principal, memory_id) if memory.is_superseded else None
        ),
        timeline=[timeline_entry(record, budget) for record in records],
        absorbed=absorbed_facts(services, web.principal, memory, records),
        history_more=more,
        history_after=after,
        errors=errors,
        form=form or {},
        text_max=FACT_MAX_CHARS if memory.kind is MemoryKind.FACT else DAY_LOG_MAX_CHARS,
        reason_max=ARCHIVE_REASON_MAX_CHARS,
        expires_date=memory.expires_at.date().isoformat(),
        metadata_json=json.dumps(memory.metadata, ensure_ascii=False) if memory.metadata else "",
        shown_version=shown_version(memory, errors, form or {}),
    )


def shown_version(memory: Memory, errors: dict[str, FormError], form: dict[str, str]) -> int:
    """The version the page's forms carry: after an error, the one the person's form
    was made from (what they typed was based on it), unless it was refused as stale:
    then the memory's own, shown now (docs/reference.md#stale-forms)."""
    if not form or any(error.code == PreconditionFailed.code for error in errors.values()):
        return memory.version
    try:
        return min(form_version(form))
    except InvalidRequest:
        return memory.version


def edit(web: WebContext, memory_id: str) -> WebResponse:
    """``POST /memories/{memory_id}/edit``: a person edits text and/or expiry
    (docs/reference.md#7-http-api
    ``PATCH /memories/{id}``). The expiry is sent only when the person changed the
    date shown (a date means the end of that UTC day).

    The form carries the version it was made from (``version``), passed on as the
    API's ``If-Match``: a stale form changes nothing and is answered with the conflict
    page (412, ``stale.conflict_page``; docs/reference.md#stale-forms). The text is sent
    only when the person changed the one shown (``text_was``) or left the expiry, tags
    and metadata alone; tags and metadata only when changed (``edited_tags``,
    ``edited_metadata``).
    """
    form = web.request.form()
    before = web.services.memories.get(web.principal, memory_id)
    expires = form.get("expires", "")
    new_expiry = expires if expires and expires != form.get("expires_was") else None
    try:
        tags, metadata = edited_tags(form), edited_metadata(form)
        # The text only when the person changed the one shown (or nothing else changed),
        # so moving the expiry or a tag never writes back a text someone has replaced.
        alone = new_expiry is None and tags is None and metadata is None
        text = form.get("text") if alone or text_changed(form) else None
        request = EditRequest.model_validate(
            {"text": text, "expiresAt": new_expiry, "tags": tags, "metadata": metadata}
        )
        expected = form_version(form)
        after = web.services.memories.edit(
            web.principal, memory_id, request, expected_versions=expected
        )
    except PreconditionFailed as error:
        current = web.services.memories.get(web.principal, memory_id)
        return conflict_page(web, current, form, error)
    except PineworkError as error:
        return memory_page(web, memory_id, errors={"edit": FormError.of(error, "edit")}, form=form)
    done = "edited" if after.version != before.version else None
    return web.back({}, f"/memories/{memory_id}", done=done)


def edited_tags(form: dict[str, str]) -> list[str] | None:
    """The edit form's ``tags`` (comma-separated; blanks dropped) as the fact's new set,
    or None when the person left the tags shown (``tags_was``) as they were or the form
    has no tags field (the conflict page's). The rules are the service's
    (docs/reference.md#tags: ``memory_tag_invalid``)."""
    if "tags" not in form or _tag_set(form["tags"]) == _tag_set(form.get("tags_was", "")):
        return None
    return [part.strip() for part in form["tags"].split(",") if part.strip()]


def _tag_set(typed: str) -> list[str]:
    return sorted(part.strip().lower() for part in typed.split(",") if part.strip())


def edited_metadata(form: dict[str, str]) -> dict[str, Any] | None:
    """The edit form's ``metadata`` (a JSON object; empty removes it all) as the fact's
    new metadata, or None when unchanged from ``metadata_was`` or absent. The rules are
    the service's (docs/reference.md#metadata).

    Raises:
        MemoryMetadataInvalid: not JSON, or JSON that is not an object.
    """
    if "metadata" not in form:
        return None
    typed = form["metadata"].strip()
    if typed == form.get("metadata_was", "").strip():
        return None
    if not typed:
        return {}
    try:
        value = json.loads(typed)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise MemoryMetadataInvalid(
            'Metadata must be a JSON object, for example {"project": "billing", "priority": 2}.'
        )
    return value


def lifecycle(web: WebContext, memory_id: str, action: Action) -> WebResponse:
    """``POST /memories/{memory_id}/{veto|archive|unarchive}``.

    From a list row (htmx, ``from=row``) the answer is the row itself, with the outcome
    and, after a veto or archive, the Undo button; otherwise a redirect back, or this
    memory's page with the error next to the form. The form's ``version`` is passed on
    as ``If-Match``: a stale form changes nothing (412; the row or page shows the memory
    as it is now, with the note or reason typed kept; docs/reference.md#stale-forms).
    """
    form = web.request.form()
    from_row = web.request.htmx and form.get("from") == "row"
    memories = web.services.memories
    try:
        expected = form_version(form)
        if action == "veto":
            note = form.get("note", "").strip() or None
            memory = memories.veto(web.principal, memory_id, note, expected_versions=expected)
        elif action == "archive":
            request = archive_request(form)
            memory = memories.archive(web.principal, memory_id, request, expected_versions=expected)
        else:
            memory = memories.unarchive(web.principal, memory_id, expected_versions=expected)
    except PineworkError as error:
        failure = (
            stale_error(error, action)
            if isinstance(error, PreconditionFailed)
            else FormError.of(error, action)
        )
        if from_row:
            current = memories.get(web.principal, memory_id)
            return row(web, current, error=failure, status=failure.status, form=form)
        return memory_page(web, memory_id, errors={action: failure}, form=form)
    if from_row:
        return row(web, memory, notice=ROW_NOTICE[action])
    return web.back(form, f"/memories/{memory_id}", done=DONE[action])


def erase(web: WebContext, memory_id: str) -> WebResponse:
    """``POST /memories/{memory_id}/erase`` (docs/reference.md#erasing-a-memory): the form's
    ``reason`` and its ``confirm`` box (``erase``) are required; its ``version`` is passed
    on as ``If-Match``. Done: back to the memory's page, now the tombstone; refused: the
    page with the error next to the form and the reason kept."""
    form = web.request.form()
    kept = {"erase_reason": form.get("reason", "")}
    try:
        if form.get("confirm") != "erase":
            raise InvalidRequest("Tick the box to confirm: an erasure cannot be undone.")
        web.services.erasure.erase(
            web.principal, memory_id, form.get("reason", ""), expected_versions=form_version(form)
        )
    except PineworkError as error:
        failure = (
            stale_error(error, "erase")
            if isinstance(error, PreconditionFailed)
            else FormError.of(error, "erase")
        )
        return memory_page(web, memory_id, errors={"erase": failure}, form=kept)
    return web.back({}, f"/memories/{memory_id}", done="erased")


def _shown_time(value: Any) -> str:
    if not value:
        return "none"
    return from_rfc3339(str(value)).strftime("%Y-%m-%d %H:%M UTC")


def last_review(services: Services, principal: Principal, memory_id: str) -> str | None:
    """The review (``rvw_…``) whose change is the memory's newest history record, or None
    (docs/issues.md#issue-26-item-3: a memory a review merged says its Undo brings it back).
    Reads the history to its end, at most ``_HISTORY_PAGES_READ`` pages."""
    last = None
    after: str | None = None
    for _ in range(_HISTORY_PAGES_READ):
        records, after = services.memories.history(principal, memory_id, 100, after)
        last = records[-1] if records else last
        if after is None:
            break
    if last is None or last.actor_type != "system" or not (last.actor_id or "").startswith("rvw_"):
        return None
    return last.actor_id


_HISTORY_PAGES_READ = 20
