"""The asyncio client of the Pinework Memory HTTP API (docs/issues.md#issue-15-item-5), for agents
that run on an event loop.

:class:`AsyncClient` has the methods of :class:`pinework.Client`, with the same
arguments and results, as coroutines over one ``httpx.AsyncClient``. Both build
their requests in ``pinework._calls``, so they cannot drift apart (a test compares
their signatures); see :class:`pinework.Client` for what each argument means.

Example::

    async with AsyncClient.from_env(max_retries=2) as client:
        memory = await client.save_fact("The deploy bucket is in eu-west-1.")
        result = await client.recall(query="deploy")
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from types import TracebackType
from typing import Any, Self

import httpx

from pinework import _calls as calls
from pinework._wire import (
    API_PREFIX,
    DEFAULT_API_URL,
    DEFAULT_TIMEOUT,
    AsyncApiSession,
    settings_from_env,
)
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

__all__ = ["AsyncClient"]

Expiry = str | dt.datetime | dt.date


class AsyncClient:
    """A connection to one Pinework API as one principal, for asyncio code.

    Args:
        base_url: see :class:`pinework.Client`.
        token: see :class:`pinework.Client`.
        run_id: see :class:`pinework.Client`.
        task_key: see :class:`pinework.Client`.
        transport: an async httpx transport to use instead of the network (tests
            pass an ``httpx.MockTransport``).
        timeout: seconds per request phase.
        api_key: see :class:`pinework.Client`.
        max_retries: see :class:`pinework.Client` (waits with ``asyncio.sleep``).

    Every method raises :class:`pinework.PineworkAPIError` for a failed call (the
    error codes of :class:`pinework.Client`'s method of the same name) and
    ``ValueError`` for arguments that cannot be sent.

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
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        api_key: str | None = None,
        max_retries: int = 0,
    ) -> None:
        self._session = AsyncApiSession(
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
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 0,
    ) -> AsyncClient:
        """Build a client from the ``PINEWORK_*`` variables (as ``Client.from_env``).

        Returns:
            The client.

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
        """The URL every route path is appended to (ends with ``/api/v1``)."""
        return self._session.api_url

    async def aclose(self) -> None:
        """Close the underlying connections. The client is unusable afterwards."""
        await self._session.close()

    async def __aenter__(self) -> Self:
        """Use the client in an ``async with`` block.

        Returns:
            The client itself.
        """
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Close the client at the end of the ``async with`` block."""
        await self.aclose()

    # Agent memory (docs/reference.md#7-http-api)

    async def save_fact(
        self,
        text: str,
        *,
        expires_at: Expiry | None = None,
        supersedes: str | None = None,
        agent_id: str | None = None,
        evidence: str | None = None,
        idempotency_key: str | None = None,
    ) -> Memory:
        """Save a fact (``POST /memories``).

        Returns:
            The new memory (its ``etag`` set).
        """
        return await self._session.run(
            calls.save_fact(
                text,
                expires_at=expires_at,
                supersedes=supersedes,
                agent_id=agent_id,
                evidence=evidence,
                idempotency_key=idempotency_key,
            )
        )

    async def append_day_line(self, line: str, *, idempotency_key: str | None = None) -> Memory:
        """Append a line to today's (UTC) day log (``POST /memories/day``; agents).

        Returns:
            The day row after the append.
        """
        return await self._session.run(calls.append_day_line(line, idempotency_key=idempotency_key))

    async def list_memories(
        self,
        *,
        agent_id: str | None = None,
        kind: str | None = None,
        status: str | None = None,
        include_archived: bool = False,
        limit: int | None = None,
        next_token: str | None = None,
    ) -> MemoryPage:
        """List memories, newest first (``GET /memories``), one page.

        Returns:
            The page; ``next_token`` is ``None`` on the last one.
        """
        return await self._session.run(
            calls.list_memories(
                agent_id=agent_id,
                kind=kind,
                status=status,
                include_archived=include_archived,
                limit=limit,
                next_token=next_token,
            )
        )

    async def iter_memories(
        self,
        *,
        agent_id: str | None = None,
        kind: str | None = None,
        status: str | None = None,
        include_archived: bool = False,
        page_size: int | None = None,
    ) -> AsyncIterator[Memory]:
        """Every matching memory, newest first, following ``nextToken`` lazily.

        Returns:
            An async iterator of memories.
        """
        token: str | None = None
        while True:
            page = await self.list_memories(
                agent_id=agent_id,
                kind=kind,
                status=status,
                include_archived=include_archived,
                limit=page_size,
                next_token=token,
            )
            for memory in page.data:
                yield memory
            # A token that does not move would loop forever; treat it as the end.
            if page.next_token is None or page.next_token == token:
                return
            token = page.next_token

    async def get_memory(self, memory_id: str) -> Memory:
        """Read one memory (``GET /memories/{id}``).

        Returns:
            The memory; its ``etag`` is what ``if_match`` takes.
        """
        return await self._session.run(calls.get_memory(memory_id))

    async def edit_memory(
        self,
        memory_id: str,
        *,
        text: str | None = None,
        expires_at: Expiry | None = None,
        if_match: str | None = None,
        idempotency_key: str | None = None,
    ) -> Memory:
        """Edit a memory's text and/or expiry (``PATCH /memories/{id}``; persons).

        Returns:
            The edited memory.
        """
        return await self._session.run(
            calls.edit_memory(
                memory_id,
                text=text,
                expires_at=expires_at,
                if_match=if_match,
                idempotency_key=idempotency_key,
            )
        )

    async def archive(
        self,
        memory_id: str,
        reason: str,
        *,
        if_match: str | None = None,
        idempotency_key: str | None = None,
    ) -> Memory:
        """Archive a memory (``POST /memories/{id}/archive``).

        Returns:
            The archived memory.
        """
        return await self._session.run(
            calls.archive(memory_id, reason, if_match=if_match, idempotency_key=idempotency_key)
        )

    async def veto(
        self,
        memory_id: str,
        reason: str | None = None,
        *,
        if_match: str | None = None,
        idempotency_key: str | None = None,
    ) -> Memory:
        """Veto a memory (``POST /memories/{id}/veto``; persons).

        Returns:
            The archived memory.
        """
        return await self._session.run(
            calls.veto(memory_id, reason, if_match=if_match, idempotency_key=idempotency_key)
        )

    async def erase(
        self,
        memory_id: str,
        reason: str,
        *,
        if_match: str | None = None,
        idempotency_key: str | None = None,
    ) -> Memory:
        """Erase a memory (``POST /memories/{id}/erase``; persons).

        Returns:
            The tombstone.
        """
        return await self._session.run(
            calls.erase(memory_id, reason, if_match=if_match, idempotency_key=idempotency_key)
        )

    async def unarchive(
        self, memory_id: str, *, if_match: str | None = None, idempotency_key: str | None = None
    ) -> Memory:
        """Bring an archived memory back (``POST /memories/{id}/unarchive``).

        Returns:
            The active memory.
        """
        return await self._session.run(
            calls.unarchive(memory_id, if_match=if_match, idempotency_key=idempotency_key)
        )

    async def history(
        self, memory_id: str, *, limit: int | None = None, next_token: str | None = None
    ) -> AuditPage:
        """A memory's audit records, oldest first (``GET /memories/{id}/history``).

        Returns:
            A page of the records.
        """
        return await self._session.run(calls.history(memory_id, limit=limit, next_token=next_token))

    async def recall(
        self,
        *,
        query: str | None = None,
        agent_id: str | None = None,
        count: bool = True,
        idempotency_key: str | None = None,
    ) -> RecallResult:
        """On-demand recall (``POST /memories/recall``); ``count`` false makes it a preview
        that counts and logs nothing (docs/reference.md#recall-preview).

        Returns:
            Scored memories, best first, and the block.
        """
        return await self._session.run(
            calls.recall(
                query=query, agent_id=agent_id, count=count, idempotency_key=idempotency_key
            )
        )

    async def recall_start(
        self,
        session_id: str,
        *,
        resumed: bool = False,
        task: str | None = None,
        message: str | None = None,
        slash_command: str | None = None,
        idempotency_key: str | None = None,
    ) -> RecallResult:
        """Run-start recall (``POST /memories/recall/start``; agents).

        Returns:
            The block and scored memories, or ``skipped`` with the reason.
        """
        return await self._session.run(
            calls.recall_start(
                session_id,
                resumed=resumed,
                task=task,
                message=message,
                slash_command=slash_command,
                idempotency_key=idempotency_key,
            )
        )

    async def recall_log(
        self,
        *,
        agent_id: str | None = None,
        limit: int | None = None,
        next_token: str | None = None,
    ) -> RecallLogPage:
        """The recall (injection) log, newest first (``GET /recalls``).

        Returns:
            A page of the log.
        """
        return await self._session.run(
            calls.recall_log(agent_id=agent_id, limit=limit, next_token=next_token)
        )

    # Routines (docs/reference.md#routes-routines, docs/reference.md#9-review)

    async def list_routines(
        self,
        *,
        agent_id: str | None = None,
        limit: int | None = None,
        next_token: str | None = None,
    ) -> RoutinePage:
        """List routines (``GET /routines``).

        Returns:
            A page of routines.
        """
        return await self._session.run(
            calls.list_routines(agent_id=agent_id, limit=limit, next_token=next_token)
        )

    async def get_routine(self, routine_id: str) -> Routine:
        """Read one routine by its ``rtn_…`` or its agent's ``agt_…`` id.

        Returns:
            The routine.
        """
        return await self._session.run(calls.get_routine(routine_id))

    async def create_routine(self, agent_id: str, *, idempotency_key: str | None = None) -> Routine:
        """Create an agent's routine again after a delete (``POST /routines``; persons).

        Returns:
            The routine.
        """
        return await self._session.run(
            calls.create_routine(agent_id, idempotency_key=idempotency_key)
        )

    async def pause_routine(
        self, routine_id: str, *, idempotency_key: str | None = None
    ) -> Routine:
        """Pause a routine (persons).

        Returns:
            The routine, ``paused``.
        """
        return await self._session.run(
            calls.set_routine(routine_id, "pause", idempotency_key=idempotency_key)
        )

    async def resume_routine(
        self, routine_id: str, *, idempotency_key: str | None = None
    ) -> Routine:
        """Resume a paused routine (persons).

        Returns:
            The routine, ``active``.
        """
        return await self._session.run(
            calls.set_routine(routine_id, "resume", idempotency_key=idempotency_key)
        )

    async def delete_routine(
        self, routine_id: str, *, idempotency_key: str | None = None
    ) -> Routine:
        """Delete a routine (persons).

        Returns:
            The routine with ``status`` ``deleted``.
        """
        return await self._session.run(
            calls.delete_routine(routine_id, idempotency_key=idempotency_key)
        )

    # Reviews (docs/reference.md#routes-reviews, docs/reference.md#9-review)

    async def run_review(
        self, agent_id: str, *, dry_run: bool = False, idempotency_key: str | None = None
    ) -> ReviewReport | ReviewRun:
        """Run an agent's review now (``POST /reviews``; persons).

        Returns:
            The report (the plan only with ``dry_run``); or a ``ReviewRun`` (``queued``)
            when the server queued it (202): follow it with ``wait_for_review``.
        """
        answer = await self._session.run(
            calls.run_review(agent_id, dry_run=dry_run, idempotency_key=idempotency_key)
        )
        return answer.decoded()

    async def list_reviews(
        self,
        agent_id: str | None = None,
        *,
        limit: int | None = None,
        next_token: str | None = None,
    ) -> ReviewPage:
        """An agent's review summaries, newest first (``GET /reviews``).

        Returns:
            A page of summaries.
        """
        return await self._session.run(
            calls.list_reviews(agent_id, limit=limit, next_token=next_token)
        )

    async def get_review(self, review_id: str) -> ReviewReport | ReviewRun:
        """One full report (``GET /reviews/{id}``), or the queued review's ``ReviewRun``
        while it is ``queued``, ``running`` or ``failed``.

        Returns:
            The report or the run.
        """
        return (await self._session.run(calls.get_review(review_id))).decoded()

    async def wait_for_review(
        self,
        review_id: str,
        *,
        timeout: float = 900.0,
        interval: float = 2.0,
        sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> ReviewReport | ReviewRun:
        """Poll a queued review until it has a report or its last attempt failed
        (``sleep``: default ``asyncio.sleep``).

        Returns:
            The report; or the ``ReviewRun`` as last seen (``failed``, or still
            ``queued``/``running`` when ``timeout`` passed).
        """
        pause = asyncio.sleep if sleep is None else sleep
        waited = 0.0
        while True:
            answer = await self.get_review(review_id)
            if not isinstance(answer, ReviewRun) or answer.status == "failed":
                return answer
            if waited >= timeout:
                return answer
            await pause(interval)
            waited += interval

    async def approve_review_action(
        self,
        review_id: str,
        action: int | str,
        *,
        keep_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> ReviewReport:
        """Approve one pending action (approval mode, or one that waits for a person;
        persons). ``keep_id``: for a ``resolve_conflict``, the fact to keep.

        Returns:
            The report with every action's decision.
        """
        return await self._session.run(
            calls.decide_review_action(
                review_id, action, "approve", keep_id=keep_id, idempotency_key=idempotency_key
            )
        )

    async def reject_review_action(
        self, review_id: str, action: int | str, *, idempotency_key: str | None = None
    ) -> ReviewReport:
        """Reject one pending action of an approval-mode review (persons).

        Returns:
            The report with every action's decision.
        """
        return await self._session.run(
            calls.decide_review_action(review_id, action, "reject", idempotency_key=idempotency_key)
        )

    async def undo_review_action(
        self, review_id: str, action: int | str, *, idempotency_key: str | None = None
    ) -> ReviewReport:
        """Undo one applied action of a review: what it changed is restored (persons;
        ``review_undo_conflict`` when a memory changed since).

        Returns:
            The report, with the action in ``undone``.
        """
        return await self._session.run(
            calls.decide_review_action(review_id, action, "undo", idempotency_key=idempotency_key)
        )

    async def list_pending_actions(
        self,
        agent_id: str | None = None,
        *,
        limit: int | None = None,
        next_token: str | None = None,
    ) -> PendingPage:
        """Review actions waiting for a person, by agent, oldest review first
        (``GET /reviews/pending``).

        Returns:
            One page.
        """
        return await self._session.run(
            calls.list_pending_actions(agent_id, limit=limit, next_token=next_token)
        )

    # The dashboard (docs/reference.md#13-dashboard)

    async def sign_in_link(self) -> SignInLink:
        """Make a one-time dashboard sign-in link for the calling person
        (docs/reference.md#13-dashboard).

        Returns:
            The link (its ``path`` is relative to :attr:`root_url`) and its expiry.

        Raises:
            PineworkAPIError: ``forbidden`` for an agent's token, ``unauthorized``.
        """
        return await self._session.run(calls.sign_in_link())

    # Learnings (docs/reference.md#15-learnings): facts every agent of a workspace is told.
    # Agents and persons propose and read; only persons decide (approve, edit, reject, retire).

    async def propose_learning(self, text: str, *, idempotency_key: str | None = None) -> Learning:
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
        return await self._session.run(
            calls.propose_learning(text, idempotency_key=idempotency_key)
        )

    async def list_learnings(
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
        return await self._session.run(
            calls.list_learnings(state, q, limit, next_token, unreviewed=unreviewed)
        )

    async def iter_learnings(
        self,
        *,
        state: str | None = None,
        q: str | None = None,
        page_size: int | None = None,
    ) -> AsyncIterator[Learning]:
        """Every matching learning, newest first, following ``nextToken`` lazily
        (docs/reference.md#15-learnings).

        Args:
            state: see :meth:`list_learnings`.
            q: see :meth:`list_learnings`.
            page_size: ``limit`` of each request.

        Returns:
            An async iterator of ``Learning`` objects; pages are requested as it is consumed.

        Raises:
            PineworkAPIError: as :meth:`list_learnings`.
        """
        token: str | None = None
        while True:
            page = await self.list_learnings(state=state, q=q, limit=page_size, next_token=token)
            for learning in page.data:
                yield learning
            # A token that does not move would loop forever; treat it as the end.
            if page.next_token is None or page.next_token == token:
                return
            token = page.next_token

    async def get_learning(self, learning_id: str) -> Learning:
        """One learning of the workspace (``GET /learnings/{id}``;
        docs/reference.md#learning-object).

        Returns:
            The learning; its ``etag`` is what ``if_match`` takes.

        Raises:
            PineworkAPIError: ``learning_not_found`` (also another workspace's).
            ValueError: ``learning_id`` cannot be a path segment.
        """
        return await self._session.run(calls.get_learning(learning_id))

    async def approve_learning(
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
        return await self._session.run(
            calls.decide_learning(learning_id, "approve", body, if_match=if_match)
        )

    async def edit_learning(
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
        return await self._session.run(
            calls.decide_learning(learning_id, "edit", {"text": text}, if_match=if_match)
        )

    async def reject_learning(
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
        return await self._session.run(
            calls.decide_learning(learning_id, "reject", {"reason": reason}, if_match=if_match)
        )

    async def retire_learning(
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
        return await self._session.run(
            calls.decide_learning(learning_id, "retire", body, if_match=if_match)
        )

    async def learning_history(self, learning_id: str) -> LearningAuditPage:
        """A learning's history records, oldest first (``GET /learnings/{id}/history``;
        docs/reference.md#learning-states).

        Returns:
            ``LearningAuditPage``: ``data`` (``LearningAuditRecord``: ``action`` ``propose``,
            ``approve``, ``edit``, ``reject`` or ``retire``; the actor; ``at``; the state and
            text ``before`` and ``after``), all in one page.

        Raises:
            PineworkAPIError: ``learning_not_found``.
        """
        return await self._session.run(calls.learning_history(learning_id))

    @property
    def root_url(self) -> str:
        """The server's root URL (the API URL without ``/api/v1``): where the dashboard is."""
        return self.api_url.removesuffix(API_PREFIX)

    # Key-value meta-tools (docs/reference.md#10-key-value)

    async def kv_remember(
        self,
        key: str,
        value: Any,
        *,
        if_revision: int | None = None,
        idempotency_key: str | None = None,
    ) -> KvRememberResult:
        """Store ``value`` under ``key`` in the caller's scope (``POST /kv/remember``);
        ``if_revision`` as in :meth:`pinework.Client.kv_remember`.

        Returns:
            Confirmation with the TTL and the new revision.
        """
        return await self._session.run(
            calls.kv_remember(key, value, if_revision=if_revision, idempotency_key=idempotency_key)
        )

    async def kv_recall(
        self, key: str | None = None, *, cursor: str | None = None, limit: int | None = None
    ) -> KvValue | KvKeys:
        """Read one key, or list a page of the caller's keys without one (``POST /kv/recall``;
        ``cursor`` and ``limit`` as in :meth:`pinework.Client.kv_recall`).

        Returns:
            :class:`KvValue` for a key, :class:`KvKeys` (one page) without one.
        """
        if key is None:
            return await self.kv_keys(cursor=cursor, limit=limit)
        return await self._session.run(calls.kv_recall(key))

    async def kv_keys(self, *, cursor: str | None = None, limit: int | None = None) -> KvKeys:
        """One page of the caller's keys (as :meth:`pinework.Client.kv_keys`)."""
        return await self._session.run(calls.kv_keys(cursor, limit))

    async def iter_kv_keys(self, *, page_size: int | None = None) -> AsyncIterator[str]:
        """Every key of the caller's scope, in key order, following ``next`` lazily."""
        cursor: str | None = None
        while True:
            page = await self.kv_keys(cursor=cursor, limit=page_size)
            for key in page.keys:
                yield key
            if page.next_cursor is None or page.next_cursor == cursor:
                return
            cursor = page.next_cursor

    async def kv_forget(
        self, key: str, *, if_revision: int | None = None, idempotency_key: str | None = None
    ) -> KvForgetResult:
        """Delete a key from the caller's scope (``POST /kv/forget``); ``if_revision`` as in
        :meth:`pinework.Client.kv_forget`.

        Returns:
            Whether something was deleted.
        """
        return await self._session.run(
            calls.kv_forget(key, if_revision=if_revision, idempotency_key=idempotency_key)
        )
