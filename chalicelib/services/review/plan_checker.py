"""Checks a model's proposed review actions against what the review read
(docs/reference.md#9-review, docs/issues.md#issue-4-item-5b, docs/issues.md#issue-14): ids,
versions, the rules' own conditions, and the "same facts" safety checks the rule reviewer applies
(``sameness``).

See ``model_plan`` for the tool schema and the parsing of the model's answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from chalicelib.ids import to_rfc3339
from chalicelib.models.memory import VETOED, Memory, MemoryKind, MemoryStatus
from chalicelib.models.review import ReviewAction
from chalicelib.normalized import normalize
from chalicelib.services.review.conflicts import LiveFacts, conflict_action
from chalicelib.services.review.model_plan import (
    ActionDropped,
    ArchiveProposal,
    ConflictProposal,
    LiftProposal,
    MergeProposal,
    ProposedAction,
    RenewProposal,
    ReplaceProposal,
)
from chalicelib.services.review.rule_reviewer import (
    DURABLE_MARKERS,
    RECENT_RECALL,
    RENEWAL,
    STALE_AGE,
    ReviewContext,
    content_words,
    day_line_body,
    twin_of,
)
from chalicelib.services.review.sameness import compare


class PlanChecker:
    """Turns a model's proposals into ``ReviewAction``s, or drops them, against the
    facts the review read (``ReviewContext``). One checker per review: it
    remembers which memories and lifted texts earlier actions took.

    Args:
        context: what the review read of the agent.
    """

    def __init__(self, context: ReviewContext) -> None:
        self._context = context
        self._by_id = {fact.id: fact for fact in context.facts}
        self._facts = LiveFacts(context.live)
        self._used: set[str] = set()
        self._lifted: set[str] = set()
        self.notes: list[str] = []
        """What a check changed in an action it kept (for the plan's notes)."""

    def check(self, proposed: ProposedAction) -> ReviewAction:
        """The action to apply, with its versions and evidence from the context.

        Raises:
            ActionDropped: an id is unknown, not the agent's, not a live fact, or
                already used; the action's own rule fails (renew/replace need an
                expired fact, archive an expired or stale one, a lift a real day
                line and a text that is no fact yet); the message says which.
        """
        if isinstance(proposed, LiftProposal):
            action = self._lift(proposed)
        elif isinstance(proposed, MergeProposal | ReplaceProposal | ConflictProposal):
            action = self._supersede(proposed)
        else:
            action = self._change_one(proposed)
        self._used.update(action.expected_versions)
        return action

    def _live(self, memory_id: str) -> Memory:
        fact = self._by_id.get(memory_id)
        if fact is None or fact.agent_id != self._context.agent_id:
            raise ActionDropped(f"{memory_id} is not one of the agent's facts")
        if fact.kind is not MemoryKind.FACT:
            raise ActionDropped(f"{memory_id} is not a fact")
        if fact.status is not MemoryStatus.ACTIVE:
            raise ActionDropped(f"{memory_id} is not live (archived: {fact.archive_reason})")
        if memory_id in self._used:
            raise ActionDropped(f"{memory_id} is already part of another action")
        return fact

    def _distinct(self, ids: Sequence[str]) -> list[Memory]:
        if len(set(ids)) != len(ids):
            raise ActionDropped("the action names the same memory twice")
        return [self._live(memory_id) for memory_id in ids]

    def _supersede(
        self, proposed: MergeProposal | ReplaceProposal | ConflictProposal
    ) -> ReviewAction:
        others = (
            proposed.memory_ids if isinstance(proposed, MergeProposal) else [proposed.memory_id]
        )
        keep, *dropped = self._distinct([proposed.keep_id, *others])
        if isinstance(proposed, ReplaceProposal):
            self._check_replacement(keep, dropped[0])
        if isinstance(proposed, ConflictProposal):
            relation = self._facts.relation(keep, dropped[0])
            return conflict_action(keep, dropped[0], relation, proposed_keep=keep)
        if isinstance(proposed, MergeProposal):
            merged = self._merged(keep, dropped)
            if isinstance(merged, ReviewAction):
                return merged
            dropped = merged
        return ReviewAction(
            id="",
            action=proposed.action,
            memory_ids=[fact.id for fact in dropped],
            keep_id=keep.id,
            reason=proposed.reason,
            evidence=[_described(fact) for fact in (keep, *dropped)],
            expected_versions=_versions([keep, *dropped]),
        )

    def _check_replacement(self, keep: Memory, replaced: Memory) -> None:
        """Raise ``ActionDropped`` unless ``keep`` may replace ``replaced``: the replaced
        fact is expired, the keeper is not, and the keeper says everything it says."""
        now = self._context.now
        if not replaced.is_expired(now):
            raise ActionDropped(f"{replaced.id} is not expired; only expired facts are replaced")
        if keep.is_expired(now):
            raise ActionDropped(f"{keep.id} is expired itself and cannot replace another")
        relation = self._facts.relation(keep, replaced)
        if relation.kind not in ("duplicate", "covers"):
            raise ActionDropped(
                f"{keep.id} does not say everything {replaced.id} says "
                f"({relation.difference()}); only a fact that covers it replaces it"
            )

    def _merged(self, keep: Memory, dropped: list[Memory]) -> list[Memory] | ReviewAction:
        """The facts of a model merge that say the same as ``keep`` (the others get a
        note), or a conflict action when the only one differs.

        Raises:
            ActionDropped: none of them says the same thing as ``keep``.
        """
        same: list[Memory] = []
        for other in dropped:
            relation = self._facts.relation(keep, other)
            if relation.kind == "duplicate":
                same.append(other)
            elif relation.kind == "different" and len(dropped) == 1:
                self.notes.append(
                    f"model merge of {other.id} into {keep.id} is a conflict, not a "
                    f"merge ({relation.difference()}): proposed as resolve_conflict"
                )
                return conflict_action(keep, other, relation, proposed_keep=keep)
            else:
                self.notes.append(
                    f"not merged: {other.id} does not say the same thing as {keep.id} "
                    f"({relation.kind}: {relation.difference()})"
                )
        if not same:
            raise ActionDropped(f"none of the facts says the same thing as {keep.id}")
        return same

    def _change_one(self, proposed: RenewProposal | ArchiveProposal) -> ReviewAction:
        (fact,) = self._distinct([proposed.memory_id])
        now = self._context.now
        expired = fact.is_expired(now)
        if isinstance(proposed, RenewProposal):
            if not expired:
                raise ActionDropped(f"{fact.id} is not expired; only expired facts are renewed")
            renewed = fact.expires_at + RENEWAL
            return ReviewAction(
                id="",
                action="renew",
                memory_ids=[fact.id],
                expires_at=renewed if renewed > now else now + RENEWAL,
                reason=proposed.reason,
                evidence=[_described(fact)],
                expected_versions=_versions([fact]),
            )
        if not expired and not _stale(fact, now):
            raise ActionDropped(
                f"{fact.id} is neither expired nor stale (older than 30 days and "
                "not recalled in 30 days); it is not archived"
            )
        return ReviewAction(
            id="",
            action="archive",
            memory_ids=[fact.id],
            reason=f"{'expired' if expired else 'stale'}: {proposed.reason}",
            evidence=[_described(fact)],
            expected_versions=_versions([fact]),
        )

    def _lift(self, proposed: LiftProposal) -> ReviewAction:
        text = _without_marker(proposed.text.strip())
        normalized = normalize(text)
        if not content_words(text):
            raise ActionDropped("the lifted text says nothing")
        line = next(
            (
                line
                for line in self._context.day_lines
                if f" {normalized} " in f" {normalize(day_line_body(line))} "
            ),
            None,
        )
        if line is None:
            raise ActionDropped(
                f"the lifted text is not in the day log of {self._context.date}: {text[:80]}"
            )
        if normalized in self._lifted:
            raise ActionDropped("the same text is lifted by another action")
        twin = twin_of(text, self._context.facts)
        if twin is not None:
            why = "a person vetoed" if twin.archive_reason == VETOED else "already a fact"
            raise ActionDropped(f"not lifted ({why}: {twin.id}): {line}")
        updated = None if proposed.supersedes is None else self._live(proposed.supersedes)
        if updated is not None and compare(text, updated.text).kind != "covers":
            self.notes.append(
                f"lift of {text[:60]!r} does not supersede {updated.id}: it does not say "
                f"everything {updated.id} says ({compare(text, updated.text).difference()})"
            )
            updated = None
        self._lifted.add(normalized)
        return ReviewAction(
            id="",
            action="lift",
            memory_ids=[] if updated is None else [updated.id],
            text=text,
            supersedes=None if updated is None else updated.id,
            reason=proposed.reason,
            evidence=[line] + ([] if updated is None else [_described(updated)]),
            expected_versions={} if updated is None else _versions([updated]),
        )


def _without_marker(text: str) -> str:
    for marker in DURABLE_MARKERS:
        if text.lower().startswith(marker):
            return text[len(marker) :].strip()
    return text


def _stale(fact: Memory, now: datetime) -> bool:
    recalled = fact.last_recalled_at is not None and fact.last_recalled_at >= now - RECENT_RECALL
    return fact.created_at <= now - STALE_AGE and not recalled


def _described(fact: Memory) -> str:
    last = "never" if fact.last_recalled_at is None else to_rfc3339(fact.last_recalled_at)
    return (
        f"{fact.id} (recalled {fact.recall_count}x, last {last}; "
        f"expires {to_rfc3339(fact.expires_at)}): {fact.text}"
    )


def _versions(facts: Sequence[Memory]) -> dict[str, int]:
    return {fact.id: fact.version for fact in facts}
