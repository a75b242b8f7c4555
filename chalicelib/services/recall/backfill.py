"""Backfill of recall embeddings (docs/issues.md#issue-3-item-3): ``pinework admin
backfill-embeddings``.

A save or an edit embeds its fact once (``MemoryService``), and so does a review's
lift. Facts written before that, or by an earlier version of the format (format 1,
with no word pieces, gets no token match at recall), are embedded at every recall
and never written back, which keeps a recall's writes bounded but costs time on each
one. The backfill pays that once: it pages through a workspace's (or one agent's)
live facts, embeds those whose embedding is not current (``embedding.is_current``) in
batches, and stores each with a write conditioned on the version it read, so an edit
that lands meanwhile (and wrote its own fresh embedding) is never overwritten.
Rerunning it is safe: current facts are only counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from chalicelib.models.memory import MemoryKind, MemoryStatus
from chalicelib.services.recall.embedding_format import is_current
from chalicelib.storage.protocols import MemoryRepository

if TYPE_CHECKING:  # numpy: loaded by the embedder itself, on first use (cold start)
    from chalicelib.services.recall.embedding import Embedder

PAGE_SIZE = 100
BATCH_SIZE = 64


@dataclass(frozen=True)
class BackfillReport:
    """What a backfill did.

    Attributes:
        scanned: live facts read.
        current: of those, already holding a current embedding (left alone).
        embedded: embedded and stored.
        changed: embedded but not stored, because the fact changed after it was
            read (its edit stored a fresh embedding; the GSI read may also lag).
    """

    scanned: int
    current: int
    embedded: int
    changed: int

    def to_wire(self) -> dict[str, int]:
        """The JSON object the CLI prints with ``--json``."""
        return {
            "scanned": self.scanned,
            "current": self.current,
            "embedded": self.embedded,
            "changed": self.changed,
        }


class EmbeddingBackfill:
    """Embeds the live facts whose stored embedding is missing or out of date.

    Args:
        memories: memory storage (the list indexes, and ``set_embedding``).
        embedder: the embedder that recall's scorer uses (the process's MiniLM).
    """

    def __init__(self, memories: MemoryRepository, embedder: Embedder) -> None:
        self._memories = memories
        self._embedder = embedder

    def run(self, workspace_id: str, agent_id: str | None = None) -> BackfillReport:
        """Backfill one workspace's live facts, or one agent's.

        The caller checks that the workspace exists and the agent belongs to it
        (``AdminService.backfill_embeddings``).

        Args:
            workspace_id: the ``wsp_…`` id.
            agent_id: only this agent's facts; ``None``: every agent of the workspace.

        Returns:
            The counts (``BackfillReport``).
        """
        scanned = current = embedded = changed = 0
        after: str | None = None
        while True:
            page = self._memories.list_memories(
                workspace_id=workspace_id,
                agent_id=agent_id,
                status=MemoryStatus.ACTIVE.value,
                kind=MemoryKind.FACT.value,
                limit=PAGE_SIZE,
                after_id=after,
            )
            scanned += len(page.memories)
            stale = [fact for fact in page.memories if not is_current(fact.embedding)]
            current += len(page.memories) - len(stale)
            for start in range(0, len(stale), BATCH_SIZE):
                batch = stale[start : start + BATCH_SIZE]
                vectors = self._embedder.embed([fact.text for fact in batch])
                for fact, vector in zip(batch, vectors, strict=True):
                    if self._memories.set_embedding(fact, vector):
                        embedded += 1
                    else:
                        changed += 1
            if page.continue_after is None:
                return BackfillReport(scanned, current, embedded, changed)
            after = page.continue_after
