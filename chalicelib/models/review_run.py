"""A person's review run that was queued instead of run inside the API call
(``POST /reviews`` answered 202; docs/issues.md#issue-12, docs/reference.md#9-review).

API Gateway stops waiting after 29 s. A manual review that may take longer (the
Bedrock reviewer, or a large store: ``ManualReviews``) is queued on the review queue
and run by the review worker; ``GET /reviews/{id}`` shows it as this object until it
is done, then as the review's report.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from chalicelib.models.common import Timestamp, WireModel

RunStatus = Literal["queued", "running", "failed", "done"]
"""Where a queued review stands:

* ``queued``: waiting for the review worker.
* ``running``: the worker is on it (a claim older than 15 minutes may be taken over).
* ``failed``: the last attempt failed (``error``); the queue retries it (up to 5
  attempts in all, then it stays ``failed``).
* ``done``: finished; ``GET /reviews/{id}`` returns the report.
"""


class ReviewRun(WireModel):
    """One queued manual review.

    Attributes:
        id: the review's id (``rvw_…``), also its report's once done.
        workspace_id: stored, never sent.
        agent_id: the agent reviewed.
        date: the UTC date reviewed (the day before the request).
        dry_run: plan only; the planned report is stored for ``GET`` to read.
        status: see ``RunStatus``.
        requested_by: the person (``usr_…``) who asked.
        requested_at, started_at, finished_at: when it was asked, last started, finished.
        attempts: how many times the worker started it.
        error: why the last attempt failed (an error's kind, never data).
        claim_id: the running attempt's claim; stored, never sent.
        report_key: where a finished dry run's report is (S3); stored, never sent.
    """

    id: str
    workspace_id: str = Field(exclude=True)
    agent_id: str
    date: str
    dry_run: bool
    status: RunStatus
    requested_by: str
    requested_at: Timestamp
    started_at: Timestamp | None = None
    finished_at: Timestamp | None = None
    attempts: int = 0
    error: str | None = None
    claim_id: str | None = Field(default=None, exclude=True)
    report_key: str | None = Field(default=None, exclude=True)

    def to_wire(self) -> dict[str, Any]:
        """The JSON object: ``object: "review"`` with ``status`` and ``trigger: manual``,
        as a report has, so a client tells them apart by ``status`` alone."""
        body = self.model_dump(mode="json", by_alias=True)
        return {"id": body.pop("id"), "object": "review", "trigger": "manual", **body}
