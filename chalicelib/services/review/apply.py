"""Applies one review action (docs/reference.md#9-review) with the API's conditional writes.

Every action names the versions it expects; applying re-reads each memory and
raises ``ActionSkipped`` with the reason when anything changed, is no longer
live, or is not the agent's own fact, so a retried or late action (a person
approving it hours after the plan, docs/issues.md#issue-4-item-6) never changes anything the
plan did not see. Audit records name the review (``actorType: system``,
``actorId: rvw_…``) and, for an approved action, the approving person in the
reason.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chalicelib.errors import PineworkError
from chalicelib.ids import Clock, IdFactory
from chalicelib.limits import DEFAULT_FACT_LIFETIME, FACT_MAX_CHARS
from chalicelib.models.memory import VETOED, AuditRecord, Memory, MemoryKind, MemoryStatus
from chalicelib.models.review import ActionOutcome, ReviewAction
from chalicelib.normalized import normalize
from chalicelib.services.memory.audit import audit_record
from chalicelib.services.review.rule_reviewer import durable_text, twin_of
from chalicelib.services.text import SecretFinder, check_text
from chalicelib.storage.protocols import (
    LiftClaimed,
    MemoryRepository,
    ReviewRepository,
    WriteConflict,
)

if TYPE_CHECKING:  # numpy: loaded by the embedder itself, on first use (cold start)
    from chalicelib.services.recall.embedding import Embedder

FACT_PAGE = 500


def all_facts(memories: MemoryRepository, workspace_id: str, agent_id: str) -> list[Memory]:
    """Every fact of the agent, live and archived, newest first (pages of ``FACT_PAGE``).

    What a review plans against (``ReviewContext.facts``), and what an approved lift
    is checked against again (docs/reference.md#review-step-3).
    """
    facts: list[Memory] = []
    after: str | None = None
    while True:
        page = memories.list_memories(
            workspace_id=workspace_id,
            agent_id=agent_id,
            status=None,
            kind=MemoryKind.FACT.value,
            limit=FACT_PAGE,
            after_id=after,
            consistent=True,
        )
        facts.extend(page.memories)
        if page.continue_after is None:
            return facts
        after = page.continue_after


class ActionSkipped(Exception):
    """An action is not applied; the message says why (it goes into the report)."""


@dataclass(frozen=True)
class ActionScope:
    """Whose memories an action may change, and who answers for the change.

    Attributes:
        workspace_id: the agent's workspace.
        agent_id: the reviewed agent (an action touches only its own facts).
        review_id: the review (``rvw_…``), the audit records' actor.
        approved_by: the person (``usr_…``) who approved the action, or None
            when the review applied its plan itself.
    """

    workspace_id: str
    agent_id: str
    review_id: str
    approved_by: str | None = None


class ActionApplier:
    """Applies one planned action, version-checked.

    Args:
        memories: memory storage (reads, and the version-checked ``transition``).
        reviews: the review's own writes (system supersede, lift with its claim).
        secrets: the secret detector (a lifted line is checked like a save).
        clock: the current time.
        ids: the id factory (new facts, audit records).
        embedder: embeds a lifted fact when it is created (as a save does).
    """

    def __init__(
        self,
        memories: MemoryRepository,
        reviews: ReviewRepository,
        secrets: SecretFinder,
        clock: Clock,
        ids: IdFactory,
        embedder: Embedder | None = None,
    ) -> None:
        self._memories = memories
        self._reviews = reviews
        self._secrets = secrets
        self._clock = clock
        self._ids = ids
        self._embedder = embedder

    def apply(self, scope: ActionScope, action: ReviewAction) -> ActionOutcome:
        """Apply one action, or raise ``ActionSkipped`` with the reason.

        Args:
            scope: the agent, the review and the approving person.
            action: one action of the plan (its ``expectedVersions`` are re-checked).

        Returns:
            What was done (``superseded by …``, ``renewed``, ``archived``,
            ``lifted as mem_…`` with ``createdId``).

        Raises:
            ActionSkipped: a memory is not the agent's live fact, changed since the
                plan (or while applying), or the action is malformed; nothing of
                the action was written unless the reason says ``already applied``.
        """
        if action.action == "lift":
            return self._lift(scope, action)
        current = {
            memory_id: self._expected(scope.agent_id, memory_id, action)
            for memory_id in [*action.memory_ids, *filter(None, [action.keep_id])]
        }
        if not action.memory_ids:
            raise ActionSkipped("the action names no memory")
        if action.action in ("merge", "replace", "resolve_conflict"):
            if action.keep_id is None or action.keep_id in action.memory_ids:
                raise ActionSkipped("the action names no distinct fact to keep")
            keeper = current[action.keep_id]
            done: list[str] = []
            for memory_id in action.memory_ids:
                try:
                    self._supersede(scope, current[memory_id], keeper, action)
                except WriteConflict as conflict:
                    raise ActionSkipped(
                        f"{memory_id} or {keeper.id} changed while the review ran"
                        + (f" (already applied: {', '.join(done)})" if done else "")
                    ) from conflict
                done.append(memory_id)
            return outcome_of(action, f"superseded by {keeper.id}")
        (before,) = (current[memory_id] for memory_id in action.memory_ids)
        if action.action == "renew":
            if action.expires_at is None or action.expires_at <= self._clock.now():
                raise ActionSkipped("a renewal needs a future expiresAt")
            changes: dict[str, object] = {"expires_at": action.expires_at}
            verb = "renew"
        else:
            changes = {
                "status": MemoryStatus.ARCHIVED,
                "archive_reason": action.reason[:500],
                "archived_at": self._clock.now(),
            }
            verb = "archive"
        after = before.model_copy(
            update={**changes, "updated_at": self._clock.now(), "version": before.version + 1}
        )
        audit = self._audit(scope, verb, before, after, action.reason)
        try:
            self._memories.transition(before, after, audit)
        except WriteConflict as conflict:
            raise ActionSkipped(f"{before.id} changed while the review ran") from conflict
        return outcome_of(action, "renewed" if verb == "renew" else "archived")

    def _expected(self, agent_id: str, memory_id: str, action: ReviewAction) -> Memory:
        """The memory as the action expects it: the agent's own live fact, same version."""
        memory = self._memories.get(memory_id) if memory_id.startswith("mem_") else None
        if memory is None or memory.agent_id != agent_id or memory.kind is not MemoryKind.FACT:
            raise ActionSkipped(f"{memory_id} is not one of the agent's facts")
        if memory.status is not MemoryStatus.ACTIVE:
            raise ActionSkipped(f"{memory_id} is no longer live ({memory.archive_reason})")
        expected = action.expected_versions.get(memory_id)
        if expected is not None and expected != memory.version:
            raise ActionSkipped(f"{memory_id} changed since the plan was made")
        return memory

    def _supersede(
        self, scope: ActionScope, old: Memory, keeper: Memory, action: ReviewAction
    ) -> None:
        now = self._clock.now()
        after = old.superseded(keeper.id, now)
        audit = self._audit(
            scope, "supersede", old, after, f"{action.action} by {keeper.id}: {action.reason}"
        )
        # The kept fact's history shows what it absorbed (ids only: the absorbed text stays
        # in the absorbed fact's own records, which its erasure reaches).
        absorbed = self._audit(scope, ABSORB, keeper, keeper, absorb_reason(old.id, action))
        self._reviews.supersede_by_existing(old, after, keeper, audit, absorbed)

    def _lift(self, scope: ActionScope, action: ReviewAction) -> ActionOutcome:
        text = action.text or ""
        try:
            check_text(text, limit=FACT_MAX_CHARS, what="lifted fact", secrets=self._secrets)
        except PineworkError as refused:
            raise ActionSkipped(f"not lifted: {refused.message}") from refused
        if scope.approved_by is not None:
            # Approved later than planned: the twin check the plan made (docs/reference.md#9-review
            # step
            # 3) is made again, so a fact saved, or saved and vetoed, since then is
            # neither duplicated nor brought back.
            twin = twin_of(text, all_facts(self._memories, scope.workspace_id, scope.agent_id))
            if twin is not None:
                why = "a person vetoed" if twin.archive_reason == VETOED else "already a fact"
                raise ActionSkipped(f"not lifted ({why}: {twin.id})")
        old = None
        if action.supersedes is not None:
            old = self._expected(scope.agent_id, action.supersedes, action)
        now = self._clock.now()
        task = next(
            (found[1] for line in action.evidence if (found := durable_text(line)) is not None),
            None,
        )
        fact = Memory(
            id=self._ids.new("mem"),
            workspace_id=scope.workspace_id,
            agent_id=scope.agent_id,
            kind=MemoryKind.FACT,
            text=text,
            expires_at=now + DEFAULT_FACT_LIFETIME,
            supersedes=None if old is None else old.id,
            task_key=task,
            created_at=now,
            updated_at=now,
            # Embedded once here, as a save would (docs/issues.md#issue-3-item-3): recall never
            # re-embeds the store.
            embedding=None if self._embedder is None else self._embedder.embed([text])[0],
        )
        audits: list[AuditRecord] = [
            self._audit(scope, "create", None, fact, f"lifted: {action.reason}")
        ]
        replaced = None
        if old is not None:
            old_after = old.superseded(fact.id, now)
            audits.append(self._audit(scope, "supersede", old, old_after, f"by {fact.id}"))
            replaced = (old, old_after)
        digest = hashlib.sha256(normalize(text).encode("utf-8")).hexdigest()
        try:
            self._reviews.create_lifted(fact, audits, digest, replaced)
        except LiftClaimed as claimed:
            raise ActionSkipped(
                "this text was lifted before (a retry, or a person vetoed it)"
            ) from claimed
        except WriteConflict as conflict:
            raise ActionSkipped(f"{action.supersedes} changed while the review ran") from conflict
        outcome = outcome_of(action, f"lifted as {fact.id}")
        return outcome.model_copy(update={"created_id": fact.id})

    def _audit(
        self,
        scope: ActionScope,
        action: str,
        before: Memory | None,
        after: Memory,
        reason: str,
    ) -> AuditRecord:
        if scope.approved_by is not None:
            reason = f"{reason} (approved by {scope.approved_by})"
        record = audit_record(self._ids, self._clock, None, action, before, after, reason)
        return record.model_copy(update={"actor_id": scope.review_id})


ABSORB = "absorb"
"""The audit action written on the fact a review's merge kept, one per fact it absorbed
(docs/reference.md#audit-record); it changes nothing of the kept fact."""


def absorb_reason(absorbed_id: str, action: ReviewAction) -> str:
    """The ``absorb`` record's reason: the absorbed fact's id first, then the action."""
    return f"{absorbed_id} ({action.action})"


def absorbed_id(record: AuditRecord) -> str | None:
    """The fact an ``absorb`` record names, or None for any other record."""
    if record.action != ABSORB or not record.reason:
        return None
    return record.reason.split(" ", 1)[0]


def absorbed_by(record: AuditRecord) -> tuple[str, str | None]:
    """How an ``absorb`` record's fact went: the review action (``merge``, ``replace``
    or ``resolve_conflict``) and the person who approved it (None: the review alone)."""
    words = (record.reason or "").split(" ", 1)
    rest = words[1] if len(words) > 1 else ""
    action = rest[1:].split(")", 1)[0] if rest.startswith("(") else "merge"
    approved = rest.split("(approved by ", 1)
    person = approved[1].split(")", 1)[0] if len(approved) > 1 else None
    return action, person


def outcome_of(action: ReviewAction, detail: str) -> ActionOutcome:
    """The report line of one action: its id, kind, memories and what happened."""
    return ActionOutcome(
        action_id=action.id, action=action.action, detail=detail, memory_ids=action.memory_ids
    )
