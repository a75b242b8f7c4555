"""Parts whose libraries load on first use, not when the Lambda handler is imported.

Import time is cold-start time, paid by every new Lambda container before its first
request, whatever route it serves (docs/conventions.md#pitfalls "AWS deployment"). numpy and the
MiniLM embedder, the relevance scorer and detect-secrets are each needed by some requests
only, so ``chalicelib.wiring`` builds these stand-ins, which satisfy the services'
Protocols and import and build the real part the first time a method is called
(once per process, thread-safe). A test checks that ``import app`` loads none of
them (``tests/unit/test_cold_start.py``); figures in docs/DECISIONS.md "Cold start".
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from chalicelib.services.recall.candidates import Candidate, CandidateScorer
    from chalicelib.services.recall.embedding import Embedder, FloatArray
    from chalicelib.services.recall.reranker import Reranker
    from chalicelib.services.text import SecretFinder

T = TypeVar("T")


class Deferred(Generic[T]):
    """A value built by ``build`` on the first ``get``, once, then kept.

    Args:
        build: makes the value; called at most once per ``Deferred`` (under a lock).
    """

    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._value: T | None = None
        self._lock = threading.Lock()

    @property
    def built(self) -> bool:
        """Whether ``get`` has built the value yet."""
        return self._value is not None

    def get(self) -> T:
        """The value, built now if this is the first call."""
        if self._value is None:
            with self._lock:
                if self._value is None:
                    self._value = self._build()
        return self._value


class DeferredEmbedder:
    """An ``Embedder`` whose implementation is built on first use.

    Args:
        build: returns the real embedder (``minilm_embedder``).
    """

    def __init__(self, build: Callable[[], Embedder]) -> None:
        self.target = Deferred(build)

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        """``Embedder.embed`` of the real embedder."""
        return self.target.get().embed(texts)

    def embed_matrix(self, texts: Sequence[str]) -> FloatArray:
        """``Embedder.embed_matrix`` of the real embedder."""
        return self.target.get().embed_matrix(texts)

    def embed_query(self, text: str) -> tuple[FloatArray, FloatArray]:
        """``Embedder.embed_query`` of the real embedder."""
        return self.target.get().embed_query(text)


class DeferredScorer:
    """A ``CandidateScorer`` whose implementation is built on first use.

    Args:
        build: returns the real scorer (``relevance_scorer``).
    """

    def __init__(self, build: Callable[[], CandidateScorer]) -> None:
        self.target = Deferred(build)

    def score(self, query: str, candidates: Sequence[Candidate], now: datetime) -> list[float]:
        """``CandidateScorer.score`` of the real scorer; building it (imports, once per
        process) does not count against the recall's deadline (``deadline.excluded``)."""
        from chalicelib.services.recall import deadline

        with deadline.excluded():
            scorer = self.target.get()
        return scorer.score(query, candidates, now)


class DeferredSecretFinder:
    """A ``SecretFinder`` whose implementation is built on first use.

    Args:
        build: returns the real finder (``secret_detector``).
    """

    def __init__(self, build: Callable[[], SecretFinder]) -> None:
        self.target = Deferred(build)

    def find_secret(self, text: str, *, shapes_only: bool = False) -> str | None:
        """``SecretFinder.find_secret`` of the real finder."""
        return self.target.get().find_secret(text, shapes_only=shapes_only)


def minilm_embedder() -> Embedder:
    """The MiniLM embedder (numpy; its weights load on its own first use)."""
    from chalicelib.services.recall.embedding import MiniLMEmbedder

    return MiniLMEmbedder()


def relevance_scorer(
    embedder: Embedder,
    reranker: Reranker | None = None,
    *,
    wait_for_reranker: bool = True,
) -> CandidateScorer:
    """The default recall scorer (docs/reference.md#8-recall) over ``embedder`` (numpy).

    Args:
        embedder: the query and fact embedder.
        reranker: the cross-encoder (``shared_cross_encoder``); ``None``: two stages only
            (``PINEWORK_RERANKER=off``).
        wait_for_reranker: see ``RelevanceScorer`` (``False`` on Lambda: a new
            container's first recalls do not wait for the weights).
    """
    from chalicelib.services.recall.relevance import RelevanceScorer

    return RelevanceScorer(embedder, reranker=reranker, wait_for_reranker=wait_for_reranker)


_cross_encoders: dict[str, Reranker] = {}
_cross_encoders_lock = threading.Lock()


def shared_cross_encoder(source: str, weights: Callable[[], Path]) -> Reranker:
    """The process's one cross-encoder for the weights named ``source`` (its 133 MB of
    float32 load once, however many services are built): built now (nothing is read
    until its first use) or the one built before for the same ``source``.

    Args:
        source: names where the weights come from (equal names: the same weights).
        weights: finds the weights file on first load (``ModelFile.path``).
    """
    from chalicelib.services.recall.reranker import CrossEncoder

    with _cross_encoders_lock:
        found = _cross_encoders.get(source)
        if found is None:
            found = _cross_encoders[source] = CrossEncoder(weights)
        return found


def secret_detector() -> SecretFinder:
    """The detect-secrets based detector (``chalicelib.services.secrets``)."""
    from chalicelib.services.secrets import SecretDetector

    return SecretDetector()
