"""What recall hands its scorer (docs/reference.md#8-recall): the candidate facts and the scorer's
contract. No numpy here, so the recall service imports it without loading the scorer
(docs/DECISIONS.md "Cold start"); ``relevance`` re-exports both names.
"""

from __future__ import annotations

from collections.abc import Sequence
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
