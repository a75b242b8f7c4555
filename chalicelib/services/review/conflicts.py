"""Facts that say different things about one subject (docs/reference.md#review-step-5)
and the index of live facts the rule reviewer compares them with: a pair whose
``sameness.compare`` relation is ``different`` is an update or a conflict, never a
merge. The side the saved evidence supports is kept and the other superseded
(``resolve_conflict``); without deciding evidence both stay live and the action waits
for a person (``waitsForPerson``) in every approval mode. When evidence supports a
side: docs/DECISIONS.md#a-review-that-never-destroys-information-issue-14-items-15.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from chalicelib.ids import to_rfc3339
from chalicelib.models.memory import Memory
from chalicelib.models.review import ReviewAction
from chalicelib.services.review.details import Token, shape
from chalicelib.services.review.sameness import SUBJECT_SHARED, Relation, compare, vector_of

if TYPE_CHECKING:  # numpy loads with the embedder, on first use (cold start)
    from chalicelib.services.recall.embedding import FloatArray

EVIDENCE_SHARE = 0.5
"""Share of a fact's values an evidence excerpt must hold to back one side of a
pair that differs only in polarity."""
EVIDENCE_EXCERPT = 300
"""Characters of a fact's evidence quoted in a plan (the full text is in its history)."""


class LiveFacts:
    """The live facts of one review, their embeddings, and which facts share a value,
    so a rule compares a fact only with facts that share something with it.

    Args:
        live: the agent's active facts, newest first.
    """

    def __init__(self, live: Sequence[Memory]) -> None:
        self.live = list(live)
        self._position = {fact.id: number for number, fact in enumerate(self.live)}
        self._vectors = {fact.id: vector_of(fact.embedding) for fact in self.live}
        self._postings: dict[str, list[int]] = {}
        for number, fact in enumerate(self.live):
            for value in set(shape(fact.text).values):
                self._postings.setdefault(value, []).append(number)

    def vector(self, fact: Memory) -> FloatArray | None:
        """The fact's unit sentence vector, or None without an embedding of ours."""
        if fact.id in self._vectors:
            return self._vectors[fact.id]
        return vector_of(fact.embedding)

    def relation(self, first: Memory, second: Memory) -> Relation:
        """``sameness.compare`` of two facts with their stored embeddings."""
        return compare(first.text, second.text, self.vector(first), self.vector(second))

    def sharing(self, fact: Memory, minimum: int = 1, after: bool = False) -> list[Memory]:
        """The other live facts (newest first) sharing at least ``minimum`` distinct
        values with ``fact``; only those after it in ``live`` when ``after``."""
        start = self._position.get(fact.id, -1) if after else -1
        counts: dict[int, int] = {}
        for value in set(shape(fact.text).values):
            for number in self._postings.get(value, ()):
                if number > start:
                    counts[number] = counts.get(number, 0) + 1
        own = self._position.get(fact.id)
        return [
            self.live[number]
            for number in sorted(counts)
            if counts[number] >= minimum and number != own
        ]


def subject_minimum(fact: Memory) -> int:
    """Values two facts must share to be about one subject: two, or one when ``fact`` has
    only two (docs/reference.md#review-step-5)."""
    return max(1, min(SUBJECT_SHARED, len(shape(fact.text).values) - 1))


def contradicting(fact: Memory, live: LiveFacts) -> Memory | None:
    """The newest other live fact of ``live`` that says something different about
    ``fact``'s subject (``compare``'s ``different``), or None: the review does not propose
    a disputed fact as a learning (docs/issues.md#issue-42-item-6)."""
    for other in live.sharing(fact, minimum=subject_minimum(fact)):
        if live.relation(fact, other).kind == "different":
            return other
    return None


def conflict_action(
    first: Memory, second: Memory, relation: Relation, proposed_keep: Memory | None = None
) -> ReviewAction:
    """The action for two live facts that say different things about one subject.

    Args:
        first, second: the pair (``relation`` is ``compare(first, second)``).
        relation: how they relate.
        proposed_keep: the side to propose keeping when no evidence decides (a
            model's choice); the newer fact when None.

    Returns:
        ``resolve_conflict`` keeping the side the pair's saved evidence supports;
        when no evidence decides, the same action keeping ``proposed_keep`` (or
        the newer fact) with ``waits_for_person`` set (applied only once a person
        approves it).
    """
    pair = (first, second)
    difference = f"{first.id} says {_side(relation.only_a)}, {second.id} says " + _side(
        relation.only_b
    )
    if not relation.only_a and not relation.only_b and relation.reason:
        difference = relation.reason  # the same words with their roles swapped
    if relation.polarity_differs:
        negative = max(pair, key=lambda fact: shape(fact.text).negations)
        difference += f"; {negative.id} says not"
    winner = decided_by_evidence(first, second, relation)
    evidence = [provenance(first), provenance(second)]
    versions = {fact.id: fact.version for fact in pair}
    if winner is not None:
        loser = second if winner is first else first
        sources = [fact.id for fact in pair if fact.evidence]
        return ReviewAction(
            id="",
            action="resolve_conflict",
            memory_ids=[loser.id],
            keep_id=winner.id,
            reason=(
                f"{winner.id} and {loser.id} say different things about one subject "
                f"({difference}); the saved evidence of {', '.join(sources)} supports "
                f"{winner.id}, so it is kept"
            ),
            evidence=evidence,
            expected_versions=versions,
        )
    newer, older = sorted(pair, key=lambda fact: (fact.created_at, fact.id), reverse=True)
    if proposed_keep is not None and proposed_keep in pair:
        newer, older = proposed_keep, second if proposed_keep is first else first
    return ReviewAction(
        id="",
        action="resolve_conflict",
        memory_ids=[older.id],
        keep_id=newer.id,
        waits_for_person=True,
        reason=(
            f"{newer.id} and {older.id} say different things about one subject "
            f"({difference}) and no saved evidence decides which is right: both stay "
            f"live until a person decides (approve keeps {newer.id}, or name the one to "
            f"keep; reject keeps both and the pair is not proposed again)"
        ),
        evidence=evidence,
        expected_versions=versions,
    )


def decided_by_evidence(first: Memory, second: Memory, relation: Relation) -> Memory | None:
    """The fact of the pair that the pair's saved evidence supports and the other
    does not get any support from; None when nothing decides."""
    evidence = [fact.evidence for fact in (first, second) if fact.evidence]
    backs_first = sum(
        supports(text, first, relation.only_a, relation.only_b, relation.polarity_differs)
        for text in evidence
    )
    backs_second = sum(
        supports(text, second, relation.only_b, relation.only_a, relation.polarity_differs)
        for text in evidence
    )
    if backs_first and not backs_second:
        return first
    if backs_second and not backs_first:
        return second
    return None


def supports(
    evidence: str,
    fact: Memory,
    own: Sequence[Token],
    others: Sequence[Token],
    polarity_differs: bool,
) -> bool:
    """True when ``evidence`` supports ``fact`` against the other fact of its pair.

    Args:
        evidence: a saved tool-output excerpt.
        fact: one fact of the pair.
        own: the values only ``fact`` states; ``others``: those only the other states.
        polarity_differs: the pair's polarity differs.
    """
    found, stated = shape(evidence), shape(fact.text)
    held = _held(evidence)
    if own:
        if not all(token.value in held for token in own):
            return False
        if others and all(token.value in held for token in others):
            return False
        return not polarity_differs or found.negated == stated.negated
    if not polarity_differs or not stated.values:
        return False
    share = len(set(stated.values) & held) / len(set(stated.values))
    return share >= EVIDENCE_SHARE and found.negated == stated.negated


def _held(evidence: str) -> set[str]:
    """The values an evidence excerpt states, with the parts of its identifiers and
    paths too (tool output writes ``0.0.0.0:6432`` or ``port=6432`` for port 6432)."""
    found = shape(evidence)
    held = set(found.values)
    for token in found.tokens:
        if token.kind in ("identifier", "path", "url"):
            held.update(part for part in re.split(r"[:=/,@]+", token.value) if part)
    return held


def provenance(memory: Memory) -> str:
    """One evidence line of a plan: the fact, its run, its date and its evidence excerpt."""
    source = f"run {memory.run_id}" if memory.run_id else "no run"
    line = f"{memory.id} ({source}, saved {to_rfc3339(memory.created_at)}): {memory.text}"
    if memory.evidence:
        excerpt = " ".join(memory.evidence.split())
        if len(excerpt) > EVIDENCE_EXCERPT:
            excerpt = excerpt[: EVIDENCE_EXCERPT - 1] + "…"
        line += f" | evidence: {excerpt}"
    return line


def _side(tokens: Sequence[Token]) -> str:
    return ", ".join(repr(token.raw or token.value) for token in tokens) or "nothing more"
