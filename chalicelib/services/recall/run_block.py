"""What a past run saw (docs/reference.md#what-a-run-saw, docs/issues.md#issue-46-item-4):
the block one logged recall gave, rebuilt from the recall log and the audit history.

A recall's block is not stored: it would copy every fact's text into the log, where an
erasure could not reach it. The log keeps what the block was made of (the facts and
learnings shown, their scores and order, the wiki sections by page and heading), so the
block is rebuilt from that, each fact as it was at the recall's moment
(``MemoryAsOf``), the day log of that day and the day before as it was then, and the
learnings whose text has not changed since. The answer says it is rebuilt and names
what could not be put back:

- a fact whose text has been erased since is left out (erased text stays erased);
- a learning changed or erased since is left out (its text then is not kept);
- wiki sections are named (page, heading anchor, score), not rebuilt: a page's older
  versions are kept as diffs, and the block is given without them.
"""

from __future__ import annotations

from dataclasses import dataclass

from chalicelib.errors import LearningNotFound, MemoryNotFound
from chalicelib.ids import to_rfc3339
from chalicelib.models.learning import Learning
from chalicelib.models.memory import Memory
from chalicelib.models.principal import Principal
from chalicelib.models.recall import RecalledSection, RecallLogEntry
from chalicelib.services.learnings import LearningService
from chalicelib.services.memory.as_of import MemoryAsOf
from chalicelib.services.recall.as_of import day_rows_then
from chalicelib.services.recall.service import (
    RecallService,
    ScoredLearning,
    ScoredMemory,
)


@dataclass(frozen=True)
class RunBlock:
    """The block a logged recall gave, as rebuilt.

    Attributes:
        entry: the recall log entry.
        block: the block rebuilt (the grammar of docs/reference.md#8-recall; no wiki part).
        erased: ids of facts shown then whose text has been erased since (left out).
        learnings_changed: ids of learnings shown then that were changed, erased or
            removed since (left out).
        sections: the wiki sections shown then, by reference (not in ``block``; the
            entry's own list).
    """

    entry: RecallLogEntry
    block: str
    erased: tuple[str, ...]
    learnings_changed: tuple[str, ...]
    sections: tuple[RecalledSection, ...]


class RunBlocks:
    """Rebuilds the blocks of logged recalls.

    Args:
        recall: the recall service (the log's reads and access rules, the block's
            grammar).
        as_of: the as-of views (each fact and day row as it was then).
        learnings: the learnings (their text now, and when it last changed).
    """

    def __init__(
        self, recall: RecallService, as_of: MemoryAsOf, learnings: LearningService
    ) -> None:
        self._recall = recall
        self._as_of = as_of
        self._learnings = learnings

    def get(self, principal: Principal, agent_id: str | None, recall_id: str) -> RunBlock:
        """The block of the agent's logged recall ``recall_id``, rebuilt (module doc).

        Raises:
            RecallNotFound: no such entry in the agent's log, or past its retention.
            MemoryNotOwn, MemoryAgentRequired, Forbidden: see ``resolve_agent`` (an
                agent reads its own runs; a person names the agent).
        """
        entry = self._recall.log_entry(principal, agent_id, recall_id)
        moment = to_rfc3339(entry.at)
        picked: list[ScoredMemory] = []
        erased: list[str] = []
        for shown in entry.memories:
            then = self._memory_then(principal, shown.memory_id, moment)
            if then is None or not then.text:
                erased.append(shown.memory_id)
                continue
            picked.append(ScoredMemory(then, shown.score))
        learned: list[ScoredLearning] = []
        changed: list[str] = []
        for shown_learning in entry.learnings:
            learning = self._learning_then(principal, shown_learning.learning_id, entry)
            if learning is None:
                changed.append(shown_learning.learning_id)
                continue
            learned.append(ScoredLearning(learning, shown_learning.score))
        rows = day_rows_then(self._as_of, principal, entry.agent_id, moment)
        block = self._recall.render_block(entry.agent_id, picked, entry.at, learned, rows.get)
        return RunBlock(entry, block, tuple(erased), tuple(changed), tuple(entry.sections))

    def _memory_then(self, principal: Principal, memory_id: str, moment: str) -> Memory | None:
        try:
            return self._as_of.get(principal, memory_id, moment)[0]
        except MemoryNotFound:
            return None  # erased whole since (an agent's erasure) or never there

    def _learning_then(
        self, principal: Principal, learning_id: str, entry: RecallLogEntry
    ) -> Learning | None:
        try:
            learning = self._learnings.get(principal, learning_id)
        except LearningNotFound:
            return None
        if learning.updated_at > entry.at or not learning.text:
            return None
        return learning
