"""What the OpenAPI document says about each route (docs/issues.md#issue-15): one entry per
(method, path) of the Chalice route table, under ``/api/v1``.

Adding a route to the document is one entry here; ``chalicelib/api/openapi.py``
builds the document from the app's route table and these entries (a test fails
when a route has no entry or an entry no route). The rest comes from the code
itself: request and response shapes from the pydantic models, statuses from
``errors.STATUS_BY_CODE``, ``Idempotency-Key`` from the ``idempotent`` decorator.
Each entry lists the error classes its route raises beyond the common ones
(``invalid_request``, ``unauthorized`` on bearer routes, ``rate_limited``; the
idempotency and ``If-Match`` codes where those apply).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from chalicelib import errors
from chalicelib.models.as_of import AsOfListQuery, AsOfQuery
from chalicelib.models.bulk import BulkRecordObject, BulkRequest, BulkResultObject, BulkUndoObject
from chalicelib.models.event import EventList, EventQuery
from chalicelib.models.kv import ForgetRequest, KvRecallRequest, RememberRequest
from chalicelib.models.learning import (
    ApproveLearningRequest,
    EditLearningRequest,
    LearningAuditList,
    LearningList,
    LearningListQuery,
    LearningObject,
    ProposeLearningRequest,
    RejectLearningRequest,
    RetireLearningRequest,
)
from chalicelib.models.lifecycle import (
    EraseAgentRequest,
    ErasureList,
    ErasureObject,
    ErasureQuery,
    ExportObject,
    ExportRequest,
)
from chalicelib.models.page import (
    CreatePageRequest,
    EditPageRequest,
    PageList,
    PageListQuery,
    PageObject,
    PageRevisionList,
)
from chalicelib.models.recall import RecallStartRequest
from chalicelib.models.requests import (
    AgentQuery,
    ArchiveRequest,
    DayLineRequest,
    EditRequest,
    EmptyRequest,
    EraseRequest,
    Paging,
    RecallLogQuery,
    RecallRequest,
    SaveFactRequest,
    VetoRequest,
)
from chalicelib.models.responses import (
    AuditList,
    KvForgotten,
    KvKeys,
    KvRecalled,
    KvRemembered,
    MemoryList,
    MemoryObject,
    PendingList,
    RecallBlockObject,
    RecallLogList,
    RecallObject,
    ReviewList,
    ReviewObject,
    ReviewRunObject,
    RoutineList,
    RoutineObject,
    SignInLinkObject,
)
from chalicelib.models.review_requests import (
    ApproveRequest,
    PendingListQuery,
    ReviewListQuery,
    RunReviewRequest,
)
from chalicelib.models.routine import CreateRoutineRequest, RoutineQuery
from chalicelib.models.webhook import (
    CreateWebhookRequest,
    DeliveryList,
    DeliveryObject,
    WebhookList,
    WebhookObject,
)

Auth = Literal["bearer", "optional", "none"]
"""``bearer``: a token is required; ``optional``: bearer, ``X-Api-Key`` or anonymous
(key-value tools, MCP); ``none``: public."""
Body = type[BaseModel] | tuple[type[BaseModel], ...] | Literal["mcp", "document"] | None
"""A response (or request) shape: a model, several (one of), or a special one."""

NOT_FOUND = errors.MemoryNotFound
NOT_OWN = errors.MemoryNotOwn
MEMORY_LINKS = ("get_memory", "edit_memory", "archive_memory", "veto_memory")
FIRST_ACTION = "$response.body#/plan/actions/0/id"
LEARNING_LINKS = ("get_learning", "approve_learning", "reject_learning", "learning_history")
PAGE_LINKS = ("get_page", "edit_page", "publish_page", "archive_page", "page_history")
PAGE_TEXT_ERRORS = (errors.SecretInMemory, errors.MemoryTextTooLong, errors.PageSlugTaken)


@dataclass(frozen=True)
class Operation:
    """One route as the document describes it.

    Attributes:
        summary: one line.
        who: who may call it (docs/reference.md#who-may-call).
        responses: each success status and its body (None: no body).
        errors: the error classes the route raises beyond the common ones.
        body: the request body model; ``body_required`` says if it may be empty.
        query: the query string model.
        auth: see ``Auth``.
        if_match: honours ``If-Match`` (412 ``precondition_failed``).
        etag: its answer is one memory, with an ``ETag`` header.
        session_header: reads ``X-Pinework-Session`` (run-start recall).
        links: where its success answer leads (OpenAPI links): an operation id, whose
            one path parameter is the answer's ``id``, or (operation id, {parameter:
            runtime expression}).
        accepted_links: the links of a 202 answer (a queued run has no plan yet).
        tag: the group in the document.
        description: more than the summary, if needed.
    """

    summary: str
    who: str
    responses: dict[int, Body]
    errors: tuple[type[errors.PineworkError], ...] = ()
    body: type[BaseModel] | Literal["mcp"] | None = None
    body_required: bool = False
    query: type[BaseModel] | None = None
    auth: Auth = "bearer"
    if_match: bool = False
    etag: bool = False
    session_header: bool = False
    links: tuple[str | tuple[str, dict[str, str]], ...] = ()
    accepted_links: tuple[str, ...] = ()
    tag: str = "memories"
    description: str = ""


AS_OF_ERRORS = (errors.AsOfInvalid, errors.AsOfInFuture, errors.AsOfBeforeWorkspace)
"""The errors of ``asOf`` (docs/reference.md#as-of-a-moment)."""

OPERATIONS: dict[tuple[str, str], Operation] = {
    ("POST", "/memories"): Operation(
        "Save a fact",
        "agent; person with `agentId`",
        {201: MemoryObject},
        (
            errors.MemoryTextTooLong,
            errors.SecretInMemory,
            errors.MemoryTagInvalid,
            errors.MemoryMetadataInvalid,
            errors.MemoryAgentRequired,
            errors.MemoryAgentMismatch,
            errors.MemoryDayAppendOnly,
            NOT_OWN,
            NOT_FOUND,
            errors.MemorySupersedeArchived,
            errors.MemoryVetoed,
            errors.Forbidden,
            errors.Conflict,
        ),
        body=SaveFactRequest,
        body_required=True,
        etag=True,
        links=MEMORY_LINKS,
        description="A fact of at most 500 characters, no secrets. `expiresAt` is an RFC 3339 "
        "time or a date (the end of that UTC day), default 90 days; `supersedes` archives "
        "that fact as `superseded` in the same transaction.",
    ),
    ("POST", "/memories/day"): Operation(
        "Append a line to today's (UTC) day log",
        "agent",
        {201: MemoryObject, 200: MemoryObject},
        (
            errors.MemoryDayAgentOnly,
            errors.MemoryTextTooLong,
            errors.SecretInMemory,
            errors.MemoryDayFull,
            errors.Conflict,
        ),
        body=DayLineRequest,
        body_required=True,
        etag=True,
        links=("get_memory", "archive_memory"),
        description="201 with the new day row on the date's first line, 200 with the row "
        "after the append otherwise. The line (at most 300 characters) gets an `HH:MM` and "
        "task-key prefix; the day log holds 8,000 characters.",
    ),
    ("GET", "/memories"): Operation(
        "List memories, newest first",
        "agent (own); person (any agent, every agent if `agentId` is omitted)",
        {200: MemoryList},
        (
            NOT_OWN,
            errors.Forbidden,
            errors.MemoryTagInvalid,
            errors.MetadataFilterInvalid,
            *AS_OF_ERRORS,
        ),
        query=AsOfListQuery,
        description="With `asOf`, one agent's memories as they were then, each in its state "
        "then, the filters applied to that state (docs/reference.md#as-of-a-moment).",
    ),
    ("GET", "/memories/{memory_id}"): Operation(
        "Read one memory",
        "owner agent, person",
        {200: MemoryObject},
        (NOT_FOUND, NOT_OWN, *AS_OF_ERRORS),
        query=AsOfQuery,
        etag=True,
        description="With `asOf`, the memory as it was then, rebuilt from its history (no "
        "`ETag`; 404 `memory_not_found` when it did not exist yet; erased text stays "
        "erased; docs/reference.md#as-of-a-moment).",
    ),
    ("PATCH", "/memories/{memory_id}"): Operation(
        "Edit a memory's text and/or expiry",
        "person",
        {200: MemoryObject},
        (
            errors.Forbidden,
            NOT_FOUND,
            errors.MemoryErased,
            errors.MemorySuperseded,
            errors.MemoryTextTooLong,
            errors.MemoryDayFull,
            errors.SecretInMemory,
            errors.MemoryTagInvalid,
            errors.MemoryMetadataInvalid,
            errors.Conflict,
        ),
        body=EditRequest,
        body_required=True,
        if_match=True,
        etag=True,
    ),
    ("POST", "/memories/{memory_id}/archive"): Operation(
        "Archive a memory with a reason",
        "owner agent, person",
        {200: MemoryObject},
        (
            NOT_FOUND,
            NOT_OWN,
            errors.MemoryAlreadyArchived,
            errors.MemoryErased,
            errors.SecretInMemory,
            errors.Conflict,
        ),
        body=ArchiveRequest,
        body_required=True,
        if_match=True,
        etag=True,
        links=("unarchive_memory", "get_memory"),
    ),
    ("POST", "/memories/{memory_id}/veto"): Operation(
        "Veto a memory (archived with reason `vetoed`)",
        "person",
        {200: MemoryObject},
        (
            errors.Forbidden,
            NOT_FOUND,
            errors.MemoryAlreadyArchived,
            errors.MemoryErased,
            errors.MemorySuperseded,
            errors.SecretInMemory,
            errors.Conflict,
        ),
        body=VetoRequest,
        if_match=True,
        etag=True,
        links=("unarchive_memory",),
    ),
    ("POST", "/memories/{memory_id}/unarchive"): Operation(
        "Bring an archived memory back (docs/reference.md#unarchive-rules)",
        "owner agent, person",
        {200: MemoryObject},
        (
            NOT_FOUND,
            NOT_OWN,
            errors.MemoryNotArchived,
            errors.MemoryErased,
            errors.MemorySuperseded,
            errors.MemoryVetoHumanOnly,
            errors.MemoryDayExists,
            errors.Conflict,
        ),
        body=EmptyRequest,
        if_match=True,
        etag=True,
        links=("archive_memory",),
    ),
    ("POST", "/memories/{memory_id}/erase"): Operation(
        "Erase a memory: its text removed everywhere, a tombstone kept "
        "(docs/reference.md#erasing-a-memory)",
        "person",
        {200: MemoryObject},
        (errors.Forbidden, NOT_FOUND, errors.SecretInMemory, errors.Conflict),
        body=EraseRequest,
        body_required=True,
        if_match=True,
        etag=True,
        links=("get_memory",),
    ),
    ("GET", "/memories/{memory_id}/history"): Operation(
        "A memory's audit records, oldest first",
        "owner agent, person",
        {200: AuditList},
        (NOT_FOUND, NOT_OWN),
        query=Paging,
    ),
    ("POST", "/memories/recall"): Operation(
        "On-demand recall: scored memories and the `--- MEMORY ---` block",
        "agent; person with `agentId`",
        {200: RecallObject},
        (
            errors.MemoryAgentRequired,
            NOT_OWN,
            errors.Forbidden,
            errors.MemoryTagInvalid,
            errors.MetadataFilterInvalid,
            errors.SecretInMemory,
            *AS_OF_ERRORS,
        ),
        body=RecallRequest,
        tag="recall",
        description="Counts as a recall of every memory returned; never changes the "
        "run-start skip state. `query` (at most 4,000 characters) defaults to the task. "
        "`count: false` makes it a preview: nothing is counted or logged, `recallId` is null; "
        "with `asOf` too, the preview as of that moment.",
    ),
    ("POST", "/memories/bulk"): Operation(
        "Archive, veto, tag or untag up to 100 memories at once (docs/reference.md#bulk-actions)",
        "person",
        {200: BulkResultObject},
        (errors.Forbidden, errors.SecretInMemory, errors.MemoryTagInvalid),
        body=BulkRequest,
        body_required=True,
        tag="memories",
        description="Name the memories by `ids` or select them with `filter` (one agent's "
        "facts, as the list filters them, 100 at a time from its `nextToken`). Each memory "
        "is changed as a single change would change it (history, version); one that "
        "cannot be is in `skipped` with the error code it would have had. The answer's "
        "`id` undoes the action for 30 days.",
    ),
    ("GET", "/memories/bulk/{bulk_id}"): Operation(
        "A bulk action as stored (kept 30 days)",
        "person",
        {200: BulkRecordObject},
        (errors.Forbidden, errors.NotFound),
        tag="memories",
    ),
    ("POST", "/memories/bulk/{bulk_id}/undo"): Operation(
        "Undo a bulk action, once: each change still the memory's latest is reverted",
        "person",
        {200: BulkUndoObject},
        (errors.Forbidden, errors.NotFound, errors.Conflict),
        tag="memories",
    ),
    ("POST", "/memories/recall/start"): Operation(
        "Run-start recall: the block, or `skipped` with the reason",
        "agent",
        {200: RecallObject},
        (
            errors.Forbidden,
            errors.SecretInMemory,
            errors.MemoryTagInvalid,
            errors.MetadataFilterInvalid,
        ),
        body=RecallStartRequest,
        body_required=True,
        session_header=True,
        tag="recall",
    ),
    ("GET", "/recalls"): Operation(
        "The recall (injection) log, newest first",
        "agent (own); person with `agentId`",
        {200: RecallLogList},
        (errors.MemoryAgentRequired, NOT_OWN, errors.Forbidden),
        query=RecallLogQuery,
        tag="recall",
    ),
    ("GET", "/recalls/{recall_id}/block"): Operation(
        "What a logged recall gave the run: its block, rebuilt as of its moment",
        "agent (own); person with `agentId`",
        {200: RecallBlockObject},
        (errors.MemoryAgentRequired, NOT_OWN, errors.Forbidden, errors.RecallNotFound),
        query=AgentQuery,
        tag="recall",
        description="The block is rebuilt from the log entry and the audit history "
        "(docs/reference.md#what-a-run-saw): each fact as it was then, the day log then, "
        "the learnings unchanged since; a fact erased since is left out and named in "
        "`erased`; wiki sections are named, not rebuilt.",
    ),
    ("GET", "/routines"): Operation(
        'List the "Memory dreaming" routines',
        "agent (own); person (`agentId`, or the whole workspace)",
        {200: RoutineList},
        (NOT_OWN, errors.Forbidden),
        query=RoutineQuery,
        tag="routines",
    ),
    ("POST", "/routines"): Operation(
        "Create an agent's routine again (after a delete)",
        "person",
        {201: RoutineObject, 200: RoutineObject},
        (errors.Forbidden, errors.MemoryAgentRequired),
        body=CreateRoutineRequest,
        body_required=True,
        links=("get_routine", "pause_routine", "resume_routine", "delete_routine"),
        tag="routines",
    ),
    ("GET", "/routines/{routine_id}"): Operation(
        "Read one routine (by `rtn_…` or the agent's `agt_…` id)",
        "owner agent, person",
        {200: RoutineObject},
        (errors.NotFound, errors.Forbidden),
        tag="routines",
    ),
    ("DELETE", "/routines/{routine_id}"): Operation(
        "Delete a routine (its answer shows `status: deleted`)",
        "person",
        {200: RoutineObject},
        (errors.NotFound, errors.Forbidden, errors.Conflict),
        body=EmptyRequest,
        tag="routines",
    ),
    ("POST", "/routines/{routine_id}/pause"): Operation(
        "Pause a routine",
        "person",
        {200: RoutineObject},
        (errors.NotFound, errors.Forbidden, errors.Conflict),
        body=EmptyRequest,
        links=("resume_routine",),
        tag="routines",
    ),
    ("POST", "/routines/{routine_id}/resume"): Operation(
        "Resume a routine",
        "person",
        {200: RoutineObject},
        (errors.NotFound, errors.Forbidden, errors.Conflict),
        body=EmptyRequest,
        links=("pause_routine",),
        tag="routines",
    ),
    ("POST", "/reviews"): Operation(
        "Run an agent's review now (`dryRun`: the plan only), or queue it (202)",
        "person",
        {200: ReviewObject, 202: ReviewRunObject},
        (errors.Forbidden, errors.MemoryAgentRequired, NOT_OWN, errors.Conflict),
        body=RunReviewRequest,
        body_required=True,
        links=(
            "get_review",
            *(
                (decision, {"review_id": "$response.body#/id", "action_ref": FIRST_ACTION})
                for decision in (
                    "approve_review_action",
                    "reject_review_action",
                    "undo_review_action",
                )
            ),
        ),
        accepted_links=("get_review",),
        tag="reviews",
        description="200 with the report when the review surely fits in the call; when it "
        "may outlast API Gateway's 29 s (the Bedrock reviewer, a large store) it is queued: "
        "202 with the run (`status: queued`) and `Location`; `GET /reviews/{id}` shows it "
        "until its report is there.",
    ),
    ("GET", "/reviews"): Operation(
        "An agent's review summaries, newest first",
        "owner agent; person with `agentId`",
        {200: ReviewList},
        (errors.MemoryAgentRequired, NOT_OWN, errors.Forbidden),
        query=ReviewListQuery,
        tag="reviews",
    ),
    ("GET", "/reviews/pending"): Operation(
        "Review actions waiting for a person, by agent, oldest review first",
        "person (the workspace's, or `agentId`'s); agent (own)",
        {200: PendingList},
        (NOT_OWN, errors.Forbidden),
        query=PendingListQuery,
        tag="reviews",
    ),
    ("GET", "/reviews/{review_id}"): Operation(
        "One full review report (or a queued review's run until it is done)",
        "owner agent, person",
        {200: (ReviewObject, ReviewRunObject)},
        (errors.NotFound,),
        tag="reviews",
    ),
    ("POST", "/reviews/{review_id}/actions/{action_ref}/approve"): Operation(
        "Approve one pending action: it is applied now (`keepId`: the fact a conflict keeps)",
        "person",
        {200: ReviewObject},
        (errors.Forbidden, errors.NotFound, errors.Conflict),
        body=ApproveRequest,
        tag="reviews",
    ),
    ("POST", "/reviews/{review_id}/actions/{action_ref}/reject"): Operation(
        "Reject one pending action: it is never applied (nor proposed again)",
        "person",
        {200: ReviewObject},
        (errors.Forbidden, errors.NotFound, errors.Conflict),
        body=EmptyRequest,
        tag="reviews",
    ),
    ("POST", "/reviews/{review_id}/actions/{action_ref}/undo"): Operation(
        "Undo one applied action: what it changed is restored",
        "person",
        {200: ReviewObject},
        (
            errors.Forbidden,
            errors.NotFound,
            errors.Conflict,
            errors.ReviewUndoConflict,
            errors.MemoryErased,
        ),
        body=EmptyRequest,
        tag="reviews",
        description="`review_undo_conflict` when a memory the action changed was changed "
        "since (nothing is undone); `conflict` when the action changed nothing; "
        "`memory_erased` when one of its memories was erased.",
    ),
    ("POST", "/kv/remember"): Operation(
        "Key-value `remember`: store a JSON value under a key",
        "anyone (scoped by bearer token, `X-Api-Key`, or the client IP)",
        {200: KvRemembered},
        (
            errors.SecretInMemory,
            errors.PayloadTooLarge,
            errors.KvQuotaExceeded,
            errors.PreconditionFailed,
        ),
        body=RememberRequest,
        body_required=True,
        auth="optional",
        tag="kv",
    ),
    ("POST", "/kv/recall"): Operation(
        "Key-value `recall`: one key's value, or a page of keys (`{}`, `{cursor, limit}`)",
        "anyone (scoped)",
        {200: (KvRecalled, KvKeys)},
        body=KvRecallRequest,
        auth="optional",
        tag="kv",
    ),
    ("POST", "/kv/forget"): Operation(
        "Key-value `forget`: delete a key",
        "anyone (scoped)",
        {200: KvForgotten},
        (errors.PreconditionFailed,),
        body=ForgetRequest,
        body_required=True,
        auth="optional",
        tag="kv",
    ),
    ("POST", "/learnings"): Operation(
        "Propose a learning: a fact every agent of the workspace is told "
        "(docs/reference.md#15-learnings)",
        "agent (proposed), person (active at once)",
        {200: LearningObject, 201: LearningObject},
        (
            errors.SecretInMemory,
            errors.MemoryTextTooLong,
            errors.LearningRejected,
            errors.LearningLimitReached,
        ),
        body=ProposeLearningRequest,
        body_required=True,
        etag=True,
        links=LEARNING_LINKS,
        tag="learnings",
        description="201 with the new learning; 200 with the proposed or active learning "
        "that already says the same (nothing new is stored). `rate_limited` (429) after "
        "an agent's 20 proposals of the UTC day.",
    ),
    ("GET", "/learnings"): Operation(
        "The workspace's learnings, newest first",
        "agent, person (their workspace's)",
        {200: LearningList},
        (errors.Forbidden,),
        query=LearningListQuery,
        tag="learnings",
        description="`unreviewed=true` lists the active learnings no person reviewed "
        "(persons only: an agent is refused with 403 `forbidden`), until a person "
        "approves (confirms) or retires each.",
    ),
    ("GET", "/learnings/{learning_id}"): Operation(
        "One learning",
        "agent, person",
        {200: LearningObject},
        (errors.LearningNotFound,),
        etag=True,
        links=LEARNING_LINKS,
        tag="learnings",
    ),
    ("PATCH", "/learnings/{learning_id}"): Operation(
        "Edit a proposed or active learning's text",
        "person",
        {200: LearningObject},
        (
            errors.Forbidden,
            errors.LearningNotFound,
            errors.LearningDecided,
            errors.SecretInMemory,
            errors.MemoryTextTooLong,
        ),
        body=EditLearningRequest,
        body_required=True,
        if_match=True,
        etag=True,
        tag="learnings",
    ),
    ("POST", "/learnings/{learning_id}/approve"): Operation(
        "Approve a proposed learning (`text`: edit it as it is approved)",
        "person",
        {200: LearningObject},
        (
            errors.Forbidden,
            errors.LearningNotFound,
            errors.LearningDecided,
            errors.SecretInMemory,
            errors.MemoryTextTooLong,
        ),
        body=ApproveLearningRequest,
        if_match=True,
        etag=True,
        links=("retire_learning",),
        tag="learnings",
    ),
    ("POST", "/learnings/{learning_id}/reject"): Operation(
        "Reject a proposed learning: no agent may propose it again",
        "person",
        {200: LearningObject},
        (errors.Forbidden, errors.LearningNotFound, errors.LearningDecided, errors.SecretInMemory),
        body=RejectLearningRequest,
        body_required=True,
        if_match=True,
        etag=True,
        tag="learnings",
    ),
    ("POST", "/learnings/{learning_id}/retire"): Operation(
        "Retire an active learning: no agent is told it any more",
        "person",
        {200: LearningObject},
        (errors.Forbidden, errors.LearningNotFound, errors.LearningDecided, errors.SecretInMemory),
        body=RetireLearningRequest,
        if_match=True,
        etag=True,
        tag="learnings",
    ),
    ("GET", "/learnings/{learning_id}/history"): Operation(
        "A learning's history records, oldest first",
        "agent, person",
        {200: LearningAuditList},
        (errors.LearningNotFound,),
        tag="learnings",
    ),
    ("POST", "/pages"): Operation(
        "Create a wiki page, a draft (docs/reference.md#17-wiki-pages)",
        "person",
        {201: PageObject},
        (errors.Forbidden, *PAGE_TEXT_ERRORS, errors.PageLimitReached),
        body=CreatePageRequest,
        body_required=True,
        etag=True,
        links=PAGE_LINKS,
        tag="wiki",
    ),
    ("GET", "/pages"): Operation(
        "The workspace's wiki pages, newest first, without their text",
        "agent (published pages only), person",
        {200: PageList},
        (errors.Forbidden,),
        query=PageListQuery,
        tag="wiki",
        description="An agent lists the published pages; its `state=draft` or "
        "`state=archived` is 403 `forbidden`.",
    ),
    ("GET", "/pages/{page_ref}"): Operation(
        "One wiki page, by id or slug",
        "agent (a published page), person",
        {200: PageObject},
        (errors.PageNotFound,),
        etag=True,
        links=PAGE_LINKS,
        tag="wiki",
    ),
    ("PATCH", "/pages/{page_ref}"): Operation(
        "Edit a draft or published wiki page (title, slug, text, tags)",
        "person",
        {200: PageObject},
        (errors.Forbidden, errors.PageNotFound, errors.PageStateConflict, *PAGE_TEXT_ERRORS),
        body=EditPageRequest,
        body_required=True,
        if_match=True,
        etag=True,
        tag="wiki",
    ),
    ("POST", "/pages/{page_ref}/publish"): Operation(
        "Publish a draft or archived wiki page: agents read it",
        "person",
        {200: PageObject},
        (errors.Forbidden, errors.PageNotFound, errors.PageStateConflict, errors.PageLimitReached),
        body=EmptyRequest,
        if_match=True,
        etag=True,
        tag="wiki",
    ),
    ("POST", "/pages/{page_ref}/archive"): Operation(
        "Archive a draft or published wiki page: no agent reads it; it is kept",
        "person",
        {200: PageObject},
        (errors.Forbidden, errors.PageNotFound, errors.PageStateConflict),
        body=EmptyRequest,
        if_match=True,
        etag=True,
        tag="wiki",
    ),
    ("GET", "/pages/{page_ref}/history"): Operation(
        "A wiki page's history records, oldest first, each with a unified diff of the text",
        "person",
        {200: PageRevisionList},
        (errors.Forbidden, errors.PageNotFound),
        tag="wiki",
    ),
    ("POST", "/agents/{agent_id}/erase"): Operation(
        "Erase an agent with everything of it "
        "(docs/reference.md#erasing-an-agent-a-person-or-a-workspace)",
        "person (an agent of their workspace)",
        {200: ErasureObject, 202: ErasureObject},
        (errors.Forbidden, errors.NotFound, errors.SecretInMemory),
        body=EraseAgentRequest,
        body_required=True,
        links=("get_erasure",),
        accepted_links=("get_erasure",),
        tag="lifecycle",
        description="Queued for the review worker: 202 with the erasure (`queued`, "
        "`running`) and `Location`; 200 once it is `done`. A second request for the same "
        "agent answers the same erasure. The agent's tokens stop working when it starts.",
    ),
    ("GET", "/erasures"): Operation(
        "The workspace's past erasures (memories, agents, persons), newest first "
        "(docs/reference.md#past-erasures)",
        "person",
        {200: ErasureList},
        (errors.Forbidden,),
        query=ErasureQuery,
        tag="lifecycle",
    ),
    ("GET", "/erasures/{target_id}"): Operation(
        "An erasure of the workspace: status, phase and counts, then its tombstone",
        "person",
        {200: ErasureObject},
        (errors.Forbidden, errors.NotFound),
        tag="lifecycle",
    ),
    ("POST", "/exports"): Operation(
        "Export an agent (`agentId`) or the workspace as a JSON document by kind "
        "(docs/reference.md#exports-for-a-person)",
        "person",
        {200: ExportObject, 202: ExportObject},
        (errors.Forbidden, errors.RateLimited),
        body=ExportRequest,
        accepted_links=("get_export",),
        tag="lifecycle",
        description="Queued for the review worker: 202 with the export and `Location`; "
        "`GET /exports/{id}` gives a 15-minute link to the file once it is `done`. While "
        "another export of the workspace is queued or running, 200 with that one (nothing "
        "is queued); past the workspace's 10 exports of the UTC day, 429 `rate_limited` "
        "with `Retry-After` (docs/reference.md#one-export-at-a-time).",
    ),
    ("GET", "/exports/{export_id}"): Operation(
        "An export: its status, counts and, once done, a 15-minute download link",
        "person",
        {200: ExportObject},
        (errors.Forbidden, errors.NotFound),
        tag="lifecycle",
    ),
    ("POST", "/sign-in-links"): Operation(
        "A one-time dashboard sign-in link for the calling person",
        "person",
        {201: SignInLinkObject},
        (errors.Forbidden,),
        tag="dashboard",
        description=(
            "No `Idempotency-Key`: the answer is a one-time credential, which is never"
            " stored in clear (a replay would have to keep it); a retry makes a new link"
            " and a lost one expires unused."
        ),
    ),
    ("POST", "/mcp"): Operation(
        "Model Context Protocol (JSON-RPC 2.0, streamable HTTP, stateless)",
        "agents (and anyone for the key-value tools)",
        {200: "mcp", 202: None},
        body="mcp",
        body_required=True,
        auth="optional",
        tag="mcp",
        description="`initialize`, `ping`, `tools/list`, `tools/call` for `remember`, "
        "`recall`, `forget`, `memory_save`, `memory_day`, `memory_recall`, `memory_list`, "
        "`memory_archive`, `learning_propose`, `learning_list`. Notifications and client "
        "responses are answered 202 without a body. Refusals before dispatch (bad "
        "protocol version 400, bad token 401, a browser `Origin` not allowed 403) are "
        "JSON-RPC errors with `data.code`; a tool's own refusal is a result with "
        "`isError: true`.",
    ),
    ("GET", "/events"): Operation(
        "Change events after a cursor, oldest first: a person's workspace's, an agent's "
        "own (docs/reference.md#change-events)",
        "agent (its own), person (the workspace's)",
        {200: EventList},
        query=EventQuery,
        tag="events",
        description="CloudEvents 1.0 objects that name what changed (ids, states, "
        "versions), never its text. Send the page's `nextCursor` as `after` next time; "
        "`hasMore` says the next page is ready now. Kept 30 days; an event shows once it "
        "is 5 seconds old. A malformed `after` is 400 `invalid_request`.",
    ),
    ("POST", "/webhooks"): Operation(
        "Register a webhook endpoint (the answer shows its signing secret, once)",
        "person",
        {201: WebhookObject},
        (errors.Forbidden, errors.WebhookUrlRefused, errors.WebhookLimitReached),
        body=CreateWebhookRequest,
        body_required=True,
        links=("delete_webhook", "test_webhook", "list_webhook_deliveries"),
        tag="webhooks",
        description="`url` must be `https://` and resolve to public addresses only "
        '(docs/reference.md#webhook-urls); `eventTypes` defaults to `["*"]` (all). '
        "Events from the registration on are delivered, signed the Standard Webhooks way.",
    ),
    ("GET", "/webhooks"): Operation(
        "The workspace's webhook endpoints (never their secrets)",
        "person",
        {200: WebhookList},
        (errors.Forbidden,),
        tag="webhooks",
    ),
    ("DELETE", "/webhooks/{webhook_id}"): Operation(
        "Remove a webhook endpoint",
        "person",
        {200: WebhookObject},
        (errors.Forbidden, errors.WebhookNotFound, errors.Conflict),
        body=EmptyRequest,
        tag="webhooks",
    ),
    ("POST", "/webhooks/{webhook_id}/test"): Operation(
        "Send a signed `pinework.webhook.ping` to an endpoint now",
        "person",
        {200: DeliveryObject},
        (errors.Forbidden, errors.WebhookNotFound),
        body=EmptyRequest,
        tag="webhooks",
        description="The answer is the attempt (`ok`, `statusCode`, `durationMs`, `error`); "
        "the endpoint's cursor and state do not change.",
    ),
    ("POST", "/webhooks/{webhook_id}/resume"): Operation(
        "Resume a paused webhook endpoint",
        "person",
        {200: WebhookObject},
        (errors.Forbidden, errors.WebhookNotFound, errors.Conflict),
        body=EmptyRequest,
        tag="webhooks",
    ),
    ("GET", "/webhooks/{webhook_id}/deliveries"): Operation(
        "An endpoint's recent delivery attempts, newest first (kept 7 days)",
        "person",
        {200: DeliveryList},
        (errors.Forbidden, errors.WebhookNotFound),
        tag="webhooks",
    ),
    ("GET", "/openapi.json"): Operation(
        "This document (OpenAPI 3.1)",
        "anyone",
        {200: "document"},
        auth="none",
        tag="meta",
    ),
}
"""Every documented operation, by (method, path below ``/api/v1``)."""
