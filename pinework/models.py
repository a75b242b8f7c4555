"""Typed results of the Pinework HTTP API, as the Python client returns them.

The wire is camelCase JSON (docs/reference.md#3-the-memory-object, docs/reference.md#7-http-api);
these models expose snake_case attributes and accept either spelling. They ignore fields they do not
know, so an older client keeps working when the server adds fields. Each model built
from a response keeps the JSON exactly as the server sent it in ``raw`` (the
CLI prints that for ``--json``).
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr
from pydantic.alias_generators import to_camel

__all__ = [
    "ActionDecision",
    "AuditPage",
    "AuditRecord",
    "KvForgetResult",
    "KvKeys",
    "KvRememberResult",
    "KvValue",
    "Memory",
    "MemoryPage",
    "PendingAction",
    "PendingPage",
    "RecallResult",
    "ReviewPage",
    "ReviewReport",
    "Routine",
    "RoutinePage",
    "ScoredMemory",
    "WireModel",
]


class WireModel(BaseModel):
    """Base of every API result: camelCase aliases, unknown fields ignored, immutable."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="ignore",
        frozen=True,
    )

    _raw: dict[str, Any] | None = PrivateAttr(default=None)
    _etag: str | None = PrivateAttr(default=None)

    @classmethod
    def from_wire(cls, data: Any) -> Self:
        """Validate a decoded JSON response and remember it verbatim.

        Args:
            data: the decoded JSON body of a response.

        Returns:
            The model, whose ``raw`` is ``data`` itself.

        Raises:
            pydantic.ValidationError: ``data`` does not have this model's shape.
        """
        model = cls.model_validate(data)
        if isinstance(data, dict):
            model._raw = data
        return model

    @property
    def etag(self) -> str | None:
        """The answer's ``ETag`` header (a memory's version, for ``if_match``), or None.

        Returns:
            The header as received, quotes included, when this model was decoded
            from an answer that carried one.
        """
        return self._etag

    @property
    def raw(self) -> dict[str, Any]:
        """The JSON the server sent (camelCase, unknown fields included).

        Returns:
            The response body as received when built by ``from_wire``; otherwise
            this model dumped to its wire form.
        """
        if self._raw is not None:
            return self._raw
        return self.model_dump(mode="json", by_alias=True)


class Memory(WireModel):
    """A fact or a day row (docs/reference.md#3-the-memory-object).

    Attributes:
        id: ``mem_`` + ULID.
        object_type: always ``"memory"`` (wire name ``object``).
        agent_id: the owner, ``agt_…``.
        kind: ``fact`` or ``day``.
        date: the UTC date of a day row; ``None`` for a fact.
        text: the fact, or the day's lines joined by ``\\n``.
        tags: the fact's tags, sorted, each once (docs/reference.md#tags); empty for a
            day row.
        metadata: the fact's metadata, keys sorted (docs/reference.md#metadata); empty
            for a day row.
        expires_at: when it expires (UTC).
        expired: ``True`` once ``expires_at`` has passed (computed by the server).
        status: ``active``, ``archived`` or ``erased``.
        archive_reason: why it was archived (``superseded`` and ``vetoed`` are
            the system's).
        archived_at: when it was archived.
        supersedes: the ``mem_…`` this one replaced.
        superseded_by: the ``mem_…`` that replaced this one.
        run_id: the run that saved it.
        task_key: the task that run worked on.
        saved_by_agent_id: set when an agent saved it.
        edited_by_person_id: set when a person saved or edited it.
        recall_count: how many recalls picked it.
        last_recalled_at: when a recall last picked it.
        created_at: when it was created (UTC).
        updated_at: when it last changed (UTC).
        erased_at, erased_by, erase_reason: set on a tombstone (``status`` ``erased``):
            when, by which person, why.
    """

    id: str
    object_type: str = Field(default="memory", alias="object")
    agent_id: str
    kind: str
    date: dt.date | None = None
    text: str
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, bool | int | float | str] = Field(default_factory=dict)
    expires_at: dt.datetime
    expired: bool = False
    status: str
    archive_reason: str | None = None
    archived_at: dt.datetime | None = None
    supersedes: str | None = None
    superseded_by: str | None = None
    run_id: str | None = None
    task_key: str | None = None
    saved_by_agent_id: str | None = None
    edited_by_person_id: str | None = None
    recall_count: int = 0
    last_recalled_at: dt.datetime | None = None
    created_at: dt.datetime
    updated_at: dt.datetime
    erased_at: dt.datetime | None = None
    erased_by: str | None = None
    erase_reason: str | None = None


class MemoryPage(WireModel):
    """One page of ``GET /memories``, newest first (docs/reference.md#7-http-api).

    Attributes:
        object_type: always ``"list"``.
        data: the memories of this page.
        next_token: pass it back as ``next_token`` for the next page; ``None``
            on the last page.
    """

    object_type: str = Field(default="list", alias="object")
    data: list[Memory]
    next_token: str | None = None


class AuditRecord(WireModel):
    """One state change of a memory (docs/reference.md#4-states): who, when, what, before/after.

    Attributes:
        id: the audit record's id.
        object_type: always ``"audit"``.
        memory_id: the memory it concerns.
        action: what happened (e.g. ``save``, ``archive``, ``veto``).
        actor_type: ``agent``, ``person`` or ``system``.
        actor_id: who did it.
        at: when (UTC).
        reason: the reason given, if any.
        before: the memory before the change; ``None`` on creation and on a day line's
            ``append``. A plain dict where it is not a whole memory: after an erasure
            its ``text`` is null (docs/reference.md#erasing-a-memory).
        after: the memory after the change; for an ``append``, a dict
            ``{"object": "dayLine", "line", "runId", "taskKey"}``
            (docs/reference.md#day-line-history).
        evidence: on a fact's ``create``, the excerpt the save carried to support it.
    """

    id: str
    object_type: str = Field(default="audit", alias="object")
    memory_id: str
    action: str
    actor_type: str
    actor_id: str | None = None
    at: dt.datetime
    reason: str | None = None
    # a whole memory where the record holds one, else the dict as sent
    before: Memory | dict[str, Any] | None = Field(default=None, union_mode="left_to_right")
    after: Memory | dict[str, Any] | None = Field(default=None, union_mode="left_to_right")
    evidence: str | None = None


class AuditPage(WireModel):
    """The audit records of one memory (``GET /memories/{id}/history``).

    Attributes:
        object_type: always ``"list"``.
        data: the records.
        next_token: token for the next page; ``None`` on the last page.
    """

    object_type: str = Field(default="list", alias="object")
    data: list[AuditRecord]
    next_token: str | None = None


class ScoredMemory(WireModel):
    """A memory picked by a recall, with its relevance score.

    Attributes:
        score: relevance in [0, 1]; recall keeps scores >= 0.5 (docs/reference.md#8-recall);
            ``None`` when the recall fell back to the newest facts.
        memory: the memory.
    """

    score: float | None = None
    memory: Memory


class Learning(WireModel):
    """A learning: a fact every agent of a workspace is told (docs/reference.md#15-learnings,
    the object: docs/reference.md#learning-object).

    Attributes:
        id: ``lrn_`` + ULID.
        object_type: always ``"learning"`` (wire name ``object``).
        workspace_id: the workspace, ``wsp_…``.
        text: the fact (1 to 500 characters).
        state: ``proposed``, ``active``, ``rejected`` or ``retired``
            (docs/reference.md#learning-states).
        proposed_by, proposed_by_type: who proposed it (``agent``, ``person`` or ``review``).
        run_id, task_key: the proposing agent's run headers.
        proposed_at: when it was proposed (UTC).
        decided_by, decided_at: who approved, rejected or retired it, and when (``None``
            while proposed, and for an agent's proposal that went live at once).
        reason: why it was rejected or retired.
        edited_by: the person who last edited its text.
        evidence: a review's proposal: the agents' facts (``mem_…``) that say it.
        updated_at: when it last changed (UTC).

    Its ``etag`` (the answer's ``ETag``) is what the decisions' ``if_match`` takes.
    """

    id: str
    object_type: str = Field(default="learning", alias="object")
    workspace_id: str
    text: str
    state: str
    proposed_by: str
    proposed_by_type: str
    run_id: str | None = None
    task_key: str | None = None
    proposed_at: dt.datetime
    decided_by: str | None = None
    decided_at: dt.datetime | None = None
    reason: str | None = None
    edited_by: str | None = None
    evidence: list[str] | None = None
    updated_at: dt.datetime


class LearningPage(WireModel):
    """A page of ``GET /learnings``, newest first (docs/reference.md#15-learnings).

    Attributes:
        object_type: always ``"list"``.
        data: the learnings.
        next_token: the ``next_token`` of the next page; ``None`` on the last.
    """

    object_type: str = Field(default="list", alias="object")
    data: list[Learning]
    next_token: str | None = None


class LearningAuditRecord(WireModel):
    """One history record of a learning (``GET /learnings/{id}/history``;
    docs/reference.md#learning-states).

    Attributes:
        id: the record's id.
        object_type: always ``"learning_audit"``.
        learning_id: the ``lrn_…``.
        action: ``propose``, ``approve``, ``edit``, ``reject`` or ``retire``.
        actor_type, actor_id: who did it (``agent``, ``person`` or ``review``).
        at: when (UTC).
        run_id, task_key: the acting agent's run headers.
        reason: the rejection's or retirement's reason.
        before, after: the learning's ``state`` and ``text`` before and after.
    """

    id: str
    object_type: str = Field(default="learning_audit", alias="object")
    learning_id: str
    action: str
    actor_type: str
    actor_id: str
    at: dt.datetime
    run_id: str | None = None
    task_key: str | None = None
    reason: str | None = None
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None


class LearningAuditPage(WireModel):
    """A learning's history records, oldest first, in one page
    (docs/reference.md#15-learnings)."""

    object_type: str = Field(default="list", alias="object")
    data: list[LearningAuditRecord]
    next_token: str | None = None


class ScoredLearning(WireModel):
    """A learning a recall gave, with its relevance score (``None`` on fallback)."""

    score: float | None = None
    learning: Learning


class ScoredSection(WireModel):
    """A wiki section a recall gave (docs/reference.md#wiki-in-recall): its page, its
    place in the page, its heading path, its text and its score."""

    score: float
    page_id: str
    index: int
    anchor: str = ""
    slug: str
    title: str
    heading_path: list[str] = Field(default_factory=list)
    text: str


class RecallResult(WireModel):
    """The answer of ``POST /memories/recall`` (docs/reference.md#8-recall).

    Attributes:
        object_type: always ``"recall"``.
        query: the text the memories were scored against.
        fallback: ``"newest"`` when scoring failed and the newest facts were
            returned instead; ``None`` otherwise.
        memories: the picked memories, best first.
        learnings: the workspace's learnings it gave, best first
            (docs/reference.md#learnings-in-recall).
        sections: the wiki sections it gave, best first
            (docs/reference.md#wiki-in-recall).
        wiki_failed: scoring the wiki's sections failed (none was given).
        block: the rendered block (``--- WIKI ---`` when the workspace has published
            pages, learnings, then ``--- MEMORY ---``).
    """

    object_type: str = Field(default="recall", alias="object")
    recall_id: str | None = None
    skipped: bool = False
    reason: str | None = None
    query: str | None = None
    fallback: str | None = None
    memories: list[ScoredMemory]
    learnings: list[ScoredLearning] = Field(default_factory=list)
    sections: list[ScoredSection] = Field(default_factory=list)
    wiki_failed: bool = False
    block: str | None = ""


class RecalledMemoryRef(WireModel):
    """One memory of a recall log entry and its score (``None`` on fallback)."""

    memory_id: str
    score: float | None = None


class RecalledLearningRef(WireModel):
    """One learning of a recall log entry and its score (``None`` on fallback)."""

    learning_id: str
    score: float | None = None


class RecalledSectionRef(WireModel):
    """One wiki section of a recall log entry: its page, position, anchor and score."""

    page_id: str
    index: int
    anchor: str = ""
    score: float


class RecallLogEntry(WireModel):
    """One recall as the recall (injection) log keeps it (``GET /recalls``).

    Attributes:
        kind: ``start`` (run-start recall) or ``on_demand``.
        session_id, run_id, task_key: where the memories went.
        memories: the memory ids and scores, best first.
        sections: the wiki sections shown (docs/reference.md#wiki-in-recall).
    """

    id: str
    object_type: str = Field(default="recall_log", alias="object")
    agent_id: str
    kind: str
    session_id: str | None = None
    run_id: str | None = None
    task_key: str | None = None
    query: str = ""
    fallback: str | None = None
    at: dt.datetime
    memories: list[RecalledMemoryRef]
    learnings: list[RecalledLearningRef] = Field(default_factory=list)
    sections: list[RecalledSectionRef] = Field(default_factory=list)
    wiki_failed: bool = False


class RecallBlock(WireModel):
    """The block a logged recall gave, rebuilt (``GET /recalls/{id}/block``,
    docs/reference.md#what-a-run-saw).

    Attributes:
        block: the block, each fact as it was at the recall's moment.
        erased: facts shown then whose text has been erased since (left out).
        learnings_changed: learnings shown then, changed or retired since (left out).
        sections: the wiki sections shown then (not in ``block``).
    """

    object_type: str = Field(default="recall_block", alias="object")
    recall_id: str
    agent_id: str
    kind: str
    at: dt.datetime
    query: str = ""
    rebuilt: bool = True
    block: str
    erased: list[str] = Field(default_factory=list)
    learnings_changed: list[str] = Field(default_factory=list)
    sections: list[RecalledSectionRef] = Field(default_factory=list)


class RecallLogPage(WireModel):
    """A page of the recall log, newest first, with the token of the next page."""

    object_type: str = Field(default="list", alias="object")
    data: list[RecallLogEntry]
    next_token: str | None = None


class KvRememberResult(WireModel):
    """The answer of ``POST /kv/remember`` (docs/reference.md#10-key-value).

    Attributes:
        stored: always ``True`` on success.
        key: the key written.
        ttl: ``"permanent"`` or ``"24h"`` (anonymous callers).
        revision: the entry's revision after this write (docs/reference.md#kv-revisions).
    """

    stored: bool
    key: str
    ttl: str
    revision: int | None = None


class KvValue(WireModel):
    """The answer of ``POST /kv/recall`` with a key (docs/reference.md#10-key-value).

    Attributes:
        key: the key asked for.
        value: the stored string (JSON values come back serialized, not
            parsed); ``None`` when not found.
        found: whether the key exists in the caller's scope.
        revision: the entry's revision (0 when not found): what ``if_revision`` takes
            (docs/reference.md#kv-revisions).
    """

    key: str
    value: str | None = None
    found: bool
    revision: int | None = None


class KvKeys(WireModel):
    """The answer of ``POST /kv/recall`` without a key: one page of the caller's keys
    (docs/reference.md#kv-listing).

    Attributes:
        keys: this page's keys, in key order.
        count: how many keys the scope holds (all pages).
        next_cursor: the ``next`` cursor of the following page; None on the last.
        truncated: ``True`` while more keys follow this page.
    """

    keys: list[str]
    count: int
    next_cursor: str | None = Field(default=None, alias="next")
    truncated: bool | None = None


class KvForgetResult(WireModel):
    """The answer of ``POST /kv/forget`` (docs/reference.md#10-key-value).

    Attributes:
        deleted: whether a key was removed.
        key: the key asked for.
    """

    deleted: bool
    key: str


class Routine(WireModel):
    """An agent's "Memory dreaming" routine (docs/reference.md#9-review).

    Attributes:
        id: ``rtn_…`` (shares its ULID with the agent's ``agt_…``).
        agent_id: the agent it reviews.
        name: always ``Memory dreaming``.
        schedule: the EventBridge expression, ``cron(0 4 * * ? *)`` (04:00 UTC daily).
        status: ``active``, ``paused`` (or ``deleted`` in a delete's answer).
        updated_by_person_id: the person who last paused, resumed or deleted it.
        schedule_description: the schedule in words (``daily at 04:00 UTC``).
        timezone: the schedule's time zone, ``UTC``.
    """

    id: str
    object_type: str = Field(default="routine", alias="object")
    agent_id: str
    name: str
    schedule: str
    status: str
    created_at: dt.datetime
    updated_at: dt.datetime
    updated_by_person_id: str | None = None
    schedule_description: str = ""
    timezone: str = "UTC"


class RoutinePage(WireModel):
    """The answer of ``GET /routines``: every routine the caller may read."""

    object_type: str = Field(default="list", alias="object")
    data: list[Routine]
    next_token: str | None = None


class ReviewAction(WireModel):
    """One planned change of a review (docs/reference.md#9-review): what, on which memories, and
    why."""

    id: str
    action: str
    memory_ids: list[str] = []
    keep_id: str | None = None
    text: str | None = None
    supersedes: str | None = None
    expires_at: dt.datetime | None = None
    reason: str
    evidence: list[str] = []
    expected_versions: dict[str, int] = {}
    waits_for_person: bool = False


class ReviewPlan(WireModel):
    """The actions a reviewer proposed for one agent and reviewed date."""

    agent_id: str
    date: str
    reviewer: str
    generated_at: dt.datetime | None = None
    actions: list[ReviewAction]
    notes: list[str] = []


class ActionOutcome(WireModel):
    """What happened to one action: applied, or skipped with the reason."""

    action_id: str
    action: str
    detail: str
    memory_ids: list[str] = []
    created_id: str | None = None


class ActionDecision(WireModel):
    """Where one action of an approval-mode review stands.

    ``state`` is ``pending``, ``applying`` (approved, being applied),
    ``applied``, ``skipped`` (approved, but the memories changed; ``detail``
    says why) or ``rejected``; ``decided_by`` is the person (``usr_…``).
    """

    action_id: str
    state: str
    decided_by: str | None = None
    decided_at: dt.datetime | None = None
    detail: str | None = None
    created_id: str | None = None
    keep_id: str | None = None


class ActionUndo(WireModel):
    """A person undid one applied action of a review (``undone_by``, ``usr_…``)."""

    action_id: str
    undone_by: str
    undone_at: dt.datetime
    detail: str


class ReviewReport(WireModel):
    """A review (``POST /reviews``, ``GET /reviews/{id}``): plan, applied, skipped.

    ``approval`` is the workspace's ``reviewApproval`` when it ran; with
    ``required``, ``decisions`` holds each action's state and ``status`` is
    ``pending`` until every action is decided (``planned`` for a dry run,
    ``done`` otherwise).
    """

    id: str
    object_type: str = Field(default="review", alias="object")
    agent_id: str
    date: str
    trigger: str
    dry_run: bool
    reviewer: str
    started_at: dt.datetime
    finished_at: dt.datetime
    plan: ReviewPlan
    applied: list[ActionOutcome] = []
    skipped: list[ActionOutcome] = []
    report_key: str | None = None
    status: str = "done"
    approval: str = "none"
    decisions: list[ActionDecision] = []
    undone: list[ActionUndo] = []


class ReviewRun(WireModel):
    """A review queued instead of run inside the call (``POST /reviews`` answered 202,
    and ``GET /reviews/{id}`` until it is done): ``status`` is ``queued``, ``running``
    or ``failed`` (the queue retries it; ``error`` says why the last attempt failed)."""

    id: str
    object_type: str = Field(default="review", alias="object")
    trigger: str = "manual"
    status: str
    agent_id: str
    date: str
    dry_run: bool = False
    requested_by: str | None = None
    requested_at: dt.datetime | None = None
    started_at: dt.datetime | None = None
    finished_at: dt.datetime | None = None
    attempts: int = 0
    error: str | None = None


QUEUED_REVIEW_STATUSES = frozenset({"queued", "running", "failed"})
"""The ``status`` values of a review that has no report yet (``ReviewRun``)."""


class ReviewSummary(WireModel):
    """One line of ``GET /reviews``: counts, and where the full report is
    (``pending`` and ``rejected`` count an approval-mode review's decisions)."""

    id: str
    object_type: str = Field(default="review_summary", alias="object")
    agent_id: str
    date: str
    trigger: str
    reviewer: str
    started_at: dt.datetime
    finished_at: dt.datetime
    planned: int
    applied: int
    skipped: int
    report_key: str
    status: str = "done"
    approval: str = "none"
    pending: int = 0
    rejected: int = 0
    undone: int = 0


class ReviewPage(WireModel):
    """A page of an agent's review summaries, newest first."""

    object_type: str = Field(default="list", alias="object")
    data: list[ReviewSummary]
    next_token: str | None = None


class SignInLink(WireModel):
    """A one-time dashboard sign-in link (``POST /sign-in-links``; docs/reference.md#13-dashboard).

    Attributes:
        path: relative to the server's root (``/sign-in/link?code=…``); works once.
        expires_at: when it stops working (10 minutes after it was made).
    """

    object_type: str = Field(default="sign_in_link", alias="object")
    path: str
    expires_at: dt.datetime


class PendingAction(WireModel):
    """A review action waiting for a person (``GET /reviews/pending``)."""

    object_type: str = Field(default="pending_action", alias="object")
    review_id: str
    agent_id: str
    date: str
    approval: str
    waiting_since: dt.datetime
    action: ReviewAction


class PendingPage(WireModel):
    """A page of review actions waiting for a person, by agent, oldest review first."""

    object_type: str = Field(default="list", alias="object")
    data: list[PendingAction]
    next_token: str | None = None


class Erasure(WireModel):
    """An erasure of an agent, a person or a workspace, then its tombstone
    (docs/reference.md#a-person-erases-an-agent).

    Attributes:
        id: the erased agent's, person's or workspace's id.
        status: ``queued``, ``running``, ``done`` or ``failed``.
        phase: ``collect``, ``delete``, ``objects``, then ``done``.
        items: items deleted so far, by kind; ``item_count`` their sum.
    """

    id: str
    object_type: str = Field(default="erasure", alias="object")
    kind: str
    workspace_id: str
    status: str
    phase: str
    requested_by: str
    reason: str | None = None
    requested_at: dt.datetime | None = None
    started_at: dt.datetime | None = None
    finished_at: dt.datetime | None = None
    items: dict[str, int]
    item_count: int
    object_versions: int


class ErasurePage(WireModel):
    """The answer of ``GET /erasures``: a workspace's past erasures, newest first
    (docs/reference.md#past-erasures); ``next_token`` fetches the next page, ``None`` on
    the last."""

    object_type: str = Field(default="list", alias="object")
    data: list[Erasure]
    next_token: str | None = None


class Export(WireModel):
    """A person's export of an agent or the workspace (docs/reference.md#exports-for-a-person).

    Attributes:
        status: ``queued``, ``running``, ``done``, ``failed`` or ``expired``.
        url: once done, a link to the file (a JSON document by kind), valid until
            ``url_expires_at``.
        expires_at: when the file and this record go (7 days after the request).
    """

    id: str
    object_type: str = Field(default="export", alias="object")
    kind: str
    target_id: str
    status: str
    requested_by: str
    requested_at: dt.datetime
    finished_at: dt.datetime | None = None
    expires_at: dt.datetime
    items: int
    objects: int
    bytes: int
    url: str | None = None
    url_expires_at: dt.datetime | None = None
    error: str | None = None


class EventData(WireModel):
    """What an event's change was about, by reference (never its text;
    docs/reference.md#change-events).

    Attributes:
        object_type: ``memory`` or ``learning``; the other's fields are ``None``.
        id: the changed object's id.
        action: its history record's action (``create``, ``edit`` …); ``audit_id`` that record.
        version: the object's version after the change (``None`` for an appended day line).
    """

    object_type: str = Field(alias="object")
    id: str
    action: str
    audit_id: str
    actor_type: str
    actor_id: str | None = None
    version: int | None = None
    kind: str | None = None
    agent_id: str | None = None
    date: str | None = None
    status: str | None = None
    archive_reason: str | None = None
    supersedes: str | None = None
    superseded_by: str | None = None
    state: str | None = None
    proposed_by: str | None = None
    proposed_by_type: str | None = None


class Event(WireModel):
    """One change event, CloudEvents 1.0 (``GET /events``; docs/reference.md#change-events).

    Attributes:
        id: ``evt_…``, in time order; the cursor to send as ``after``.
        type: e.g. ``pinework.memory.saved``, ``pinework.learning.approved``.
        subject: the changed object's id.
        workspace, agent: whose change (``agent`` is ``None`` for a person's learning).
    """

    specversion: str
    id: str
    source: str
    type: str
    time: dt.datetime
    subject: str
    datacontenttype: str
    workspace: str
    agent: str | None = None
    data: EventData


class EventPage(WireModel):
    """A page of the change events' feed, oldest first (``GET /events``).

    Attributes:
        next_cursor: send it as ``after`` next time (``None`` only for an empty feed).
        has_more: the next page is ready now.
    """

    object_type: str = Field(default="list", alias="object")
    data: list[Event]
    next_cursor: str | None = None
    has_more: bool


class Webhook(WireModel):
    """A webhook endpoint of the workspace (``/webhooks``; docs/reference.md#webhooks).

    Attributes:
        id: ``whk_…``.
        secret: ``whsec_…``, only in ``create_webhook``'s answer (``None`` elsewhere):
            keep it to verify deliveries (``pinework.webhooks.verify``).
        state: ``active``, or ``paused`` after failing for more than 24 hours.
        cursor: the last event delivered (or skipped by type).
        failed_attempts, failing_since, next_attempt_at, last_error: the current run of
            failures, if any.
    """

    id: str
    object_type: str = Field(default="webhook", alias="object")
    url: str
    event_types: list[str]
    description: str
    state: str
    created_at: dt.datetime
    created_by: str
    cursor: str | None = None
    failing_since: dt.datetime | None = None
    failed_attempts: int = 0
    next_attempt_at: dt.datetime | None = None
    last_error: str | None = None
    paused_at: dt.datetime | None = None
    secret: str | None = None


class WebhookPage(WireModel):
    """The workspace's webhook endpoints, oldest first (``GET /webhooks``)."""

    object_type: str = Field(default="list", alias="object")
    data: list[Webhook]


class WebhookDelivery(WireModel):
    """One delivery attempt to an endpoint (docs/reference.md#webhook-deliveries).

    Attributes:
        ok: a 2xx answer came; ``status_code`` is ``None`` when none came.
        attempt: its number for this event (1 for the first try).
        error: why it failed (``None`` when ``ok``).
    """

    id: str
    object_type: str = Field(default="delivery", alias="object")
    webhook_id: str
    event_id: str
    event_type: str
    attempt: int
    at: dt.datetime
    ok: bool
    status_code: int | None = None
    duration_ms: int
    error: str | None = None


class WebhookDeliveryPage(WireModel):
    """An endpoint's recent delivery attempts, newest first (kept 7 days)."""

    object_type: str = Field(default="list", alias="object")
    data: list[WebhookDelivery]
