"""The daily review (SPEC §9, issue 4): a typed plan of actions, and the report
of what was applied and what was skipped, with reasons.

Wire form is camelCase. A plan is made by a ``Reviewer`` and applied by
``ReviewService``; the report is stored as JSON in S3 and summarised in DynamoDB.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from chalicelib.models.common import RequestModel, Timestamp, WireModel
from chalicelib.models.requests import MAX_LIST_LIMIT, Limit

ActionKind = Literal["merge", "renew", "replace", "archive", "lift", "resolve_conflict"]
"""What an action does (SPEC §9 steps 1-5):

* ``merge``: duplicates; every id in ``memoryIds`` is superseded by ``keepId``.
* ``renew``: an expired fact recalled lately gets ``expiresAt``.
* ``replace``: an expired fact is superseded by the newer ``keepId`` that covers it.
* ``archive``: archived with ``reason`` (``expired``, or ``stale: …``).
* ``lift``: a durable day-log line becomes a fact (``text``), superseding
  ``supersedes`` when it updates one.
* ``resolve_conflict``: two facts contradict; ``keepId`` stays, the other is superseded.
"""

Trigger = Literal["schedule", "manual"]


class ReviewAction(BaseModel):
    """One planned change, explained.

    Attributes:
        id: ``a1``, ``a2``, … in plan order.
        action: see ``ActionKind``.
        memory_ids: the memories the action changes (archives, supersedes or renews).
        keep_id: the fact that stays (merge, replace, resolve_conflict).
        text: the new fact (lift).
        supersedes: the fact a lifted one updates.
        expires_at: the new expiry (renew).
        reason: why, for a person.
        evidence: what the decision rests on (texts, counts, dates, day-log lines).
        expected_versions: the version of each memory when planned; applying
            skips the action if any changed.
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    id: str
    action: ActionKind
    memory_ids: list[str] = Field(default_factory=list)
    keep_id: str | None = None
    text: str | None = None
    supersedes: str | None = None
    expires_at: Timestamp | None = None
    reason: str
    evidence: list[str] = Field(default_factory=list)
    expected_versions: dict[str, int] = Field(default_factory=dict)


class ReviewPlan(BaseModel):
    """What a reviewer proposes for one agent and one reviewed UTC date."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    agent_id: str
    date: str
    reviewer: str
    generated_at: Timestamp
    actions: list[ReviewAction] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class ActionOutcome(BaseModel):
    """What happened to one action when the plan was applied."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    action_id: str
    action: ActionKind
    detail: str
    memory_ids: list[str] = Field(default_factory=list)
    created_id: str | None = None


class ReviewReport(WireModel):
    """A review as persons read it (``GET /reviews/{id}``); stored as JSON in S3.

    ``workspace_id`` is stored, never sent.
    """

    id: str
    workspace_id: str = Field(exclude=True)
    agent_id: str
    date: str
    trigger: Trigger
    dry_run: bool
    reviewer: str
    started_at: Timestamp
    finished_at: Timestamp
    plan: ReviewPlan
    applied: list[ActionOutcome] = Field(default_factory=list)
    skipped: list[ActionOutcome] = Field(default_factory=list)
    report_key: str | None = None

    def to_wire(self) -> dict[str, Any]:
        """Return the JSON object (``object: "review"``)."""
        body = self.model_dump(mode="json", by_alias=True)
        return {"id": body.pop("id"), "object": "review", **body}

    def summary(self) -> ReviewSummary:
        """The short form kept in DynamoDB for listing."""
        return ReviewSummary(
            id=self.id,
            workspace_id=self.workspace_id,
            agent_id=self.agent_id,
            date=self.date,
            trigger=self.trigger,
            reviewer=self.reviewer,
            started_at=self.started_at,
            finished_at=self.finished_at,
            planned=len(self.plan.actions),
            applied=len(self.applied),
            skipped=len(self.skipped),
            report_key=self.report_key or "",
        )


class ReviewSummary(WireModel):
    """One line of ``GET /reviews``: counts and where the full report is."""

    id: str
    workspace_id: str = Field(exclude=True)
    agent_id: str
    date: str
    trigger: Trigger
    reviewer: str
    started_at: Timestamp
    finished_at: Timestamp
    planned: int
    applied: int
    skipped: int
    report_key: str

    def to_wire(self) -> dict[str, Any]:
        """Return the JSON object (``object: "review_summary"``)."""
        body = self.model_dump(mode="json", by_alias=True)
        return {"id": body.pop("id"), "object": "review_summary", **body}


class RunReviewRequest(RequestModel):
    """``POST /reviews``: run an agent's review now; ``dryRun`` returns the plan only."""

    agent_id: str | None = None
    dry_run: bool = False


class ReviewListQuery(BaseModel):
    """``GET /reviews`` query string: ``agentId`` (persons), ``limit``, ``nextToken``."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=False, extra="forbid")

    agent_id: str | None = None
    limit: Limit = 20
    next_token: str | None = None

    @field_validator("limit", mode="after")
    @classmethod
    def _clamp(cls, value: int) -> int:
        return min(value, MAX_LIST_LIMIT)
