"""The learning object: a fact every agent of a workspace is told
(docs/reference.md#15-learnings, docs/issues.md#issue-25), its history record, and the
bodies of its routes."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field, field_validator

from chalicelib.characters import block_text
from chalicelib.ids import ULID_PATTERN
from chalicelib.limits import MAX_LEARNING_PAGE
from chalicelib.models.common import RequestModel, Timestamp, WireModel
from chalicelib.models.requests import Limit, Paging
from chalicelib.models.responses import (
    LearningAuditList,
    LearningAuditObject,
    LearningList,
    LearningObject,
    StateName,
)

__all__ = ["LearningAuditList", "LearningAuditObject", "LearningList", "LearningObject"]


class LearningState(StrEnum):
    """Where a learning stands (docs/reference.md#learning-states)."""

    PROPOSED = "proposed"
    ACTIVE = "active"
    REJECTED = "rejected"
    RETIRED = "retired"


LEARNING_ID_PATTERN = rf"^lrn_{ULID_PATTERN}$"


class Learning(WireModel):
    """A learning as stored and (``to_wire``) as returned. ``embedding`` (its recall
    vector) and ``version`` (the optimistic-concurrency counter behind ``ETag``) are
    stored, never sent. Times are aware UTC datetimes."""

    id: str
    workspace_id: str
    text: str
    state: LearningState
    proposed_by: str = Field(description="The agent's or person's id, or the review's.")
    proposed_by_type: Literal["agent", "person", "review"]
    run_id: str | None = None
    task_key: str | None = None
    proposed_at: Timestamp
    decided_by: str | None = None
    decided_at: Timestamp | None = None
    reason: str | None = None
    """Why it was rejected or retired."""
    edited_by: str | None = None
    evidence: list[str] | None = None
    """A review's proposal: the agents' facts (``mem_…``) that say it."""
    updated_at: Timestamp
    embedding: bytes | None = Field(default=None, exclude=True)
    version: int = Field(default=1, exclude=True)

    def to_wire(self) -> dict[str, Any]:
        """The JSON object (camelCase, ``object: "learning"``)."""
        body = self.model_dump(mode="json", by_alias=True)
        return {"id": body.pop("id"), "object": "learning", **body}

    @property
    def unreviewed(self) -> bool:
        """An agent's learning that went live without a person (``learningApproval:
        none``): active, ``decidedBy`` null, until a person approves (confirms) or retires
        it (docs/reference.md#learning-approval)."""
        return (
            self.state is LearningState.ACTIVE
            and self.proposed_by_type == "agent"
            and self.decided_by is None
        )

    def line(self) -> str:
        """Its line in the recall block: ``lrn_… (YYYY-MM-DD) text`` (the date it became
        active, else proposed), ``(YYYY-MM-DD, not reviewed)`` for an ``unreviewed`` one;
        the text as ``block_text`` shows it (docs/reference.md#block-grammar)."""
        since: datetime = self.decided_at or self.proposed_at
        mark = ", not reviewed" if self.unreviewed else ""
        return f"{self.id} ({since.date().isoformat()}{mark}) {block_text(self.text)}"


class LearningAudit(WireModel):
    """One entry of a learning's history: who did what, when, the state and text before
    and after."""

    id: str
    learning_id: str
    workspace_id: str = Field(exclude=True)
    action: Literal["propose", "approve", "edit", "reject", "retire", "erase"]
    actor_type: Literal["agent", "person", "review", "system"]
    actor_id: str
    at: Timestamp
    run_id: str | None = None
    task_key: str | None = None
    reason: str | None = None
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None

    def to_wire(self) -> dict[str, Any]:
        """The JSON object (``object: "learning_audit"``)."""
        body = self.model_dump(mode="json", by_alias=True)
        return {"id": body.pop("id"), "object": "learning_audit", **body}


class ProposeLearningRequest(RequestModel):
    """``POST /learnings``: the fact (<= 500 characters)."""

    text: str = Field(min_length=1, max_length=2000)


class ApproveLearningRequest(RequestModel):
    """``POST /learnings/{id}/approve``: ``text`` edits it as it is approved;
    ``archiveCopies`` archives the agents' facts a review cited (each one's Undo brings
    it back)."""

    text: str | None = Field(default=None, min_length=1, max_length=2000)
    archive_copies: bool = False


class EditLearningRequest(RequestModel):
    """``PATCH /learnings/{id}``: a new text for a proposed or active learning."""

    text: str = Field(min_length=1, max_length=2000)


class RejectLearningRequest(RequestModel):
    """``POST /learnings/{id}/reject``: why (1 to 500 characters)."""

    reason: str = Field(min_length=1, max_length=2000)


class RetireLearningRequest(RequestModel):
    """``POST /learnings/{id}/retire``: an optional note."""

    reason: str | None = Field(default=None, min_length=1, max_length=2000)


class LearningListQuery(Paging):
    """``GET /learnings`` (docs/reference.md#15-learnings): ``state`` filters, ``q``
    searches the text (case-insensitive), ``unreviewed=true`` keeps the active learnings
    no person reviewed (persons only), ``limit`` is from 1, default 50, over 200 read as
    200 as every list clamps its own most (a query value arrives as a string of digits,
    anything else is ``invalid_request``)."""

    state: StateName | None = None
    unreviewed: Literal["true", "false", "1", "0"] = Field(
        default="false",
        description="`true`: only the active learnings that went live without a person "
        "(`learningApproval: none`) and no person confirmed or retired since. Persons only "
        "(an agent is refused with 403 `forbidden`); with `state`, only `active`.",
    )
    q: str | None = Field(default=None, max_length=200)
    limit: Limit = 50
    next_token: str | None = Field(default=None, max_length=200)

    @field_validator("limit", mode="after")
    @classmethod
    def _clamp(cls, value: int) -> int:
        return min(value, MAX_LEARNING_PAGE)

    @property
    def only_unreviewed(self) -> bool:
        """True when ``unreviewed`` asks for the unreviewed learnings only."""
        return self.unreviewed in ("true", "1")
