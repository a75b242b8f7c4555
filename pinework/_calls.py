"""One request-building layer for both clients (docs/issues.md#issue-15-item-5): each API operation
becomes a :class:`Call` (method, path, query, body, headers, the result type);
:class:`pinework.Client` sends it with ``httpx.Client`` and
:class:`pinework.AsyncClient` with ``httpx.AsyncClient``. The paths, bodies and
checks live here once; the clients' methods only pass their arguments on.

Every builder raises ``ValueError`` for arguments that cannot be sent (an id that is
not one path segment, a naive datetime, an edit without changes), before anything
is sent.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import ValidationError

from pinework._wire import format_expiry, memory_path, path_segment
from pinework.errors import INVALID_RESPONSE, PineworkAPIError
from pinework.models import (
    QUEUED_REVIEW_STATUSES,
    AuditPage,
    KvForgetResult,
    KvKeys,
    KvRememberResult,
    KvValue,
    Learning,
    LearningAuditPage,
    LearningPage,
    Memory,
    MemoryPage,
    PendingPage,
    RecallLogPage,
    RecallResult,
    ReviewPage,
    ReviewReport,
    ReviewRun,
    Routine,
    RoutinePage,
    SignInLink,
    WireModel,
)

ModelT = TypeVar("ModelT", bound=WireModel)
Expiry = str | dt.datetime | dt.date


@dataclass(frozen=True)
class Call(Generic[ModelT]):
    """One request and the type of its answer.

    Attributes:
        method: the HTTP method.
        path: the route below ``/api/v1``, ids escaped.
        model: the type a 2xx answer is decoded into.
        json: the JSON body, if any.
        params: the query string.
        headers: per-request headers (``If-Match``, ``Idempotency-Key``).
        changes_state: the request changes something (POST, PATCH, DELETE other than a
            read): a client that retries sends it with an ``Idempotency-Key``.
    """

    method: str
    path: str
    model: type[ModelT]
    json: Any = None
    params: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    changes_state: bool = False


def _change(
    method: str,
    path: str,
    model: type[ModelT],
    body: Any,
    idempotency_key: str | None,
    if_match: str | None = None,
) -> Call[ModelT]:
    headers = {}
    if idempotency_key is not None:
        headers["Idempotency-Key"] = idempotency_key
    if if_match is not None:
        headers["If-Match"] = if_match
    return Call(method, path, model, json=body, headers=headers, changes_state=True)


def _given(**fields: Any) -> dict[str, Any]:
    """The fields that were given (``None`` means "not sent")."""
    return {name: value for name, value in fields.items() if value is not None}


def page_params(
    agent_id: str | None, limit: int | None, next_token: str | None, **more: str | None
) -> dict[str, str]:
    """A paged list's query string (docs/reference.md#5-limits): ``agentId``, ``limit``,
    ``nextToken`` and
    ``more``, each only when given."""
    given = {"agentId": agent_id, "limit": None if limit is None else str(limit), **more}
    return _given(**given, nextToken=next_token)


# Agent memory (docs/reference.md#7-http-api)


def save_fact(
    text: str,
    *,
    expires_at: Expiry | None = None,
    supersedes: str | None = None,
    agent_id: str | None = None,
    evidence: str | None = None,
    idempotency_key: str | None = None,
) -> Call[Memory]:
    """``POST /memories`` (see ``Client.save_fact``)."""
    body = {
        "text": text,
        **_given(
            expiresAt=None if expires_at is None else format_expiry(expires_at),
            supersedes=supersedes,
            agentId=agent_id,
            evidence=evidence,
        ),
    }
    return _change("POST", "/memories", Memory, body, idempotency_key)


def append_day_line(line: str, *, idempotency_key: str | None = None) -> Call[Memory]:
    """``POST /memories/day``."""
    return _change("POST", "/memories/day", Memory, {"line": line}, idempotency_key)


def list_memories(
    *,
    agent_id: str | None = None,
    kind: str | None = None,
    status: str | None = None,
    include_archived: bool = False,
    limit: int | None = None,
    next_token: str | None = None,
) -> Call[MemoryPage]:
    """``GET /memories``."""
    params = page_params(
        agent_id,
        limit,
        next_token,
        kind=kind,
        status=status,
        all="true" if include_archived else None,
    )
    return Call("GET", "/memories", MemoryPage, params=params)


def get_memory(memory_id: str) -> Call[Memory]:
    """``GET /memories/{id}``."""
    return Call("GET", memory_path(memory_id), Memory)


def edit_memory(
    memory_id: str,
    *,
    text: str | None = None,
    expires_at: Expiry | None = None,
    if_match: str | None = None,
    idempotency_key: str | None = None,
) -> Call[Memory]:
    """``PATCH /memories/{id}``.

    Raises:
        ValueError: neither ``text`` nor ``expires_at``.
    """
    body = _given(text=text, expiresAt=None if expires_at is None else format_expiry(expires_at))
    if not body:
        raise ValueError("edit needs text or expires_at")
    return _change("PATCH", memory_path(memory_id), Memory, body, idempotency_key, if_match)


def archive(
    memory_id: str,
    reason: str,
    *,
    if_match: str | None = None,
    idempotency_key: str | None = None,
) -> Call[Memory]:
    """``POST /memories/{id}/archive``."""
    path = memory_path(memory_id, "archive")
    return _change("POST", path, Memory, {"reason": reason}, idempotency_key, if_match)


def veto(
    memory_id: str,
    reason: str | None = None,
    *,
    if_match: str | None = None,
    idempotency_key: str | None = None,
) -> Call[Memory]:
    """``POST /memories/{id}/veto``."""
    body = _given(reason=reason)
    path = memory_path(memory_id, "veto")
    return _change("POST", path, Memory, body, idempotency_key, if_match)


def erase(
    memory_id: str,
    reason: str,
    *,
    if_match: str | None = None,
    idempotency_key: str | None = None,
) -> Call[Memory]:
    """``POST /memories/{id}/erase``."""
    path = memory_path(memory_id, "erase")
    return _change("POST", path, Memory, {"reason": reason}, idempotency_key, if_match)


def unarchive(
    memory_id: str, *, if_match: str | None = None, idempotency_key: str | None = None
) -> Call[Memory]:
    """``POST /memories/{id}/unarchive``."""
    path = memory_path(memory_id, "unarchive")
    return _change("POST", path, Memory, {}, idempotency_key, if_match)


def history(
    memory_id: str, *, limit: int | None = None, next_token: str | None = None
) -> Call[AuditPage]:
    """``GET /memories/{id}/history``."""
    params = page_params(None, limit, next_token)
    return Call("GET", memory_path(memory_id, "history"), AuditPage, params=params)


def recall(
    *,
    query: str | None = None,
    agent_id: str | None = None,
    count: bool = True,
    idempotency_key: str | None = None,
) -> Call[RecallResult]:
    """``POST /memories/recall`` (``count`` false: a preview, sent only then)."""
    body = _given(query=query, agentId=agent_id, count=None if count else False)
    return _change("POST", "/memories/recall", RecallResult, body, idempotency_key)


def recall_start(
    session_id: str,
    *,
    resumed: bool = False,
    task: str | None = None,
    message: str | None = None,
    slash_command: str | None = None,
    idempotency_key: str | None = None,
) -> Call[RecallResult]:
    """``POST /memories/recall/start``."""
    body = {
        "sessionId": session_id,
        "resumed": resumed,
        **_given(task=task, message=message, slashCommand=slash_command),
    }
    return _change("POST", "/memories/recall/start", RecallResult, body, idempotency_key)


def recall_log(
    *, agent_id: str | None = None, limit: int | None = None, next_token: str | None = None
) -> Call[RecallLogPage]:
    """``GET /recalls``."""
    params = page_params(agent_id, limit, next_token)
    return Call("GET", "/recalls", RecallLogPage, params=params)


# Routines (docs/reference.md#routes-routines, docs/reference.md#9-review)


def routine_path(routine_id: str, action: str | None = None) -> str:
    """``/routines/{id}[/{action}]`` with the id escaped as one path segment.

    Raises:
        ValueError: the id is empty or a dot segment.
    """
    path = f"/routines/{path_segment(routine_id, 'a routine id')}"
    return f"{path}/{action}" if action else path


def list_routines(
    *, agent_id: str | None = None, limit: int | None = None, next_token: str | None = None
) -> Call[RoutinePage]:
    """``GET /routines``."""
    params = page_params(agent_id, limit, next_token)
    return Call("GET", "/routines", RoutinePage, params=params)


def get_routine(routine_id: str) -> Call[Routine]:
    """``GET /routines/{id}``."""
    return Call("GET", routine_path(routine_id), Routine)


def create_routine(agent_id: str, *, idempotency_key: str | None = None) -> Call[Routine]:
    """``POST /routines``."""
    return _change("POST", "/routines", Routine, {"agentId": agent_id}, idempotency_key)


def set_routine(
    routine_id: str, action: str, *, idempotency_key: str | None = None
) -> Call[Routine]:
    """``POST /routines/{id}/pause`` or ``/resume``."""
    return _change("POST", routine_path(routine_id, action), Routine, {}, idempotency_key)


def delete_routine(routine_id: str, *, idempotency_key: str | None = None) -> Call[Routine]:
    """``DELETE /routines/{id}``."""
    return _change("DELETE", routine_path(routine_id), Routine, None, idempotency_key)


# Reviews (docs/reference.md#routes-reviews, docs/reference.md#9-review)


class ReviewAnswer(WireModel):
    """A review answer (``POST /reviews``, ``GET /reviews/{id}``) before it is known to
    be a report or a queued run (``status`` ``queued``, ``running``, ``failed``)."""

    status: str = "done"

    def decoded(self) -> ReviewReport | ReviewRun:
        """The report, or the ``ReviewRun`` of a review that has none yet.

        Raises:
            PineworkAPIError: ``invalid_response``: the JSON is neither.
        """
        kind: type[ReviewReport] | type[ReviewRun] = (
            ReviewRun if self.status in QUEUED_REVIEW_STATUSES else ReviewReport
        )
        try:
            return kind.from_wire(self.raw)
        except ValidationError as exc:
            raise PineworkAPIError(
                INVALID_RESPONSE,
                f"a review answer is not a {kind.__name__} ({exc.errors()[0]['msg']})",
                200,
            ) from exc


def run_review(
    agent_id: str, *, dry_run: bool = False, idempotency_key: str | None = None
) -> Call[ReviewAnswer]:
    """``POST /reviews`` (200 with the report, or 202 with the queued ``ReviewRun``)."""
    body = {"agentId": agent_id, "dryRun": dry_run}
    return _change("POST", "/reviews", ReviewAnswer, body, idempotency_key)


def list_reviews(
    agent_id: str | None = None, *, limit: int | None = None, next_token: str | None = None
) -> Call[ReviewPage]:
    """``GET /reviews``."""
    params = page_params(agent_id, limit, next_token)
    return Call("GET", "/reviews", ReviewPage, params=params)


def get_review(review_id: str) -> Call[ReviewAnswer]:
    """``GET /reviews/{id}`` (the report, or the ``ReviewRun`` while it has none)."""
    return Call("GET", f"/reviews/{path_segment(review_id, 'a review id')}", ReviewAnswer)


def decide_review_action(
    review_id: str,
    action: int | str,
    decision: str,
    *,
    keep_id: str | None = None,
    idempotency_key: str | None = None,
) -> Call[ReviewReport]:
    """``POST /reviews/{id}/actions/{n}/approve`` (``{keepId?}``), ``/reject`` or
    ``/undo`` (``{}``)."""
    review = path_segment(review_id, "a review id")
    path = f"/reviews/{review}/actions/{path_segment(str(action), 'an action')}/{decision}"
    body = _given(keepId=keep_id)
    return _change("POST", path, ReviewReport, body, idempotency_key)


def list_pending_actions(
    agent_id: str | None = None, *, limit: int | None = None, next_token: str | None = None
) -> Call[PendingPage]:
    """``GET /reviews/pending``."""
    params = page_params(agent_id, limit, next_token)
    return Call("GET", "/reviews/pending", PendingPage, params=params)


# The dashboard (docs/reference.md#13-dashboard)


def sign_in_link() -> Call[SignInLink]:
    """``POST /sign-in-links``: a one-time dashboard sign-in link (persons only)."""
    return Call("POST", "/sign-in-links", SignInLink, changes_state=True)


# Key-value meta-tools (docs/reference.md#10-key-value)


def kv_remember(
    key: str, value: Any, *, if_revision: int | None = None, idempotency_key: str | None = None
) -> Call[KvRememberResult]:
    """``POST /kv/remember`` (``ifRevision`` sent when given)."""
    body = {"key": key, "value": value, **_given(ifRevision=if_revision)}
    return _change("POST", "/kv/remember", KvRememberResult, body, idempotency_key)


def kv_recall(key: str) -> Call[KvValue]:
    """``POST /kv/recall`` with a key and ``withRevision`` (a read: no idempotency key
    needed)."""
    return Call("POST", "/kv/recall", KvValue, json={"key": key, "withRevision": True})


def kv_keys(cursor: str | None = None, limit: int | None = None) -> Call[KvKeys]:
    """``POST /kv/recall`` without a key: a page of the scope's keys (after ``cursor``)."""
    body: dict[str, Any] = {}
    if cursor is not None:
        body["cursor"] = cursor
    if limit is not None:
        body["limit"] = limit
    return Call("POST", "/kv/recall", KvKeys, json=body)


def kv_forget(
    key: str, *, if_revision: int | None = None, idempotency_key: str | None = None
) -> Call[KvForgetResult]:
    """``POST /kv/forget`` (``ifRevision`` sent when given)."""
    body = {"key": key, **_given(ifRevision=if_revision)}
    return _change("POST", "/kv/forget", KvForgetResult, body, idempotency_key)


# Learnings (docs/reference.md#15-learnings)


def learning_path(learning_id: str, action: str | None = None) -> str:
    """``/learnings/{id}[/{action}]`` with the id escaped as one path segment.

    Raises:
        ValueError: the id is empty or a dot segment.
    """
    path = f"/learnings/{path_segment(learning_id, 'a learning id')}"
    return f"{path}/{action}" if action else path


def propose_learning(text: str, *, idempotency_key: str | None = None) -> Call[Learning]:
    """``POST /learnings``."""
    return _change("POST", "/learnings", Learning, {"text": text}, idempotency_key)


def list_learnings(
    state: str | None = None,
    q: str | None = None,
    limit: int | None = None,
    next_token: str | None = None,
    unreviewed: bool = False,
) -> Call[LearningPage]:
    """``GET /learnings`` (``unreviewed=true`` only when asked)."""
    params = page_params(
        None, limit, next_token, state=state, q=q, unreviewed="true" if unreviewed else None
    )
    return Call("GET", "/learnings", LearningPage, params=params)


def get_learning(learning_id: str) -> Call[Learning]:
    """``GET /learnings/{id}``."""
    return Call("GET", learning_path(learning_id), Learning)


def decide_learning(
    learning_id: str,
    action: str,
    body: dict[str, Any],
    *,
    if_match: str | None = None,
    idempotency_key: str | None = None,
) -> Call[Learning]:
    """``POST /learnings/{id}/{approve|reject|retire}`` or, for ``edit``, ``PATCH``."""
    if action == "edit":
        path, method = learning_path(learning_id), "PATCH"
    else:
        path, method = learning_path(learning_id, action), "POST"
    return _change(method, path, Learning, body, idempotency_key, if_match)


def learning_history(learning_id: str) -> Call[LearningAuditPage]:
    """``GET /learnings/{id}/history``."""
    return Call("GET", learning_path(learning_id, "history"), LearningAuditPage)
