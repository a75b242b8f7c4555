"""Persons' decisions on review actions that wait for one
(docs/reference.md#approval-mode): an action is ``pending`` when its workspace's
``reviewApproval`` is ``required`` or it waits for a person. **approve** claims it
with one conditional put (``applying``: of two concurrent approvals exactly one
applies it), applies it through ``ActionApplier`` with the review's version checks,
then records ``applied`` or ``skipped`` and moves the counts in one transaction;
**reject** records ``rejected`` and moves the counts in one transaction, only if the
action is undecided. Decisions live in DynamoDB and are merged into the S3 report
when it is read. Choices: docs/DECISIONS.md#review-approval-mode-issue-4-item-6.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import timedelta

from chalicelib.errors import Conflict, InvalidRequest, NotFound
from chalicelib.ids import Clock, IdFactory, to_rfc3339
from chalicelib.models.principal import Principal
from chalicelib.models.review import (
    ActionDecision,
    ActionUndo,
    ReviewAction,
    ReviewReport,
    ReviewSummary,
    decides,
)
from chalicelib.services.access.who import refuse_agents
from chalicelib.services.review.apply import ActionApplier, ActionScope, ActionSkipped
from chalicelib.storage.protocols import (
    DecisionTaken,
    ReportStore,
    ReviewRepository,
    ReviewUndoRepository,
    WriteConflict,
)

logger = logging.getLogger(__name__)

APPROVAL_LEASE = timedelta(minutes=15)
"""An approval still ``applying`` after this long (it crashed) may be taken over."""

_ACTION_REF = re.compile(r"a?([1-9][0-9]*)")
"""An action as a path segment: its number (``2``) or its id (``a2``)."""


def action_number(action_ref: str) -> int:
    """The 1-based number of an action named ``2`` or ``a2``.

    A number past the plan's end is the caller's ``not_found``, however long.

    Raises:
        InvalidRequest: anything else (``0``, ``-1``, ``b2``, ``two``, `` 2``).
    """
    found = _ACTION_REF.fullmatch(action_ref)
    if found is None:
        raise InvalidRequest(
            f"{_shown(action_ref)!r} is not an action: use its number (1, 2, …) or its id "
            "(a1, a2, …)."
        )
    digits = found.group(1)
    return int(digits) if len(digits) <= 9 else 10**9


def _shown(action_ref: str) -> str:
    """``action_ref`` as an error message quotes it: the first 40 characters."""
    return action_ref if len(action_ref) <= 40 else action_ref[:40] + "…"


DECISIONS_ARE_FOR_PERSONS = "Only a person of the workspace can approve or reject review actions."


class ReviewDecisions:
    """Reads reports with their decisions and undos; approves and rejects actions.

    Args:
        reviews: summaries and decisions (DynamoDB).
        reports: the JSON reports (S3).
        applier: applies one action, version-checked.
        clock: the current time.
        ids: the id factory (claim ids).
        undos: the undo records merged into a report (docs/issues.md#issue-14-item-3).
    """

    def __init__(
        self,
        reviews: ReviewRepository,
        reports: ReportStore,
        applier: ActionApplier,
        clock: Clock,
        ids: IdFactory,
        undos: ReviewUndoRepository,
    ) -> None:
        self._undos = undos
        self._reviews = reviews
        self._reports = reports
        self._applier = applier
        self._clock = clock
        self._ids = ids

    def read_report(self, summary: ReviewSummary) -> ReviewReport:
        """The full report of a summary, with stored decisions (of the actions that
        wait for one) and undo records merged in.

        Raises:
            NotFound: the report is missing from S3.
        """
        report = self._stored_report(summary)
        waiting = any(decides(action, report.approval) for action in report.plan.actions)
        stored = self._reviews.list_decisions(summary.id) if waiting else []
        return report.with_decisions(stored, self._undos.list_undos(summary.id))

    def approve(
        self,
        principal: Principal,
        review_id: str,
        action_ref: str,
        keep_id: str | None = None,
    ) -> ReviewReport:
        """A person approves one pending action; it is applied now.

        The expected versions of the plan are checked again: when a memory
        changed since the plan was made, the action is recorded ``skipped`` with
        the reason (the call still succeeds).

        Args:
            principal: the caller (a person of the review's workspace).
            review_id: the review (``rvw_…``).
            action_ref: the action's number (``2``) or id (``a2``).
            keep_id: for a ``resolve_conflict``, the fact of the pair to keep
                (``None``: the plan's ``keepId``); the other one is superseded.

        Returns:
            The report with every action's decision.

        Raises:
            Forbidden: an agent called.
            NotFound: no such review in the workspace (or it is past its retention,
                docs/reference.md#retention), or no such action in its plan.
            InvalidRequest: ``action_ref`` is not a number or an action id.
            Conflict: the action does not wait for a decision (the review applied
                it), was decided already, or another approval is applying it.
            InvalidRequest: ``keep_id`` is given for another kind of action, or
                names no fact of the pair.
        """
        summary, report, action = self._undecided(principal, review_id, action_ref)
        chosen = _with_keeper(action, keep_id)
        claim_id = self._ids.new("dcl")
        now = self._clock.now()
        claim = ActionDecision(
            action_id=action.id,
            state="applying",
            decided_by=principal.id,
            decided_at=now,
            keep_id=None if chosen.keep_id == action.keep_id else chosen.keep_id,
        )
        try:
            self._reviews.claim_approval(summary, claim, claim_id, now - APPROVAL_LEASE)
        except DecisionTaken as taken:
            raise _already_decided(
                summary.id, action.id, taken, self._undo_of(summary.id, action.id)
            ) from taken
        scope = ActionScope(summary.workspace_id, summary.agent_id, summary.id, principal.id)
        try:
            outcome = self._applier.apply(scope, chosen)
            final = claim.model_copy(
                update={
                    "state": "applied",
                    "detail": outcome.detail,
                    "created_id": outcome.created_id,
                }
            )
        except ActionSkipped as skip:
            final = claim.model_copy(update={"state": "skipped", "detail": str(skip)})
        try:
            self._reviews.record_outcome(summary, final, claim_id)
        except (DecisionTaken, WriteConflict) as lost:
            raise Conflict(
                f"Action {action.id} of {summary.id} took longer than "
                f"{APPROVAL_LEASE.seconds // 60} minutes and another approval took it over."
            ) from lost
        logger.info(
            "review %s action %s %s by %s", summary.id, action.id, final.state, principal.id
        )
        return self._after_decision(summary, report)

    def reject(self, principal: Principal, review_id: str, action_ref: str) -> ReviewReport:
        """A person rejects one pending action; it is never applied.

        Args:
            principal: the caller (a person of the review's workspace).
            review_id: the review (``rvw_…``).
            action_ref: the action's number (``2``) or id (``a2``).

        Returns:
            The report with every action's decision.

        Raises:
            Forbidden, NotFound, InvalidRequest, Conflict: as for ``approve``.
        """
        summary, report, action = self._undecided(principal, review_id, action_ref)
        decision = ActionDecision(
            action_id=action.id,
            state="rejected",
            decided_by=principal.id,
            decided_at=self._clock.now(),
        )
        try:
            signatures = list(action.signatures().values())
            self._reviews.record_rejection(summary, decision, signatures)
        except DecisionTaken as taken:
            raise _already_decided(
                summary.id, action.id, taken, self._undo_of(summary.id, action.id)
            ) from taken
        except WriteConflict as conflict:
            raise Conflict(f"{summary.id} has no undecided action left.") from conflict
        logger.info("review %s action %s rejected by %s", summary.id, action.id, principal.id)
        return self._after_decision(summary, report)

    def _undecided(
        self, principal: Principal, review_id: str, action_ref: str
    ) -> tuple[ReviewSummary, ReviewReport, ReviewAction]:
        """The review and the action a person may decide (not yet checked: undecided)."""
        refuse_agents(principal, DECISIONS_ARE_FOR_PERSONS)
        summary = self._reviews.get_summary(review_id) if review_id.startswith("rvw_") else None
        if summary is None or summary.workspace_id != principal.workspace_id:
            raise NotFound(f"No review {review_id!r} in your workspace.")
        number = action_number(action_ref)
        report = self._stored_report(summary)
        if number > len(report.plan.actions):
            raise NotFound(
                f"{summary.id} has no action {_shown(action_ref)!r}: "
                f"its plan has {len(report.plan.actions)} action(s)."
            )
        action = report.plan.actions[number - 1]
        if not decides(action, summary.approval):
            undo = self._undo_of(summary.id, action.id)
            if undo is not None:
                raise Conflict(
                    f"{summary.id} applied {action.id} when it ran, and {undo.undone_by} "
                    f"undid it at {to_rfc3339(undo.undone_at)}: nothing waits for a "
                    "decision, and nothing is left to undo."
                )
            raise Conflict(
                f"{summary.id} applied {action.id} when it ran (reviewApproval was none and "
                "the action does not wait for a person): nothing waits for a decision; "
                "undo it instead."
            )
        return summary, report, action

    def _undo_of(self, review_id: str, action_id: str) -> ActionUndo | None:
        """The undo record of an action, if a person undid it."""
        undos = self._undos.list_undos(review_id)
        return next((undo for undo in undos if undo.action_id == action_id), None)

    def _stored_report(self, summary: ReviewSummary) -> ReviewReport:
        body = self._reports.get(summary.report_key)
        if body is None:
            raise NotFound(f"The report of {summary.id} is missing from storage.")
        return ReviewReport.model_validate(
            {**json.loads(body), "workspaceId": summary.workspace_id}
        )

    def _after_decision(self, summary: ReviewSummary, report: ReviewReport) -> ReviewReport:
        merged = report.with_decisions(
            self._reviews.list_decisions(summary.id), self._undos.list_undos(summary.id)
        )
        if merged.status == "done":
            body = json.dumps(merged.to_wire(), ensure_ascii=False, separators=(",", ":"))
            try:
                self._reports.put(summary.report_key, body.encode("utf-8"))
            except Exception:  # the decisions are stored; GET merges them without this copy
                logger.exception("could not rewrite the report of %s", summary.id)
        return merged


def _with_keeper(action: ReviewAction, keep_id: str | None) -> ReviewAction:
    """``action`` keeping ``keep_id`` instead of its planned keeper (a conflict only).

    Raises:
        InvalidRequest: ``keep_id`` for another kind of action, or not one of the pair.
    """
    if keep_id is None or keep_id == action.keep_id:
        return action
    pair = [action.keep_id, *action.memory_ids]
    if action.action != "resolve_conflict" or keep_id not in pair:
        raise InvalidRequest(
            f"keepId chooses a side of a resolve_conflict action; {action.id} is a "
            f"{action.action}" + (f" of {', '.join(filter(None, pair))}" if pair else "") + "."
        )
    others = [memory_id for memory_id in pair if memory_id and memory_id != keep_id]
    return action.model_copy(update={"keep_id": keep_id, "memory_ids": others})


def _already_decided(
    review_id: str, action_id: str, taken: DecisionTaken, undo: ActionUndo | None = None
) -> Conflict:
    """The ``conflict`` for a decision already taken: by whom and when, and, when a
    person undid the applied action since, that it was undone (docs/reference.md#9-review)."""
    existing = taken.existing
    if existing is None or existing.decided_at is None:
        return Conflict(f"Action {action_id} of {review_id} was decided already.")
    when = to_rfc3339(existing.decided_at)
    if existing.state == "applying":
        return Conflict(
            f"Action {action_id} of {review_id} is being applied "
            f"(approved by {existing.decided_by} at {when}); read the review again."
        )
    undone = (
        f", then undone by {undo.undone_by} at {to_rfc3339(undo.undone_at)}"
        if undo is not None
        else ""
    )
    return Conflict(
        f"Action {action_id} of {review_id} was already {existing.state} "
        f"(decided by {existing.decided_by} at {when}){undone}."
    )
