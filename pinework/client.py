"""The Python client of the Pinework Memory HTTP API (docs/reference.md#7-http-api,
docs/reference.md#10-key-value).

One :class:`Client` wraps an ``httpx.Client``, adds the bearer token and the
run/task headers to every request, and turns answers into the typed models of
:mod:`pinework.models`. Every failure is a :class:`PineworkAPIError`.

Example::

    with Client.from_env() as client:
        memory = client.save_fact("The deploy bucket is in eu-west-1.")
        for scored in client.recall(query="deploy").memories:
            print(scored.score, scored.memory.text)
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Iterator, Mapping
from types import TracebackType
from typing import Any, Self

import httpx

from pinework import _calls as calls
from pinework._wire import (
    API_PREFIX,
    DEFAULT_API_URL,
    DEFAULT_TIMEOUT,
    ApiSession,
    settings_from_env,
)
from pinework.errors import PineworkAPIError
from pinework.models import (
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
)

__all__ = ["API_PREFIX", "DEFAULT_API_URL", "DEFAULT_TIMEOUT", "Client", "PineworkAPIError"]


class Client:
    """A connection to one Pinework API as one principal.

    Args:
        base_url: the server root (``PINEWORK_API_URL``), without or with the
            ``/api/v1`` prefix, e.g. ``http://127.0.0.1:8000``.
        token: the bearer token of an agent or a person; ``None`` sends no
            ``Authorization`` header (anonymous; only the key-value routes accept it).
        run_id: sent as ``X-Pinework-Run`` when set.
        task_key: sent as ``X-Pinework-Task`` when set (e.g. ``PIN-42``).
        transport: an httpx transport to use instead of the network (tests pass
            an ``httpx.MockTransport``).
        timeout: seconds per request phase.
        api_key: sent as ``X-Api-Key`` (a bring-your-own key scoping the
            key-value tools, docs/reference.md#10-key-value); a bearer token takes precedence.
        max_retries: how often a request is sent again after a connection error, a
            timeout, 429, 5xx or 409 ``idempotency_key_in_use`` (default 0). Requests
            that change state then carry an ``Idempotency-Key`` (yours, or one the
            client makes), so a retry never writes twice.

    The methods that change state take ``idempotency_key`` (send the same key
    again to retry safely, within 24 hours); those that change one memory take
    ``if_match`` (its ``etag``: refused with ``precondition_failed`` when someone
    changed it since).

    Raises:
        ValueError: ``base_url`` is not an ``http://`` or ``https://`` URL.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_API_URL,
        token: str | None = None,
        run_id: str | None = None,
        task_key: str | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        api_key: str | None = None,
        max_retries: int = 0,
    ) -> None:
        self._session = ApiSession(
            base_url,
            token,
            run_id,
            task_key,
            transport,
            timeout,
            api_key=api_key,
            max_retries=max_retries,
        )

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 0,
    ) -> Client:
        """Build a client from ``PINEWORK_API_URL``, ``PINEWORK_TOKEN``, ``PINEWORK_RUN``,
        ``PINEWORK_TASK`` (docs/reference.md#12-cli) and ``PINEWORK_API_KEY`` (key-value scope).

        Args:
            environ: the variables to read; ``os.environ`` when omitted.
            transport: see :class:`Client`.
            timeout: see :class:`Client`.
            max_retries: see :class:`Client`.

        Returns:
            The client; unset or empty variables fall back to the defaults.

        Raises:
            ValueError: ``PINEWORK_API_URL`` is not an http(s) URL.
        """
        return cls(
            **settings_from_env(environ),
            transport=transport,
            timeout=timeout,
            max_retries=max_retries,
        )

    @property
    def api_url(self) -> str:
        """The URL every route path is appended to.

        Returns:
            The base URL including ``/api/v1``.
        """
        return self._session.api_url

    def close(self) -> None:
        """Close the underlying connections. The client is unusable afterwards."""
        self._session.close()

    def __enter__(self) -> Self:
        """Use the client in a ``with`` block.

        Returns:
            The client itself.
        """
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Close the client at the end of the ``with`` block.

        Args:
            exc_type: the exception type, if the block raised.
            exc_value: the exception, if the block raised.
            traceback: its traceback.
        """
        self.close()

    # Agent memory (docs/reference.md#7-http-api)

    def save_fact(
        self,
        text: str,
        *,
        expires_at: str | dt.datetime | dt.date | None = None,
        supersedes: str | None = None,
        agent_id: str | None = None,
        evidence: str | None = None,
        idempotency_key: str | None = None,
    ) -> Memory:
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

        Returns:
            The new memory.

        Raises:
            PineworkAPIError: e.g. ``memory_text_too_long``, ``secret_in_memory``,
                ``memory_agent_required``, ``memory_agent_mismatch``,
                ``memory_day_append_only``, ``memory_supersede_archived``,
                ``invalid_request``.
            ValueError: ``expires_at`` is a naive datetime.
        """
        return self._session.run(
            calls.save_fact(
                text,
                expires_at=expires_at,
                supersedes=supersedes,
                agent_id=agent_id,
                evidence=evidence,
                idempotency_key=idempotency_key,
            )
        )

    def append_day_line(self, line: str, *, idempotency_key: str | None = None) -> Memory:
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
        return self._session.run(calls.append_day_line(line, idempotency_key=idempotency_key))

    def list_memories(
        self,
        *,
        agent_id: str | None = None,
        kind: str | None = None,
        status: str | None = None,
        include_archived: bool = False,
        limit: int | None = None,
        next_token: str | None = None,
    ) -> MemoryPage:
        """List memories, newest first (``GET /memories``), one page at a time.

        Args:
            agent_id: whose memories (persons; omitted means every agent).
            kind: ``fact`` or ``day``.
            status: ``active`` or ``archived``.
            include_archived: sends ``all=true`` to include archived memories.
            limit: page size; the server defaults to 100 and clamps to 500.
            next_token: the ``next_token`` of the previous page.

        Returns:
            The page; its ``next_token`` is ``None`` on the last page.

        Raises:
            PineworkAPIError: e.g. ``invalid_request``, ``memory_not_own``.
        """
        return self._session.run(
            calls.list_memories(
                agent_id=agent_id,
                kind=kind,
                status=status,
                include_archived=include_archived,
                limit=limit,
                next_token=next_token,
            )
        )

    def iter_memories(
        self,
        *,
        agent_id: str | None = None,
        kind: str | None = None,
        status: str | None = None,
        include_archived: bool = False,
        page_size: int | None = None,
    ) -> Iterator[Memory]:
        """Iterate over every matching memory, following ``nextToken``.

        Args:
            agent_id: see :meth:`list_memories`.
            kind: see :meth:`list_memories`.
            status: see :meth:`list_memories`.
            include_archived: see :meth:`list_memories`.
            page_size: ``limit`` of each request.

        Returns:
            An iterator of memories, newest first; requests pages lazily.

        Raises:
            PineworkAPIError: as :meth:`list_memories`.
        """
        token: str | None = None
        while True:
            page = self.list_memories(
                agent_id=agent_id,
                kind=kind,
                status=status,
                include_archived=include_archived,
                limit=page_size,
                next_token=token,
            )
            yield from page.data
            # A token that does not move would loop forever; treat it as the end.
            if page.next_token is None or page.next_token == token:
                return
            token = page.next_token

    def get_memory(self, memory_id: str) -> Memory:
        """Read one memory (``GET /memories/{id}``).

        Args:
            memory_id: the ``mem_…`` id.

        Returns:
            The memory.

        Raises:
            PineworkAPIError: ``memory_not_found``, ``memory_not_own``.
            ValueError: ``memory_id`` cannot be a path segment.
        """
        return self._session.run(calls.get_memory(memory_id))

    def edit_memory(
        self,
        memory_id: str,
        *,
        text: str | None = None,
        expires_at: str | dt.datetime | dt.date | None = None,
        if_match: str | None = None,
        idempotency_key: str | None = None,
    ) -> Memory:
        """Edit a memory's text and/or expiry (``PATCH /memories/{id}``; persons only).

        Args:
            memory_id: the ``mem_…`` id.
            text: the new text (limits of docs/reference.md#5-limits).
            expires_at: the new expiry; a date means the end of that UTC day.
            if_match: the ``etag`` of the memory as you read it: the edit is refused
                (``precondition_failed``, nothing changes) if it changed since.
            idempotency_key: see :class:`Client`.

        Returns:
            The edited memory (``edited_by_person_id`` set).

        Raises:
            PineworkAPIError: e.g. ``precondition_failed``, ``memory_superseded``, ``forbidden``,
                ``memory_not_found``, ``memory_text_too_long``, ``invalid_request``.
            ValueError: neither ``text`` nor ``expires_at`` was given, or a bad id
                or naive datetime.
        """
        return self._session.run(
            calls.edit_memory(
                memory_id,
                text=text,
                expires_at=expires_at,
                if_match=if_match,
                idempotency_key=idempotency_key,
            )
        )

    def archive(
        self,
        memory_id: str,
        reason: str,
        *,
        if_match: str | None = None,
        idempotency_key: str | None = None,
    ) -> Memory:
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
        return self._session.run(
            calls.archive(memory_id, reason, if_match=if_match, idempotency_key=idempotency_key)
        )

    def veto(
        self,
        memory_id: str,
        reason: str | None = None,
        *,
        if_match: str | None = None,
        idempotency_key: str | None = None,
    ) -> Memory:
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
        return self._session.run(
            calls.veto(memory_id, reason, if_match=if_match, idempotency_key=idempotency_key)
        )

    def erase(
        self,
        memory_id: str,
        reason: str,
        *,
        if_match: str | None = None,
        idempotency_key: str | None = None,
    ) -> Memory:
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
        return self._session.run(
            calls.erase(memory_id, reason, if_match=if_match, idempotency_key=idempotency_key)
        )

    def unarchive(
        self, memory_id: str, *, if_match: str | None = None, idempotency_key: str | None = None
    ) -> Memory:
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
        return self._session.run(
            calls.unarchive(memory_id, if_match=if_match, idempotency_key=idempotency_key)
        )

    def history(
        self, memory_id: str, *, limit: int | None = None, next_token: str | None = None
    ) -> AuditPage:
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
        return self._session.run(calls.history(memory_id, limit=limit, next_token=next_token))

    def recall(
        self,
        *,
        query: str | None = None,
        agent_id: str | None = None,
        count: bool = True,
        idempotency_key: str | None = None,
    ) -> RecallResult:
        """Recall the memories relevant to a query (``POST /memories/recall``;
        docs/reference.md#8-recall).

        Counts as a recall of every memory returned, unless ``count`` is false.

        Args:
            query: what to score against, up to 4,000 characters; the server
                uses the current task (``X-Pinework-Task``) when omitted.
            agent_id: whose memories; required when a person recalls.
            count: false makes it a preview (docs/reference.md#recall-preview): the same
                answer, nothing counted or logged, ``recall_id`` None.

        Returns:
            Scored memories (best first), the fallback used if any, and the block.

        Raises:
            PineworkAPIError: e.g. ``memory_agent_required``, ``invalid_request``.
        """
        return self._session.run(
            calls.recall(
                query=query, agent_id=agent_id, count=count, idempotency_key=idempotency_key
            )
        )

    def recall_start(
        self,
        session_id: str,
        *,
        resumed: bool = False,
        task: str | None = None,
        message: str | None = None,
        slash_command: str | None = None,
        idempotency_key: str | None = None,
    ) -> RecallResult:
        """Run-start recall (``POST /memories/recall/start``; docs/reference.md#8-recall), agents
        only.

        Args:
            session_id: the conversation; a resumed one gets one block per 24 hours.
            resumed: whether this run resumes the session.
            task, message: what to score against (task first).
            slash_command: set when the run was started by a slash command (no block).

        Returns:
            The block and scored memories, or ``skipped`` with the ``reason``.

        Raises:
            PineworkAPIError: e.g. ``forbidden`` for a person, ``invalid_request``.
        """
        return self._session.run(
            calls.recall_start(
                session_id,
                resumed=resumed,
                task=task,
                message=message,
                slash_command=slash_command,
                idempotency_key=idempotency_key,
            )
        )

    def recall_log(
        self,
        *,
        agent_id: str | None = None,
        limit: int | None = None,
        next_token: str | None = None,
    ) -> RecallLogPage:
        """Read the recall (injection) log, newest first (``GET /recalls``).

        Args:
            agent_id: whose log; required for a person.
            limit: page size (100 by default, 500 at most).
            next_token: the ``nextToken`` of the previous page.

        Raises:
            PineworkAPIError: e.g. ``memory_agent_required``, ``memory_not_own``.
        """
        return self._session.run(
            calls.recall_log(agent_id=agent_id, limit=limit, next_token=next_token)
        )

    # Routines (docs/reference.md#routes-routines, docs/reference.md#9-review)

    def list_routines(
        self,
        *,
        agent_id: str | None = None,
        limit: int | None = None,
        next_token: str | None = None,
    ) -> RoutinePage:
        """List routines (``GET /routines``): an agent its own; a person one agent's
        (``agent_id``) or the workspace's, by agent id, a page at a time.

        Args:
            agent_id: one agent's routine only.
            limit: page size (100 by default, 500 at most).
            next_token: the ``nextToken`` of the previous page.

        Raises:
            PineworkAPIError: e.g. ``forbidden``, ``invalid_request``.
        """
        return self._session.run(
            calls.list_routines(agent_id=agent_id, limit=limit, next_token=next_token)
        )

    def get_routine(self, routine_id: str) -> Routine:
        """Read one routine by its ``rtn_…`` id or its agent's ``agt_…`` id.

        Raises:
            PineworkAPIError: ``not_found``, ``forbidden``.
            ValueError: the id cannot be a path segment.
        """
        return self._session.run(calls.get_routine(routine_id))

    def create_routine(self, agent_id: str, *, idempotency_key: str | None = None) -> Routine:
        """Create an agent's routine again after a delete (``POST /routines``; persons).

        Raises:
            PineworkAPIError: ``forbidden``, ``memory_agent_required``.
        """
        return self._session.run(calls.create_routine(agent_id, idempotency_key=idempotency_key))

    def pause_routine(self, routine_id: str, *, idempotency_key: str | None = None) -> Routine:
        """Pause a routine so the nightly review skips the agent (persons only).

        Raises:
            PineworkAPIError: ``not_found``, ``forbidden``.
            ValueError: the id cannot be a path segment.
        """
        return self._session.run(
            calls.set_routine(routine_id, "pause", idempotency_key=idempotency_key)
        )

    def resume_routine(self, routine_id: str, *, idempotency_key: str | None = None) -> Routine:
        """Resume a paused routine (persons only).

        Raises:
            PineworkAPIError: ``not_found``, ``forbidden``.
            ValueError: the id cannot be a path segment.
        """
        return self._session.run(
            calls.set_routine(routine_id, "resume", idempotency_key=idempotency_key)
        )

    def delete_routine(self, routine_id: str, *, idempotency_key: str | None = None) -> Routine:
        """Delete a routine; saves do not create it again (persons only).

        Returns:
            The routine with ``status`` ``deleted``.

        Raises:
            PineworkAPIError: ``not_found``, ``forbidden``.
            ValueError: the id cannot be a path segment.
        """
        return self._session.run(calls.delete_routine(routine_id, idempotency_key=idempotency_key))

    # Reviews (docs/reference.md#routes-reviews, docs/reference.md#9-review)

    def run_review(
        self, agent_id: str, *, dry_run: bool = False, idempotency_key: str | None = None
    ) -> ReviewReport | ReviewRun:
        """Run an agent's review now (``POST /reviews``; persons). With ``dry_run``
        the plan comes back and nothing changes.

        Returns:
            The report; or, when the server queued the review because it may take
            longer than API Gateway's 29 s (202), a ``ReviewRun`` (``status``
            ``queued``) to follow with ``get_review`` or ``wait_for_review``.

        Raises:
            PineworkAPIError: ``forbidden``, ``memory_agent_required``, ``invalid_request``.
        """
        answer = self._session.run(
            calls.run_review(agent_id, dry_run=dry_run, idempotency_key=idempotency_key)
        )
        return answer.decoded()

    def list_reviews(
        self,
        agent_id: str | None = None,
        *,
        limit: int | None = None,
        next_token: str | None = None,
    ) -> ReviewPage:
        """An agent's review summaries, newest first (``GET /reviews``).

        Raises:
            PineworkAPIError: ``memory_agent_required``, ``forbidden``.
        """
        return self._session.run(calls.list_reviews(agent_id, limit=limit, next_token=next_token))

    def get_review(self, review_id: str) -> ReviewReport | ReviewRun:
        """One full report (``GET /reviews/{id}``), or the queued review's ``ReviewRun``
        while it is ``queued``, ``running`` or ``failed``.

        Raises:
            PineworkAPIError: ``not_found``.
            ValueError: the id cannot be a path segment.
        """
        return self._session.run(calls.get_review(review_id)).decoded()

    def wait_for_review(
        self,
        review_id: str,
        *,
        timeout: float = 900.0,
        interval: float = 2.0,
        sleep: Callable[[float], None] | None = None,
    ) -> ReviewReport | ReviewRun:
        """Poll a queued review until it has a report or its last attempt failed.

        Args:
            review_id: the review (``rvw_…``).
            timeout: seconds to wait at most (the worker may take up to 10 minutes).
            interval: seconds between polls.
            sleep: how to wait (default ``time.sleep``; tests pass their own).

        Returns:
            The report; or the ``ReviewRun`` as last seen (``failed``, or still
            ``queued``/``running`` when ``timeout`` passed).

        Raises:
            PineworkAPIError: ``not_found``.
        """
        pause = time.sleep if sleep is None else sleep
        waited = 0.0
        while True:
            answer = self.get_review(review_id)
            if not isinstance(answer, ReviewRun) or answer.status == "failed":
                return answer
            if waited >= timeout:
                return answer
            pause(interval)
            waited += interval

    def approve_review_action(
        self,
        review_id: str,
        action: int | str,
        *,
        keep_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> ReviewReport:
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
        return self._session.run(
            calls.decide_review_action(
                review_id, action, "approve", keep_id=keep_id, idempotency_key=idempotency_key
            )
        )

    def reject_review_action(
        self, review_id: str, action: int | str, *, idempotency_key: str | None = None
    ) -> ReviewReport:
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
        return self._session.run(
            calls.decide_review_action(review_id, action, "reject", idempotency_key=idempotency_key)
        )

    def undo_review_action(
        self, review_id: str, action: int | str, *, idempotency_key: str | None = None
    ) -> ReviewReport:
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
        return self._session.run(
            calls.decide_review_action(review_id, action, "undo", idempotency_key=idempotency_key)
        )

    def list_pending_actions(
        self,
        agent_id: str | None = None,
        *,
        limit: int | None = None,
        next_token: str | None = None,
    ) -> PendingPage:
        """Review actions waiting for a person, by agent, oldest review first
        (``GET /reviews/pending``; a person's: the workspace's, or ``agent_id``'s).

        Raises:
            PineworkAPIError: ``forbidden``, ``memory_not_own``, ``invalid_request``.
        """
        return self._session.run(
            calls.list_pending_actions(agent_id, limit=limit, next_token=next_token)
        )

    # Key-value meta-tools (docs/reference.md#10-key-value)

    def sign_in_link(self) -> SignInLink:
        """Make a one-time dashboard sign-in link for the calling person
        (docs/reference.md#13-dashboard).

        Returns:
            The link (its ``path`` is relative to :attr:`root_url`) and its expiry.

        Raises:
            PineworkAPIError: ``forbidden`` for an agent's token, ``unauthorized``.
        """
        return self._session.run(calls.sign_in_link())

    # Learnings (docs/reference.md#15-learnings): facts every agent of a workspace is told.
    # Agents and persons propose and read; only persons decide (approve, edit, reject, retire).

    def propose_learning(self, text: str, *, idempotency_key: str | None = None) -> Learning:
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
        return self._session.run(calls.propose_learning(text, idempotency_key=idempotency_key))

    def list_learnings(
        self,
        *,
        state: str | None = None,
        q: str | None = None,
        limit: int | None = None,
        next_token: str | None = None,
        unreviewed: bool = False,
    ) -> LearningPage:
        """One page of the workspace's learnings, newest first (``GET /learnings``;
        docs/reference.md#15-learnings).

        Args:
            state: only ``proposed``, ``active``, ``rejected`` or ``retired`` ones (omitted:
                every state).
            q: only those whose text contains this (any case; at most 200 characters).
            unreviewed: only the active learnings no person reviewed (persons only;
                docs/reference.md#unreviewed-learnings).
            limit: page size (the server's default 50, at most 200).
            next_token: the ``next_token`` of the previous page.

        Returns:
            ``LearningPage``: ``data`` (``Learning`` objects) and ``next_token`` (``None`` on
            the last page).

        Raises:
            PineworkAPIError: ``invalid_request`` (an unknown state, a bad token or limit,
                ``unreviewed`` with a state other than ``active``), ``forbidden`` (an agent
                asked for ``unreviewed``), ``unauthorized``.
        """
        return self._session.run(
            calls.list_learnings(state, q, limit, next_token, unreviewed=unreviewed)
        )

    def iter_learnings(
        self,
        *,
        state: str | None = None,
        q: str | None = None,
        page_size: int | None = None,
    ) -> Iterator[Learning]:
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
        token: str | None = None
        while True:
            page = self.list_learnings(state=state, q=q, limit=page_size, next_token=token)
            yield from page.data
            # A token that does not move would loop forever; treat it as the end.
            if page.next_token is None or page.next_token == token:
                return
            token = page.next_token

    def get_learning(self, learning_id: str) -> Learning:
        """One learning of the workspace (``GET /learnings/{id}``;
        docs/reference.md#learning-object).

        Returns:
            The learning; its ``etag`` is what ``if_match`` takes.

        Raises:
            PineworkAPIError: ``learning_not_found`` (also another workspace's).
            ValueError: ``learning_id`` cannot be a path segment.
        """
        return self._session.run(calls.get_learning(learning_id))

    def approve_learning(
        self, learning_id: str, *, text: str | None = None, if_match: str | None = None
    ) -> Learning:
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
        body = {} if text is None else {"text": text}
        return self._session.run(
            calls.decide_learning(learning_id, "approve", body, if_match=if_match)
        )

    def edit_learning(
        self, learning_id: str, text: str, *, if_match: str | None = None
    ) -> Learning:
        """Edit a proposed or active learning's text (persons; ``PATCH /learnings/{id}``;
        docs/reference.md#learning-states). Its state does not change.

        Returns:
            The learning with its new text and ``edited_by``.

        Raises:
            PineworkAPIError: ``learning_decided`` (409: rejected or retired),
                ``learning_not_found``, ``forbidden`` (an agent's token),
                ``precondition_failed`` (412), ``memory_text_too_long``, ``secret_in_memory``.
        """
        return self._session.run(
            calls.decide_learning(learning_id, "edit", {"text": text}, if_match=if_match)
        )

    def reject_learning(
        self, learning_id: str, reason: str, *, if_match: str | None = None
    ) -> Learning:
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
        return self._session.run(
            calls.decide_learning(learning_id, "reject", {"reason": reason}, if_match=if_match)
        )

    def retire_learning(
        self, learning_id: str, *, reason: str | None = None, if_match: str | None = None
    ) -> Learning:
        """Retire an active learning (persons; ``POST /learnings/{id}/retire``;
        docs/reference.md#learning-states): no agent is told it any more.

        Returns:
            The learning, ``retired``, with the ``reason`` if one was given.

        Raises:
            PineworkAPIError: ``learning_decided`` (409: not active), ``learning_not_found``,
                ``forbidden`` (an agent's token), ``precondition_failed`` (412),
                ``secret_in_memory``.
        """
        body = {} if reason is None else {"reason": reason}
        return self._session.run(
            calls.decide_learning(learning_id, "retire", body, if_match=if_match)
        )

    def learning_history(self, learning_id: str) -> LearningAuditPage:
        """A learning's history records, oldest first (``GET /learnings/{id}/history``;
        docs/reference.md#learning-states).

        Returns:
            ``LearningAuditPage``: ``data`` (``LearningAuditRecord``: ``action`` ``propose``,
            ``approve``, ``edit``, ``reject`` or ``retire``; the actor; ``at``; the state and
            text ``before`` and ``after``), all in one page.

        Raises:
            PineworkAPIError: ``learning_not_found``.
        """
        return self._session.run(calls.learning_history(learning_id))

    @property
    def root_url(self) -> str:
        """The server's root URL (the API URL without ``/api/v1``): where the dashboard is."""
        return self.api_url.removesuffix(API_PREFIX)

    def kv_remember(
        self,
        key: str,
        value: Any,
        *,
        if_revision: int | None = None,
        idempotency_key: str | None = None,
    ) -> KvRememberResult:
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
        return self._session.run(
            calls.kv_remember(key, value, if_revision=if_revision, idempotency_key=idempotency_key)
        )

    def kv_recall(
        self, key: str | None = None, *, cursor: str | None = None, limit: int | None = None
    ) -> KvValue | KvKeys:
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
            return self.kv_keys(cursor=cursor, limit=limit)
        return self._session.run(calls.kv_recall(key))

    def kv_keys(self, *, cursor: str | None = None, limit: int | None = None) -> KvKeys:
        """One page of the caller's keys (``POST /kv/recall`` without a key).

        Args:
            cursor: ``next_cursor`` of the previous page; None for the first.
            limit: keys per page (100 by default, at most 1,000).

        Returns:
            The page's keys, the scope's ``count`` and the ``next_cursor``.

        Raises:
            PineworkAPIError: ``invalid_request`` for a bad cursor or limit.
        """
        return self._session.run(calls.kv_keys(cursor, limit))

    def iter_kv_keys(self, *, page_size: int | None = None) -> Iterator[str]:
        """Every key of the caller's scope, in key order, following ``next`` page by page.

        Raises:
            PineworkAPIError: as :meth:`kv_recall`.
        """
        cursor: str | None = None
        while True:
            page = self.kv_keys(cursor=cursor, limit=page_size)
            yield from page.keys
            if page.next_cursor is None or page.next_cursor == cursor:
                return
            cursor = page.next_cursor

    def kv_forget(
        self, key: str, *, if_revision: int | None = None, idempotency_key: str | None = None
    ) -> KvForgetResult:
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
        return self._session.run(
            calls.kv_forget(key, if_revision=if_revision, idempotency_key=idempotency_key)
        )
