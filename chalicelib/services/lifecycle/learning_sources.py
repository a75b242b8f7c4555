"""Learnings whose sources are erased (docs/reference.md#learnings-and-erasure,
docs/issues.md#issue-42-item-1).

The review proposes a learning from facts that two or more agents hold and cites them
in its ``evidence``. When a memory, or an agent with its memories, is erased:

* a learning whose cited facts are all erased (tombstones, or gone with their agent) is
  retired and blanked, whatever its state: the text, its vector and its history's texts
  go, and it never reaches a block again (a rejected or retired one keeps its state);
  one ``erase`` history record without text says so (actor ``system``/``erasure``);
* a learning with one or more cited facts still held keeps its text, and the erased
  facts leave its ``evidence`` (one ``erase`` history record, no text).

A learning a person proposed cites no fact and is never touched here: its text is the
person's own. The learnings an agent proposed go with the agent (``ownership.py``).
Each change is conditional on the learning's version; one that changed meanwhile is
read again. Every step is idempotent, so an erasure that runs again finishes the work.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from chalicelib.errors import Conflict
from chalicelib.ids import Clock, IdFactory
from chalicelib.models.learning import Learning, LearningAudit, LearningState
from chalicelib.models.memory import Memory
from chalicelib.services.learnings import LearningStore

SOURCES_ERASED = "Every fact it was learned from was erased."
"""The reason a blanked learning carries."""
ERASER_ID = "erasure"
"""The actor id of the ``erase`` history records (actor type ``system``)."""
CHANGE_ATTEMPTS = 5
"""How often one learning is read again when a person changed it meanwhile."""
_LIVE = (LearningState.PROPOSED, LearningState.ACTIVE)


class SourceStore(LearningStore, Protocol):
    """The learnings as this step reads and changes them (``storage/learnings.py``):
    ``LearningStore`` and two reads and writes of its own."""

    def list_learnings(self, workspace_id: str, *, consistent: bool = True) -> list[Learning]:
        """Every learning of the workspace, newest first."""
        ...

    def blank_history(self, learning_id: str, texts: Sequence[str]) -> int:
        """Remove the texts of the learning's history records."""
        ...


class MemoryLookup(Protocol):
    """One memory by id (``MemoryRepository.get``)."""

    def get(self, memory_id: str) -> Memory | None:
        """The memory, or None when it is gone."""
        ...


@dataclass
class SourcesPlan:
    """What an erasure does to the workspace's learnings.

    Attributes:
        proposed_by_agent: learnings the erased agent proposed: they go with it.
        blanked: learnings whose cited facts are all erased: retired and blanked.
        pruned: learnings that keep their text; the erased facts leave their evidence.
        kept_by_persons: live learnings persons wrote: they stay.
    """

    proposed_by_agent: list[Learning] = field(default_factory=list)
    blanked: list[Learning] = field(default_factory=list)
    pruned: list[Learning] = field(default_factory=list)
    kept_by_persons: list[Learning] = field(default_factory=list)


class ErasedSources:
    """Retire and blank the learnings whose sources an erasure took (the module's rule).

    Args:
        store: the learnings.
        memories: to tell an erased (or gone) cited fact from a held one.
        clock: the current time.
        ids: the id factory (history records).
        version_changed: the store's "changed since read" error.
    """

    def __init__(
        self,
        store: SourceStore,
        memories: MemoryLookup,
        clock: Clock,
        ids: IdFactory,
        version_changed: type[Exception],
    ) -> None:
        self._store = store
        self._memories = memories
        self._clock = clock
        self._ids = ids
        self._version_changed = version_changed

    def plan(
        self,
        workspace_id: str,
        *,
        memory_ids: Collection[str] = (),
        agent_id: str | None = None,
    ) -> SourcesPlan:
        """What erasing ``memory_ids`` and (or) the agent ``agent_id`` with its facts
        does to the workspace's learnings, changing nothing (the agent's Data tab shows
        it before the person confirms). Reads every learning of the workspace and the
        facts they cite."""
        plan = SourcesPlan()
        gone = self._gone(set(memory_ids), agent_id)
        for learning in self._store.list_learnings(workspace_id):
            if agent_id is not None and learning.proposed_by == agent_id:
                plan.proposed_by_agent.append(learning)
            elif learning.proposed_by_type == "person":
                if learning.state in _LIVE:
                    plan.kept_by_persons.append(learning)
            elif learning.evidence:
                erased = [source for source in learning.evidence if gone(source)]
                if len(erased) == len(learning.evidence):
                    plan.blanked.append(learning)
                elif erased:
                    plan.pruned.append(learning)
        return plan

    def after_erasure(
        self,
        workspace_id: str,
        *,
        memory_ids: Collection[str] = (),
        agent_id: str | None = None,
        texts: Collection[str] = (),
    ) -> SourcesPlan:
        """Apply ``plan``: blank and retire, or prune, each learning citing an erased
        fact (the learnings the agent proposed are left to the owner erasure).

        Args:
            texts: the erased facts' texts, replaced wherever a person's reason in a
                blanked learning's history quotes them.

        Returns:
            The plan as it was applied.

        Raises:
            Conflict: one learning kept changing (the erasure runs again to finish).
        """
        gone = self._gone(set(memory_ids), agent_id)
        plan = self.plan(workspace_id, memory_ids=memory_ids, agent_id=agent_id)
        for learning in [*plan.blanked, *plan.pruned]:
            self._settle(workspace_id, learning.id, gone, tuple(texts))
        return plan

    def _gone(self, memory_ids: set[str], agent_id: str | None) -> Callable[[str], bool]:
        """Whether a cited fact is erased: named by the erasure, a tombstone, gone with
        its agent, or the erased agent's."""
        known: dict[str, bool] = {}

        def gone(memory_id: str) -> bool:
            if memory_id in memory_ids:
                return True
            if memory_id not in known:
                memory = self._memories.get(memory_id)
                known[memory_id] = memory is None or memory.is_erased or memory.agent_id == agent_id
            return known[memory_id]

        return gone

    def _settle(
        self,
        workspace_id: str,
        learning_id: str,
        gone: Callable[[str], bool],
        texts: tuple[str, ...],
    ) -> None:
        """Blank or prune one learning, read again while a person changes it."""
        for _ in range(CHANGE_ATTEMPTS):
            before = self._store.get(workspace_id, learning_id)
            if before is None or not before.evidence:
                return  # gone, or settled by an earlier run
            held = [source for source in before.evidence if not gone(source)]
            if len(held) == len(before.evidence):
                return
            if not held:
                # the history's texts first: a rerun finds the learning still citing
                self._store.blank_history(before.id, (before.text, *texts))
                after = self._blanked(before)
            else:
                after = self._pruned(before, held)
            try:
                self._store.change(before, after, self._record(before, after))
            except self._version_changed:
                continue
            return
        raise Conflict(f"{learning_id} kept changing while its erased sources were removed.")

    def _blanked(self, before: Learning) -> Learning:
        now = self._clock.now()
        retired = before.state in _LIVE
        return before.model_copy(
            update={
                "text": "",
                "embedding": None,
                "evidence": [],
                "state": LearningState.RETIRED if retired else before.state,
                "reason": SOURCES_ERASED,
                "decided_at": now if retired else before.decided_at,
                "updated_at": now,
                "version": before.version + 1,
            }
        )

    def _pruned(self, before: Learning, held: list[str]) -> Learning:
        return before.model_copy(
            update={
                "evidence": held,
                "updated_at": self._clock.now(),
                "version": before.version + 1,
            }
        )

    def _record(self, before: Learning, after: Learning) -> LearningAudit:
        """The ``erase`` history record: states only, never a text."""
        blanked = not after.text
        dropped = len(before.evidence or []) - len(after.evidence or [])
        return LearningAudit(
            id=self._ids.new("aud"),
            learning_id=after.id,
            workspace_id=after.workspace_id,
            action="erase",
            actor_type="system",
            actor_id=ERASER_ID,
            at=after.updated_at,
            reason=SOURCES_ERASED
            if blanked
            else f"{dropped} erased fact(s) left its evidence; the text stays.",
            before={"state": before.state.value, "text": None},
            after={"state": after.state.value, "text": None},
        )
