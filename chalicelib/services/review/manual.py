"""A person's ``POST /reviews``: inside the API call when it surely fits, else queued
(docs/issues.md#issue-12; docs/reference.md#7-http-api, docs/reference.md#9-review).

API Gateway stops waiting after 29 seconds and the caller gets a 504 while the review
may go on, or be cut off, behind it. So a manual review runs inline (200 with the
report, as before) only with the ``rules`` reviewer on a store of at most
``Settings.review_inline_max_facts`` facts (live and archived: what the review
reads); every other one, the ``bedrock`` reviewer's above all (up to four model calls
of up to 25 s each), is queued on the review queue and answered 202 with its id. The
review worker (``chalicelib/jobs/reviews.py``) runs it like the nightly ones, and
``GET /reviews/{id}`` shows it ``queued``, ``running`` or ``failed`` until it is done,
then the report. A queued dry run stores its planned report so the id can be read.
"""

from __future__ import annotations

import json
import logging

from chalicelib.errors import NotFound
from chalicelib.ids import Clock, IdFactory
from chalicelib.models.memory import MemoryKind
from chalicelib.models.principal import Principal
from chalicelib.models.review import ReviewReport
from chalicelib.models.review_requests import RunReviewRequest
from chalicelib.models.review_run import ReviewRun
from chalicelib.services.access.who import refuse_agents, resolve_agent
from chalicelib.services.review.schedule import CLAIM_LEASE, review_date_for
from chalicelib.services.review.service import (
    REVIEW_RUN_IS_FOR_PERSONS,
    ReviewService,
    report_key,
)
from chalicelib.storage.protocols import (
    DirectoryRepository,
    MemoryRepository,
    ReportStore,
    ReviewQueue,
    ReviewRepository,
    ReviewRunRepository,
    ReviewRunTaken,
)

logger = logging.getLogger(__name__)


class ManualReviews:
    """Starts persons' reviews (inline or queued), shows queued ones, runs them.

    Args:
        reviews: the review service that plans and applies.
        runs: where queued runs are recorded.
        summaries: to see whether a queued review already stored its report.
        reports: where reports are stored (a queued dry run's goes there too).
        memories: to size the agent's store.
        directory: to check the named agent.
        queue: the review queue the worker reads.
        clock, ids: the time and new ids.
        reviewer: the configured reviewer's kind (``rules`` or ``bedrock``).
        inline_max_facts: the largest store reviewed inline (0: none).
    """

    def __init__(
        self,
        reviews: ReviewService,
        runs: ReviewRunRepository,
        summaries: ReviewRepository,
        reports: ReportStore,
        memories: MemoryRepository,
        directory: DirectoryRepository,
        queue: ReviewQueue,
        clock: Clock,
        ids: IdFactory,
        *,
        reviewer: str,
        inline_max_facts: int,
    ) -> None:
        self._reviews = reviews
        self._runs = runs
        self._summaries = summaries
        self._reports = reports
        self._memories = memories
        self._directory = directory
        self._queue = queue
        self._clock = clock
        self._ids = ids
        self._reviewer = reviewer
        self._inline_max_facts = inline_max_facts

    def start(self, principal: Principal, request: RunReviewRequest) -> ReviewReport | ReviewRun:
        """Run an agent's review now, or queue it (``POST /reviews``).

        Returns:
            The report (run inline), or the queued run (``status: queued``).

        Raises:
            Forbidden: an agent called, or the agent is not in the workspace.
            MemoryAgentRequired: no ``agentId``.
        """
        refuse_agents(principal, REVIEW_RUN_IS_FOR_PERSONS)
        agent_id = resolve_agent(self._directory, principal, request.agent_id)
        if self.runs_inline(principal.workspace_id, agent_id):
            return self._reviews.run_now(principal, request)
        now = self._clock.now()
        run = ReviewRun(
            id=self._ids.new("rvw"),
            workspace_id=principal.workspace_id,
            agent_id=agent_id,
            date=review_date_for(now),
            dry_run=request.dry_run,
            status="queued",
            requested_by=principal.id,
            requested_at=now,
        )
        self._runs.create(run)
        message = {
            "workspaceId": run.workspace_id,
            "agentId": run.agent_id,
            "date": run.date,
            "reviewId": run.id,
        }
        self._queue.send([json.dumps(message, separators=(",", ":"))])
        logger.info("review %s of %s queued (reviewer %s)", run.id, agent_id, self._reviewer)
        return run

    def runs_inline(self, workspace_id: str, agent_id: str) -> bool:
        """Whether the agent's review surely fits in the API call: the ``rules``
        reviewer and at most ``inline_max_facts`` facts (read until one more is seen)."""
        if self._reviewer != "rules" or self._inline_max_facts <= 0:
            return False
        page = self._memories.list_memories(
            workspace_id=workspace_id,
            agent_id=agent_id,
            status=None,
            kind=MemoryKind.FACT.value,
            limit=self._inline_max_facts,
            after_id=None,
        )
        return page.continue_after is None

    def get(self, principal: Principal, review_id: str) -> ReviewReport | ReviewRun:
        """One review (``GET /reviews/{id}``): the report, or the queued run until done.

        Raises:
            NotFound: no such review in the workspace (or the agent's own, for an agent),
                or it is past its retention (docs/reference.md#retention).
        """
        run = self._runs.get(review_id) if review_id.startswith("rvw_") else None
        if run is None:
            return self._reviews.get(principal, review_id)
        if run.workspace_id != principal.workspace_id or (
            principal.is_agent and run.agent_id != principal.id
        ):
            raise NotFound(f"No review {review_id!r} in your workspace.")
        if run.status != "done":
            return run
        if run.report_key is None:
            return self._reviews.get(principal, review_id)
        body = self._reports.get(run.report_key)
        if body is None:
            raise NotFound(f"The report of {review_id} is missing from storage.")
        return ReviewReport.model_validate({**json.loads(body), "workspaceId": run.workspace_id})

    def run_queued(self, review_id: str) -> ReviewReport | None:
        """The review worker's part: run one queued review, once.

        A run that is done, or held by a live claim, is left alone (a duplicate
        message). A review that already stored its report is only marked done (its
        attempt died after that), so a retry never applies or reports it twice.

        Returns:
            The report, or None when there was nothing to do.

        Raises:
            Exception: whatever the review raised; the run is marked ``failed`` first,
                and the queue retries the message.
        """
        now = self._clock.now()
        claim = self._ids.new("clm")
        try:
            run = self._runs.claim(review_id, claim, now, now - CLAIM_LEASE)
        except ReviewRunTaken:
            logger.info("queued review %s is done or running; nothing to do", review_id)
            return None
        try:
            report, key = self._review(run)
        except Exception as error:
            self._runs.fail(run.id, claim, self._clock.now(), type(error).__name__)
            raise
        self._runs.finish(run.id, claim, self._clock.now(), key)
        return report

    def _review(self, run: ReviewRun) -> tuple[ReviewReport | None, str | None]:
        """Run it; return the report and, for a dry run, where it was stored."""
        if run.dry_run:
            report = self._reviews.plan_report(run.workspace_id, run.agent_id, run.date, run.id)
            key = report_key(run.workspace_id, run.agent_id, run.date, run.id)
            body = json.dumps(report.to_wire(), ensure_ascii=False, separators=(",", ":"))
            self._reports.put(key, body.encode("utf-8"))
            return report, key
        if self._summaries.get_summary(run.id) is not None:
            return None, None
        return self._reviews.run_queued(run.workspace_id, run.agent_id, run.date, run.id), None
