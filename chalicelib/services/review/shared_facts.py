"""The review's look across the agents of a workspace (docs/reference.md#learnings-and-the-review,
docs/issues.md#issue-25-item-4).

An agent's review also compares the agent's live facts with the other agents' live facts
and with the workspace's active learnings, by the review's own sameness rule
(``sameness.is_duplicate``). The other agents' copies are found through the shared-facts
index (``SameFactIndex``: live facts by the digest of their normalized text, one Query
per fact), so a review reads its own store plus the matches, whatever the number of
agents in the workspace (docs/issues.md#issue-41-item-3):

* a fact that says what an active learning says is reported in the review's notes,
  never merged or archived: a person decides;
* a fact that another agent of the workspace also holds is proposed as a learning
  (``proposed``, the facts cited as its evidence), unless a live learning already says
  it (then the note names that one) or a person rejected or retired one that does (the
  note says so). At most ``MAX_PROPOSALS_PER_REVIEW`` per review;
* a disputed fact is never proposed (docs/issues.md#issue-42-item-6): one in a conflict
  the review found (``disputed``: a ``resolve_conflict`` of this review's plan, waiting
  for a person or not), one another live fact of the agent contradicts
  (``conflicts.contradicting``), or one an active learning contradicts; the note says
  which fact disputes it.

A dry run gets the same notes with "would propose" and writes nothing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from chalicelib.errors import InvalidRequest, LearningLimitReached, LearningRejected
from chalicelib.models.learning import Learning
from chalicelib.models.memory import Memory, MemoryKind, MemoryStatus
from chalicelib.normalized import content_digest, normalize
from chalicelib.services.review.conflicts import LiveFacts, contradicting
from chalicelib.services.review.sameness import compare, is_duplicate, vector_of
from chalicelib.storage.protocols import MemoryRepository

if TYPE_CHECKING:
    from chalicelib.services.learnings import LearningService

MAX_PROPOSALS_PER_REVIEW = 5
"""Learnings one review proposes at most (the others wait for the next night)."""


class SameFactIndex(Protocol):
    """The shared-facts index (``storage/same_facts.py``)."""

    def holders(
        self, workspace_id: str, texts: Sequence[str], *, except_agent: str
    ) -> dict[str, list[tuple[str, str]]]:
        """Other agents' ``(agent id, memory id)`` entries per ``content_digest``."""
        ...

    def file_agent(self, agent_id: str, live: Sequence[Memory]) -> None:
        """File the agent's live facts once (facts saved before the index)."""
        ...


class SharedFacts:
    """Finds facts of an agent that the workspace shares.

    Args:
        memories: reads the copies the index names.
        index: the shared-facts index (which other agents hold a fact).
        learnings: the workspace's learnings, and where proposals go.
    """

    def __init__(
        self,
        memories: MemoryRepository,
        index: SameFactIndex,
        learnings: LearningService,
    ) -> None:
        self._memories = memories
        self._index = index
        self._learnings = learnings

    def notes(
        self,
        workspace_id: str,
        agent_id: str,
        facts: Sequence[Memory],
        now: datetime,
        *,
        review_id: str | None,
        disputed: frozenset[str] = frozenset(),
    ) -> list[str]:
        """The review's notes on shared facts; with ``review_id`` (not a dry run) the
        proposals are made.

        Args:
            facts: the agent's facts (live and archived) as the review read them.
            now: the review's time (an expired fact is not live).
            disputed: ids of the facts in a conflict of this review's plan (never
                proposed).
        """
        live = [
            fact
            for fact in facts
            if fact.status is MemoryStatus.ACTIVE and not fact.is_expired(now)
        ]
        if not live:
            return []
        active = self._learnings.active(workspace_id)
        notes: list[str] = []
        uncovered: list[Memory] = []
        for fact in live:
            covering = next((found for found in active if _same(fact, found)), None)
            if covering is None:
                uncovered.append(fact)
            else:
                notes.append(
                    f"{fact.id} says what the active learning {covering.id} says; every agent "
                    "is told the learning, so a person may archive the fact (nothing changed)."
                )
        others = self._copies(workspace_id, agent_id, uncovered, now)
        own = LiveFacts(live)
        proposed = 0
        for fact in uncovered:
            copies = [
                other
                for other in others.get(content_digest(fact.text), [])
                if normalize(other.text) == normalize(fact.text) or _duplicates(fact, other)
            ]
            if not copies:
                continue
            agents = sorted({copy.agent_id for copy in copies})
            cited = [fact.id, *sorted(copy.id for copy in copies)]
            held = f"{fact.id} is held by {len(agents) + 1} agents ({', '.join(cited)})"
            dispute = self._dispute(fact, disputed, own, active)
            if dispute is not None:
                notes.append(f"{held}: not proposed as a learning, {dispute}.")
                continue
            if review_id is None:
                notes.append(f"{held}: the review would propose it as a learning.")
                continue
            if proposed == MAX_PROPOSALS_PER_REVIEW:
                notes.append(f"{held}: not proposed now (this review's limit); next review.")
                continue
            notes.append(self._propose(workspace_id, review_id, fact, cited, held))
            proposed += 1
        return notes

    @staticmethod
    def _dispute(
        fact: Memory, disputed: frozenset[str], own: LiveFacts, active: Sequence[Learning]
    ) -> str | None:
        """Why ``fact`` is disputed (a note's words), or None."""
        if fact.id in disputed:
            return "it is in a conflict this review found (a person decides it first)"
        other = contradicting(fact, own)
        if other is not None:
            return f"{other.id} says something different about the same subject"
        for learning in active:
            vectors = (vector_of(fact.embedding), vector_of(learning.embedding))
            if compare(fact.text, learning.text, *vectors).kind == "different":
                return (
                    f"the active learning {learning.id} says something different about the "
                    "same subject"
                )
        return None

    def _propose(
        self, workspace_id: str, review_id: str, fact: Memory, cited: list[str], held: str
    ) -> str:
        try:
            learning, created = self._learnings.propose_from_review(
                workspace_id, review_id, fact.text, cited
            )
        except (LearningRejected, InvalidRequest) as rejected:
            # InvalidRequest: a fact stored before the character rule
            # (docs/reference.md#stored-text) is not copied into every agent's block.
            return f"{held}: not proposed, {rejected.message}"
        except LearningLimitReached:
            return f"{held}: not proposed, the workspace holds as many learnings as it may."
        if created:
            return f"{held}: proposed as learning {learning.id} for a person to decide."
        return f"{held}: the {learning.state.value} learning {learning.id} says it already."

    def _copies(
        self, workspace_id: str, agent_id: str, live: Sequence[Memory], now: datetime
    ) -> dict[str, list[Memory]]:
        """The other agents' live facts that say what one of ``live`` says, by
        ``content_digest``: the shared-facts index names them (one Query per fact, never
        a read of another agent's store), each confirmed against the stored memory."""
        self._index.file_agent(agent_id, live)
        holders = self._index.holders(
            workspace_id, [fact.text for fact in live], except_agent=agent_id
        )
        wanted = sorted({memory_id for entries in holders.values() for _, memory_id in entries})
        grouped: dict[str, list[Memory]] = defaultdict(list)
        for other in self._memories.get_many(wanted):
            if (
                other.workspace_id == workspace_id
                and other.agent_id != agent_id
                and other.kind is MemoryKind.FACT
                and other.status is MemoryStatus.ACTIVE
                and not other.is_expired(now)
            ):
                grouped[content_digest(other.text)].append(other)
        return grouped


def _same(fact: Memory, learning: Learning) -> bool:
    if normalize(fact.text) == normalize(learning.text):
        return True
    return is_duplicate(
        fact.text, learning.text, vector_of(fact.embedding), vector_of(learning.embedding)
    )


def _duplicates(fact: Memory, other: Memory) -> bool:
    return is_duplicate(
        fact.text, other.text, vector_of(fact.embedding), vector_of(other.embedding)
    )
