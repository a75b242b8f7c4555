"""A model's review plan (docs/reference.md#reviewer): the tool schema a model answers
with and the strict parsing of its answer. Nothing a model says is trusted: an answer
that is not ``{"actions": [...], "notes": [...]}`` is rejected whole
(``MalformedPlan``); inside it each action is validated on its own, and one with an
unknown kind, a missing or extra field or a wrong type is dropped with the reason
(``ActionDropped``) while the others stand. ``plan_checker.PlanChecker`` then holds
every action to the agent's own live memories and the rules' safety checks
(docs/DECISIONS.md#a-review-that-never-destroys-information-issue-14-items-15).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel

from chalicelib.limits import FACT_MAX_CHARS

REASON_MAX_CHARS = 300
"""Longest reason a model may give for one action (an archive reason is <= 500)."""
MAX_ACTIONS = 200
"""Most actions one answer may hold; a longer list rejects the answer."""
MAX_NOTES = 10
"""Most notes of one answer kept for the report (each cut to ``NOTE_MAX_CHARS``)."""
NOTE_MAX_CHARS = 300
_MAX_IDS = 20


class MalformedPlan(ValueError):
    """The model's answer is not a plan at all; the message says why."""


class ActionDropped(Exception):
    """One proposed action fails a check; the message says why (for the report)."""


class _Proposed(BaseModel):
    model_config = ConfigDict(
        defer_build=True,
        alias_generator=to_camel,
        populate_by_name=False,
        extra="forbid",
        strict=True,
    )


_Reason = Annotated[
    str,
    Field(
        min_length=1,
        max_length=REASON_MAX_CHARS,
        description="Why, in one sentence a person understands.",
    ),
]
_Id = Annotated[str, Field(min_length=1, max_length=40, description="A fact id (mem_…).")]


class MergeProposal(_Proposed):
    """Step 1: live facts that say the same thing; ``memoryIds`` are superseded by
    ``keepId`` (keep the most recalled, then the newest)."""

    action: Literal["merge"]
    keep_id: _Id
    memory_ids: list[_Id] = Field(min_length=1, max_length=_MAX_IDS)
    reason: _Reason


class RenewProposal(_Proposed):
    """Step 2: an expired fact that is still useful gets 90 more days."""

    action: Literal["renew"]
    memory_id: _Id
    reason: _Reason


class ReplaceProposal(_Proposed):
    """Step 2: an expired fact is superseded by the newer, unexpired ``keepId``."""

    action: Literal["replace"]
    memory_id: _Id
    keep_id: _Id
    reason: _Reason


class ArchiveProposal(_Proposed):
    """Steps 2 and 4: an expired fact no longer useful, or a stale one (older than
    30 days and not recalled in 30 days) that is wrong or covered, is archived."""

    action: Literal["archive"]
    memory_id: _Id
    reason: _Reason


class LiftProposal(_Proposed):
    """Step 3: a durable fact in the reviewed day's log becomes a fact; ``text`` is
    copied from one line (without its time, task or marker); ``supersedes`` names
    the live fact it updates, if any."""

    action: Literal["lift"]
    text: str = Field(min_length=1, max_length=FACT_MAX_CHARS)
    supersedes: _Id | None = None
    reason: _Reason


class ConflictProposal(_Proposed):
    """Step 5: two live facts contradict; ``keepId`` (the one its source run's
    evidence supports) stays, ``memoryId`` is superseded by it."""

    action: Literal["resolve_conflict"]
    keep_id: _Id
    memory_id: _Id
    reason: _Reason


ProposedAction = Annotated[
    MergeProposal
    | RenewProposal
    | ReplaceProposal
    | ArchiveProposal
    | LiftProposal
    | ConflictProposal,
    Field(discriminator="action"),
]
_ACTION: TypeAdapter[ProposedAction] = TypeAdapter(ProposedAction)


class ModelPlan(_Proposed):
    """What the review tool takes: the actions, and notes for the report."""

    actions: list[ProposedAction] = Field(max_length=MAX_ACTIONS)
    notes: list[str] = Field(default_factory=list, max_length=MAX_NOTES)


class _Envelope(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", strict=True)

    actions: list[dict[str, Any]] = Field(max_length=MAX_ACTIONS)
    notes: list[str] = Field(default_factory=list, max_length=MAX_NOTES)


def tool_input_schema() -> dict[str, Any]:
    """The JSON Schema of ``ModelPlan`` for a tool's ``inputSchema.json``, with every
    ``$ref`` inlined (no ``$defs``), since not every Bedrock model resolves them."""
    schema = ModelPlan.model_json_schema(by_alias=True)
    definitions = schema.pop("$defs", {})
    inlined = _inline(schema, definitions)
    assert isinstance(inlined, dict)
    return inlined


def _inline(node: Any, definitions: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            return _inline(definitions[node["$ref"].rsplit("/", 1)[-1]], definitions)
        # "discriminator" is OpenAPI, not JSON Schema, and names the $defs dropped here.
        return {k: _inline(v, definitions) for k, v in node.items() if k != "discriminator"}
    if isinstance(node, list):
        return [_inline(item, definitions) for item in node]
    return node


def parse_answer(answer: object) -> tuple[list[ProposedAction], list[str], list[str]]:
    """Validate a tool call's input strictly.

    Args:
        answer: the ``toolUse.input`` document.

    Returns:
        ``(actions, notes, dropped)``: the well-formed actions in order, the
        model's notes (at most 10, each cut to 300 characters), and one line per
        malformed action saying why it was dropped.

    Raises:
        MalformedPlan: the answer is not ``{"actions": [...], "notes": [...]}``
            (or holds more than 200 actions); nothing of it is used.
    """
    try:
        envelope = _Envelope.model_validate(answer)
    except ValidationError as error:
        raise MalformedPlan(f"the answer is not a plan: {_summary(error)}") from error
    actions: list[ProposedAction] = []
    dropped: list[str] = []
    for number, raw in enumerate(envelope.actions, start=1):
        try:
            actions.append(_ACTION.validate_python(raw))
        except ValidationError as error:
            dropped.append(
                f"dropped model action {number} ({str(raw.get('action', '?'))[:40]}): "
                f"malformed: {_summary(error)}"
            )
    notes = [note[:NOTE_MAX_CHARS] for note in envelope.notes]
    return actions, notes, dropped


def _summary(error: ValidationError) -> str:
    problems = [
        f"{'.'.join(str(part) for part in problem['loc']) or 'answer'}: {problem['msg']}"
        for problem in error.errors(include_url=False, include_input=False)[:3]
    ]
    more = error.error_count() - len(problems)
    return "; ".join(problems) + (f" (and {more} more)" if more > 0 else "")


def describe(proposed: ProposedAction) -> str:
    """A short label of a proposal for the report: its kind and the ids it names."""
    ids = [
        getattr(proposed, name)
        for name in ("keep_id", "memory_id", "supersedes")
        if getattr(proposed, name, None)
    ]
    ids += getattr(proposed, "memory_ids", [])
    return f"{proposed.action} {' '.join(ids)}".strip()
