"""Calibrated recall relevance (SPEC §8): a learned combination of a few signals.

``RelevanceScorer`` scores every candidate fact against the recall query with a
logistic regression over features that carry from one agent's store to another:

- ``cos``: cosine of the query and fact sentence embeddings (all-MiniLM-L6-v2,
  ``chalicelib.services.recall.embedding``; the fact's is stored at save time);
- ``lex``: BM25-weighted coverage of the query's stemmed terms by the fact (the
  ``LexicalScorer`` terms, counted over all candidates at once), in [0, 1];
- ``cos_gap`` / ``lex_gap``: each minus its best value among the candidates, and
  ``cos_z``: the cosine's z-score among them (how much this fact stands out);
- ``nearby_best`` / ``nearby_gap``: the best hybrid score (0.8 cos + 0.2 lex) among
  the fact and the facts saved next to it (the ``NEARBY_FACTS`` before and after it in
  creation order, each within 30 minutes of it), and that minus the best overall: facts
  saved together share context. The window is counted in facts, not only in time, so
  a store filled in one burst (an import, a benchmark loaded through the API) gets the
  same feature as one saved over months, as long as the facts are saved in order;
- ``log_rank``: log of the fact's rank by the hybrid score; ``cos_best``: the best
  cosine among the candidates (a weak best match lowers every score).

Two stages. The regression over those features (``first``) ranks every candidate; the
best ``RERANK_CANDIDATES`` (200) of them then get four more (``RERANK_FEATURES``):
``tokens``, late interaction ("MaxSim", as in ColBERT) between the query's word pieces
and the fact's (the mean over the query's pieces of the best cosine with any of the
fact's, whose last-layer states are stored as sign bits, ``embedding.token_signs``);
``tokens_z``, the mean over the query's pieces of the fact's z-score for that piece's
best cosine among the 200 (so a piece every fact matches, such as "what" or a name
every fact carries, counts for little, and a fact that alone matches a rare word
stands out); and ``tokens_gap`` / ``tokens_z_gap``, each minus its best. The second
regression (``rerank``) gives the probability of every candidate; those outside the
200, or with no word pieces stored (format-1 embeddings), get the smallest value of
each column among the 200, exactly as in training. On the benchmark's development half
(leave-one-conversation-out) the second stage lifts MRR from 0.637 to 0.675 and
Hit@kept from 0.945 to 0.954 (facts stamped with the dataset's dates; 0.957 saved in
one burst) at a median kept of 18-20 (``tokens`` without ``tokens_z``: MRR 0.669;
``scripts/build_recall_model.py`` prints the figures).

Tasks that ask for several things. A run-start task is often a paragraph ("The
checkout times out when customers pay by card. Investigate the Stripe webhook, add a
regression test, and keep the change behind the feature flag."); scored as one text,
each topic's facts compete with the others' and the relative features blur. So a
query of two or more clauses (``clauses``: split at ``; : , ! ?``, line breaks and
sentence-ending full stops, parts with at least two terms, the first ``MAX_CLAUSES``
(8)) is also scored clause by clause, and a fact's logit is the larger of the whole
query's and each clause's minus ``CLAUSE_SHIFT`` (2.0). The shift makes a fact that
only one clause finds need a clearly stronger match (its odds divided by e^2, about
7.4) than one the whole task finds, which keeps the number kept where it was. On the
development half, tasks made of three questions of one conversation (``bench/
recall_quality.py``; 220 tasks, shipped model): per-question MRR 0.273 -> 0.392 and
Hit@kept 0.785 -> 0.894, with a median kept of 45 -> 47 facts per task (on 120 of
them, shifts of 0 / 1 / 2 / 3.4 gave Hit@kept 0.953 / 0.919 / 0.903 / 0.867 at a
median kept of 76 / 57 / 48.5 / 47). Single questions are rarely affected (5 in 300
have two clauses; the benchmark's figures above are unchanged). Each clause costs
one more scoring pass (the store is decoded once): at most 9 passes in all.

The coefficients live in ``chalicelib/data/recall-relevance.json``, written by
``scripts/build_recall_model.py`` from the recall benchmark (development half). The
regression gives ``p``, a calibrated probability that the fact holds evidence for the
query (after the clause-by-clause pass: ``sigmoid`` of the larger logit). The cut on
``p`` follows the query's best candidate (``chalicelib.services.recall.cut``): ``cut =
max(floor, relative * p_max)`` (the JSON's ``cut``; about 0.005 and 0.02: a median of
<= 20 facts kept per question on every held-out conversation), and the score is ``p``
with its odds divided by those of the cut: ``score = sigmoid(logit(p) - logit(cut))``.
So score >= 0.5 exactly when ``p >= cut`` (SPEC §8 keeps >= 0.5) and the order is the
order of ``p``.

Unrelated questions. The features are mostly relative (gaps, z-score, rank), so the
best facts of any store look relevant to any question; in a store of a few facts, "What
is the capital of France?" kept unrelated facts. A query is taken as unrelated to the
store (``unrelated``) in two cases:

1. it names someone or something (a capitalized word after its first character, e.g.
   "France", "Gina") and no fact mentions any of those names (``names_unknown``), and
   either no fact contains any of its other terms (best ``lex`` <
   ``UNRELATED_LEXICAL``, 0.05) or no fact is even loosely similar (best cosine <
   ``UNRELATED_COSINE``, 0.25);
2. whatever its case, no fact contains any of its terms, no fact is similar at
   all (best cosine < ``UNRELATED_COSINE_ALONE``, 0.15), and no misspelt query
   word is a slip from a word of the store (``near_miss``): "how do i bake
   sourdough bread at home" or "what is the capital of france?" asked of a coding
   agent's store (best cosines 0.13-0.14). A typo'd "whos the ownr of the
   athentication servise" reached only 0.11 with its fact in one store, so the
   cosine alone cannot tell it from an unrelated question; its "athentication" is
   one edit from the store's "authentication".

For such a query the floor of the cut rises from ``floor`` to ``floor_if_unrelated``
(the JSON; 0.15): ``cut = max(0.15, relative * p_max)``, same order, only strong
matches kept, usually none. (With clauses, each pass, the whole query's and each
clause's, is compared with its own cut, the unrelated one's floor raised, and a fact's
score comes from its best margin over a cut.) The second half of
case 1 is there because a single unfamiliar capitalized word ("MacBook", "Monday",
"Billing API") must not hide a fact the rest of the query clearly matches; with the
names test alone, "How do I deploy from my MacBook to staging?" lost its staging fact.
On the development half (leave-one-conversation-out) the rule costs no question its
evidence (Hit@kept 0.955 either way; case 2 never applies there: the lowest best cosine
of a benchmark question with its own store is 0.38); every question asked of another
conversation's store (people the store never heard of) keeps nothing for 11% of them
instead of 0% (``bench/recall_quality.py`` prints the figure for the shipped model).
"""

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt

from chalicelib.services.recall.candidates import Candidate as Candidate
from chalicelib.services.recall.candidates import CandidateScorer as CandidateScorer
from chalicelib.services.recall.cut import Cut
from chalicelib.services.recall.embedding import (
    DATA_DIR,
    Embedder,
    FloatArray,
    decode,
    decode_if_all_ours,
    is_ours,
)
from chalicelib.services.recall.relevance_features import _TERMS, features, token_match
from chalicelib.services.recall.relevance_features import FEATURES as FEATURES
from chalicelib.services.recall.unrelated import unrelated

WEIGHTS_FILE = DATA_DIR / "recall-relevance.json"

RERANK_FEATURES = (*FEATURES, "tokens", "tokens_gap", "tokens_z", "tokens_z_gap")
RERANK_CANDIDATES = 200

CLAUSE_SHIFT = 2.0
MAX_CLAUSES = 8
_CLAUSE_BREAK = re.compile(r"[;:,!?\n]+|\.(?=\s|$)")


@dataclass(frozen=True)
class Coefficients:
    """The two fitted logistic regressions (see the module doc).

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
        cut = data["cut"]
        return cls(
            first_intercept=float(first["intercept"]),
            first_weights=tuple(float(value) for value in first["weights"]),
            intercept=float(rerank["intercept"]),
            weights=tuple(float(value) for value in rerank["weights"]),
            cut=Cut(
                floor=float(cut["floor"]),
                relative=float(cut["relative"]),
                floor_if_unrelated=float(cut["floor_if_unrelated"]),
            ),
        )


@dataclass(frozen=True)
class _Store:
    """The candidates as every query of one recall reads them."""

    texts: list[str]
    vectors: FloatArray
    embeddings: list[bytes]
    times: npt.NDArray[np.float64]


def clauses(query: str) -> list[str]:
    """The clauses a query of several is also scored by (see the module doc).

    The query is split at ``; : , ! ?``, line breaks and a full stop followed by a
    space or the end (not the one in "5.0"); parts with fewer than two terms
    (``LexicalScorer.terms``: stemmed, stop words dropped) are left out.

    Returns:
        The first ``MAX_CLAUSES`` parts in query order, or ``[]`` when fewer than
        two parts are left (a one-clause query is scored as a whole only).
    """
    parts = [part.strip() for part in _CLAUSE_BREAK.split(query)]
    found = [part for part in parts if len(_TERMS.terms(part)) >= 2]
    return found[:MAX_CLAUSES] if len(found) >= 2 else []


class RelevanceScorer:
    """The default calibrated ``CandidateScorer`` (see the module doc).

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
    ) -> None:
        """Build the scorer.

        Args:
            embedder: Makes the query's (and missing facts') vectors; must be the one
                that made the stored embeddings.
            coefficients: The fitted model; default: ``Coefficients.load()``.
            by_clause: Also score a query of several clauses clause by clause
                (``clauses``); ``False`` scores the whole query only (for comparison).
        """
        self._embedder = embedder
        self._by_clause = by_clause
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
        query's best ``p`` (per pass, the unrelated one's floor raised).

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
        store = self._store(candidates)
        passes = [self._logits(query, store)]
        for clause in clauses(query) if self._by_clause else []:
            logits, unrelated_clause = self._logits(clause, store)
            passes.append((logits - CLAUSE_SHIFT, unrelated_clause))
        best = _sigmoid(max(float(logits.max()) for logits, _ in passes))
        margin = np.maximum.reduce(
            [logits - self._cut.logit(best, unrelated_pass) for logits, unrelated_pass in passes]
        )
        scores = 1.0 / (1.0 + np.exp(-np.clip(margin, -30.0, 30.0)))
        return [float(value) for value in scores]

    def features(self, query: str, candidates: Sequence[Candidate]) -> npt.NDArray[np.float64]:
        """The ``RERANK_FEATURES`` matrix, shape ``(len(candidates), 13)`` (both stages)."""
        return self._matrix(query, self._store(candidates))

    def _logits(self, query: str, store: _Store) -> tuple[npt.NDArray[np.float64], bool]:
        """The second stage's logits (of ``p``) for one query, and whether the query is
        unrelated to the store (``unrelated``)."""
        matrix = self._matrix(query, store)
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
        return _Store(
            texts=[candidate.text for candidate in candidates],
            vectors=vectors,
            embeddings=embeddings,
            times=np.array([_seconds(candidate.created_at) for candidate in candidates]),
        )

    def _matrix(self, query: str, store: _Store) -> npt.NDArray[np.float64]:
        """``features`` over a prepared store."""
        query_vector, query_states = self._embedder.embed_query(query)
        first = features(query, store.texts, store.vectors, query_vector, store.times)
        order = np.argsort(-(first @ self._first_weights), kind="stable")
        tokens = token_match(query_states, store.embeddings, order[:RERANK_CANDIDATES])
        return np.column_stack([first, tokens])

    def _complete(self, candidates: Sequence[Candidate]) -> list[bytes]:
        """The candidates' stored embeddings; missing or foreign ones embedded now."""
        embeddings = [candidate.embedding for candidate in candidates]
        missing = [index for index, item in enumerate(embeddings) if not is_ours(item)]
        fresh = iter(self._embedder.embed([candidates[index].text for index in missing]))
        return [item if item is not None and is_ours(item) else next(fresh) for item in embeddings]


def _sigmoid(logit: float) -> float:
    """``1 / (1 + e^-logit)``, without overflow."""
    return 1.0 / (1.0 + math.exp(-min(max(logit, -30.0), 30.0)))


def _seconds(moment: datetime) -> float:
    """POSIX-style seconds of ``moment`` (naive datetimes read as UTC)."""
    if moment.tzinfo is None:
        return (moment - _EPOCH).total_seconds()
    return moment.timestamp()


_EPOCH = datetime(1970, 1, 1)
