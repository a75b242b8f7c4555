"""The daily review ("Memory dreaming", SPEC §9, issue 4): plan, apply, report.

A review of one agent and one UTC date (the day before the run) reads the
agent's facts and that date's day log, asks the ``Reviewer`` for a plan, checks
every proposed action against the agent's own live memories, and applies it
with the same conditional writes as the API: each action names the versions it
expects and is skipped, with the reason, when anything changed. Audit records
name the review (``actorType: system``, ``actorId: rvw_…``). The report (plan,
applied, skipped) goes to S3 as JSON and is summarised in DynamoDB.

Idempotent: a scheduled review claims ``agent + date`` conditionally, so a
retried message does nothing twice; and every action re-checks the state it
expects (a merged fact is archived, a renewed one no longer expired, a lifted
text is claimed), so any rerun, manual ones included, changes nothing twice.
"""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import UTC, datetime, timedelta

from chalicelib.errors import Forbidden, NotFound, PineworkError
from chalicelib.ids import Clock, IdFactory
from chalicelib.models.memory import AuditRecord, Memory, MemoryKind, MemoryStatus
from chalicelib.models.principal import Principal
from chalicelib.models.review import (
    ActionOutcome,
    ReviewAction,
    ReviewPlan,
    ReviewReport,
    ReviewSummary,
    RunReviewRequest,
    Trigger,
)
from chalicelib.services.memories import audit_record
from chalicelib.services.reviewer import ReviewContext, Reviewer, durable_text, normalize
from chalicelib.services.routines import RoutineService
from chalicelib.services.rules import (
    DEFAULT_FACT_LIFETIME,
    FACT_MAX_CHARS,
    SecretFinder,
    check_text,
    resolve_agent,
)
from chalicelib.storage.protocols import (
    DirectoryRepository,
    LiftClaimed,
    MemoryRepository,
    ReportStore,
    ReviewDateTaken,
    ReviewQueue,
    ReviewRepository,
    WriteConflict,
)

logger = logging.getLogger(__name__)

CLAIM_LEASE = timedelta(minutes=15)
"""A scheduled review still "running" after this long is taken over by a retry."""
_PAGE = 500


class _Skip(Exception):
    """An action is not applied; the message says why (it goes into the report)."""


def review_date_for(moment: datetime) -> str:
    """The date a review run at ``moment`` covers: the UTC day before (SPEC §9)."""
    return (moment.astimezone(UTC).date() - timedelta(days=1)).isoformat()


def report_key(workspace_id: str, agent_id: str, day: str, review_id: str) -> str:
    """S3 key of a report: ``reviews/<wsp>/<agt>/<date>/<rvw>.json``."""
    return f"reviews/{workspace_id}/{agent_id}/{day}/{review_id}.json"


class ReviewService:
    """Runs, lists and reads reviews.

    Args:
        memories: memory storage (reads, and the API's state-change writes).
        reviews: the review's own writes (system supersede, lift, claims, summaries).
        reports: where full reports are stored (S3).
        routines: to skip agents whose routine is not active.
        directory: to check a named agent.
        secrets: the secret detector (a lifted line is checked like a save).
        reviewer: the judgement (``RuleReviewer`` by default).
        clock: the current time.
        ids: the id factory.
        queue: the fan-out queue (SQS).
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
    ) -> None:
        self._queue = queue
        self._memories = memories
        self._reviews = reviews
        self._reports = reports
        self._routines = routines
        self._directory = directory
        self._secrets = secrets
        self._reviewer = reviewer
        self._clock = clock
        self._ids = ids

    def run_now(self, principal: Principal, request: RunReviewRequest) -> ReviewReport:
        """A person runs an agent's review now (``POST /reviews``), for yesterday (UTC).

        With ``dryRun`` the plan is returned and nothing is written (no memory
        change, no report). Otherwise the report is stored and returned.

        Raises:
            Forbidden: an agent called, or the agent is not in the workspace.
            MemoryAgentRequired: no ``agentId``.
        """
        if principal.is_agent:
            raise Forbidden("Only a person can run a review; it runs nightly on its own.")
        agent_id = resolve_agent(self._directory, principal, request.agent_id)
        day = review_date_for(self._clock.now())
        if request.dry_run:
            started = self._clock.now()
            plan = self.plan(principal.workspace_id, agent_id, day)
            return ReviewReport(
                id=self._ids.new("rvw"),
                workspace_id=principal.workspace_id,
                agent_id=agent_id,
                date=day,
                trigger="manual",
                dry_run=True,
                reviewer=plan.reviewer,
                started_at=started,
                finished_at=self._clock.now(),
                plan=plan,
            )
        return self._run(principal.workspace_id, agent_id, day, "manual")

    def fan_out(self, event_time: datetime) -> int:
        """Enqueue one review per agent with an active routine (the 04:00 UTC schedule).

        Pages through every workspace's active routines; each message is
        ``{"workspaceId", "agentId", "date"}`` with ``date`` the UTC day before
        ``event_time`` (the event's time, never the machine clock; PITFALLS).

        Returns:
            How many messages were sent.
        """
        day = review_date_for(event_time)
        sent = 0
        batch: list[str] = []
        for routine in self._routines.iter_active():
            batch.append(
                json.dumps(
                    {"workspaceId": routine.workspace_id, "agentId": routine.agent_id, "date": day},
                    separators=(",", ":"),
                )
            )
            if len(batch) >= _PAGE:
                sent += self._queue.send(batch)
                batch = []
        if batch:
            sent += self._queue.send(batch)
        logger.info("review fan-out for %s: %d agents", day, sent)
        return sent

    def run_scheduled(self, workspace_id: str, agent_id: str, day: str) -> ReviewReport | None:
        """The nightly review of one agent (the SQS worker): once per agent and date.

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

    def plan(self, workspace_id: str, agent_id: str, day: str) -> ReviewPlan:
        """Read the agent's facts and the day's log and ask the reviewer for a plan."""
        context = ReviewContext(
            agent_id=agent_id,
            date=day,
            now=self._clock.now(),
            facts=self._all_facts(workspace_id, agent_id),
            day_lines=self._day_lines(agent_id, day),
        )
        proposal = self._reviewer.propose(context)
        actions = [
            action.model_copy(update={"id": f"a{number}"})
            for number, action in enumerate(proposal.actions, start=1)
        ]
        return ReviewPlan(
            agent_id=agent_id,
            date=day,
            reviewer=self._reviewer.name,
            generated_at=context.now,
            actions=actions,
            notes=proposal.notes,
        )

    def list_reviews(
        self, principal: Principal, agent_id: str | None, limit: int, after_id: str | None
    ) -> tuple[list[ReviewSummary], str | None]:
        """An agent's review summaries newest first (persons; the agent itself).

        Raises:
            MemoryAgentRequired, MemoryNotOwn, Forbidden: see ``resolve_agent``.
        """
        agent = resolve_agent(self._directory, principal, agent_id)
        return self._reviews.list_summaries(agent, limit, after_id)

    def get(self, principal: Principal, review_id: str) -> ReviewReport:
        """One full report (from S3) of the caller's workspace.

        Raises:
            NotFound: no such review in the workspace (or the agent's own, for an agent).
        """
        summary = self._reviews.get_summary(review_id) if review_id.startswith("rvw_") else None
        if summary is None or summary.workspace_id != principal.workspace_id:
            raise NotFound(f"No review {review_id!r} in your workspace.")
        if principal.is_agent and summary.agent_id != principal.id:
            raise NotFound(f"No review {review_id!r} of yours.")
        body = self._reports.get(summary.report_key)
        if body is None:
            raise NotFound(f"The report of {review_id} is missing from storage.")
        return ReviewReport.model_validate(
            {**json.loads(body), "workspaceId": summary.workspace_id}
        )

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
        plan = self.plan(workspace_id, agent_id, day)
        applied: list[ActionOutcome] = []
        skipped: list[ActionOutcome] = []
        for action in plan.actions:
            try:
                applied.append(self._apply(workspace_id, agent_id, review_id, action))
            except _Skip as skip:
                skipped.append(_outcome(action, str(skip)))
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
        )
        body = json.dumps(report.to_wire(), ensure_ascii=False, separators=(",", ":"))
        self._reports.put(key, body.encode("utf-8"))
        self._reviews.save_summary(report.summary())
        logger.info(
            "review %s of %s for %s: %d applied, %d skipped",
            review_id,
            agent_id,
            day,
            len(applied),
            len(skipped),
        )
        return report

    def _all_facts(self, workspace_id: str, agent_id: str) -> list[Memory]:
        facts: list[Memory] = []
        after: str | None = None
        while True:
            page = self._memories.list_memories(
                workspace_id=workspace_id,
                agent_id=agent_id,
                status=None,
                kind=MemoryKind.FACT.value,
                limit=_PAGE,
                after_id=after,
            )
            facts.extend(page.memories)
            if page.continue_after is None:
                return facts
            after = page.continue_after

    def _day_lines(self, agent_id: str, day: str) -> list[str]:
        row_id = self._memories.live_day_row_id(agent_id, day)
        row = None if row_id is None else self._memories.get(row_id)
        return [] if row is None else row.text.split("\n")

    def _apply(
        self, workspace_id: str, agent_id: str, review_id: str, action: ReviewAction
    ) -> ActionOutcome:
        """Apply one action, or raise ``_Skip`` with the reason."""
        if action.action == "lift":
            return self._lift(workspace_id, agent_id, review_id, action)
        current = {
            memory_id: self._expected(agent_id, memory_id, action)
            for memory_id in [*action.memory_ids, *filter(None, [action.keep_id])]
        }
        if not action.memory_ids:
            raise _Skip("the action names no memory")
        if action.action in ("merge", "replace", "resolve_conflict"):
            if action.keep_id is None or action.keep_id in action.memory_ids:
                raise _Skip("the action names no distinct fact to keep")
            keeper = current[action.keep_id]
            done: list[str] = []
            for memory_id in action.memory_ids:
                try:
                    self._supersede(review_id, current[memory_id], keeper, action)
                except WriteConflict as conflict:
                    raise _Skip(
                        f"{memory_id} or {keeper.id} changed while the review ran"
                        + (f" (already applied: {', '.join(done)})" if done else "")
                    ) from conflict
                done.append(memory_id)
            return _outcome(action, f"superseded by {keeper.id}")
        (before,) = (current[memory_id] for memory_id in action.memory_ids)
        if action.action == "renew":
            if action.expires_at is None or action.expires_at <= self._clock.now():
                raise _Skip("a renewal needs a future expiresAt")
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
        audit = self._audit(review_id, verb, before, after, action.reason)
        try:
            self._memories.transition(before, after, audit)
        except WriteConflict as conflict:
            raise _Skip(f"{before.id} changed while the review ran") from conflict
        return _outcome(action, "renewed" if verb == "renew" else "archived")

    def _expected(self, agent_id: str, memory_id: str, action: ReviewAction) -> Memory:
        """The memory as the action expects it: the agent's own live fact, same version."""
        memory = self._memories.get(memory_id) if memory_id.startswith("mem_") else None
        if memory is None or memory.agent_id != agent_id or memory.kind is not MemoryKind.FACT:
            raise _Skip(f"{memory_id} is not one of the agent's facts")
        if memory.status is not MemoryStatus.ACTIVE:
            raise _Skip(f"{memory_id} is no longer live ({memory.archive_reason})")
        expected = action.expected_versions.get(memory_id)
        if expected is not None and expected != memory.version:
            raise _Skip(f"{memory_id} changed since the plan was made")
        return memory

    def _supersede(self, review_id: str, old: Memory, keeper: Memory, action: ReviewAction) -> None:
        now = self._clock.now()
        after = old.superseded(keeper.id, now)
        audit = self._audit(
            review_id, "supersede", old, after, f"{action.action} by {keeper.id}: {action.reason}"
        )
        self._reviews.supersede_by_existing(old, after, keeper, audit)

    def _lift(
        self, workspace_id: str, agent_id: str, review_id: str, action: ReviewAction
    ) -> ActionOutcome:
        text = action.text or ""
        try:
            check_text(text, limit=FACT_MAX_CHARS, what="lifted fact", secrets=self._secrets)
        except PineworkError as refused:
            raise _Skip(f"not lifted: {refused.message}") from refused
        old = None
        if action.supersedes is not None:
            old = self._expected(agent_id, action.supersedes, action)
        now = self._clock.now()
        task = next(
            (found[1] for line in action.evidence if (found := durable_text(line)) is not None),
            None,
        )
        fact = Memory(
            id=self._ids.new("mem"),
            workspace_id=workspace_id,
            agent_id=agent_id,
            kind=MemoryKind.FACT,
            text=text,
            expires_at=now + DEFAULT_FACT_LIFETIME,
            supersedes=None if old is None else old.id,
            task_key=task,
            created_at=now,
            updated_at=now,
        )
        audits: list[AuditRecord] = [
            self._audit(review_id, "create", None, fact, f"lifted: {action.reason}")
        ]
        replaced = None
        if old is not None:
            old_after = old.superseded(fact.id, now)
            audits.append(self._audit(review_id, "supersede", old, old_after, f"by {fact.id}"))
            replaced = (old, old_after)
        digest = hashlib.sha256(normalize(text).encode("utf-8")).hexdigest()
        try:
            self._reviews.create_lifted(fact, audits, digest, replaced)
        except LiftClaimed as claimed:
            raise _Skip("this text was lifted before (a retry, or a person vetoed it)") from claimed
        except WriteConflict as conflict:
            raise _Skip(f"{action.supersedes} changed while the review ran") from conflict
        outcome = _outcome(action, f"lifted as {fact.id}")
        return outcome.model_copy(update={"created_id": fact.id})

    def _audit(
        self,
        review_id: str,
        action: str,
        before: Memory | None,
        after: Memory,
        reason: str,
    ) -> AuditRecord:
        record = audit_record(self._ids, self._clock, None, action, before, after, reason)
        return record.model_copy(update={"actor_id": review_id})


def _outcome(action: ReviewAction, detail: str) -> ActionOutcome:
    return ActionOutcome(
        action_id=action.id, action=action.action, detail=detail, memory_ids=action.memory_ids
    )
