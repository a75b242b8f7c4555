"""The daily review ("Memory dreaming", docs/reference.md#9-review): plan, apply,
report. A review of one agent and one UTC date reads the agent's facts and that day's
log, asks the ``Reviewer`` for a plan, checks every action against the agent's live
memories and applies it with the API's conditional writes (each action names the
versions it expects and is skipped, with the reason, when anything changed); audit
records name the review, the report goes to S3 and its summary to DynamoDB. In
approval mode, and for actions that wait for a person, actions are stored ``pending``
instead (``decisions``); ``undo`` reverses an applied one. Scheduled reviews
(``schedule``: the date covered, the fan-out) claim ``agent + date`` and every action
re-checks its state, so no rerun changes anything twice. Choices:
docs/DECISIONS.md#routines-and-the-daily-review-issue-4.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime
from typing import TYPE_CHECKING

from chalicelib.errors import NotFound
from chalicelib.ids import ULID_PATTERN, Clock, IdFactory
from chalicelib.models.principal import Principal, ReviewApproval
from chalicelib.models.review import (
    ActionDecision,
    ActionOutcome,
    PendingAction,
    ReviewPlan,
    ReviewReport,
    ReviewSummary,
    Trigger,
    decides,
)
from chalicelib.models.review_requests import RunReviewRequest
from chalicelib.models.totals import ListTotal
from chalicelib.services.access.who import refuse_agents, resolve_agent
from chalicelib.services.review import schedule
from chalicelib.services.review.apply import (
    ActionApplier,
    ActionScope,
    ActionSkipped,
    all_facts,
    outcome_of,
)
from chalicelib.services.review.decisions import ReviewDecisions
from chalicelib.services.review.not_again import without_pending, without_rejected
from chalicelib.services.review.routines import RoutineService
from chalicelib.services.review.rule_reviewer import ReviewContext, Reviewer
from chalicelib.services.review.schedule import CLAIM_LEASE, review_date_for
from chalicelib.services.review.shared_facts import SharedFacts
from chalicelib.services.review.undo import ReviewUndo
from chalicelib.services.text import SecretFinder
from chalicelib.storage.protocols import (
    DirectoryRepository,
    MemoryRepository,
    PendingActionRepository,
    ReportStore,
    ReviewDateTaken,
    ReviewQueue,
    ReviewRepository,
    ReviewUndoRepository,
)

if TYPE_CHECKING:  # numpy: loaded by the embedder itself, on first use (cold start)
    from chalicelib.services.recall.embedding import Embedder

logger = logging.getLogger(__name__)


def report_key(workspace_id: str, agent_id: str, day: str, review_id: str) -> str:
    """S3 key of a report: ``reviews/<wsp>/<agt>/<date>/<rvw>.json``."""
    return f"reviews/{workspace_id}/{agent_id}/{day}/{review_id}.json"


REVIEW_RUN_IS_FOR_PERSONS = "Only a person can run a review; it runs nightly on its own."


PENDING_TOKEN = rf"agt_{ULID_PATTERN}#rvw_{ULID_PATTERN}#a[0-9]{{1,9}}"
"""What a list of waiting actions continues after (a pending item's sort key): the API's
``nextToken`` and the dashboard's ``after`` carry it encoded."""


class ReviewService:
    """Runs, lists and reads reviews; persons decide the actions of approval-mode ones.

    Args:
        memories: memory storage (reads, and the API's state-change writes).
        reviews: the review's own writes (system supersede, lift, claims, summaries).
        reports: where full reports are stored (S3).
        routines: to skip agents whose routine is not active.
        directory: to check a named agent and read the workspace's ``reviewApproval``.
        secrets: the secret detector (a lifted line is checked like a save).
        reviewer: the judgement (``RuleReviewer`` by default).
        clock: the current time.
        ids: the id factory.
        queue: the fan-out queue (SQS).
        embedder: embeds a lifted fact when it is created, as a save does (docs/issues.md#issue-3
            item 3); ``None``: lifted facts are embedded at recall instead.
        pending: the list of actions waiting for a person (docs/issues.md#issue-14-item-2).
        undos: undo records of applied actions (docs/issues.md#issue-14-item-3).
        shared: the look across the workspace's agents that proposes learnings
            (docs/reference.md#learnings-and-the-review); ``None``: none.
    """

    def __init__(
        self,
        memories: MemoryRepository,
        reviews: ReviewRepository,
        reports: ReportStore,
        routines: RoutineService,
        directory: DirectoryRepository,
        secrets: SecretFinder,
        reviewer: Reviewer,
        clock: Clock,
        ids: IdFactory,
        queue: ReviewQueue,
        embedder: Embedder | None = None,
        *,
        pending: PendingActionRepository,
        undos: ReviewUndoRepository,
        shared: SharedFacts | None = None,
    ) -> None:
        self._shared = shared
        self._pending = pending
        self._queue = queue
        self._memories = memories
        self._reviews = reviews
        self._reports = reports
        self._routines = routines
        self._directory = directory
        self._reviewer = reviewer
        self._clock = clock
        self._ids = ids
        self._applier = ActionApplier(memories, reviews, secrets, clock, ids, embedder)
        self._decisions = ReviewDecisions(reviews, reports, self._applier, clock, ids, undos)
        self._undo = ReviewUndo(memories, reviews, undos, self._decisions, clock, ids)

    def run_now(self, principal: Principal, request: RunReviewRequest) -> ReviewReport:
        """A person runs an agent's review now (``POST /reviews``), for yesterday (UTC).

        With ``dryRun`` the plan is returned and nothing is written (no memory
        change, no report). Otherwise the report is stored and returned; in a
        workspace with ``reviewApproval: required`` nothing is applied and every
        action is ``pending`` (docs/issues.md#issue-4-item-6).

        Raises:
            Forbidden: an agent called, or the agent is not in the workspace.
            MemoryAgentRequired: no ``agentId``.
        """
        refuse_agents(principal, REVIEW_RUN_IS_FOR_PERSONS)
        agent_id = resolve_agent(self._directory, principal, request.agent_id)
        day = review_date_for(self._clock.now())
        if request.dry_run:
            return self.plan_report(principal.workspace_id, agent_id, day)
        return self._run(principal.workspace_id, agent_id, day, "manual")

    def plan_report(
        self, workspace_id: str, agent_id: str, day: str, review_id: str | None = None
    ) -> ReviewReport:
        """A dry run's report: the plan; nothing is written (``dryRun``,
        docs/reference.md#7-http-api).

        Args:
            review_id: the id to give it (a queued dry run's); a new one when omitted.
        """
        started = self._clock.now()
        plan = self.plan(workspace_id, agent_id, day)
        return ReviewReport(
            id=review_id or self._ids.new("rvw"),
            workspace_id=workspace_id,
            agent_id=agent_id,
            date=day,
            trigger="manual",
            dry_run=True,
            reviewer=plan.reviewer,
            started_at=started,
            finished_at=self._clock.now(),
            plan=plan,
            approval=self._approval(workspace_id),
        )

    def run_queued(
        self, workspace_id: str, agent_id: str, day: str, review_id: str
    ) -> ReviewReport:
        """A person's review that was queued (``ManualReviews``, docs/issues.md#issue-12), run by
        the review worker as ``run_now`` would have run it, under the id the 202 gave."""
        return self._run(workspace_id, agent_id, day, "manual", review_id=review_id)

    def fan_out(self, event_time: datetime) -> int:
        """Enqueue one review per agent with an active routine (``schedule.fan_out``).

        Returns:
            How many messages were sent.
        """
        return schedule.fan_out(self._routines, self._queue, event_time)

    def run_scheduled(self, workspace_id: str, agent_id: str, day: str) -> ReviewReport | None:
        """The nightly review of one agent (the SQS worker): once per agent and date.

        In approval mode the one run of the date stores its plan as pending; a
        rerun of the date (a retried message) finds the date claimed and stores
        no second plan.

        Returns:
            The report, or None when the routine is not active or the date was
            reviewed already (a retried or duplicate message).
        """
        if not self._routines.is_active(agent_id):
            logger.info("review of %s skipped: routine not active", agent_id)
            return None
        review_id = self._ids.new("rvw")
        now = self._clock.now()
        try:
            self._reviews.claim_date(agent_id, day, review_id, now, now - CLAIM_LEASE)
        except ReviewDateTaken:
            logger.info("review of %s for %s already done or running", agent_id, day)
            return None
        report = self._run(workspace_id, agent_id, day, "schedule", review_id=review_id)
        self._reviews.finish_date(agent_id, day, review_id, self._clock.now())
        return report

    def plan(
        self, workspace_id: str, agent_id: str, day: str, *, review_id: str | None = None
    ) -> ReviewPlan:
        """Read the agent's facts and the day's log and ask the reviewer for a plan; the
        notes say which facts the workspace shares (with ``review_id``, not a dry run,
        those are proposed as learnings: ``SharedFacts``)."""
        context = ReviewContext(
            agent_id=agent_id,
            date=day,
            now=self._clock.now(),
            facts=all_facts(self._memories, workspace_id, agent_id),
            day_lines=self._day_lines(agent_id, day),
        )
        proposal = self._reviewer.propose(context)
        kept, notes = without_rejected(proposal.actions, self._reviews.rejections(agent_id))
        kept, waiting = without_pending(
            kept, self._pending.pending_signatures(workspace_id, agent_id)
        )
        disputed = frozenset(
            memory_id
            for action in proposal.actions
            if action.action == "resolve_conflict"
            for memory_id in (*action.memory_ids, action.keep_id or "")
        )
        shared = self._shared_notes(workspace_id, agent_id, context, review_id, disputed)
        notes = [*proposal.notes, *notes, *waiting, *shared]
        actions = [
            action.model_copy(update={"id": f"a{number}"})
            for number, action in enumerate(kept, start=1)
        ]
        return ReviewPlan(
            agent_id=agent_id,
            date=day,
            reviewer=proposal.judged_by or self._reviewer.name,
            generated_at=context.now,
            actions=actions,
            notes=notes,
        )

    def _shared_notes(
        self,
        workspace_id: str,
        agent_id: str,
        context: ReviewContext,
        review_id: str | None,
        disputed: frozenset[str],
    ) -> list[str]:
        """The notes of the look across the workspace's agents (``SharedFacts``; the facts
        in ``disputed``, this plan's conflicts, are never proposed). It reads other
        agents' facts: when that fails (a throttle on one of them), the agent's own review
        goes on without it, and says so."""
        if self._shared is None:
            return []
        try:
            return self._shared.notes(
                workspace_id,
                agent_id,
                context.facts,
                context.now,
                review_id=review_id,
                disputed=disputed,
            )
        except Exception as error:
            logger.warning("review of %s: the look across agents failed (%r)", agent_id, error)
            return [
                "The look across the workspace's agents (shared facts, learnings) failed this "
                "time; the next review tries again."
            ]

    def list_reviews(
        self, principal: Principal, agent_id: str | None, limit: int, after_id: str | None
    ) -> tuple[list[ReviewSummary], str | None]:
        """An agent's review summaries newest first (persons; the agent itself).

        Raises:
            MemoryAgentRequired, MemoryNotOwn, Forbidden: see ``resolve_agent``.
        """
        agent = resolve_agent(self._directory, principal, agent_id)
        return self._reviews.list_summaries(agent, limit, after_id)

    def count_reviews(
        self, principal: Principal, agent_id: str | None, after_id: str | None, cap: int
    ) -> ListTotal:
        """How many review summaries ``list_reviews`` lists and how many are newer than
        the page after ``after_id``; at most ``cap`` read (docs/reference.md#list-totals).

        Raises:
            MemoryAgentRequired, MemoryNotOwn, Forbidden: see ``resolve_agent``.
        """
        agent = resolve_agent(self._directory, principal, agent_id)
        return self._reviews.count_summaries(agent, after_id, cap)

    def count_pending(
        self, principal: Principal, agent_id: str | None, after: str | None, cap: int
    ) -> ListTotal:
        """How many actions ``list_pending`` lists (the workspace's, or one agent's) and
        how many come before the page after ``after``; at most ``cap`` read
        (docs/reference.md#list-totals).

        Raises:
            MemoryNotOwn, Forbidden: see ``resolve_agent``.
        """
        agent = None
        if principal.is_agent or agent_id is not None:
            agent = resolve_agent(self._directory, principal, agent_id)
        return self._pending.count_pending(principal.workspace_id, agent, after, cap)

    def get(self, principal: Principal, review_id: str) -> ReviewReport:
        """One full report (from S3) of the caller's workspace, with each action's
        decision merged in for an approval-mode review.

        Raises:
            NotFound: no such review in the workspace (or the agent's own, for an agent),
                or it is past its retention (docs/reference.md#retention).
        """
        summary = self._reviews.get_summary(review_id) if review_id.startswith("rvw_") else None
        if summary is None or summary.workspace_id != principal.workspace_id:
            raise NotFound(f"No review {review_id!r} in your workspace.")
        if principal.is_agent and summary.agent_id != principal.id:
            raise NotFound(f"No review {review_id!r} of yours.")
        return self._decisions.read_report(summary)

    def approve(
        self, principal: Principal, review_id: str, action_ref: str, keep_id: str | None = None
    ) -> ReviewReport:
        """A person approves one pending action: it is applied now, version-checked
        (for a conflict, ``keep_id`` may pick the other side).

        See ``ReviewDecisions.approve`` (errors ``forbidden``, ``not_found``,
        ``invalid_request``, ``conflict``; docs/issues.md#issue-4-item-6,
        docs/issues.md#issue-14-item-2).
        """
        return self._decisions.approve(principal, review_id, action_ref, keep_id)

    def undo(self, principal: Principal, review_id: str, action_ref: str) -> ReviewReport:
        """A person undoes one applied action: what it changed is restored.

        See ``ReviewUndo.undo`` (errors ``forbidden``, ``not_found``,
        ``invalid_request``, ``conflict``, ``review_undo_conflict``;
        docs/issues.md#issue-14-item-3).
        """
        return self._undo.undo(principal, review_id, action_ref)

    def list_pending(
        self, principal: Principal, agent_id: str | None, limit: int, after: str | None
    ) -> tuple[list[PendingAction], str | None]:
        """Review actions waiting for a person, by agent and oldest review first: a
        person's, of the workspace (or of one agent); an agent's, its own.

        Raises:
            MemoryNotOwn, Forbidden: see ``resolve_agent``.
        """
        agent = None
        if principal.is_agent or agent_id is not None:
            agent = resolve_agent(self._directory, principal, agent_id)
        return self._pending.list_pending(principal.workspace_id, agent, limit, after)

    def reject(self, principal: Principal, review_id: str, action_ref: str) -> ReviewReport:
        """A person rejects one pending action: it is never applied.

        See ``ReviewDecisions.reject`` (errors ``forbidden``, ``not_found``,
        ``invalid_request``, ``conflict``; docs/issues.md#issue-4-item-6).
        """
        return self._decisions.reject(principal, review_id, action_ref)

    def _run(
        self,
        workspace_id: str,
        agent_id: str,
        day: str,
        trigger: Trigger,
        *,
        review_id: str | None = None,
    ) -> ReviewReport:
        review_id = review_id or self._ids.new("rvw")
        started = self._clock.now()
        approval = self._approval(workspace_id)
        plan = self.plan(workspace_id, agent_id, day, review_id=review_id)
        applied: list[ActionOutcome] = []
        skipped: list[ActionOutcome] = []
        decisions: list[ActionDecision] = []
        scope = ActionScope(workspace_id, agent_id, review_id)
        for action in plan.actions:
            if decides(action, approval):
                decisions.append(ActionDecision(action_id=action.id))
                continue
            try:
                applied.append(self._applier.apply(scope, action))
            except ActionSkipped as skip:
                skipped.append(outcome_of(action, str(skip)))
        key = report_key(workspace_id, agent_id, day, review_id)
        report = ReviewReport(
            id=review_id,
            workspace_id=workspace_id,
            agent_id=agent_id,
            date=day,
            trigger=trigger,
            dry_run=False,
            reviewer=plan.reviewer,
            started_at=started,
            finished_at=self._clock.now(),
            plan=plan,
            applied=applied,
            skipped=skipped,
            report_key=key,
            approval=approval,
            decisions=decisions,
        )
        body = json.dumps(report.to_wire(), ensure_ascii=False, separators=(",", ":"))
        self._reports.put(key, body.encode("utf-8"))
        self._list_waiting(report)
        self._reviews.save_summary(report.summary())
        logger.info(
            "review %s of %s for %s: %d applied, %d skipped, %d pending",
            review_id,
            agent_id,
            day,
            len(applied),
            len(skipped),
            len(decisions),
        )
        return report

    def _list_waiting(self, report: ReviewReport) -> None:
        """Put the report's undecided actions on the pending list (before the summary:
        a crash between the two leaves list entries whose review cannot be decided
        yet, never a pending action missing from the list)."""
        waiting = {decision.action_id for decision in report.decisions}
        actions = [action for action in report.plan.actions if action.id in waiting]
        if not actions:
            return
        self._pending.put_pending(
            report.workspace_id,
            [
                PendingAction(
                    review_id=report.id,
                    agent_id=report.agent_id,
                    date=report.date,
                    approval=report.approval,
                    waiting_since=report.started_at,
                    action=action,
                )
                for action in actions
            ],
            # Only an action that waits by its nature (a conflict) blocks later reviews
            # from proposing it again; approval-mode actions are proposed again, as
            # before (approving a stale one records it skipped).
            {
                action.id: list(action.signatures().values())
                for action in actions
                if action.waits_for_person
            },
        )

    def _approval(self, workspace_id: str) -> ReviewApproval:
        """The workspace's ``reviewApproval`` (``none`` when the workspace is unknown)."""
        workspace = self._directory.get_workspace(workspace_id)
        return "none" if workspace is None else workspace.review_approval

    def _day_lines(self, agent_id: str, day: str) -> list[str]:
        row_id = self._memories.live_day_row_id(agent_id, day)
        row = None if row_id is None else self._memories.get(row_id)
        return [] if row is None else row.text.split("\n")
