"""Response bodies of the HTTP API as pydantic models (docs/issues.md#issue-15): the shapes the
OpenAPI document (``chalicelib/api/openapi.py``) publishes and the views render.

Stored objects keep their own ``to_wire`` (``Memory``, ``Routine``, ``ReviewReport``
…); the models here describe exactly what those return (a test checks each one
round-trips), and wrap them where a view used to build a dict: list pages and
recall answers. Every model is closed (``extra="forbid"``), so a field added on the
wire without its model fails the tests and the fuzzer's schema check.
Timestamps are RFC 3339 UTC strings with milliseconds (``2026-11-30T01:02:03.456Z``).
"""

from __future__ import annotations

from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, WithJsonSchema
from pydantic.alias_generators import to_camel

from chalicelib.limits import MAX_METADATA_KEYS, MAX_TAGS, TAG_MAX_CHARS, TAG_PATTERN
from chalicelib.models.principal import ReviewApproval
from chalicelib.models.review import (
    ActionDecision,
    ActionOutcome,
    ActionUndo,
    ReviewAction,
    ReviewPlan,
    Trigger,
)

WireTime = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]
"""An RFC 3339 UTC timestamp as sent (kept as the exact string)."""
WireDate = Annotated[str, WithJsonSchema({"type": "string", "format": "date"})]
Tag = Annotated[str, StringConstraints(pattern=f"^{TAG_PATTERN}$", max_length=TAG_MAX_CHARS)]
"""A stored tag (docs/reference.md#tags)."""
"""A UTC date, ``YYYY-MM-DD``."""


class ResponseModel(BaseModel):
    """Base of response bodies: camelCase on the wire, closed, rendered by ``wire``."""

    # defer_build: validators are built on first use, not at import (cold start).
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        defer_build=True,
    )

    def wire(self) -> dict[str, Any]:
        """The JSON object as the API sends it (camelCase, ``null`` kept)."""
        return self.model_dump(mode="json", by_alias=True)


class MemoryObject(ResponseModel):
    """A memory (docs/reference.md#3-the-memory-object): a fact or a day row. ``expired`` is
    computed at read time.

    Sent with an ``ETag`` header naming its version (``If-Match`` on changes).
    """

    id: str = Field(description="`mem_` + a ULID.")
    object: Literal["memory"]
    agent_id: str = Field(description="The owner, `agt_…`.")
    kind: Literal["fact", "day"]
    date: WireDate | None = Field(description="The UTC date of a day row; null for a fact.")
    text: str = Field(description="The fact, or the day's lines joined by a newline.")
    tags: list[Tag] = Field(
        max_length=MAX_TAGS,
        description="The fact's tags, sorted, each once (docs/reference.md#tags); [] for a "
        "day row and an erased memory.",
    )
    metadata: dict[str, bool | int | float | str] = Field(
        max_length=MAX_METADATA_KEYS,
        description="The fact's metadata, keys sorted (docs/reference.md#metadata); {} for "
        "a day row and an erased memory.",
    )
    expires_at: WireTime
    status: Literal["active", "archived", "erased"] = Field(
        description="`erased`: a tombstone, its text gone (docs/reference.md#erasing-a-memory)."
    )
    archive_reason: str | None = Field(
        description="Why it was archived; `superseded` and `vetoed` are the system's."
    )
    archived_at: WireTime | None
    supersedes: str | None = Field(description="The `mem_…` this memory replaced.")
    superseded_by: str | None = Field(description="The `mem_…` that replaced this one.")
    run_id: str | None
    task_key: str | None
    saved_by_agent_id: str | None
    edited_by_person_id: str | None
    recall_count: int = Field(ge=0, description="How many recalls picked it.")
    last_recalled_at: WireTime | None
    created_at: WireTime
    updated_at: WireTime
    erased_at: WireTime | None = Field(description="When a person erased it; null otherwise.")
    erased_by: str | None = Field(description="The `usr_…` who erased it.")
    erase_reason: str | None = Field(description="The reason given for the erasure.")
    expired: bool = Field(description="True once `expiresAt` has passed.")


class AuditObject(ResponseModel):
    """One entry of a memory's history (docs/reference.md#4-states): who did what, when,
    before/after."""

    id: str
    object: Literal["audit"]
    memory_id: str
    action: str = Field(
        description="`create`, `append`, `edit`, `archive`, `veto`, `unarchive`, "
        "`supersede`, `undo`, a review's action, or `absorb` (on the fact a review's merge "
        "kept; its `reason` starts with the absorbed fact's id)."
    )
    actor_type: Literal["agent", "person", "system"]
    actor_id: str | None
    at: WireTime
    reason: str | None
    before: dict[str, Any] | None = Field(
        description="The memory before the change (its wire form without `expired`); "
        "null on create."
    )
    after: dict[str, Any] | None = Field(description="The memory after the change.")
    evidence: str | None = Field(description="On a fact's `create`: the save's evidence.")


class ScoredMemoryObject(ResponseModel):
    """A memory a recall picked, with its relevance score (null on fallback)."""

    score: float | None = Field(ge=0, le=1)
    memory: MemoryObject


StateName = Literal["proposed", "active", "rejected", "retired"]
"""A learning's states (``models.learning.LearningState``), as the wire schemas name them."""


class LearningObject(ResponseModel):
    """A learning on the wire."""

    id: str
    object: Literal["learning"]
    workspace_id: str
    text: str
    state: StateName
    proposed_by: str
    proposed_by_type: Literal["agent", "person", "review"]
    run_id: str | None
    task_key: str | None
    proposed_at: WireTime
    decided_by: str | None
    decided_at: WireTime | None
    reason: str | None
    edited_by: str | None
    evidence: list[str] | None = Field(
        description="A review's proposal: the agents' facts that say it (`mem_…`)."
    )
    updated_at: WireTime


class LearningAuditObject(ResponseModel):
    """A learning's history record on the wire."""

    id: str
    object: Literal["learning_audit"]
    learning_id: str
    action: Literal["propose", "approve", "edit", "reject", "retire", "erase"]
    actor_type: Literal["agent", "person", "review", "system"]
    actor_id: str
    at: WireTime
    run_id: str | None
    task_key: str | None
    reason: str | None
    before: dict[str, Any] | None
    after: dict[str, Any] | None


class ScoredLearningObject(ResponseModel):
    """A learning a recall picked, with its relevance score (null on fallback)."""

    score: float | None = Field(ge=0, le=1)
    learning: LearningObject


class ScoredSectionObject(ResponseModel):
    """A wiki section a recall showed (docs/reference.md#wiki-in-recall)."""

    score: float = Field(ge=0.5, le=1)
    page_id: str = Field(description="`pag_…`: the published page it is part of.")
    index: int = Field(ge=0, description="Its position among the page's sections, from 0.")
    anchor: str = Field(description="Its heading's anchor (empty before the first heading).")
    slug: str
    title: str = Field(description="The page's title.")
    heading_path: list[str] = Field(description="The page title, then each enclosing heading.")
    text: str = Field(description="The section's Markdown, as stored (no heading line).")


class RecallObject(ResponseModel):
    """The answer of on-demand (``object: recall``) and run-start (``recall_start``)
    recall (docs/reference.md#8-recall): the scored memories, best first, and the ``--- MEMORY ---``
    block, or ``skipped: true`` with the ``reason`` and no block."""

    object: Literal["recall", "recall_start"]
    recall_id: str | None = Field(description="The recall log entry (`rcl_…`); null if skipped.")
    skipped: bool
    reason: str | None = Field(description="Why no block was given (run-start recall).")
    query: str = Field(description="The text the facts were scored against.")
    fallback: Literal["newest"] | None = Field(
        description="`newest` when scoring failed or ran out of time (docs/reference.md#8-recall)."
    )
    memories: list[ScoredMemoryObject]
    learnings: list[ScoredLearningObject] = Field(
        description="The workspace's learnings given, best first "
        "(docs/reference.md#learnings-in-recall)."
    )
    sections: list[ScoredSectionObject] = Field(
        default_factory=list,
        description="The wiki sections given, best first (docs/reference.md#wiki-in-recall).",
    )
    wiki_failed: bool = Field(
        default=False,
        description="Scoring the wiki's sections failed: none was given, and the block says so.",
    )
    block: str | None


class RecalledMemoryObject(ResponseModel):
    """One memory of a recall log entry and its score."""

    memory_id: str
    score: float | None


class RecalledLearningObject(ResponseModel):
    """One learning of a recall log entry and its score."""

    learning_id: str
    score: float | None


class RecalledSectionObject(ResponseModel):
    """One wiki section of a recall log entry: its page, position, anchor and score."""

    page_id: str
    index: int
    anchor: str
    score: float


class RecallBlockObject(ResponseModel):
    """The block a logged recall gave, rebuilt (docs/reference.md#what-a-run-saw)."""

    object: Literal["recall_block"]
    recall_id: str
    agent_id: str
    kind: Literal["start", "on_demand"]
    at: WireTime
    query: str
    rebuilt: Literal[True] = Field(
        description="Always true: the block is rebuilt from the log and the audit history, "
        "not stored."
    )
    block: str = Field(description="The block, with the facts as they were then.")
    erased: list[str] = Field(
        description="Facts the run was shown whose text has been erased since: left out."
    )
    learnings_changed: list[str] = Field(
        description="Learnings the run was shown that were changed, retired or erased "
        "since: left out."
    )
    sections: list[RecalledSectionObject] = Field(
        description="The wiki sections the run was shown, by page and heading; not in `block`."
    )


class RecallLogObject(ResponseModel):
    """One recall as the recall (injection) log keeps it."""

    id: str
    object: Literal["recall_log"]
    agent_id: str
    kind: Literal["start", "on_demand"]
    session_id: str | None
    run_id: str | None
    task_key: str | None
    query: str
    fallback: str | None
    at: WireTime
    memories: list[RecalledMemoryObject]
    learnings: list[RecalledLearningObject] = Field(
        description="The workspace's learnings this recall gave "
        "(docs/reference.md#learnings-in-recall)."
    )
    sections: list[RecalledSectionObject] = Field(
        default_factory=list,
        description="The wiki sections this recall showed (docs/reference.md#wiki-in-recall).",
    )
    wiki_failed: bool = Field(
        default=False, description="Scoring the wiki's sections failed: none was shown."
    )


class RoutineObject(ResponseModel):
    """An agent's "Memory dreaming" routine (docs/reference.md#9-review)."""

    id: str = Field(description="`rtn_…` (the agent's ULID).")
    object: Literal["routine"]
    agent_id: str
    name: str
    schedule: str = Field(description="EventBridge expression, `cron(0 4 * * ? *)`.")
    status: Literal["active", "paused", "deleted"]
    created_at: WireTime
    updated_at: WireTime
    updated_by_person_id: str | None
    schedule_description: str
    timezone: Literal["UTC"]


class ReviewObject(ResponseModel):
    """A review report (docs/reference.md#9-review): its plan, what was applied and skipped, and the
    decisions of an approval-mode review."""

    id: str
    object: Literal["review"]
    status: Literal["planned", "pending", "done"]
    agent_id: str
    date: WireDate
    trigger: Trigger
    dry_run: bool
    reviewer: str
    started_at: WireTime
    finished_at: WireTime
    plan: ReviewPlan
    applied: list[ActionOutcome]
    skipped: list[ActionOutcome]
    report_key: str | None
    approval: ReviewApproval
    decisions: list[ActionDecision]
    undone: list[ActionUndo]


class ReviewRunObject(ResponseModel):
    """A review queued instead of run inside the call (``POST /reviews`` answered 202;
    ``GET /reviews/{id}`` until it is done; docs/issues.md#issue-12): ``status`` says where it
    stands."""

    id: str
    object: Literal["review"]
    trigger: Literal["manual"]
    agent_id: str
    date: WireDate
    dry_run: bool
    status: Literal["queued", "running", "failed", "done"]
    requested_by: str
    requested_at: WireTime
    started_at: WireTime | None
    finished_at: WireTime | None
    attempts: int
    error: str | None


class PendingActionObject(ResponseModel):
    """One review action waiting for a person (``GET /reviews/pending``;
    docs/issues.md#issue-14)."""

    object: Literal["pending_action"]
    review_id: str
    agent_id: str
    date: WireDate
    approval: ReviewApproval
    waiting_since: WireTime
    action: ReviewAction


class ReviewSummaryObject(ResponseModel):
    """One line of ``GET /reviews``: counts, and where the full report is."""

    id: str
    object: Literal["review_summary"]
    status: Literal["pending", "done"]
    agent_id: str
    date: WireDate
    trigger: Trigger
    reviewer: str
    started_at: WireTime
    finished_at: WireTime
    planned: int
    applied: int
    skipped: int
    report_key: str
    approval: ReviewApproval
    pending: int
    rejected: int
    undone: int


ItemT = TypeVar("ItemT", bound=ResponseModel)


class ListPage(ResponseModel, Generic[ItemT]):
    """A page of a list (docs/reference.md#5-limits): at most ``limit`` items, and the ``nextToken``
    of the next page (null on the last)."""

    object: Literal["list"] = "list"
    data: list[ItemT]
    next_token: str | None


class LearningList(ListPage[LearningObject]):
    """``GET /learnings``: proposed first (oldest first), then the others newest first."""


class LearningAuditList(ListPage[LearningAuditObject]):
    """``GET /learnings/{id}/history``: records oldest first."""


class MemoryList(ListPage[MemoryObject]):
    """``GET /memories``: memories newest first."""


class AuditList(ListPage[AuditObject]):
    """``GET /memories/{id}/history``: audit records oldest first."""


class RecallLogList(ListPage[RecallLogObject]):
    """``GET /recalls``: the recall log, newest first."""


class RoutineList(ListPage[RoutineObject]):
    """``GET /routines``: routines by agent id."""


class ReviewList(ListPage[ReviewSummaryObject]):
    """``GET /reviews``: review summaries, newest first."""


class PendingList(ListPage[PendingActionObject]):
    """``GET /reviews/pending``: actions waiting for a person, by agent, oldest review first."""


class KvRemembered(ResponseModel):
    """``remember`` (docs/reference.md#10-key-value)."""

    stored: Literal[True]
    key: str
    ttl: Literal["permanent", "24h"]
    revision: int | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="The entry's new revision; only when `ifRevision` was sent "
        "(docs/reference.md#kv-revisions).",
    )


class KvRecalled(ResponseModel):
    """``recall {key}`` (docs/reference.md#10-key-value): the stored string, not parsed back; null
    if missing."""

    key: str
    value: str | None
    found: bool
    revision: int | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="The entry's revision (0 when missing); only with `withRevision` "
        "(docs/reference.md#kv-revisions).",
    )


class KvKeys(ResponseModel):
    """``recall {}`` (docs/reference.md#kv-listing): one page of the caller's keys and the
    scope's key ``count``; while more keys follow, ``next`` (the cursor of the next page)
    and ``truncated: true``. The last page is the seed's exact ``{keys, count}``."""

    keys: list[str]
    count: int
    next_cursor: str | None = Field(
        default=None, alias="next", exclude_if=lambda value: value is None
    )
    truncated: Literal[True] | None = Field(default=None, exclude_if=lambda value: value is None)


class KvForgotten(ResponseModel):
    """``forget`` (docs/reference.md#10-key-value)."""

    deleted: bool
    key: str


class SignInLinkObject(ResponseModel):
    """A one-time dashboard sign-in link (docs/reference.md#13-dashboard), shown once."""

    object: Literal["sign_in_link"]
    path: str = Field(description="Relative to the API's root; works once, for 10 minutes.")
    expires_at: WireTime


class ErrorDetail(ResponseModel):
    """The error of an envelope: a stable code (docs/reference.md#6-errors) and what to do."""

    code: str
    message: str


class ErrorEnvelope(ResponseModel):
    """Every error: ``{"error": {"code", "message"}}`` with the status of
    docs/reference.md#6-errors."""

    error: ErrorDetail


class JsonRpcError(BaseModel):
    """A JSON-RPC 2.0 error object (``/mcp``); ``data.code`` carries our error code
    when the request was refused before dispatch."""

    model_config = ConfigDict(extra="allow")

    code: int
    message: str
    data: Any = None


class JsonRpcMessage(BaseModel):
    """One JSON-RPC 2.0 message of the MCP endpoint (docs/reference.md#11-mcp): a request, a
    notification (no ``id``), or a response (``result`` or ``error``)."""

    model_config = ConfigDict(extra="allow")

    jsonrpc: Literal["2.0"]
    id: str | int | None = None
    method: str | None = None
    params: dict[str, Any] | list[Any] | None = None
    result: Any = None
    error: JsonRpcError | None = None
