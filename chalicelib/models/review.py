"""The daily review's shapes (docs/reference.md#9-review, docs/issues.md#issue-4): a typed plan of
actions, the report of what was applied and what was skipped, with reasons, its stored summary, and
the persons' decisions, undos and pending list entries. Wire form is camelCase. A plan is
made by a ``Reviewer`` and applied by ``ReviewService``; the report is stored as JSON
in S3 and summarised in DynamoDB. The review routes' request bodies are in
``review_requests``. Choices: docs/DECISIONS.md#routines-and-the-daily-review-issue-4.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from chalicelib.models.common import Timestamp, WireModel
from chalicelib.models.principal import ReviewApproval

ActionKind = Literal["merge", "renew", "replace", "archive", "lift", "resolve_conflict"]
"""What an action does (docs/reference.md#9-review steps 1-5):

* ``merge``: duplicates; every id in ``memoryIds`` is superseded by ``keepId``.
* ``renew``: an expired fact recalled lately gets ``expiresAt``.
* ``replace``: an expired fact is superseded by the newer ``keepId`` that covers it.
* ``archive``: archived with ``reason`` (``expired``, or ``stale: …``).
* ``lift``: a durable day-log line becomes a fact (``text``), superseding
  ``supersedes`` when it updates one.
* ``resolve_conflict``: two facts say different things about one subject; ``keepId``
  stays, the other is superseded. Without deciding evidence it waits for a person
  (``waitsForPerson``).
"""

Trigger = Literal["schedule", "manual"]

DecisionState = Literal["pending", "applying", "applied", "skipped", "rejected"]
"""Where one action of an approval-mode review stands (docs/issues.md#issue-4-item-6):

* ``pending``: waits for a person.
* ``applying``: a person approved it and it is being applied (transient; a
  claim older than 15 minutes may be taken over by another approval).
* ``applied`` / ``skipped``: approved, then applied, or skipped with the reason
  (the memories changed since the plan was made).
* ``rejected``: a person rejected it; it is never applied.
"""

FINAL_STATES: frozenset[str] = frozenset({"applied", "skipped", "rejected"})
"""Decision states that never change again."""

ReviewStatus = Literal["planned", "pending", "done"]
"""``planned``: a dry run; ``pending``: some action still waits for a decision;
``done``: nothing waits (applied at once, or every action decided)."""


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
        waits_for_person: the action is not applied by the review itself, in any
            approval mode: it waits until a person approves or rejects it (a
            conflict no saved evidence decides, docs/reference.md#review-step-5;
            docs/issues.md#issue-14-item-2).
    """

    model_config = ConfigDict(
        defer_build=True, alias_generator=to_camel, populate_by_name=True, extra="forbid"
    )

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
    waits_for_person: bool = False

    def signatures(self) -> dict[str | None, str]:
        """What the action does, independent of plan, wording and versions, as SHA-256
        hex signatures; a person's rejection is remembered by them, so the same change
        is not proposed again (docs/reference.md#9-review, approval mode).

        Returns:
            For an action that folds memories into a keeper (``merge``, ``replace``,
            ``resolve_conflict``): one ``fold_signature`` per folded memory and the
            keeper, keyed by that memory's id, so a rejected merge of A into K also
            holds when a new duplicate joins the group or becomes its keeper. For any
            other action: one signature (kind, memories, lifted text, superseded
            fact; text with spaces and case folded) keyed by ``None``.
        """
        if self.keep_id is not None and self.action in FOLDING_ACTIONS:
            return {
                memory_id: fold_signature(memory_id, self.keep_id) for memory_id in self.memory_ids
            }
        text = " ".join((self.text or "").casefold().split())
        memories = ",".join(sorted(self.memory_ids))
        return {None: _digest(self.action, memories, text, self.supersedes or "")}


FOLDING_ACTIONS = frozenset({"merge", "replace", "resolve_conflict"})
"""Actions that fold memories into a keeper (supersede or archive them for it)."""


def fold_signature(first: str, second: str) -> str:
    """The signature of "fold these two memories together" (either way round)."""
    low, high = sorted((first, second))
    return _digest("fold", low, high)


def _digest(*parts: str) -> str:
    """SHA-256 hex of ``parts`` joined by a unit separator."""
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


class ReviewPlan(BaseModel):
    """What a reviewer proposes for one agent and one reviewed UTC date."""

    model_config = ConfigDict(
        defer_build=True, alias_generator=to_camel, populate_by_name=True, extra="forbid"
    )

    agent_id: str
    date: str
    reviewer: str
    generated_at: Timestamp
    actions: list[ReviewAction] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class ActionOutcome(BaseModel):
    """What happened to one action when the plan was applied."""

    model_config = ConfigDict(
        defer_build=True, alias_generator=to_camel, populate_by_name=True, extra="forbid"
    )

    action_id: str
    action: ActionKind
    detail: str
    memory_ids: list[str] = Field(default_factory=list)
    created_id: str | None = None


class ActionDecision(BaseModel):
    """A person's decision on one action of an approval-mode review (docs/issues.md#issue-4-item-6).

    Attributes:
        action_id: the action (``a1``, ``a2``, …).
        state: see ``DecisionState``.
        decided_by: the person (``usr_…``) who approved or rejected it.
        decided_at: when (the approval's time while ``applying``).
        detail: what applying did, or why it was skipped; ``None`` otherwise.
        created_id: the fact a lift created.
        keep_id: the fact the person chose to keep when approving a conflict the
            other way round (``None``: the plan's ``keepId``).
    """

    model_config = ConfigDict(
        defer_build=True, alias_generator=to_camel, populate_by_name=True, extra="forbid"
    )

    action_id: str
    state: DecisionState = "pending"
    decided_by: str | None = None
    decided_at: Timestamp | None = None
    detail: str | None = None
    created_id: str | None = None
    keep_id: str | None = None


class ActionUndo(BaseModel):
    """A person undid one applied action of a review (docs/issues.md#issue-14-item-3).

    Attributes:
        action_id: the action (``a1``, ``a2``, …).
        undone_by: the person (``usr_…``).
        undone_at: when.
        detail: what the undo restored (``mem_… live again``, …).
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    action_id: str
    undone_by: str
    undone_at: Timestamp
    detail: str


def decides(action: ReviewAction, approval: ReviewApproval) -> bool:
    """Whether ``action`` waits for a person's decision: every action in approval
    mode, and the actions that wait in any mode (``waitsForPerson``)."""
    return approval == "required" or action.waits_for_person


class ReviewReport(WireModel):
    """A review as persons read it (``GET /reviews/{id}``); stored as JSON in S3.

    ``workspace_id`` is stored, never sent. ``approval`` is the workspace's
    setting when the review ran; with ``required`` nothing is applied by the
    run and ``decisions`` holds one entry per action (``pending`` until a
    person decides), while ``applied`` / ``skipped`` list the approved ones.
    The wire form adds ``status`` (see ``ReviewStatus``). In either mode an
    action that waits for a person (``waitsForPerson``) has a decision entry, and
    ``undone`` lists the applied actions a person undid.
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
    approval: ReviewApproval = "none"
    decisions: list[ActionDecision] = Field(default_factory=list)
    undone: list[ActionUndo] = Field(default_factory=list)

    @property
    def status(self) -> ReviewStatus:
        """``planned`` (dry run), ``pending`` (a decision is awaited) or ``done``."""
        if self.dry_run:
            return "planned"
        waiting = any(decision.state not in FINAL_STATES for decision in self.decisions)
        return "pending" if waiting else "done"

    def to_wire(self) -> dict[str, Any]:
        """Return the JSON object (``object: "review"``, with ``status``)."""
        body = self.model_dump(mode="json", by_alias=True)
        return {"id": body.pop("id"), "object": "review", "status": self.status, **body}

    def with_decisions(
        self, stored: list[ActionDecision], undone: list[ActionUndo] | None = None
    ) -> ReviewReport:
        """This report with the stored decisions and undos merged in.

        Every action that waits for a decision (``decides``: all of them in
        approval mode) gets one entry in ``decisions`` (``pending`` when nothing
        is stored for it), in plan order; ``applied`` and ``skipped`` are the
        run's own outcomes followed by those of the approved actions.

        Args:
            stored: the decisions read from storage, in any order.
            undone: the undo records read from storage (``None``: keep this
                report's own).

        Returns:
            A new report; this one is unchanged.
        """
        by_action = {decision.action_id: decision for decision in stored}
        decided = [action for action in self.plan.actions if decides(action, self.approval)]
        decisions = [
            by_action.get(action.id, ActionDecision(action_id=action.id)) for action in decided
        ]
        actions = {action.id: action for action in self.plan.actions}
        waiting = {action.id for action in decided}

        def outcomes(state: str) -> list[ActionOutcome]:
            own = [
                outcome
                for outcome in (self.applied if state == "applied" else self.skipped)
                if outcome.action_id not in waiting
            ]
            return own + [
                ActionOutcome(
                    action_id=decision.action_id,
                    action=actions[decision.action_id].action,
                    detail=decision.detail or "",
                    memory_ids=_folded(actions[decision.action_id], decision.keep_id),
                    created_id=decision.created_id,
                )
                for decision in decisions
                if decision.state == state
            ]

        update: dict[str, Any] = {
            "decisions": decisions,
            "applied": outcomes("applied"),
            "skipped": outcomes("skipped"),
        }
        if undone is not None:
            order = {action.id: number for number, action in enumerate(self.plan.actions)}
            update["undone"] = sorted(undone, key=lambda u: order.get(u.action_id, 0))
        return self.model_copy(update=update)

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
            approval=self.approval,
            pending=sum(decision.state not in FINAL_STATES for decision in self.decisions),
            rejected=sum(decision.state == "rejected" for decision in self.decisions),
            undone=len(self.undone),
        )


def _folded(action: ReviewAction, kept: str | None) -> list[str]:
    """The memories an action superseded: the plan's, or the plan's keeper when a
    person chose to keep the other side of a conflict."""
    if kept is None or kept == action.keep_id or action.keep_id is None:
        return action.memory_ids
    return [action.keep_id, *(m for m in action.memory_ids if m != kept)]


class ReviewSummary(WireModel):
    """One line of ``GET /reviews``: counts and where the full report is.

    In approval mode ``applied``, ``skipped``, ``rejected`` and ``pending``
    follow the decisions (each decision moves one count, in the same
    transaction). The wire form adds ``status`` (``pending`` or ``done``).
    """

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
    approval: ReviewApproval = "none"
    pending: int = 0
    rejected: int = 0
    undone: int = 0

    def to_wire(self) -> dict[str, Any]:
        """Return the JSON object (``object: "review_summary"``, with ``status``)."""
        body = self.model_dump(mode="json", by_alias=True)
        status = "pending" if self.pending else "done"
        return {"id": body.pop("id"), "object": "review_summary", "status": status, **body}


class PendingAction(WireModel):
    """One review action waiting for a person (``GET /reviews/pending``,
    docs/issues.md#issue-14-item-2).

    Attributes:
        review_id: the review (``rvw_…``) whose plan holds the action.
        agent_id: the reviewed agent.
        date: the reviewed UTC date.
        approval: the workspace's setting when the review ran.
        waiting_since: when the review planned it.
        action: the action as planned (``waitsForPerson`` for a conflict; any
            kind in approval mode).
    """

    review_id: str
    agent_id: str
    date: str
    approval: ReviewApproval
    waiting_since: Timestamp
    action: ReviewAction

    def to_wire(self) -> dict[str, Any]:
        """Return the JSON object (``object: "pending_action"``)."""
        return {"object": "pending_action", **self.model_dump(mode="json", by_alias=True)}
