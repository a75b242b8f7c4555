"""A person undoes one action a review applied (docs/reference.md#review-undo): one
transaction restores exactly what the action changed, read from the review's own audit
records, with the usual version-checked writes, and marks the action ``undone`` in the
report. A memory changed since the review makes the undo refuse with 409
``review_undo_conflict`` and change nothing; a second undo answers the report and
changes nothing; a person's own supersede is never undone here. What undo means per
action kind:
docs/DECISIONS.md#a-review-that-never-destroys-information-issue-14-items-15.
"""

from __future__ import annotations

from datetime import datetime

from chalicelib.errors import Conflict, MemoryErased, NotFound, ReviewUndoConflict
from chalicelib.ids import Clock, IdFactory, from_rfc3339, to_rfc3339
from chalicelib.limits import ARCHIVE_REASON_MAX_CHARS
from chalicelib.models.memory import AuditRecord, Memory, MemoryStatus
from chalicelib.models.principal import Principal
from chalicelib.models.review import ActionUndo, ReviewAction, ReviewReport, ReviewSummary
from chalicelib.services.access.who import refuse_agents
from chalicelib.services.memory.audit import audit_record
from chalicelib.services.review.apply import ABSORB
from chalicelib.services.review.decisions import ReviewDecisions, action_number
from chalicelib.storage.protocols import (
    MemoryRepository,
    ReviewRepository,
    ReviewUndoRepository,
    UndoTaken,
    WriteConflict,
)

UNDO_IS_FOR_PERSONS = "Only a person of the workspace can undo a review's action."
_HISTORY_PAGE = 100


class ReviewUndo:
    """Undoes applied review actions, one call per action.

    Args:
        memories: memory reads (and their history).
        reviews: review summaries.
        undos: the undo transaction and records.
        decisions: reads reports with decisions and undos merged in.
        clock: the current time.
        ids: the id factory (audit records).
    """

    def __init__(
        self,
        memories: MemoryRepository,
        reviews: ReviewRepository,
        undos: ReviewUndoRepository,
        decisions: ReviewDecisions,
        clock: Clock,
        ids: IdFactory,
    ) -> None:
        self._memories = memories
        self._reviews = reviews
        self._undos = undos
        self._decisions = decisions
        self._clock = clock
        self._ids = ids

    def undo(self, principal: Principal, review_id: str, action_ref: str) -> ReviewReport:
        """Restore what one applied action of a review changed.

        Args:
            principal: a person of the review's workspace.
            review_id: the review (``rvw_…``).
            action_ref: the action's number (``2``) or id (``a2``).

        Returns:
            The report, with the action listed in ``undone``.

        Raises:
            Forbidden: an agent called.
            NotFound: no such review in the workspace (or it is past its retention,
                docs/reference.md#retention), or no such action.
            InvalidRequest: ``action_ref`` is not a number or an action id.
            Conflict: the action changed nothing (pending, rejected, skipped).
            ReviewUndoConflict: a memory the action changed was changed since;
                nothing is undone.
        """
        refuse_agents(principal, UNDO_IS_FOR_PERSONS)
        summary = self._reviews.get_summary(review_id) if review_id.startswith("rvw_") else None
        if summary is None or summary.workspace_id != principal.workspace_id:
            raise NotFound(f"No review {review_id!r} in your workspace.")
        number = action_number(action_ref)
        report = self._decisions.read_report(summary)
        if number > len(report.plan.actions):
            raise NotFound(
                f"{summary.id} has no action {action_ref[:40]!r}: "
                f"its plan has {len(report.plan.actions)} action(s)."
            )
        action = report.plan.actions[number - 1]
        if any(undone.action_id == action.id for undone in report.undone):
            return report
        self._refuse_undecided(report, action)
        now = self._clock.now()
        try:
            changes = [
                change
                for memory_id in _touched(report, action)
                if (change := self._restore(summary, action, memory_id, principal, now)) is not None
            ]
        except ReviewUndoConflict:
            # The newer change may be a concurrent undo of this very action.
            again = self._decisions.read_report(summary)
            if any(undone.action_id == action.id for undone in again.undone):
                return again
            raise
        if not changes:
            raise Conflict(
                f"{action.id} of {summary.id} changed no memory "
                f"({_state(report, action)}): there is nothing to undo."
            )
        detail = "; ".join(_what(before, after) for before, after, _ in changes)
        undo = ActionUndo(action_id=action.id, undone_by=principal.id, undone_at=now, detail=detail)
        try:
            self._undos.record_undo(summary, undo, changes, list(action.signatures().values()))
        except UndoTaken:
            pass  # another call undid it first: the same outcome
        except WriteConflict as conflict:
            raise ReviewUndoConflict(
                f"A memory of {action.id} changed while it was being undone; nothing was "
                f"undone. Read {summary.id} and the memories' history, then try again."
            ) from conflict
        return self._decisions.read_report(summary)

    def _refuse_undecided(self, report: ReviewReport, action: ReviewAction) -> None:
        decision = next((d for d in report.decisions if d.action_id == action.id), None)
        if decision is None or decision.state in ("applied", "skipped"):
            return
        if decision.state == "rejected":
            raise Conflict(
                f"{action.id} of {report.id} was rejected by {decision.decided_by}: "
                "it changed nothing, there is nothing to undo."
            )
        raise Conflict(
            f"{action.id} of {report.id} waits for a decision ({decision.state}); it changed "
            "nothing yet. Reject it to keep things as they are."
        )

    def _restore(
        self,
        summary: ReviewSummary,
        action: ReviewAction,
        memory_id: str,
        principal: Principal,
        now: datetime,
    ) -> tuple[Memory, Memory, AuditRecord] | None:
        """The memory now, as it was before the review, and the undo's audit record;
        None when the review did not change it."""
        memory = self._memories.get(memory_id)
        if memory is None or memory.workspace_id != summary.workspace_id:
            return None
        if memory.is_erased:
            raise MemoryErased(
                f"{memory_id} was erased by {memory.erased_by}; an erased memory never comes "
                "back, so nothing was undone."
            )
        # A kept fact's ``absorb`` records change nothing of it: not what Undo restores,
        # and not a later change that blocks one.
        history = [record for record in self._history(memory_id) if record.action != ABSORB]
        by_review = [
            record
            for record in history
            if record.actor_type == "system" and record.actor_id == summary.id
        ]
        if not by_review:
            return None
        done, newest = by_review[-1], history[-1]
        if newest.id != done.id:
            who = newest.actor_id or newest.actor_type
            raise ReviewUndoConflict(
                f"{memory_id} changed after {summary.id} {action.id} ({newest.action} by "
                f"{who} at {to_rfc3339(newest.at)}); undoing would overwrite that change, "
                "so nothing was undone."
            )
        after = _as_before(memory, done, now, summary, action, principal)
        reason = f"undo of {summary.id} {action.id} ({action.action})"
        audit = audit_record(self._ids, self._clock, principal, "undo", memory, after, reason)
        return memory, after, audit

    def _history(self, memory_id: str) -> list[AuditRecord]:
        records, after = self._memories.history(memory_id, _HISTORY_PAGE)
        while after is not None:
            page, after = self._memories.history(memory_id, _HISTORY_PAGE, after)
            records += page
        return records


def _touched(report: ReviewReport, action: ReviewAction) -> list[str]:
    """Every memory the action may have changed, once each."""
    outcome = next((o for o in report.applied + report.skipped if o.action_id == action.id), None)
    decision = next((d for d in report.decisions if d.action_id == action.id), None)
    ids = [
        *action.memory_ids,
        action.keep_id,
        action.supersedes,
        None if outcome is None else outcome.created_id,
        None if decision is None else decision.created_id,
    ]
    return list(dict.fromkeys(memory_id for memory_id in ids if memory_id))


def _as_before(
    memory: Memory,
    record: AuditRecord,
    now: datetime,
    summary: ReviewSummary,
    action: ReviewAction,
    principal: Principal,
) -> Memory:
    """``memory`` with what ``record`` changed put back, one version on."""
    changes: dict[str, object]
    if record.action == "create" or record.before is None:
        reason = f"undone: lifted by {summary.id} {action.id}, undone by {principal.id}"
        changes = {
            "status": MemoryStatus.ARCHIVED,
            "archive_reason": reason[:ARCHIVE_REASON_MAX_CHARS],
            "archived_at": now,
        }
    else:
        before = record.before
        archived_at = before.get("archivedAt")
        changes = {
            "status": MemoryStatus(before["status"]),
            "archive_reason": before.get("archiveReason"),
            "archived_at": None if archived_at is None else from_rfc3339(archived_at),
            "superseded_by": before.get("supersededBy"),
            "expires_at": from_rfc3339(before["expiresAt"]),
        }
    return memory.model_copy(update={**changes, "updated_at": now, "version": memory.version + 1})


def _what(before: Memory, after: Memory) -> str:
    if after.status is MemoryStatus.ACTIVE and before.status is MemoryStatus.ARCHIVED:
        return f"{after.id} live again"
    if after.status is MemoryStatus.ARCHIVED:
        return f"{after.id} archived"
    return f"{after.id} expires {to_rfc3339(after.expires_at)} again"


def _state(report: ReviewReport, action: ReviewAction) -> str:
    skipped = next((o for o in report.skipped if o.action_id == action.id), None)
    if skipped is not None:
        return f"skipped: {skipped.detail}"
    return "not applied"
