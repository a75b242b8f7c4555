"""What recall hands its scorer (docs/reference.md#8-recall): the candidate facts and the scorer's
contract. No numpy here, so the recall service imports it without loading the scorer
(docs/DECISIONS.md "Cold start"); ``relevance`` re-exports both names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True)
class Candidate:
    """One live fact offered to recall.

    Attributes:
        text: The fact text.
        created_at: When the fact was saved (timezone-aware or naive UTC; only the
            differences between candidates matter).
        embedding: The stored embedding (``Embedder.embed``), or ``None`` (or bytes of
            another format) to have the scorer embed ``text`` now.
    """

    text: str
    created_at: datetime
    embedding: bytes | None = None


class CandidateScorer(Protocol):
    """Relevance of candidate facts to a recall query, each in [0, 1]
    (docs/reference.md#8-recall)."""

    def score(self, query: str, candidates: Sequence[Candidate], now: datetime) -> list[float]:
        """One score per candidate, same order; >= 0.5 means "worth recalling"."""
        ...


class PartialCandidates(list[Candidate]):
    """Candidates read from the recall index (docs/issues.md#issue-23-item-1): the embedding of
    those at ``partial`` positions is a sentence-only stand-in
    (``embedding_format.sentence_stand_in``) of a stored embedding with word pieces.
    A scorer that reads word pieces calls ``fetch`` with the positions it needs and gets
    their full stored embeddings (a position missing from the answer, or ``None``:
    the memory is gone or has none). A scorer that reads only sentence vectors (or
    ignores this class) scores them as plain candidates.

    Args:
        candidates: the candidates, in the order scores are returned.
        partial: positions whose embedding is a stand-in.
        fetch: positions -> their full stored embeddings.
    """

    def __init__(
        self,
        candidates: Iterable[Candidate],
        partial: Iterable[int],
        fetch: Callable[[Sequence[int]], dict[int, bytes | None]],
    ) -> None:
        super().__init__(candidates)
        self.partial = frozenset(partial)
        self.fetch = fetch
