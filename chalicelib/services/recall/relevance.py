"""Calibrated recall relevance (docs/reference.md#8-recall): ``RelevanceScorer``, the default
``CandidateScorer``, scores every candidate fact for a query in [0, 1], >= 0.5 meaning
keep it. Two logistic regressions, fitted by ``scripts/build_recall_model.py`` into
``chalicelib/data/recall-relevance.json`` (``Coefficients``): the first, over
``FEATURES`` (``relevance_features.features``), ranks every candidate; the second, over
``RERANK_FEATURES`` (adding ``relevance_features.token_match`` for the best
``RERANK_CANDIDATES``), gives ``p``, the calibrated probability that the fact holds
evidence for the query. A query of several clauses (``clauses``) is also scored clause
by clause, each clause's logits lowered by ``CLAUSE_SHIFT``. The score is
``sigmoid(logit p - logit cut)`` with the cut of ``cut.Cut`` for the query's best ``p``
(its floor raised for a query ``unrelated.unrelated`` to the store), so the order is
the order of ``p``.

With a reranker (``reranker.CrossEncoder``) and its fitted stage (``reranker.Stage``),
the best ``Stage.candidates`` facts by ``p`` are read by the cross-encoder together with
the query, and the stage's logistic regression gives their new ``p``
(``reranker.merged``: a fact it did not read never ranks above one it did); the stage's
own cut then applies. When the reranker is not loaded yet (and the scorer may not
wait), fails, or runs out of its CPU budget (``RERANK_CPU_SECONDS``), the two stages'
scores stand, with their cut (docs/reference.md#8-recall).
Design and measurements: docs/DECISIONS.md#recall,
docs/DECISIONS.md#recall-quality-on-unseen-conversations and
docs/DECISIONS.md#reranker-issue-28.
"""

import json
import logging
import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt

from chalicelib.services.recall import deadline
from chalicelib.services.recall.candidates import Candidate as Candidate
from chalicelib.services.recall.candidates import CandidateScorer as CandidateScorer
from chalicelib.services.recall.candidates import PartialCandidates
from chalicelib.services.recall.cut import Cut, capped
from chalicelib.services.recall.embedding import (
    DATA_DIR,
    SENTENCE_BYTES,
    Embedder,
    FloatArray,
    decode,
    decode_if_all_ours,
    is_ours,
)
from chalicelib.services.recall.relevance_features import FEATURES as FEATURES
from chalicelib.services.recall.relevance_features import (
    TERMS,
    TermScan,
    features,
    token_match,
)
from chalicelib.services.recall.reranker import Reranker, Stage, merged
from chalicelib.services.recall.unrelated import unrelated

logger = logging.getLogger(__name__)

WEIGHTS_FILE = DATA_DIR / "recall-relevance.json"

UNRELATED_CROSS_LOGIT = -7.0
"""When the cross-encoder's logit of every fact it read is below this, the query is taken
as one the store cannot answer and nothing is kept (docs/DECISIONS.md#reranker-issue-28:
on the benchmark's development half no question of its own store falls below it, 58 % of
questions asked of another conversation's store do)."""

RERANK_CPU_SECONDS = 0.6
"""CPU seconds of its thread one recall's cross-encoder may use; past it the two stages'
scores stand (docs/DECISIONS.md#reranker-issue-28 for the figures)."""

RERANK_PIECES = 800
"""Word pieces the cross-encoder reads per recall, over all its pairs: each pair is cut
to this divided by the number of pairs (at most ``reranker.MAX_PAIR_PIECES``, at least
``reranker.MIN_PAIR_PIECES``), so its work is bounded by design whatever the facts'
length (docs/DECISIONS.md#issue-40-bounded-recall for the figures)."""

DEADLINE_RESERVE_SECONDS = 0.25
"""Wall seconds of a recall's deadline kept for what follows the cross-encoder (its
stage, the cut, the service's reads): the cross-encoder's budget is at most what is
left of the deadline minus this."""

RERANK_FEATURES = (*FEATURES, "tokens", "tokens_gap", "tokens_z", "tokens_z_gap")
RERANK_CANDIDATES = 200
"""How many of the first stage's best candidates the second stage re-ranks."""

EMBED_BATCH = 64
"""Facts without a stored embedding are embedded this many at a time, the deadline
checked between batches (``deadline.check``)."""

CLAUSE_SHIFT = 2.0
"""Subtracted from a clause's logits: a fact only one clause finds needs a clearly
stronger match (odds divided by e^2) than one the whole task finds."""
MAX_CLAUSES = 8
"""At most this many clauses are scored (a query costs at most 9 passes)."""
_CLAUSE_BREAK = re.compile(r"[;:,!?\n]+|\.(?=\s|$)")
_CLAUSE_JOIN = re.compile(r"(\s+(?:and|or)\s+)", re.IGNORECASE)
ORDER_WORDS = frozenset(
    TERMS.terms("first last came happened earlier later ago long recently latest previous next")
)
"""Terms that only ask about time or order ("which came first"): a clause made of
them alone (and stop words) is no topic and is not scored on its own."""


@dataclass(frozen=True)
class Coefficients:
    """The two fitted logistic regressions (docs/DECISIONS.md#recall).

    Attributes:
        first_intercept, first_weights: the first stage over ``FEATURES`` (only its
            order matters: it picks the ``RERANK_CANDIDATES`` to re-rank).
        intercept, weights: the second stage over ``RERANK_FEATURES``:
            ``p = sigmoid(intercept + weights . features)``.
        cut: where the score's 0.5 sits on ``p`` (``cut.Cut``: floor, share of the
            best ``p``, and the floor for a query unrelated to the store).
    """

    first_intercept: float
    first_weights: tuple[float, ...]
    intercept: float
    weights: tuple[float, ...]
    cut: Cut

    @classmethod
    def load(cls, path: Path = WEIGHTS_FILE) -> "Coefficients":
        """Read the coefficients JSON written by ``scripts/build_recall_model.py``.

        Raises:
            ValueError: when the file's feature lists are not ``FEATURES`` and
                ``RERANK_FEATURES``, or it has no ``cut`` (a file of the absolute cut).
        """
        data = json.loads(path.read_text(encoding="utf-8"))
        first, rerank = data["first"], data["rerank"]
        if tuple(first["features"]) != FEATURES or tuple(rerank["features"]) != RERANK_FEATURES:
            raise ValueError(f"{path} was fitted for other features")
        if "cut" not in data:
            raise ValueError(f"{path} has no relative cut: rerun scripts/build_recall_model.py")
        return cls(
            first_intercept=float(first["intercept"]),
            first_weights=tuple(float(value) for value in first["weights"]),
            intercept=float(rerank["intercept"]),
            weights=tuple(float(value) for value in rerank["weights"]),
            cut=Cut.from_json(data["cut"]),
        )


@dataclass(frozen=True)
class _Store:
    """The candidates as every query of one recall reads them."""

    texts: list[str]
    vectors: FloatArray
    embeddings: list[bytes]
    times: npt.NDArray[np.float64]
    partial: set[int]
    """Positions whose embedding is still a sentence-only stand-in (``PartialCandidates``)."""
    fetch: Callable[[Sequence[int]], dict[int, bytes | None]] | None


def clauses(query: str) -> list[str]:
    """The clauses a query of several is also scored by (docs/DECISIONS.md#recall).

    The query is split at ``; : , ! ?``, line breaks and a full stop followed by a
    space or the end (not the one in "5.0"), then at "and" / "or" where both sides
    have at least two terms (``joined_parts``: "check the Stripe webhook and deploy to
    staging" is two tasks, "Melanie and Caroline" one). Parts with fewer than two
    terms (``LexicalScorer.terms``: stemmed, stop words dropped), or only terms of
    ``ORDER_WORDS`` ("which came first"), are left out.

    Returns:
        The first ``MAX_CLAUSES`` parts in query order, or ``[]`` when fewer than
        two parts are left (a one-clause query is scored as a whole only).
    """
    parts = [piece.strip() for part in _CLAUSE_BREAK.split(query) for piece in joined_parts(part)]
    found = []
    for part in parts:
        terms = TERMS.terms(part)
        if len(terms) >= 2 and not ORDER_WORDS.issuperset(terms):
            found.append(part)
    return found[:MAX_CLAUSES] if len(found) >= 2 else []


def joined_parts(text: str) -> list[str]:
    """``text`` cut at each "and" / "or" that joins two parts of two or more terms each.

    A part of fewer than two terms stays joined to the part before it (and the first
    part, when short, to the next): "what do Melanie and Caroline like" stays whole.

    Returns:
        The parts in order (``[text]`` when nothing is cut), conjunctions dropped.
    """
    pieces = _CLAUSE_JOIN.split(text)
    merged = [pieces[0]]
    for joiner, piece in zip(pieces[1::2], pieces[2::2], strict=True):
        if len(TERMS.terms(piece)) >= 2 and len(TERMS.terms(merged[-1])) >= 2:
            merged.append(piece)
        else:
            merged[-1] += joiner + piece
    return merged


class RelevanceScorer:
    """The default calibrated ``CandidateScorer`` (two stages, see the module doc).

    Embeds the query once per call, and any candidate whose stored embedding is
    missing or of another format. Reusable and thread-safe as long as the embedder is
    (``MiniLMEmbedder`` is); ``LexicalScorer`` is used only for its term rules.
    """

    def __init__(
        self,
        embedder: Embedder,
        coefficients: Coefficients | None = None,
        *,
        by_clause: bool = True,
        reranker: Reranker | None = None,
        stage: Stage | None = None,
        wait_for_reranker: bool = True,
        rerank_cpu_seconds: float | None = None,
    ) -> None:
        """Build the scorer.

        Args:
            embedder: Makes the query's (and missing facts') vectors; must be the one
                that made the stored embeddings.
            coefficients: The fitted model; default: ``Coefficients.load()``.
            by_clause: Also score a query of several clauses clause by clause
                (``clauses``); ``False`` scores the whole query only (for comparison).
            reranker: The cross-encoder (module doc); ``None``: two stages only.
            stage: Its fitted stage; default: ``Stage.load(WEIGHTS_FILE)`` when a
                reranker is given.
            wait_for_reranker: Load the reranker on the first score that needs it;
                ``False`` starts loading it in the background and scores with two
                stages until it is ready (a Lambda's first recalls: the cold start does
                not pay for it).
            rerank_cpu_seconds: The reranker's CPU budget per score (module doc);
                default: ``RERANK_CPU_SECONDS`` when the scorer is built.
        """
        self._embedder = embedder
        self._by_clause = by_clause
        self._reranker = reranker
        self._stage = stage if stage is not None or reranker is None else Stage.load(WEIGHTS_FILE)
        self._wait = wait_for_reranker
        self._rerank_budget = (
            RERANK_CPU_SECONDS if rerank_cpu_seconds is None else rerank_cpu_seconds
        )
        model = coefficients or Coefficients.load()
        self._first_intercept = model.first_intercept
        self._first_weights = np.asarray(model.first_weights, dtype=np.float64)
        self._intercept = model.intercept
        self._weights = np.asarray(model.weights, dtype=np.float64)
        self._cut = model.cut

    def score(self, query: str, candidates: Sequence[Candidate], now: datetime) -> list[float]:
        """Relevance of each candidate to ``query``, in [0, 1]; >= 0.5 means keep it.

        A query of several clauses (``clauses``: a task that asks for several things)
        is also scored clause by clause; a fact's logit is the larger of the whole
        query's and each clause's minus ``CLAUSE_SHIFT`` (see the module doc). The
        score is ``sigmoid(logit p - logit cut)`` with the cut of ``cut.Cut`` for the
        query's best ``p`` (per pass, the unrelated one's floor raised), the cut raised
        so that at most ``cut.MAX_KEPT`` facts reach 0.5 (``cut.capped``); with the
        reranker, its stage's ``p`` and cut (module doc).

        Args:
            query: The task text or conversation message.
            candidates: The live facts (any number).
            now: The time of the recall (reserved for recency; unused by this model).

        Returns:
            One score per candidate in ``candidates`` order; ``[]`` for no candidates;
            all zeros for a blank query.
        """
        del now
        if not candidates:
            return []
        if not query.strip():
            return [0.0] * len(candidates)
        if self._reranker is not None and not self._wait and not self._reranker.ready:
            self._reranker.load_in_background()  # while the first stages score
        store = self._store(candidates)
        parts = clauses(query) if self._by_clause else []
        deadline.check("lexical scan")
        # One scan of the store for the terms of every pass (``TermScan``).
        scan = TermScan(store.texts, [t for text in (query, *parts) for t in TERMS.terms(text)])
        deadline.check("first stage")
        passes = [self._logits(query, store, scan)]
        texts = [query]
        for clause in parts:
            deadline.check("clause pass")
            logits, unrelated_clause = self._logits(clause, store, scan)
            passes.append((logits - CLAUSE_SHIFT, unrelated_clause))
            texts.append(clause)
        margin = self._reranked(texts, store.texts, passes)
        if margin is None:
            best = _sigmoid(max(float(logits.max()) for logits, _ in passes))
            margin = np.maximum.reduce(
                [logits - self._cut.logit(best, unrelated) for logits, unrelated in passes]
            )
        margin = margin - capped(margin, 0.0)
        scores = 1.0 / (1.0 + np.exp(-np.clip(margin, -30.0, 30.0)))
        return [float(value) for value in scores]

    def _reranked(
        self,
        queries: list[str],
        texts: list[str],
        passes: list[tuple[npt.NDArray[np.float64], bool]],
    ) -> npt.NDArray[np.float64] | None:
        """Each fact's ``logit p - logit cut`` after the reranking stage (module doc), or
        ``None`` to keep the two stages': no reranker, not loaded and not to be waited
        for, a failure (logged), or the CPU budget spent.

        ``queries[i]`` is the text of ``passes[i]`` (the query, then its clauses). A
        fact's second-stage logit is its best over the passes (each clause's already
        lowered by ``CLAUSE_SHIFT``); the cross-encoder reads it with the text of that
        pass (a fact a clause found is judged against that clause). The facts read are
        the best ``Stage.candidates`` overall and each clause's best (so every topic of
        a task is read). When the cross-encoder finds none of them relevant (every logit
        below ``UNRELATED_CROSS_LOGIT``), the cut rises above the best fact: nothing is
        kept. Otherwise the unrelated floor applies when every pass is unrelated to the
        store.
        """
        if self._reranker is None or self._stage is None:
            deadline.note_reranker(deadline.RERANKER_OFF)
            return None
        try:
            if not self._reranker.ready:
                if not self._wait:
                    deadline.note_reranker(deadline.RERANKER_LOADING)
                    return None  # ``score`` started loading it in the background
                with deadline.excluded():
                    self._reranker.load()
            deadline.check("reranker")
            matrix = np.vstack([logits for logits, _ in passes])
            combined, found_by = matrix.max(axis=0), matrix.argmax(axis=0)
            chosen = _chosen(combined, matrix, self._stage.candidates)
            cross = self._cross(queries, texts, chosen, found_by)
        except deadline.DeadlinePassed:
            raise
        except Exception:
            logger.exception("reranker failed; recall keeps the first stages' scores")
            deadline.note_reranker(deadline.RERANKER_FAILED)
            return None
        if cross is None:
            logger.warning(
                "reranker ran past %.2f CPU s; first stages' scores", self._rerank_budget
            )
            deadline.note_reranker(deadline.RERANKER_OVER_BUDGET)
            return None
        deadline.note_reranker(deadline.RERANKER_RAN)
        logits = merged(combined, chosen, self._stage.logits(combined[chosen], cross))
        if float(cross.max()) < UNRELATED_CROSS_LOGIT:
            result: npt.NDArray[np.float64] = logits - (float(logits.max()) + 1.0)
            return result
        cut = self._stage.cut.logit(
            _sigmoid(float(logits.max())), all(unrelated_pass for _, unrelated_pass in passes)
        )
        result = logits - cut
        return result

    def _cross(
        self,
        queries: list[str],
        texts: list[str],
        chosen: npt.NDArray[np.intp],
        found_by: npt.NDArray[np.intp],
    ) -> FloatArray | None:
        """The cross-encoder's logit of each ``chosen`` fact with the text of the pass
        that found it (one call per pass, the CPU budget shared), or ``None`` when the
        budget ran out."""
        assert self._reranker is not None
        result = np.zeros(len(chosen), dtype=np.float32)
        pair_pieces = RERANK_PIECES // max(len(chosen), 1)
        started = time.thread_time()
        for index, query in enumerate(queries):
            rows = np.flatnonzero(found_by[chosen] == index)
            if not len(rows):
                continue
            deadline.check("reranker")
            left = self._rerank_budget - (time.thread_time() - started)
            wall = deadline.seconds_left()
            if wall is not None:
                # The reranker yields to the recall's deadline: the two stages' scores
                # stand rather than the recall falling back to the newest facts.
                left = min(left, wall - DEADLINE_RESERVE_SECONDS)
            logits = self._reranker.logits(
                query, [texts[int(chosen[row])] for row in rows], max(left, 0.0), pair_pieces
            )
            if logits is None:
                return None
            result[rows] = logits
        return result

    def features(self, query: str, candidates: Sequence[Candidate]) -> npt.NDArray[np.float64]:
        """The ``RERANK_FEATURES`` matrix, shape ``(len(candidates), 13)`` (both stages)."""
        return self._matrix(query, self._store(candidates))

    def _logits(
        self, query: str, store: _Store, scan: TermScan | None = None
    ) -> tuple[npt.NDArray[np.float64], bool]:
        """The second stage's logits (of ``p``) for one query, and whether the query is
        unrelated to the store (``unrelated``)."""
        matrix = self._matrix(query, store, scan)
        logits: npt.NDArray[np.float64] = self._intercept + matrix @ self._weights
        return logits, unrelated(query, store.texts, matrix)

    def _store(self, candidates: Sequence[Candidate]) -> _Store:
        """What every query against these candidates needs, computed once."""
        stored = [candidate.embedding for candidate in candidates]
        vectors = decode_if_all_ours(stored)
        if vectors is None:
            embeddings = self._complete(candidates)
            vectors = decode(embeddings)
        else:
            embeddings = [item for item in stored if item is not None]
        lazy = candidates if isinstance(candidates, PartialCandidates) else None
        return _Store(
            texts=[candidate.text for candidate in candidates],
            vectors=vectors,
            embeddings=embeddings,
            times=np.array([_seconds(candidate.created_at) for candidate in candidates]),
            partial=set() if lazy is None else set(lazy.partial),
            fetch=None if lazy is None else lazy.fetch,
        )

    def _matrix(
        self, query: str, store: _Store, scan: TermScan | None = None
    ) -> npt.NDArray[np.float64]:
        """``features`` over a prepared store (``scan``: the recall's shared term scan)."""
        query_vector, query_states = self._embedder.embed_query(query)
        first = features(query, store.texts, store.vectors, query_vector, store.times, scan)
        order = np.argsort(-(first @ self._first_weights), kind="stable")
        chosen = order[:RERANK_CANDIDATES]
        _fill(store, chosen)
        tokens = token_match(query_states, store.embeddings, chosen)
        return np.column_stack([first, tokens])

    def _complete(self, candidates: Sequence[Candidate]) -> list[bytes]:
        """The candidates' stored embeddings; missing or foreign ones embedded now."""
        embeddings = [candidate.embedding for candidate in candidates]
        missing = [index for index, item in enumerate(embeddings) if not is_ours(item)]
        made: list[bytes] = []
        for start in range(0, len(missing), EMBED_BATCH):
            deadline.check("embedding facts")
            batch = missing[start : start + EMBED_BATCH]
            made += self._embedder.embed([candidates[index].text for index in batch])
        fresh = iter(made)
        return [item if item is not None and is_ours(item) else next(fresh) for item in embeddings]


def _chosen(
    combined: npt.NDArray[np.float64], matrix: npt.NDArray[np.float64], candidates: int
) -> npt.NDArray[np.intp]:
    """The facts the cross-encoder reads: the best ``candidates`` by ``combined`` (ties in
    candidate order, newest first), then each clause's best fact (rows 1... of
    ``matrix``) not among them."""
    order = np.lexsort((np.arange(len(combined)), -combined))
    picked = [int(index) for index in order[:candidates]]
    for row in matrix[1:]:
        best = int(np.argmax(row))  # the first of equals, as ``order`` breaks ties
        if best not in picked:
            picked.append(best)
    return np.array(picked, dtype=np.intp)


def _fill(store: _Store, chosen: npt.NDArray[np.intp]) -> None:
    """Put the full stored embeddings of the ``chosen`` candidates that still hold a
    stand-in into ``store`` (one ``fetch`` for all of them). A fetched embedding is used
    only if it is ours and has the stand-in's sentence vector: a fact re-embedded since
    the index was read keeps its stand-in (no word pieces) rather than mixing two
    embeddings."""
    wanted = [int(index) for index in chosen if int(index) in store.partial]
    if not wanted or store.fetch is None:
        return
    fetched = store.fetch(wanted)
    for index in wanted:
        full = fetched.get(index)
        stand_in = store.embeddings[index]
        if (
            full is not None
            and is_ours(full)
            and full[1:SENTENCE_BYTES] == stand_in[1:SENTENCE_BYTES]
        ):
            store.embeddings[index] = full
        store.partial.discard(index)


def _sigmoid(logit: float) -> float:
    """``1 / (1 + e^-logit)``, without overflow."""
    return 1.0 / (1.0 + math.exp(-min(max(logit, -30.0), 30.0)))


def _seconds(moment: datetime) -> float:
    """POSIX-style seconds of ``moment`` (naive datetimes read as UTC)."""
    if moment.tzinfo is None:
        return (moment - _EPOCH).total_seconds()
    return moment.timestamp()


_EPOCH = datetime(1970, 1, 1)
