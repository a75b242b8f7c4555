"""Backfill of the recall index (docs/issues.md#issue-23-item-4): ``pinework admin
backfill-recall-index``.

Every change of a fact writes its index entry in its own transaction, and a new agent
gets its index's marker at creation (docs/issues.md#issue-23-item-1), so only agents
created before the index have facts without entries; recall reads their facts
themselves (correct, but every fact of the agent is read) until the marker says their
index is complete. The backfill gives them one: per agent, it pages through the live
facts, writes each entry only if its fact is unchanged since read
(``RecallIndexRepository.put_entries``), then writes the marker. Entries are derived
data, so writing one again is harmless: an agent already marked is skipped, and a run
interrupted midway redoes only the agent it was on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from chalicelib.ids import Clock
from chalicelib.models.memory import Memory, MemoryKind, MemoryStatus
from chalicelib.models.principal import Agent
from chalicelib.storage.protocols import (
    DirectoryRepository,
    MemoryRepository,
    RecallIndexRepository,
)

PAGE_SIZE = 100
"""Facts read (and written) at a time."""
PUT_ATTEMPTS = 3
"""Writes of a fact's entry before it is counted as changed meanwhile: the page's, then
(at least one) of the fact alone, each after a new read of it."""


@dataclass(frozen=True)
class IndexProgress:
    """One agent done, as ``RecallIndexBackfill.run`` reports it.

    Attributes:
        agent_id: the ``agt_…`` id.
        facts: entries written for it (0 when it was skipped).
        skipped: its index was complete already (marked); nothing was written.
        done: agents done so far, this one included.
        total: agents the run goes through.
    """

    agent_id: str
    facts: int
    skipped: bool
    done: int
    total: int


@dataclass(frozen=True)
class IndexBackfillReport:
    """What a recall index backfill did.

    Attributes:
        agents: agents seen.
        already_indexed: of those, with a complete index before the run (skipped).
        indexed: indexed by this run (marked complete now).
        facts: entries written.
        changed: live facts whose entry this run did not write because they kept
            changing while it read them; each change wrote (or removed) the fact's
            entry in its own transaction, so none is missing.
    """

    agents: int
    already_indexed: int
    indexed: int
    facts: int
    changed: int

    def to_wire(self) -> dict[str, int]:
        """The JSON object the CLI prints with ``--json``."""
        return {
            "agentsSeen": self.agents,
            "agentsAlreadyIndexed": self.already_indexed,
            "agentsIndexed": self.indexed,
            "factsIndexed": self.facts,
            "changedMeanwhile": self.changed,
        }


class RecallIndexBackfill:
    """Builds the recall index of agents created before it.

    Args:
        memories: memory storage (an agent's live facts, read again by id).
        index: the recall index (its marker, its entries).
        directory: the agents to go through.
        clock: the time written in each marker.
    """

    def __init__(
        self,
        memories: MemoryRepository,
        index: RecallIndexRepository,
        directory: DirectoryRepository,
        clock: Clock,
    ) -> None:
        self._memories = memories
        self._index = index
        self._directory = directory
        self._clock = clock

    def run(
        self,
        workspace_id: str | None,
        agent_id: str | None,
        *,
        rebuild: bool = False,
        progress: Callable[[IndexProgress], None] | None = None,
    ) -> IndexBackfillReport:
        """Index one agent, one workspace's agents, or every agent of the table
        (docs/issues.md#issue-23-item-4).

        Per agent: skipped when its index is complete (``is_built``); otherwise its
        active facts, 100 at a time, newest first (``list_memories``, the items read
        strongly consistent), are written with ``put_entries``, which writes an entry
        only if its fact is still at the version read. The ids it refuses changed
        meanwhile, or share a transaction with one that did: they are read again
        (``get_many``) and written again one at a time, up to ``PUT_ATTEMPTS`` writes
        in all. A fact still refused when written alone, or no longer an active fact,
        is counted as changed, and nothing is lost: its own change, made after the
        backfill read it, wrote (or removed) its entry in its transaction. Once every
        page is done the marker is written (``mark_built``), and recall reads the
        index from then on.

        Resumable and idempotent: a marked agent is never read again, so an
        interrupted run leaves the agents it finished marked, and a rerun skips them
        and redoes the agent it stopped on (an entry written twice is the same entry).
        Safe while the service runs: a change is written with its entry, and recall
        reads an unmarked agent's facts themselves. The agents to go through are read
        first (``total`` of ``progress``).

        The caller checks that the workspace exists and the agent belongs to it
        (``AdminService.backfill_recall_index``). An agent's facts are listed through
        the ``byAgentKind`` index, which a table from before the dashboard gets from
        ``pinework admin upgrade-table`` (docs/issues.md#issue-13): run that first.

        Args:
            workspace_id: the ``wsp_…`` id; ``None`` (without ``agent_id``): every
                agent of the table (a Scan of it, ``DirectoryRepository.all_agents``).
            agent_id: only this agent (``agt_…``); ``None``: every agent of the
                workspace.
            rebuild: clear each agent's index first (``clear``: marker, then
                entries) and build it again, skipping none; for a table an earlier
                release wrote facts to after this one had indexed them.
            progress: called after each agent (skipped or indexed), in order.

        Returns:
            The counts (``IndexBackfillReport``).
        """
        agents = list(self._agents(workspace_id, agent_id))
        skipped = indexed = facts = changed = 0
        for done, agent in enumerate(agents, start=1):
            if rebuild:
                self._index.clear(agent.id)
            elif self._index.is_built(agent.id):
                skipped += 1
                self._report(progress, IndexProgress(agent.id, 0, True, done, len(agents)))
                continue
            written, refused = self._index_agent(agent)
            self._index.mark_built(agent.id, self._clock.now())
            # Merged here, not by the agent's first recalls (a large store's segments
            # would take those longer than a request may).
            self._index.settle(agent.id, self._clock.now())
            indexed += 1
            facts += written
            changed += refused
            self._report(progress, IndexProgress(agent.id, written, False, done, len(agents)))
        return IndexBackfillReport(len(agents), skipped, indexed, facts, changed)

    def _agents(self, workspace_id: str | None, agent_id: str | None) -> Iterable[Agent]:
        if agent_id is not None:
            agent = self._directory.get_agent(agent_id)
            return [] if agent is None else [agent]
        if workspace_id is not None:
            return self._directory.list_agents(workspace_id)
        return self._directory.all_agents()

    def _index_agent(self, agent: Agent) -> tuple[int, int]:
        """Write the entries of every active fact of the agent: (written, changed)."""
        written = changed = 0
        after: str | None = None
        while True:
            page = self._memories.list_memories(
                workspace_id=agent.workspace_id,
                agent_id=agent.id,
                status=MemoryStatus.ACTIVE.value,
                kind=MemoryKind.FACT.value,
                limit=PAGE_SIZE,
                after_id=after,
            )
            page_written, page_changed = self._index_page(page.memories)
            written += page_written
            changed += page_changed
            if page.continue_after is None:
                return written, changed
            after = page.continue_after

    def _index_page(self, memories: list[Memory]) -> tuple[int, int]:
        """Write one page's entries, reading again those refused: (written, changed)."""
        written = changed = 0
        pending = memories
        for attempt in range(1, PUT_ATTEMPTS + 1):
            live = [memory for memory in pending if _is_active_fact(memory)]
            changed += len(pending) - len(live)  # archived or vetoed since: no entry due
            refused = self._put(live, one_by_one=attempt > 1)
            written += len(live) - len(refused)
            if not refused:
                break
            if attempt == PUT_ATTEMPTS:
                changed += len(refused)
                break
            again = [memory.id for memory in live if memory.id in refused]
            pending = self._memories.get_many(again)
            changed += len(again) - len(pending)
        return written, changed

    def _put(self, facts: list[Memory], *, one_by_one: bool) -> set[str]:
        """The ids of ``facts`` whose entry was refused. A group's transaction writes
        none of its facts when one of them changed, so facts read again are written
        one at a time: a fact still refused then is one that changed itself."""
        if not one_by_one:
            return set(self._index.put_entries(facts))
        refused: set[str] = set()
        for fact in facts:
            refused.update(self._index.put_entries([fact]))
        return refused

    @staticmethod
    def _report(progress: Callable[[IndexProgress], None] | None, step: IndexProgress) -> None:
        if progress is not None:
            progress(step)


def _is_active_fact(memory: Memory) -> bool:
    """Whether the memory is due an index entry (an active fact, expired or not)."""
    return memory.kind is MemoryKind.FACT and memory.status is MemoryStatus.ACTIVE
