"""Vetoes stick (docs/reference.md#6-errors, docs/reference.md#9-review;
docs/issues.md#issue-14-item-5): an agent's save of a text a person vetoed — the same text after
normalisation, or a duplicate of it by the review's "same facts" rule
(``chalicelib.services.review.sameness``) — is refused with 409 ``memory_vetoed`` naming the vetoed
memory. A person may still save it.

The check reads one index (``VetoIndex``: entries keyed by a digest of the
normalized text and of its duplicate key, written in the veto's own transaction)
instead of the agent's archive, then confirms each candidate against the stored
memory: it must still be vetoed, and still say the same thing (embeddings
included). Vetoes made before the index existed are filed the first time one of
the agent's saves is checked (the ``INDEXED`` marker).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from chalicelib.errors import MemoryVetoed
from chalicelib.models.memory import VETOED, Memory, MemoryKind
from chalicelib.normalized import normalize
from chalicelib.services.review.sameness import duplicate_key, is_duplicate, vector_of
from chalicelib.storage.protocols import MemoryRepository, VetoIndex

if TYPE_CHECKING:  # numpy loads with the embedder, on first use (cold start)
    from chalicelib.services.recall.embedding import FloatArray

_PAGE = 500


def veto_index_keys(text: str) -> list[str]:
    """The index entries a vetoed text is filed under, and a saved text looked up by:
    ``TEXT#`` + SHA-256 of its normalized form, ``SAME#`` + SHA-256 of its duplicate key."""
    return [
        "TEXT#" + hashlib.sha256(normalize(text).encode("utf-8")).hexdigest(),
        "SAME#" + hashlib.sha256(duplicate_key(text).encode("utf-8")).hexdigest(),
    ]


class VetoGuard:
    """Refuses an agent's save of a vetoed text.

    Args:
        memories: to confirm a candidate (and to file old vetoes once).
        index: the vetoed-text index.
    """

    def __init__(self, memories: MemoryRepository, index: VetoIndex) -> None:
        self._memories = memories
        self._index = index

    def check(self, workspace_id: str, agent_id: str, text: str, embedding: bytes | None) -> None:
        """Raise ``MemoryVetoed`` when ``text`` repeats a fact a person vetoed.

        Args:
            workspace_id: the agent's workspace.
            agent_id: whose vetoes count (another agent's vetoes do not).
            text: the fact being saved.
            embedding: its stored embedding (``Embedder.embed``), if computed.

        Raises:
            MemoryVetoed: the message names the vetoed memory.
        """
        keys = veto_index_keys(text)
        candidates, indexed = self._index.candidates(agent_id, keys)
        if not indexed:
            self._file_earlier_vetoes(workspace_id, agent_id)
            candidates, _ = self._index.candidates(agent_id, keys)
        vector = vector_of(embedding)
        for memory_id in sorted(candidates):
            vetoed = self._memories.get(memory_id)
            if vetoed is None or not _repeats(text, vector, vetoed, agent_id):
                continue
            raise MemoryVetoed(
                f"A person vetoed {vetoed.id}, which says the same thing "
                f"({_quoted(vetoed.text)}); an agent cannot save it again. "
                "Ask a person of the workspace, or save what is true now in other words."
            )

    def _file_earlier_vetoes(self, workspace_id: str, agent_id: str) -> None:
        """File every vetoed fact of the agent, then mark the agent indexed."""
        after: str | None = None
        while True:
            page = self._memories.list_memories(
                workspace_id=workspace_id,
                agent_id=agent_id,
                status="archived",
                kind=MemoryKind.FACT.value,
                limit=_PAGE,
                after_id=after,
                consistent=True,
            )
            for memory in page.memories:
                if memory.archive_reason == VETOED:
                    self._index.add(agent_id, memory.id, veto_index_keys(memory.text))
            if page.continue_after is None:
                break
            after = page.continue_after
        self._index.mark_indexed(agent_id)


def _repeats(text: str, vector: FloatArray | None, vetoed: Memory, agent_id: str) -> bool:
    """The candidate is the agent's fact, still vetoed, and says what ``text`` says."""
    if vetoed.agent_id != agent_id or vetoed.kind is not MemoryKind.FACT:
        return False
    if vetoed.archive_reason != VETOED:
        return False  # a person brought it back: the veto was lifted
    if normalize(vetoed.text) == normalize(text):
        return True
    return is_duplicate(text, vetoed.text, vector, vector_of(vetoed.embedding))


def _quoted(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:79] + "…")
