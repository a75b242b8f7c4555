"""Learnings: facts every agent of a workspace is told, proposed by agents and decided by
people (docs/reference.md#15-learnings, docs/issues.md#issue-25).

States: ``proposed`` -> ``active`` (a person approves, possibly editing the text first)
or ``rejected`` (with a reason); ``active`` -> ``retired``. A person's own proposal is
active at once. A proposed or active learning may be edited by a person. An agent's
proposal that repeats a rejected or retired learning (the same text after
normalisation, or a duplicate by the review's sameness rule, as vetoes work) is refused
with ``learning_rejected``; one that repeats a live learning answers that learning
instead of making a second one. An agent reads the active learnings and its own
proposals only, without persons' reasons (``visible_to``). Every change writes a
history record; a person's change may
carry ``If-Match`` (the learning's ``ETag``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from chalicelib.errors import (
    InvalidRequest,
    LearningDecided,
    LearningNotFound,
    LearningRejected,
    PineworkError,
    PreconditionFailed,
)
from chalicelib.ids import Clock, IdFactory
from chalicelib.limits import (
    ARCHIVE_REASON_MAX_CHARS,
    LEARNING_MAX_CHARS,
    LEARNING_PROPOSALS_PER_DAY,
    MAX_LIVE_LEARNINGS,
)
from chalicelib.models.learning import (
    LEARNING_ID_PATTERN,
    Learning,
    LearningAudit,
    LearningState,
)
from chalicelib.models.principal import Principal
from chalicelib.normalized import normalize
from chalicelib.services.access.who import refuse_agents
from chalicelib.services.memory.vetoes import veto_index_keys
from chalicelib.services.review.sameness import is_duplicate, vector_of
from chalicelib.services.run_context import RunContext
from chalicelib.services.text import (
    SecretFinder,
    check_characters,
    check_no_secret,
    check_not_blank,
    check_text,
)
from chalicelib.storage.protocols import DirectoryRepository

if TYPE_CHECKING:
    from chalicelib.services.recall.embedding import Embedder

DECISIONS_ARE_FOR_PERSONS = (
    "Only a person approves, edits, rejects or retires a learning: ask a person of your "
    "workspace. An agent proposes (POST /learnings)."
)
UNREVIEWED_IS_FOR_PERSONS = (
    "The list of unreviewed learnings is for persons, who confirm or retire each: an agent "
    "lists the active learnings (GET /learnings?state=active)."
)
_LEARNING_ID = re.compile(LEARNING_ID_PATTERN)
_LIVE = (LearningState.PROPOSED, LearningState.ACTIVE)
_REFUSED = (LearningState.REJECTED, LearningState.RETIRED)


class LearningStore(Protocol):
    """Learnings' persistence (``storage/learnings.py``)."""

    def create(
        self,
        learning: Learning,
        audit: LearningAudit,
        *,
        max_live: int,
        proposals_per_day: int | None,
        now: datetime,
    ) -> None:
        """Store a new learning (limits checked in the same write)."""
        ...

    def change(
        self,
        before: Learning,
        after: Learning,
        audit: LearningAudit,
        *,
        rejected_keys: Sequence[str] = (),
    ) -> None:
        """Replace a learning if its version did not move."""
        ...

    def get(self, workspace_id: str, learning_id: str) -> Learning | None:
        """One learning of the workspace."""
        ...

    def in_state(
        self,
        workspace_id: str,
        state: LearningState,
        *,
        consistent: bool = True,
        limit: int | None = None,
    ) -> list[Learning]:
        """The workspace's learnings in one state, newest first (reads those only)."""
        ...

    def page(
        self,
        workspace_id: str,
        *,
        state: LearningState | None,
        limit: int | None,
        after: str | None,
        keep: Callable[[Learning], bool] | None = None,
        consistent: bool = True,
    ) -> tuple[list[Learning], str | None]:
        """A page of one state's learnings (or all), newest first, and where it ends."""
        ...

    def file_by_state(
        self, workspace_id: str, refused_keys: Callable[[str], Sequence[str]]
    ) -> None:
        """File learnings stored before the state copies existed (once a workspace)."""
        ...

    def rejected(self, workspace_id: str, keys: list[str]) -> set[str]:
        """Rejected learnings filed under the keys."""
        ...

    def history(self, learning_id: str) -> list[LearningAudit]:
        """A learning's records, oldest first."""
        ...


class LearningService:
    """Propose, decide, read learnings.

    Args:
        store: the learnings' persistence.
        directory: the workspace's ``learningApproval`` setting.
        secrets: the secret detector (texts and reasons).
        clock, ids: the time and new ids.
        embedder: computes each learning's recall embedding when its text is set
            (``None``: scored from the text at recall).
        version_changed: the store's "changed since read" exception.
        archive: archives one memory as a person with a reason (``MemoryService``), for
            an approval that archives the copies a review cited.
    """

    def __init__(
        self,
        store: LearningStore,
        directory: DirectoryRepository,
        secrets: SecretFinder,
        clock: Clock,
        ids: IdFactory,
        *,
        embedder: Embedder | None,
        version_changed: type[Exception],
        archive: Callable[[Principal, str, str], object] | None = None,
    ) -> None:
        self._archive = archive
        self._store = store
        self._directory = directory
        self._secrets = secrets
        self._clock = clock
        self._ids = ids
        self._embedder = embedder
        self._version_changed = version_changed

    def propose(self, principal: Principal, text: str, run: RunContext) -> tuple[Learning, bool]:
        """An agent proposes a learning (``proposed``, or ``active`` at once in a workspace
        whose ``learningApproval`` is ``none``); a person's is ``active`` at once.

        Returns:
            The learning, and whether it is new (False: a live learning said the same).

        Raises:
            InvalidRequest: blank text or control characters.
            MemoryTextTooLong: over 500 characters.
            SecretInMemory: it looks like a credential.
            LearningRejected: an agent repeated a rejected or retired learning.
            LearningLimitReached: the workspace holds 200 live learnings.
            RateLimited: the agent proposed 20 today.
        """
        self._check_text(text)
        embedding = self._embed(text)
        workspace = principal.workspace_id
        said = self._live_saying(workspace, text, embedding)
        if said is not None:
            return self._shown(principal, said), False
        if principal.is_agent:
            self._refuse_rejected(workspace, text, embedding)
        now = self._clock.now()
        by_person = not principal.is_agent
        live_at_once = by_person or self._approval(workspace) == "none"
        learning = Learning(
            id=self._ids.new("lrn"),
            workspace_id=workspace,
            text=text,
            state=LearningState.ACTIVE if live_at_once else LearningState.PROPOSED,
            proposed_by=principal.id,
            proposed_by_type="person" if by_person else "agent",
            run_id=None if by_person else run.run_id,
            task_key=None if by_person else run.task_key,
            proposed_at=now,
            decided_by=principal.id if by_person else None,
            decided_at=now if live_at_once else None,
            updated_at=now,
            embedding=embedding,
        )
        audit = self._audit(principal, learning, "propose", None, learning, now, run=run)
        self._store.create(
            learning,
            audit,
            max_live=MAX_LIVE_LEARNINGS,
            proposals_per_day=None if by_person else LEARNING_PROPOSALS_PER_DAY,
            now=now,
        )
        return learning, True

    def propose_from_review(
        self, workspace_id: str, review_id: str, text: str, evidence: list[str]
    ) -> tuple[Learning, bool]:
        """The review proposes a fact that two or more agents hold
        (docs/reference.md#learnings-and-the-review): ``proposed`` whatever the
        workspace's ``learningApproval``, citing the agents' facts in ``evidence``.

        Returns:
            The learning, and whether it is new (False: a live learning says it).

        Raises:
            LearningRejected: a person rejected or retired a learning that says the same.
            LearningLimitReached: the workspace holds 200 live learnings.
            InvalidRequest, MemoryTextTooLong, SecretInMemory: as ``propose`` (a fact's
                text passed these checks when it was saved; they hold again).
        """
        self._check_text(text)
        embedding = self._embed(text)
        said = self._live_saying(workspace_id, text, embedding)
        if said is not None:
            return said, False
        self._refuse_rejected(workspace_id, text, embedding)
        now = self._clock.now()
        learning = Learning(
            id=self._ids.new("lrn"),
            workspace_id=workspace_id,
            text=text,
            state=LearningState.PROPOSED,
            proposed_by=review_id,
            proposed_by_type="review",
            proposed_at=now,
            evidence=evidence,
            updated_at=now,
            embedding=embedding,
        )
        audit = LearningAudit(
            id=self._ids.new("aud"),
            learning_id=learning.id,
            workspace_id=workspace_id,
            action="propose",
            actor_type="review",
            actor_id=review_id,
            at=now,
            after=_snapshot(learning),
        )
        self._store.create(
            learning, audit, max_live=MAX_LIVE_LEARNINGS, proposals_per_day=None, now=now
        )
        return learning, True

    def approve(
        self,
        principal: Principal,
        learning_id: str,
        text: str | None,
        expected_versions: frozenset[int] | None = None,
        *,
        archive_copies: bool = False,
    ) -> Learning:
        """A person approves a proposed learning, or confirms an active one that went live
        unreviewed (``Learning.unreviewed``), with ``text`` editing it first; with
        ``archive_copies``, the agents' facts a review cited that are still active are
        archived with the reason ``covered by learning lrn_…`` (each one's Undo brings it
        back; one already archived or erased is left as it is).

        Raises:
            Forbidden: an agent called.
            LearningNotFound: no such learning in the workspace.
            LearningDecided: it is not proposed.
            PreconditionFailed: ``If-Match`` names another version.
        """
        refuse_agents(principal, DECISIONS_ARE_FOR_PERSONS)
        before = self._current(principal, learning_id, expected_versions)
        if before.state is not LearningState.PROPOSED and not before.unreviewed:
            raise LearningDecided(
                f"{learning_id} is {before.state.value}: only a proposed learning, or an "
                "active one no person reviewed, is approved."
            )
        changes: dict[str, object] = {"state": LearningState.ACTIVE}
        if text is not None and text != before.text:
            changes.update(self._new_text(text, principal))
        approved = self._change(principal, before, "approve", changes)
        if archive_copies and self._archive is not None:
            for memory_id in approved.evidence or []:
                try:
                    self._archive(principal, memory_id, f"covered by learning {approved.id}")
                except PineworkError:  # archived, erased or gone since the review: as it is
                    continue
        return approved

    def edit(
        self,
        principal: Principal,
        learning_id: str,
        text: str,
        expected_versions: frozenset[int] | None = None,
    ) -> Learning:
        """A person edits a proposed or active learning's text (the same text: no change).

        Raises:
            Forbidden, LearningNotFound, PreconditionFailed: as ``approve``.
            LearningDecided: it is rejected or retired.
        """
        refuse_agents(principal, DECISIONS_ARE_FOR_PERSONS)
        before = self._current(principal, learning_id, expected_versions)
        if before.state not in _LIVE:
            raise LearningDecided(f"{learning_id} is {before.state.value}: it cannot be edited.")
        if text == before.text:
            return before
        return self._change(principal, before, "edit", self._new_text(text, principal))

    def reject(
        self,
        principal: Principal,
        learning_id: str,
        reason: str,
        expected_versions: frozenset[int] | None = None,
    ) -> Learning:
        """A person rejects a proposed learning; its text is never proposed again by an
        agent (nor a duplicate of it).

        Raises:
            Forbidden, LearningNotFound, PreconditionFailed: as ``approve``.
            LearningDecided: it is not proposed.
            InvalidRequest, SecretInMemory: a blank, long or credential-like reason.
        """
        refuse_agents(principal, DECISIONS_ARE_FOR_PERSONS)
        self._check_reason(reason)
        before = self._current(principal, learning_id, expected_versions)
        if before.state is not LearningState.PROPOSED:
            raise LearningDecided(
                f"{learning_id} is {before.state.value}: only a proposed "
                "learning is rejected (retire an active one)."
            )
        return self._change(
            principal,
            before,
            "reject",
            {"state": LearningState.REJECTED, "reason": reason},
            rejected_keys=veto_index_keys(before.text),
        )

    def retire(
        self,
        principal: Principal,
        learning_id: str,
        reason: str | None,
        expected_versions: frozenset[int] | None = None,
    ) -> Learning:
        """A person retires an active learning: no agent is told it any more, nor may an
        agent (or the review) propose it again, as after a rejection (a person may).

        Raises:
            Forbidden, LearningNotFound, PreconditionFailed: as ``approve``.
            LearningDecided: it is not active.
        """
        refuse_agents(principal, DECISIONS_ARE_FOR_PERSONS)
        if reason is not None:
            self._check_reason(reason)
        before = self._current(principal, learning_id, expected_versions)
        if before.state is not LearningState.ACTIVE:
            raise LearningDecided(
                f"{learning_id} is {before.state.value}: only an active "
                "learning is retired (reject a proposed one)."
            )
        return self._change(
            principal,
            before,
            "retire",
            {"state": LearningState.RETIRED, "reason": reason},
            rejected_keys=veto_index_keys(before.text),
        )

    def get(self, principal: Principal, learning_id: str) -> Learning:
        """One learning of the caller's workspace; an agent reads the active ones and its
        own proposals only, without persons' reasons (``visible_to``).

        Raises:
            LearningNotFound: no such learning (another workspace's, or one the agent may
                not read, answers the same).
        """
        return self._shown(principal, self._visible(principal, learning_id))

    def list_learnings(
        self,
        principal: Principal,
        *,
        state: LearningState | None,
        query: str | None,
        limit: int,
        after: str | None,
        unreviewed: bool = False,
    ) -> tuple[list[Learning], str | None]:
        """The workspace's learnings newest first, filtered by state and by text
        (case-insensitive substring), a page after ``after``; and the id to continue after.

        ``unreviewed`` (persons only) keeps the active learnings no person reviewed
        (``Learning.unreviewed``), reading the active ones only
        (docs/reference.md#unreviewed-learnings).

        A state's list reads that state's learnings only (docs/issues.md#issue-41-item-4).
        An agent lists the active learnings and its own proposals (``visible_to``): without
        ``state``, the active ones and its pending proposals (at most the live cap's
        worth read); with ``state``, its own rejected or retired ones."""
        if unreviewed:
            refuse_agents(principal, UNREVIEWED_IS_FOR_PERSONS)
            if state not in (None, LearningState.ACTIVE):
                raise InvalidRequest(
                    f"An unreviewed learning is active: `unreviewed=true` takes no "
                    f"`state={state.value}` (omit `state`, or give `active`)."
                )
            state = LearningState.ACTIVE
        workspace = principal.workspace_id
        self._file(workspace)
        needle = (query or "").casefold().strip()

        def keep(learning: Learning) -> bool:
            return (
                (not needle or needle in learning.text.casefold())
                and (not unreviewed or learning.unreviewed)
                and visible_to(principal, learning)
            )

        if principal.is_agent and state is None:
            found = sorted(
                (
                    learning
                    for live in _LIVE
                    for learning in self._store.in_state(workspace, live)
                    if keep(learning) and (after is None or learning.id < after)
                ),
                key=lambda learning: learning.id,
                reverse=True,
            )
            page, more = found[:limit], len(found) > limit
            shown = [self._shown(principal, learning) for learning in page]
            return shown, (page[-1].id if more else None)
        filtered = (
            bool(needle) or unreviewed or (principal.is_agent and state is not LearningState.ACTIVE)
        )
        page, next_after = self._store.page(
            workspace,
            state=state,
            limit=limit,
            after=after,
            keep=keep if filtered else None,
        )
        return [self._shown(principal, learning) for learning in page], next_after

    def unreviewed_count(self, principal: Principal) -> int:
        """How many active learnings of the person's workspace no person reviewed (the
        Learnings page's "Not reviewed (N)"; reads the active ones only, at most 200).

        Raises:
            Forbidden: an agent called (``UNREVIEWED_IS_FOR_PERSONS``).
        """
        refuse_agents(principal, UNREVIEWED_IS_FOR_PERSONS)
        self._file(principal.workspace_id)
        active = self._store.in_state(principal.workspace_id, LearningState.ACTIVE)
        return sum(1 for learning in active if learning.unreviewed)

    def history(self, principal: Principal, learning_id: str) -> list[LearningAudit]:
        """The learning's records, oldest first (an agent's: without persons' reasons,
        and the run and task of its own records only).

        Raises:
            LearningNotFound: as ``get``.
        """
        self._visible(principal, learning_id)
        records = self._store.history(learning_id)
        if not principal.is_agent:
            return records
        return [
            record.model_copy(
                update={"reason": None}
                if record.actor_id == principal.id
                else {"reason": None, "run_id": None, "task_key": None}
            )
            for record in records
        ]

    def active(self, workspace_id: str) -> list[Learning]:
        """The workspace's active learnings, newest first (recall; eventually consistent):
        reads those only, at most ``MAX_LIVE_LEARNINGS`` (docs/issues.md#issue-41-item-4)."""
        self._file(workspace_id)
        return self._store.in_state(
            workspace_id, LearningState.ACTIVE, consistent=False, limit=MAX_LIVE_LEARNINGS
        )

    def _file(self, workspace_id: str) -> None:
        self._store.file_by_state(workspace_id, veto_index_keys)

    def _live_saying(
        self, workspace_id: str, text: str, embedding: bytes | None
    ) -> Learning | None:
        """The proposed or active learning that says ``text``, if any (reads the live ones
        only: at most the live cap's worth)."""
        self._file(workspace_id)
        for state in _LIVE:
            for found in self._store.in_state(workspace_id, state):
                if _same(text, embedding, found):
                    return found
        return None

    def _visible(self, principal: Principal, learning_id: str) -> Learning:
        found = self._current(principal, learning_id, None)
        if not visible_to(principal, found):
            raise LearningNotFound(f"No learning {learning_id!r} in your workspace.")
        return found

    @staticmethod
    def _shown(principal: Principal, learning: Learning) -> Learning:
        """The learning as ``principal`` sees it: an agent without persons' reasons, the
        cited facts, or another's run and task (docs/reference.md#15-learnings)."""
        if not principal.is_agent:
            return learning
        own = learning.proposed_by == principal.id
        hidden: dict[str, object] = {"reason": None, "evidence": None}
        if not own:
            hidden.update(run_id=None, task_key=None)
        return learning.model_copy(update=hidden)

    def _current(
        self, principal: Principal, learning_id: str, expected: frozenset[int] | None
    ) -> Learning:
        found = (
            self._store.get(principal.workspace_id, learning_id)
            if _LEARNING_ID.match(learning_id)
            else None
        )
        if found is None:
            raise LearningNotFound(f"No learning {learning_id!r} in your workspace.")
        if expected is not None and found.version not in expected:
            raise PreconditionFailed(
                f"{learning_id} changed since you read it (If-Match does not name its "
                "current version): read it again, then decide."
            )
        return found

    def _new_text(self, text: str, principal: Principal) -> dict[str, object]:
        self._check_text(text)
        return {"text": text, "embedding": self._embed(text), "edited_by": principal.id}

    def _check_text(self, text: str) -> None:
        """A learning's text follows a fact's rules (docs/reference.md#learning-object)."""
        check_text(
            text,
            limit=LEARNING_MAX_CHARS,
            what="learning",
            secrets=self._secrets,
            advice="Shorten it: a learning is one fact.",
        )

    def _check_reason(self, reason: str) -> None:
        check_not_blank(reason, "reason")
        check_characters(reason, "reason")
        if len(reason) > ARCHIVE_REASON_MAX_CHARS:
            raise InvalidRequest(
                f"The reason has {len(reason)} characters; the limit is {ARCHIVE_REASON_MAX_CHARS}."
            )
        check_no_secret(reason, what="reason", secrets=self._secrets)

    def _change(
        self,
        principal: Principal,
        before: Learning,
        action: str,
        changes: dict[str, object],
        *,
        rejected_keys: list[str] | None = None,
    ) -> Learning:
        now = self._clock.now()
        decided = {"decided_by": principal.id, "decided_at": now} if action != "edit" else {}
        after = before.model_copy(
            update={**changes, **decided, "updated_at": now, "version": before.version + 1}
        )
        audit = self._audit(principal, after, action, before, after, now)
        try:
            self._store.change(before, after, audit, rejected_keys=rejected_keys or [])
        except self._version_changed as changed:
            raise PreconditionFailed(
                f"{before.id} changed while you decided: read it again, then decide."
            ) from changed
        return after

    def _audit(
        self,
        principal: Principal,
        learning: Learning,
        action: str,
        before: Learning | None,
        after: Learning,
        now: datetime,
        *,
        run: RunContext | None = None,
    ) -> LearningAudit:
        return LearningAudit(
            id=self._ids.new("aud"),
            learning_id=learning.id,
            workspace_id=learning.workspace_id,
            action=action,
            actor_type="agent" if principal.is_agent else "person",
            actor_id=principal.id,
            at=now,
            run_id=run.run_id if run and principal.is_agent else None,
            task_key=run.task_key if run and principal.is_agent else None,
            reason=after.reason if action in ("reject", "retire") else None,
            before=None if before is None else _snapshot(before),
            after=_snapshot(after),
        )

    def _refuse_rejected(self, workspace_id: str, text: str, embedding: bytes | None) -> None:
        """Refuse a text a person rejected or retired (the same after normalisation, or a
        duplicate): the refused index names the candidates, each confirmed against the
        stored learning. The person's reason is not quoted: it is for persons."""
        self._file(workspace_id)
        candidates = self._store.rejected(workspace_id, veto_index_keys(text))
        for learning_id in sorted(candidates):
            refused = self._store.get(workspace_id, learning_id)
            if refused is None or refused.state not in _REFUSED:
                continue
            if _same(text, embedding, refused):
                raise LearningRejected(
                    f"A person {refused.state.value} {refused.id}, which says the same "
                    "thing; an agent cannot propose it again. Ask a person of the workspace."
                )

    def _approval(self, workspace_id: str) -> str:
        workspace = self._directory.get_workspace(workspace_id)
        return "required" if workspace is None else workspace.learning_approval

    def _embed(self, text: str) -> bytes | None:
        return None if self._embedder is None else self._embedder.embed([text])[0]


def visible_to(principal: Principal, learning: Learning) -> bool:
    """Whether ``principal`` may read ``learning``: a person reads every learning of the
    workspace; an agent the active ones and its own proposals
    (docs/issues.md#issue-42-item-5)."""
    if not principal.is_agent:
        return True
    return learning.state is LearningState.ACTIVE or learning.proposed_by == principal.id


def _same(text: str, embedding: bytes | None, other: Learning) -> bool:
    """``text`` says what ``other`` says: equal after normalisation, or duplicates by the
    review's sameness rule."""
    if normalize(text) == normalize(other.text):
        return True
    return is_duplicate(text, other.text, vector_of(embedding), vector_of(other.embedding))


def _snapshot(learning: Learning) -> dict[str, object]:
    return {"state": learning.state.value, "text": learning.text}
