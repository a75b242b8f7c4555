"""Every request of the Pinework HTTP API, described once (docs/issues.md#issue-48, item 5).

Each operation is a function that checks its arguments and describes what to send: a
:class:`Request` (method, path below ``/api/v1``, query, JSON body, per-request headers and
the model the answer is decoded into), or, for an operation of several steps, a *program*: a
generator that yields requests (and :class:`Pause`, :class:`Emit`, :class:`Invoke` steps) and
is sent each decoded answer, or thrown the :class:`PineworkAPIError` it raised. Nothing here
does I/O: ``pinework._core`` runs these descriptions over ``httpx.Client`` for
:class:`pinework.Client` and ``httpx.AsyncClient`` for :class:`pinework.AsyncClient`, whose
public methods are these functions (same names, arguments and docstrings). A new route is
added here, once, and both clients have it.

Every operation raises ``ValueError`` for arguments that cannot be sent (an id that is not one
path segment, a naive datetime, an edit without changes) before anything is sent.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from pydantic import ValidationError

from pinework._wire import format_expiry, memory_path, path_segment
from pinework.errors import INVALID_RESPONSE, PineworkAPIError
from pinework.models import (
    QUEUED_REVIEW_STATUSES,
    AuditPage,
    EventPage,
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
    RecallBlock,
    RecallLogPage,
    RecallResult,
    ReviewPage,
    ReviewReport,
    ReviewRun,
    Routine,
    RoutinePage,
    SignInLink,
    Webhook,
    WebhookDelivery,
    WebhookDeliveryPage,
    WebhookPage,
    WireModel,
)

ModelT = TypeVar("ModelT", bound=WireModel)
PageT = TypeVar("PageT", bound=WireModel)
T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
ItemT = TypeVar("ItemT")
Expiry = str | dt.datetime | dt.date


@dataclass(frozen=True)
class Request(Generic[ModelT]):
    """One HTTP request of the API and the type of its answer.

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
    params: Mapping[str, str | list[str]] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    changes_state: bool = False

    def __iter__(self) -> Generator[Step, Any, ModelT]:
        """The request as a program of one step, so that a program sends it with
        ``answer = yield from request``.

        Returns:
            A generator that yields this request and returns the decoded answer.
        """
        answer: ModelT = yield self
        return answer


@dataclass(frozen=True)
class Pause:
    """A program step: wait ``seconds`` before the next step.

    Attributes:
        seconds: how long.
        sleep: the caller's own way to wait (``wait_for_review(sleep=...)``): a function of
            the seconds, or, under :class:`pinework.AsyncClient`, a coroutine function;
            ``None``: ``time.sleep`` / ``asyncio.sleep``.
    """

    seconds: float
    sleep: Callable[[float], object] | None = None


@dataclass(frozen=True)
class Emit(Generic[ItemT]):
    """A program step of a listing: hand ``item`` to the caller's iteration."""

    item: ItemT


@dataclass(frozen=True)
class Invoke:
    """A program step: call the client's own public operation ``operation`` with ``args``
    and ``kwargs`` and send back its result (so a subclass's override of that method runs,
    as when the integration called the method itself).

    Attributes:
        operation: a public method of both clients, e.g. ``kv_remember``.
        args: its positional arguments.
        kwargs: its keyword arguments.
    """

    operation: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


Step = Request[Any] | Pause | Invoke
"""What a program yields for the client to do."""

Program = Generator[Step, Any, T]
"""An operation of several steps: yields steps, is sent their answers, returns its result."""

Pages = Generator[Step | Emit[ItemT], Any, None]
"""A listing: a program that also emits the items it reads, page after page."""


class Runnable(Protocol[T_co]):
    """What a client runs: a :class:`Request` or a :data:`Program`."""

    def __iter__(self) -> Generator[Step, Any, T_co]:
        """The steps, as a generator that returns the result."""
        ...


def _change(
    method: str,
    path: str,
    model: type[ModelT],
    body: Any,
    idempotency_key: str | None,
    if_match: str | None = None,
) -> Request[ModelT]:
    headers = {}
    if idempotency_key is not None:
        headers["Idempotency-Key"] = idempotency_key
    if if_match is not None:
        headers["If-Match"] = if_match
    return Request(method, path, model, json=body, headers=headers, changes_state=True)


def _given(**fields: Any) -> dict[str, Any]:
    """The fields that were given (``None`` means "not sent")."""
    return {name: value for name, value in fields.items() if value is not None}


def page_params(
    agent_id: str | None, limit: int | None, next_token: str | None, **more: str | None
) -> dict[str, str]:
    """A paged list's query string (docs/reference.md#5-limits): ``agentId``, ``limit``,
    ``nextToken`` and ``more``, each only when given."""
    given = {"agentId": agent_id, "limit": None if limit is None else str(limit), **more}
    return _given(**given, nextToken=next_token)


def pages(
    page: Callable[[str | None], Request[PageT]],
    items: Callable[[PageT], Iterable[ItemT]],
    cursor_of: Callable[[PageT], str | None],
) -> Pages[ItemT]:
    """A listing that follows the pages' cursors lazily: ``page(cursor)`` asks for a page
    (``None``: the first), ``items`` are emitted, ``cursor_of`` names the next page (``None``
    on the last). A cursor that does not move would loop forever; it ends the listing."""
    cursor: str | None = None
    while True:
        answer = yield from page(cursor)
        for item in items(answer):
            yield Emit(item)
        following = cursor_of(answer)
        if following is None or following == cursor:
            return
        cursor = following


def routine_path(routine_id: str, action: str | None = None) -> str:
    """``/routines/{id}[/{action}]`` with the id escaped as one path segment.

    Raises:
        ValueError: the id is empty or a dot segment.
    """
    path = f"/routines/{path_segment(routine_id, 'a routine id')}"
    return f"{path}/{action}" if action else path


def learning_path(learning_id: str, action: str | None = None) -> str:
    """``/learnings/{id}[/{action}]`` with the id escaped as one path segment.

    Raises:
        ValueError: the id is empty or a dot segment.
    """
    path = f"/learnings/{path_segment(learning_id, 'a learning id')}"
    return f"{path}/{action}" if action else path


def review_action_path(review_id: str, action: int | str, decision: str) -> str:
    """``/reviews/{id}/actions/{n}/{decision}``, both ids escaped as path segments.

    Raises:
        ValueError: an id is empty or a dot segment.
    """
    review = path_segment(review_id, "a review id")
    return f"/reviews/{review}/actions/{path_segment(str(action), 'an action')}/{decision}"


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


def kv_value(key: str) -> Request[KvValue]:
    """``POST /kv/recall`` with a key and ``withRevision`` (a read: no idempotency key
    needed)."""
    return Request("POST", "/kv/recall", KvValue, json={"key": key, "withRevision": True})


def keys_under(prefix: str, page_size: int = 1000) -> Program[list[str]]:
    """Every key of the caller's key-value scope that starts with ``prefix``, in key order:
    the listing read from its first page until it passes them (keys are listed in UTF-8
    byte order, which is Python's code point order; docs/reference.md#kv-listing)."""
    found: list[str] = []
    cursor: str | None = None
    while True:
        page = yield from kv_keys(cursor=cursor, limit=page_size)
        for key in page.keys:
            if key.startswith(prefix):
                found.append(key)
            elif key > prefix:
                return found
        if page.next_cursor is None or page.next_cursor == cursor:
            return found
        cursor = page.next_cursor


# The operations: each is a public method of both clients (the section of
# docs/reference.md each follows is named in its docstring).


def save_fact(
    text: str,
    *,
    expires_at: Expiry | None = None,
    supersedes: str | None = None,
    agent_id: str | None = None,
    evidence: str | None = None,
    tags: Sequence[str] | None = None,
    metadata: Mapping[str, bool | int | float | str] | None = None,
    idempotency_key: str | None = None,
) -> Request[Memory]:
    """Save a fact (``POST /memories``).

    Args:
        text: the fact, 1-500 characters, no secrets (docs/reference.md#5-limits).
        expires_at: when it expires; a date means the end of that UTC day;
            default 90 days after the save. Must be in the future.
        supersedes: the ``mem_…`` this fact replaces; it gets archived with
            reason ``superseded``.
        agent_id: the owner; required when a person saves.
        evidence: the tool-output excerpt that supports the fact (at most
            2,000 characters, no secrets); stored with it, shown in its
            history, and used by the daily review's conflict step (docs/reference.md#9-review).
        tags: at most 10 tags, each trimmed and lower-cased by the server, then 1-40 of
            ``a-z 0-9 . _ : -`` (docs/reference.md#tags); omitted on a superseding save:
            the replaced fact's tags.
        metadata: a flat object of at most 10 keys (a letter, then letters, digits,
            ``_ . -``; case is ignored), each a string (at most 200 characters), a
            number or a boolean; 2,048 bytes as JSON (docs/reference.md#metadata);
            omitted on a superseding save: the replaced fact's metadata.

    Returns:
        The new memory.

    Raises:
        PineworkAPIError: e.g. ``memory_text_too_long``, ``secret_in_memory``,
            ``memory_agent_required``, ``memory_agent_mismatch``,
            ``memory_day_append_only``, ``memory_supersede_archived``,
            ``memory_tag_invalid``, ``invalid_request``.
        ValueError: ``expires_at`` is a naive datetime.
    """
    body: dict[str, Any] = {
        "text": text,
        **_given(
            expiresAt=None if expires_at is None else format_expiry(expires_at),
            supersedes=supersedes,
            agentId=agent_id,
            evidence=evidence,
        ),
    }
    if tags is not None:
        body["tags"] = list(tags)
    if metadata is not None:
        body["metadata"] = dict(metadata)
    return _change("POST", "/memories", Memory, body, idempotency_key)


def append_day_line(line: str, *, idempotency_key: str | None = None) -> Request[Memory]:
    """Append a line to today's (UTC) day log (``POST /memories/day``; agents only).

    Args:
        line: the line, 1-300 characters; the server prefixes ``HH:MM`` and
            the task key.

    Returns:
        The day row after the append (new on the first line of the date).

    Raises:
        PineworkAPIError: e.g. ``memory_text_too_long``, ``memory_day_full``,
            ``memory_day_agent_only``, ``secret_in_memory``.
    """
    return _change("POST", "/memories/day", Memory, {"line": line}, idempotency_key)


def list_memories(
    *,
    agent_id: str | None = None,
    kind: str | None = None,
    status: str | None = None,
    include_archived: bool = False,
    limit: int | None = None,
    next_token: str | None = None,
    tags: Sequence[str] | None = None,
    any_tags: Sequence[str] | None = None,
    meta: Sequence[str] | None = None,
) -> Request[MemoryPage]:
    """List memories, newest first (``GET /memories``), one page at a time.

    Args:
        agent_id: whose memories (persons; omitted means every agent).
        kind: ``fact`` or ``day``.
        status: ``active`` or ``archived``.
        include_archived: sends ``all=true`` to include archived memories.
        limit: page size; the server defaults to 100 and clamps to 500.
        next_token: the ``next_token`` of the previous page.
        tags: only facts holding every one of these tags (``tag``, docs/reference.md#tags).
        any_tags: only facts holding at least one of these (``anyTag``).
        meta: only facts whose metadata meets every one of these conditions (``meta``,
            sent once each): ``key:value``, ``key:in:a|b`` or ``key:op:value`` with op
            ``eq``, ``in``, ``gt``, ``gte``, ``lt``, ``lte``; at most 5
            (docs/reference.md#metadata-filters).

    Returns:
        The page; its ``next_token`` is ``None`` on the last page.

    Raises:
        PineworkAPIError: e.g. ``invalid_request``, ``memory_not_own``,
            ``memory_tag_invalid``, ``metadata_filter_invalid``.
    """
    params: dict[str, str | list[str]] = {}
    params |= page_params(
        agent_id,
        limit,
        next_token,
        kind=kind,
        status=status,
        all="true" if include_archived else None,
        tag=None if not tags else ",".join(tags),
        anyTag=None if not any_tags else ",".join(any_tags),
    )
    if meta:
        params["meta"] = list(meta)
    return Request("GET", "/memories", MemoryPage, params=params)


def iter_memories(
    *,
    agent_id: str | None = None,
    kind: str | None = None,
    status: str | None = None,
    include_archived: bool = False,
    page_size: int | None = None,
    tags: Sequence[str] | None = None,
    any_tags: Sequence[str] | None = None,
    meta: Sequence[str] | None = None,
) -> Pages[Memory]:
    """Iterate over every matching memory, following ``nextToken``.

    Args:
        agent_id: see :meth:`list_memories`.
        kind: see :meth:`list_memories`.
        status: see :meth:`list_memories`.
        include_archived: see :meth:`list_memories`.
        page_size: ``limit`` of each request.
        tags: see :meth:`list_memories`.
        any_tags: see :meth:`list_memories`.
        meta: see :meth:`list_memories`.

    Returns:
        An iterator of memories, newest first; requests pages lazily.

    Raises:
        PineworkAPIError: as :meth:`list_memories`.
    """
    return pages(
        lambda token: list_memories(
            agent_id=agent_id,
            kind=kind,
            status=status,
            include_archived=include_archived,
            limit=page_size,
            next_token=token,
            tags=tags,
            any_tags=any_tags,
            meta=meta,
        ),
        lambda page: page.data,
        lambda page: page.next_token,
    )


def get_memory(memory_id: str) -> Request[Memory]:
    """Read one memory (``GET /memories/{id}``).

    Args:
        memory_id: the ``mem_…`` id.

    Returns:
        The memory.

    Raises:
        PineworkAPIError: ``memory_not_found``, ``memory_not_own``.
        ValueError: ``memory_id`` cannot be a path segment.
    """
    return Request("GET", memory_path(memory_id), Memory)


def edit_memory(
    memory_id: str,
    *,
    text: str | None = None,
    expires_at: Expiry | None = None,
    tags: Sequence[str] | None = None,
    metadata: Mapping[str, bool | int | float | str] | None = None,
    if_match: str | None = None,
    idempotency_key: str | None = None,
) -> Request[Memory]:
    """Edit a memory's text, expiry, tags and/or metadata (``PATCH /memories/{id}``;
    persons only).

    Args:
        memory_id: the ``mem_…`` id.
        text: the new text (limits of docs/reference.md#5-limits).
        expires_at: the new expiry; a date means the end of that UTC day.
        tags: the fact's new tags, replacing its set (``[]`` removes them all;
            docs/reference.md#tags).
        metadata: the fact's new metadata, replacing its object (``{}`` removes it
            all; docs/reference.md#metadata).
        if_match: the ``etag`` of the memory as you read it: the edit is refused
            (``precondition_failed``, nothing changes) if it changed since.
        idempotency_key: see :class:`Client`.

    Returns:
        The edited memory (``edited_by_person_id`` set).

    Raises:
        PineworkAPIError: e.g. ``precondition_failed``, ``memory_superseded``, ``forbidden``,
            ``memory_not_found``, ``memory_text_too_long``, ``invalid_request``.
        ValueError: none of ``text``, ``expires_at``, ``tags`` and ``metadata`` was given, or a bad
            id or naive datetime.
    """
    body: dict[str, Any] = _given(
        text=text, expiresAt=None if expires_at is None else format_expiry(expires_at)
    )
    if tags is not None:
        body["tags"] = list(tags)
    if metadata is not None:
        body["metadata"] = dict(metadata)
    if not body:
        raise ValueError("edit needs text, expires_at, tags or metadata")
    return _change("PATCH", memory_path(memory_id), Memory, body, idempotency_key, if_match)


def archive(
    memory_id: str,
    reason: str,
    *,
    if_match: str | None = None,
    idempotency_key: str | None = None,
) -> Request[Memory]:
    """Archive a memory (``POST /memories/{id}/archive``).

    Args:
        memory_id: the ``mem_…`` id.
        reason: why, 1-500 characters (required).

    Returns:
        The archived memory.

    Raises:
        PineworkAPIError: e.g. ``memory_already_archived``, ``memory_not_own``,
            ``memory_not_found``, ``invalid_request``.
        ValueError: ``memory_id`` cannot be a path segment.
    """
    path = memory_path(memory_id, "archive")
    return _change("POST", path, Memory, {"reason": reason}, idempotency_key, if_match)


def veto(
    memory_id: str,
    reason: str | None = None,
    *,
    if_match: str | None = None,
    idempotency_key: str | None = None,
) -> Request[Memory]:
    """Veto a memory: archive it with reason ``vetoed`` (persons only).

    Args:
        memory_id: the ``mem_…`` id.
        reason: an optional note for the audit record.

    Returns:
        The archived memory.

    Raises:
        PineworkAPIError: e.g. ``forbidden``, ``memory_already_archived``,
            ``memory_not_found``.
        ValueError: ``memory_id`` cannot be a path segment.
    """
    body = _given(reason=reason)
    path = memory_path(memory_id, "veto")
    return _change("POST", path, Memory, body, idempotency_key, if_match)


def erase(
    memory_id: str,
    reason: str,
    *,
    if_match: str | None = None,
    idempotency_key: str | None = None,
) -> Request[Memory]:
    """Erase a memory (persons only, ``POST /memories/{id}/erase``): its text is removed
    everywhere and a tombstone stays (docs/reference.md#erasing-a-memory).

    Args:
        memory_id: the ``mem_…`` id.
        reason: why, 1-500 characters (required); kept on the tombstone.

    Returns:
        The tombstone (``status`` ``erased``, empty ``text``).

    Raises:
        PineworkAPIError: e.g. ``forbidden``, ``memory_not_found``,
            ``invalid_request``, ``precondition_failed``.
        ValueError: ``memory_id`` cannot be a path segment.
    """
    path = memory_path(memory_id, "erase")
    return _change("POST", path, Memory, {"reason": reason}, idempotency_key, if_match)


def unarchive(
    memory_id: str, *, if_match: str | None = None, idempotency_key: str | None = None
) -> Request[Memory]:
    """Bring an archived memory back (``POST /memories/{id}/unarchive``;
    docs/reference.md#4-states).

    Args:
        memory_id: the ``mem_…`` id.

    Returns:
        The active memory.

    Raises:
        PineworkAPIError: ``memory_superseded``, ``memory_veto_human_only``,
            ``memory_day_exists``, ``memory_not_archived``, ``memory_not_found``.
        ValueError: ``memory_id`` cannot be a path segment.
    """
    path = memory_path(memory_id, "unarchive")
    return _change("POST", path, Memory, {}, idempotency_key, if_match)


def history(
    memory_id: str, *, limit: int | None = None, next_token: str | None = None
) -> Request[AuditPage]:
    """Read a memory's audit records, oldest first (``GET /memories/{id}/history``).

    Args:
        memory_id: the ``mem_…`` id.
        limit: page size (100 by default, 500 at most).
        next_token: the ``nextToken`` of the previous page.

    Returns:
        A page of the audit records.

    Raises:
        PineworkAPIError: ``memory_not_found``, ``memory_not_own``.
        ValueError: ``memory_id`` cannot be a path segment.
    """
    params = page_params(None, limit, next_token)
    return Request("GET", memory_path(memory_id, "history"), AuditPage, params=params)


def _filters(
    tags: Sequence[str] | None, any_tags: Sequence[str] | None, meta: Sequence[str] | None
) -> dict[str, list[str]]:
    """A recall body's ``tags``, ``anyTags`` and ``meta``, each only when given."""
    sent = {"tags": tags, "anyTags": any_tags, "meta": meta}
    return {name: list(values) for name, values in sent.items() if values}


def recall(
    *,
    query: str | None = None,
    agent_id: str | None = None,
    count: bool = True,
    idempotency_key: str | None = None,
    tags: Sequence[str] | None = None,
    any_tags: Sequence[str] | None = None,
    meta: Sequence[str] | None = None,
) -> Request[RecallResult]:
    """Recall the memories relevant to a query (``POST /memories/recall``;
    docs/reference.md#8-recall).

    Counts as a recall of every memory returned, unless ``count`` is false.

    Args:
        query: what to score against, up to 4,000 characters; the server
            uses the current task (``X-Pinework-Task``) when omitted.
        agent_id: whose memories; required when a person recalls.
        count: false makes it a preview (docs/reference.md#recall-preview): the same
            answer, nothing counted or logged, ``recall_id`` None.
        tags, any_tags, meta: rank only the facts meeting them (see
            :meth:`list_memories`; docs/reference.md#metadata-filters).

    Returns:
        Scored memories (best first), the fallback used if any, and the block.

    Raises:
        PineworkAPIError: e.g. ``memory_agent_required``, ``invalid_request``,
            ``metadata_filter_invalid``.
    """
    body = {
        **_given(query=query, agentId=agent_id, count=None if count else False),
        **_filters(tags, any_tags, meta),
    }
    return _change("POST", "/memories/recall", RecallResult, body, idempotency_key)


def recall_start(
    session_id: str,
    *,
    resumed: bool = False,
    task: str | None = None,
    message: str | None = None,
    slash_command: str | None = None,
    idempotency_key: str | None = None,
    tags: Sequence[str] | None = None,
    any_tags: Sequence[str] | None = None,
    meta: Sequence[str] | None = None,
) -> Request[RecallResult]:
    """Run-start recall (``POST /memories/recall/start``; docs/reference.md#8-recall), agents
    only.

    Args:
        session_id: the conversation; a resumed one gets one block per 24 hours.
        resumed: whether this run resumes the session.
        task, message: what to score against (task first).
        slash_command: set when the run was started by a slash command (no block).
        tags, any_tags, meta: rank only the facts meeting them (as :meth:`recall`).

    Returns:
        The block and scored memories, or ``skipped`` with the ``reason``.

    Raises:
        PineworkAPIError: e.g. ``forbidden`` for a person, ``invalid_request``.
    """
    body = {
        "sessionId": session_id,
        "resumed": resumed,
        **_given(task=task, message=message, slashCommand=slash_command),
        **_filters(tags, any_tags, meta),
    }
    return _change("POST", "/memories/recall/start", RecallResult, body, idempotency_key)


def recall_log(
    *,
    agent_id: str | None = None,
    limit: int | None = None,
    next_token: str | None = None,
) -> Request[RecallLogPage]:
    """Read the recall (injection) log, newest first (``GET /recalls``).

    Args:
        agent_id: whose log; required for a person.
        limit: page size (100 by default, 500 at most).
        next_token: the ``nextToken`` of the previous page.

    Raises:
        PineworkAPIError: e.g. ``memory_agent_required``, ``memory_not_own``.
    """
    params = page_params(agent_id, limit, next_token)
    return Request("GET", "/recalls", RecallLogPage, params=params)


def recall_block(recall_id: str, *, agent_id: str | None = None) -> Request[RecallBlock]:
    """What a logged recall gave the run: its block, rebuilt as of its moment
    (``GET /recalls/{id}/block``, docs/reference.md#what-a-run-saw).

    Args:
        recall_id: the recall's ``rcl_…`` id (its ``recall_id``, or a log entry's ``id``).
        agent_id: whose recall; required for a person.

    Raises:
        PineworkAPIError: e.g. ``recall_not_found``, ``memory_agent_required``.
        ValueError: the id is empty or a dot segment.
    """
    path = f"/recalls/{path_segment(recall_id, 'a recall id')}/block"
    return Request("GET", path, RecallBlock, params=_given(agentId=agent_id))


def list_routines(
    *,
    agent_id: str | None = None,
    limit: int | None = None,
    next_token: str | None = None,
) -> Request[RoutinePage]:
    """List routines (``GET /routines``): an agent its own; a person one agent's
    (``agent_id``) or the workspace's, by agent id, a page at a time.

    Args:
        agent_id: one agent's routine only.
        limit: page size (100 by default, 500 at most).
        next_token: the ``nextToken`` of the previous page.

    Raises:
        PineworkAPIError: e.g. ``forbidden``, ``invalid_request``.
    """
    params = page_params(agent_id, limit, next_token)
    return Request("GET", "/routines", RoutinePage, params=params)


def get_routine(routine_id: str) -> Request[Routine]:
    """Read one routine by its ``rtn_…`` id or its agent's ``agt_…`` id.

    Raises:
        PineworkAPIError: ``not_found``, ``forbidden``.
        ValueError: the id cannot be a path segment.
    """
    return Request("GET", routine_path(routine_id), Routine)


def create_routine(agent_id: str, *, idempotency_key: str | None = None) -> Request[Routine]:
    """Create an agent's routine again after a delete (``POST /routines``; persons).

    Raises:
        PineworkAPIError: ``forbidden``, ``memory_agent_required``.
    """
    return _change("POST", "/routines", Routine, {"agentId": agent_id}, idempotency_key)


def pause_routine(routine_id: str, *, idempotency_key: str | None = None) -> Request[Routine]:
    """Pause a routine so the nightly review skips the agent (persons only).

    Raises:
        PineworkAPIError: ``not_found``, ``forbidden``.
        ValueError: the id cannot be a path segment.
    """
    return _change("POST", routine_path(routine_id, "pause"), Routine, {}, idempotency_key)


def resume_routine(routine_id: str, *, idempotency_key: str | None = None) -> Request[Routine]:
    """Resume a paused routine (persons only).

    Raises:
        PineworkAPIError: ``not_found``, ``forbidden``.
        ValueError: the id cannot be a path segment.
    """
    return _change("POST", routine_path(routine_id, "resume"), Routine, {}, idempotency_key)


def delete_routine(routine_id: str, *, idempotency_key: str | None = None) -> Request[Routine]:
    """Delete a routine; saves do not create it again (persons only).

    Returns:
        The routine with ``status`` ``deleted``.

    Raises:
        PineworkAPIError: ``not_found``, ``forbidden``.
        ValueError: the id cannot be a path segment.
    """
    return _change("DELETE", routine_path(routine_id), Routine, None, idempotency_key)


def run_review(
    agent_id: str, *, dry_run: bool = False, idempotency_key: str | None = None
) -> Program[ReviewReport | ReviewRun]:
    """Run an agent's review now (``POST /reviews``; persons). With ``dry_run``
    the plan comes back and nothing changes.

    Returns:
        The report; or, when the server queued the review because it may take
        longer than API Gateway's 29 s (202), a ``ReviewRun`` (``status``
        ``queued``) to follow with ``get_review`` or ``wait_for_review``.

    Raises:
        PineworkAPIError: ``forbidden``, ``memory_agent_required``, ``invalid_request``.
    """
    body = {"agentId": agent_id, "dryRun": dry_run}
    answer = yield from _change("POST", "/reviews", ReviewAnswer, body, idempotency_key)
    return answer.decoded()


def list_reviews(
    agent_id: str | None = None,
    *,
    limit: int | None = None,
    next_token: str | None = None,
) -> Request[ReviewPage]:
    """An agent's review summaries, newest first (``GET /reviews``).

    Raises:
        PineworkAPIError: ``memory_agent_required``, ``forbidden``.
    """
    params = page_params(agent_id, limit, next_token)
    return Request("GET", "/reviews", ReviewPage, params=params)


def get_review(review_id: str) -> Program[ReviewReport | ReviewRun]:
    """One full report (``GET /reviews/{id}``), or the queued review's ``ReviewRun``
    while it is ``queued``, ``running`` or ``failed``.

    Raises:
        PineworkAPIError: ``not_found``.
        ValueError: the id cannot be a path segment.
    """
    path = f"/reviews/{path_segment(review_id, 'a review id')}"
    answer = yield from Request("GET", path, ReviewAnswer)
    return answer.decoded()


def wait_for_review(
    review_id: str,
    *,
    timeout: float = 900.0,
    interval: float = 2.0,
    sleep: Callable[[float], object] | None = None,
) -> Program[ReviewReport | ReviewRun]:
    """Poll a queued review until it has a report or its last attempt failed.

    Args:
        review_id: the review (``rvw_…``).
        timeout: seconds to wait at most (the worker may take up to 10 minutes).
        interval: seconds between polls.
        sleep: how to wait, a function of the seconds (default ``time.sleep``;
            ``AsyncClient``: ``asyncio.sleep``, and a coroutine function is awaited); tests
            pass their own.

    Returns:
        The report; or the ``ReviewRun`` as last seen (``failed``, or still
        ``queued``/``running`` when ``timeout`` passed).

    Raises:
        PineworkAPIError: ``not_found``.
    """
    waited = 0.0
    while True:
        answer = yield from get_review(review_id)
        if not isinstance(answer, ReviewRun) or answer.status == "failed" or waited >= timeout:
            return answer
        yield Pause(interval, sleep)
        waited += interval


def approve_review_action(
    review_id: str,
    action: int | str,
    *,
    keep_id: str | None = None,
    idempotency_key: str | None = None,
) -> Request[ReviewReport]:
    """Approve one pending action (approval mode, or one that waits for a person);
    it is applied now (``POST /reviews/{id}/actions/{n}/approve``; persons).

    Args:
        review_id: the review, ``rvw_…``.
        action: the action's number (``2``) or id (``"a2"``).
        keep_id: for a ``resolve_conflict``, which fact of the pair to keep
            (default: the plan's ``keepId``).

    Returns:
        The report with every action's decision; the approved one is
        ``applied``, or ``skipped`` with the reason when its memories changed.

    Raises:
        PineworkAPIError: ``forbidden`` (an agent), ``not_found``,
            ``invalid_request``, ``conflict`` (decided already, or the review
            applied its plan itself).
        ValueError: an id cannot be a path segment.
    """
    path = review_action_path(review_id, action, "approve")
    return _change("POST", path, ReviewReport, _given(keepId=keep_id), idempotency_key)


def reject_review_action(
    review_id: str, action: int | str, *, idempotency_key: str | None = None
) -> Request[ReviewReport]:
    """Reject one pending action of an approval-mode review; it is never applied
    (``POST /reviews/{id}/actions/{n}/reject``; persons).

    Args:
        review_id: the review, ``rvw_…``.
        action: the action's number (``2``) or id (``"a2"``).

    Returns:
        The report with every action's decision.

    Raises:
        PineworkAPIError: as for :meth:`approve_review_action`.
        ValueError: an id cannot be a path segment.
    """
    path = review_action_path(review_id, action, "reject")
    return _change("POST", path, ReviewReport, {}, idempotency_key)


def undo_review_action(
    review_id: str, action: int | str, *, idempotency_key: str | None = None
) -> Request[ReviewReport]:
    """Undo one applied action of a review: what it changed is restored
    (``POST /reviews/{id}/actions/{n}/undo``; persons). Undoing twice is harmless.

    Args:
        review_id: the review, ``rvw_…``.
        action: the action's number (``2``) or id (``"a2"``).

    Returns:
        The report, with the action in ``undone``.

    Raises:
        PineworkAPIError: ``forbidden`` (an agent), ``not_found``,
            ``invalid_request``, ``conflict`` (the action changed nothing),
            ``review_undo_conflict`` (a memory changed since; nothing undone).
        ValueError: an id cannot be a path segment.
    """
    path = review_action_path(review_id, action, "undo")
    return _change("POST", path, ReviewReport, {}, idempotency_key)


def list_pending_actions(
    agent_id: str | None = None,
    *,
    limit: int | None = None,
    next_token: str | None = None,
) -> Request[PendingPage]:
    """Review actions waiting for a person, by agent, oldest review first
    (``GET /reviews/pending``; a person's: the workspace's, or ``agent_id``'s).

    Raises:
        PineworkAPIError: ``forbidden``, ``memory_not_own``, ``invalid_request``.
    """
    params = page_params(agent_id, limit, next_token)
    return Request("GET", "/reviews/pending", PendingPage, params=params)


def sign_in_link() -> Request[SignInLink]:
    """Make a one-time dashboard sign-in link for the calling person
    (docs/reference.md#13-dashboard).

    Returns:
        The link (its ``path`` is relative to :attr:`root_url`) and its expiry.

    Raises:
        PineworkAPIError: ``forbidden`` for an agent's token, ``unauthorized``.
    """
    return Request("POST", "/sign-in-links", SignInLink, changes_state=True)


def propose_learning(text: str, *, idempotency_key: str | None = None) -> Request[Learning]:
    """Propose a learning (``POST /learnings``; docs/reference.md#15-learnings).

    An agent's proposal is ``proposed`` until a person decides (``active`` at once where
    the workspace's ``learningApproval`` is ``none``); a person's is ``active`` at once.
    A proposal that says what a proposed or active learning says stores nothing and
    answers that learning (docs/reference.md#learning-repeats).

    Args:
        text: the fact every agent of the workspace needs (1 to 500 characters, no
            credential).
        idempotency_key: sent as ``Idempotency-Key``; a retry with it answers the first
            proposal.

    Returns:
        The learning (``lrn_…``); its ``etag`` is what ``if_match`` takes.

    Raises:
        PineworkAPIError: ``learning_rejected`` (409: an agent proposed what a person
            rejected), ``learning_limit_reached`` (409: 200 proposed and active),
            ``rate_limited`` (429: an agent's 20 proposals of the UTC day),
            ``memory_text_too_long``, ``secret_in_memory``, ``invalid_request``,
            ``unauthorized``.
    """
    return _change("POST", "/learnings", Learning, {"text": text}, idempotency_key)


def list_learnings(
    *,
    state: str | None = None,
    q: str | None = None,
    limit: int | None = None,
    next_token: str | None = None,
    unreviewed: bool = False,
) -> Request[LearningPage]:
    """One page of the workspace's learnings, newest first (``GET /learnings``;
    docs/reference.md#15-learnings).

    Args:
        state: only ``proposed``, ``active``, ``rejected`` or ``retired`` ones (omitted:
            every state).
        q: only those whose text contains this (any case; at most 200 characters).
        limit: page size (the server's default 50, at most 200).
        next_token: the ``next_token`` of the previous page.
        unreviewed: only the active learnings no person reviewed (persons only;
            docs/reference.md#unreviewed-learnings).

    Returns:
        ``LearningPage``: ``data`` (``Learning`` objects) and ``next_token`` (``None`` on
        the last page).

    Raises:
        PineworkAPIError: ``invalid_request`` (an unknown state, a bad token or limit,
            ``unreviewed`` with a state other than ``active``), ``forbidden`` (an agent
            asked for ``unreviewed``), ``unauthorized``.
    """
    params = page_params(
        None, limit, next_token, state=state, q=q, unreviewed="true" if unreviewed else None
    )
    return Request("GET", "/learnings", LearningPage, params=params)


def iter_learnings(
    *,
    state: str | None = None,
    q: str | None = None,
    page_size: int | None = None,
) -> Pages[Learning]:
    """Every matching learning, newest first, following ``nextToken`` lazily
    (docs/reference.md#15-learnings).

    Args:
        state: see :meth:`list_learnings`.
        q: see :meth:`list_learnings`.
        page_size: ``limit`` of each request.

    Returns:
        An iterator of ``Learning`` objects; pages are requested as it is consumed.

    Raises:
        PineworkAPIError: as :meth:`list_learnings`.
    """
    return pages(
        lambda token: list_learnings(state=state, q=q, limit=page_size, next_token=token),
        lambda page: page.data,
        lambda page: page.next_token,
    )


def get_learning(learning_id: str) -> Request[Learning]:
    """One learning of the workspace (``GET /learnings/{id}``;
    docs/reference.md#learning-object).

    Returns:
        The learning; its ``etag`` is what ``if_match`` takes.

    Raises:
        PineworkAPIError: ``learning_not_found`` (also another workspace's).
        ValueError: ``learning_id`` cannot be a path segment.
    """
    return Request("GET", learning_path(learning_id), Learning)


def approve_learning(
    learning_id: str, *, text: str | None = None, if_match: str | None = None
) -> Request[Learning]:
    """Approve a proposed learning (persons; ``POST /learnings/{id}/approve``;
    docs/reference.md#learning-states): every agent is told it from its next recall.

    Args:
        learning_id: the ``lrn_…``.
        text: a new text, edited as it is approved (omitted: the text as proposed).
        if_match: the ``etag`` as read: approve only that version.

    Returns:
        The learning, ``active``.

    Raises:
        PineworkAPIError: ``learning_decided`` (409: not proposed), ``learning_not_found``,
            ``forbidden`` (an agent's token), ``precondition_failed`` (412),
            ``memory_text_too_long``, ``secret_in_memory``.
    """
    path = learning_path(learning_id, "approve")
    return _change("POST", path, Learning, _given(text=text), None, if_match)


def edit_learning(learning_id: str, text: str, *, if_match: str | None = None) -> Request[Learning]:
    """Edit a proposed or active learning's text (persons; ``PATCH /learnings/{id}``;
    docs/reference.md#learning-states). Its state does not change.

    Returns:
        The learning with its new text and ``edited_by``.

    Raises:
        PineworkAPIError: ``learning_decided`` (409: rejected or retired),
            ``learning_not_found``, ``forbidden`` (an agent's token),
            ``precondition_failed`` (412), ``memory_text_too_long``, ``secret_in_memory``.
    """
    return _change("PATCH", learning_path(learning_id), Learning, {"text": text}, None, if_match)


def reject_learning(
    learning_id: str, reason: str, *, if_match: str | None = None
) -> Request[Learning]:
    """Reject a proposed learning with a reason (persons; ``POST
    /learnings/{id}/reject``; docs/reference.md#learning-repeats): no agent may propose
    it again (``learning_rejected``).

    Returns:
        The learning, ``rejected``, with the ``reason``.

    Raises:
        PineworkAPIError: ``learning_decided`` (409: not proposed), ``learning_not_found``,
            ``forbidden`` (an agent's token), ``precondition_failed`` (412),
            ``invalid_request`` (an empty reason), ``secret_in_memory``.
    """
    path = learning_path(learning_id, "reject")
    return _change("POST", path, Learning, {"reason": reason}, None, if_match)


def retire_learning(
    learning_id: str, *, reason: str | None = None, if_match: str | None = None
) -> Request[Learning]:
    """Retire an active learning (persons; ``POST /learnings/{id}/retire``;
    docs/reference.md#learning-states): no agent is told it any more.

    Returns:
        The learning, ``retired``, with the ``reason`` if one was given.

    Raises:
        PineworkAPIError: ``learning_decided`` (409: not active), ``learning_not_found``,
            ``forbidden`` (an agent's token), ``precondition_failed`` (412),
            ``secret_in_memory``.
    """
    path = learning_path(learning_id, "retire")
    return _change("POST", path, Learning, _given(reason=reason), None, if_match)


def learning_history(learning_id: str) -> Request[LearningAuditPage]:
    """A learning's history records, oldest first (``GET /learnings/{id}/history``;
    docs/reference.md#learning-states).

    Returns:
        ``LearningAuditPage``: ``data`` (``LearningAuditRecord``: ``action`` ``propose``,
        ``approve``, ``edit``, ``reject`` or ``retire``; the actor; ``at``; the state and
        text ``before`` and ``after``), all in one page.

    Raises:
        PineworkAPIError: ``learning_not_found``.
    """
    return Request("GET", learning_path(learning_id, "history"), LearningAuditPage)


def kv_remember(
    key: str,
    value: Any,
    *,
    if_revision: int | None = None,
    idempotency_key: str | None = None,
) -> Request[KvRememberResult]:
    """Store ``value`` under ``key`` in the caller's scope (``POST /kv/remember``).

    Args:
        key: 1-512 bytes of UTF-8.
        value: any JSON value; non-strings are stored serialized.
        if_revision: store only over this revision (``KvValue.revision`` as read); 0:
            only if the key is absent (docs/reference.md#kv-revisions).

    Returns:
        Confirmation with the TTL (``permanent`` or ``24h``) and the new revision.

    Raises:
        PineworkAPIError: e.g. ``invalid_request``, ``rate_limited``,
            ``precondition_failed`` (412: the key is not at ``if_revision``; nothing
            stored).
    """
    body = {"key": key, "value": value, **_given(ifRevision=if_revision)}
    return _change("POST", "/kv/remember", KvRememberResult, body, idempotency_key)


def kv_recall(
    key: str | None = None, *, cursor: str | None = None, limit: int | None = None
) -> Program[KvValue | KvKeys]:
    """Read one key, or list a page of the caller's keys (``POST /kv/recall``).

    Args:
        key: the key to read; ``None`` lists keys instead.
        cursor: listing only: ``next_cursor`` of the previous page.
        limit: listing only: keys per page (100 by default, at most 1,000).

    Returns:
        :class:`KvValue` for a key (``found`` false when missing), or
        :class:`KvKeys`, one page, without one.

    Raises:
        PineworkAPIError: e.g. ``invalid_request`` (a bad cursor), ``rate_limited``.
    """
    if key is None:
        return (yield from kv_keys(cursor=cursor, limit=limit))
    return (yield from kv_value(key))


def kv_keys(*, cursor: str | None = None, limit: int | None = None) -> Request[KvKeys]:
    """One page of the caller's keys (``POST /kv/recall`` without a key).

    Args:
        cursor: ``next_cursor`` of the previous page; None for the first.
        limit: keys per page (100 by default, at most 1,000).

    Returns:
        The page's keys, the scope's ``count`` and the ``next_cursor``.

    Raises:
        PineworkAPIError: ``invalid_request`` for a bad cursor or limit.
    """
    body: dict[str, Any] = {}
    if cursor is not None:
        body["cursor"] = cursor
    if limit is not None:
        body["limit"] = limit
    return Request("POST", "/kv/recall", KvKeys, json=body)


def iter_kv_keys(*, page_size: int | None = None) -> Pages[str]:
    """Every key of the caller's scope, in key order, following ``next`` page by page.

    Raises:
        PineworkAPIError: as :meth:`kv_recall`.
    """
    return pages(
        lambda cursor: kv_keys(cursor=cursor, limit=page_size),
        lambda page: page.keys,
        lambda page: page.next_cursor,
    )


def kv_forget(
    key: str, *, if_revision: int | None = None, idempotency_key: str | None = None
) -> Request[KvForgetResult]:
    """Delete a key from the caller's scope (``POST /kv/forget``).

    Args:
        key: the key.
        if_revision: delete only this revision (``precondition_failed`` otherwise;
            docs/reference.md#kv-revisions).

    Returns:
        Whether something was deleted.

    Raises:
        PineworkAPIError: e.g. ``invalid_request``, ``rate_limited``.
    """
    body = {"key": key, **_given(ifRevision=if_revision)}
    return _change("POST", "/kv/forget", KvForgetResult, body, idempotency_key)


def list_events(*, after: str | None = None, limit: int | None = None) -> Request[EventPage]:
    """One page of change events after the cursor ``after``, oldest first (``GET /events``;
    docs/reference.md#change-events): a person's workspace's, an agent's own.

    Args:
        after: the ``next_cursor`` of the previous page; ``None`` starts from the oldest
            kept event (30 days).
        limit: page size (100 by default, 200 at most).

    Returns:
        ``EventPage``: ``data`` (``Event``), ``next_cursor``, ``has_more``.

    Raises:
        PineworkAPIError: ``invalid_request`` for a malformed cursor.
    """
    params = {
        name: str(value)
        for name, value in (("after", after), ("limit", limit))
        if value is not None
    }
    return Request("GET", "/events", EventPage, params=params)


def webhook_path(webhook_id: str, *rest: str) -> str:
    """``/webhooks/<id>[/rest…]`` with the id escaped (``ValueError`` for an empty one)."""
    return "/".join(("/webhooks", path_segment(webhook_id, "a webhook id"), *rest))


def create_webhook(
    url: str,
    *,
    event_types: Sequence[str] | None = None,
    description: str | None = None,
) -> Request[Webhook]:
    """Register a webhook endpoint (``POST /webhooks``; persons;
    docs/reference.md#webhooks). Events from now on are delivered to ``url``, signed.

    Args:
        url: ``https://…`` resolving to public addresses only.
        event_types: e.g. ``["pinework.memory.saved"]``; ``None`` for all.
        description: a note for persons.

    No ``Idempotency-Key``: the answer holds the secret, which the server never keeps
    for a replay; after a lost answer, list the endpoints and remove the extra one.

    Returns:
        ``Webhook`` with ``secret`` (``whsec_…``), shown this once.

    Raises:
        PineworkAPIError: ``webhook_url_refused``, ``webhook_limit_reached``,
            ``forbidden`` (an agent), ``invalid_request`` (an unknown event type).
    """
    body = _given(url=url, eventTypes=None if event_types is None else list(event_types))
    body.update(_given(description=description))
    return _change("POST", "/webhooks", Webhook, body, None)


def list_webhooks() -> Request[WebhookPage]:
    """The workspace's webhook endpoints, without secrets (persons).

    Raises:
        PineworkAPIError: ``forbidden``.
    """
    return Request("GET", "/webhooks", WebhookPage)


def delete_webhook(webhook_id: str, *, idempotency_key: str | None = None) -> Request[Webhook]:
    """Remove a webhook endpoint: nothing more is sent to it (persons).

    Raises:
        PineworkAPIError: ``webhook_not_found``, ``forbidden``.
        ValueError: the id cannot be a path segment.
    """
    return _change("DELETE", webhook_path(webhook_id), Webhook, None, idempotency_key)


def test_webhook(
    webhook_id: str, *, idempotency_key: str | None = None
) -> Request[WebhookDelivery]:
    """Send a signed ``pinework.webhook.ping`` to the endpoint now (persons).

    Returns:
        The attempt: ``ok``, ``status_code``, ``duration_ms``, ``error``.

    Raises:
        PineworkAPIError: ``webhook_not_found``, ``forbidden``.
    """
    return _change("POST", webhook_path(webhook_id, "test"), WebhookDelivery, {}, idempotency_key)


def resume_webhook(webhook_id: str, *, idempotency_key: str | None = None) -> Request[Webhook]:
    """Resume a paused endpoint: delivery goes on from the event it failed on (persons).

    Raises:
        PineworkAPIError: ``webhook_not_found``, ``forbidden``, ``conflict``.
    """
    return _change("POST", webhook_path(webhook_id, "resume"), Webhook, {}, idempotency_key)


def list_webhook_deliveries(webhook_id: str) -> Request[WebhookDeliveryPage]:
    """An endpoint's recent delivery attempts, newest first (kept 7 days; persons).

    Raises:
        PineworkAPIError: ``webhook_not_found``, ``forbidden``.
    """
    return Request("GET", webhook_path(webhook_id, "deliveries"), WebhookDeliveryPage)
