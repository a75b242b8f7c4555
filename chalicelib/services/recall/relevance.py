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

import functools
import json
import math
import re
from collections.abc import Iterator, Sequence
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
    DIMENSIONS,
    VOCAB_FILE,
    Embedder,
    FloatArray,
    decode,
    decode_if_all_ours,
    is_ours,
    stacked_token_signs,
    word_piece_count,
)
from chalicelib.services.recall.lexical import STOP_WORDS, LexicalScorer

WEIGHTS_FILE = DATA_DIR / "recall-relevance.json"

FEATURES = (
    "cos",
    "lex",
    "cos_gap",
    "lex_gap",
    "cos_z",
    "nearby_best",
    "nearby_gap",
    "log_rank",
    "cos_best",
)
RERANK_FEATURES = (*FEATURES, "tokens", "tokens_gap", "tokens_z", "tokens_z_gap")
RERANK_CANDIDATES = 200
UNRELATED_LEXICAL = 0.05
UNRELATED_COSINE = 0.25
UNRELATED_COSINE_ALONE = 0.15
_LEX = FEATURES.index("lex")
_COS_BEST = FEATURES.index("cos_best")

CLAUSE_SHIFT = 2.0
MAX_CLAUSES = 8
_CLAUSE_BREAK = re.compile(r"[;:,!?\n]+|\.(?=\s|$)")

NEARBY_FACTS = 3
_NEARBY_SECONDS = 30 * 60
_K1 = 1.2
_B = 0.75
_COVERAGE_TERMS = 6


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


def token_match(
    query_states: FloatArray, embeddings: Sequence[bytes], chosen: npt.NDArray[np.intp]
) -> npt.NDArray[np.float64]:
    """The token columns of ``RERANK_FEATURES`` for every candidate.

    Args:
        query_states: The query's unit word-piece states, shape ``(m, DIMENSIONS)``.
        embeddings: Every candidate's stored embedding (``is_ours``).
        chosen: Indexes of the candidates to match (the first stage's best).

    Returns:
        Shape ``(len(embeddings), 4)``: ``tokens``, ``tokens_gap``, ``tokens_z`` and
        ``tokens_z_gap`` (``token_columns`` of ``piece_matches``).
    """
    rows, best = piece_matches(query_states, embeddings, chosen)
    return token_columns(best, rows, len(embeddings))


def piece_matches(
    query_states: FloatArray, embeddings: Sequence[bytes], chosen: npt.NDArray[np.intp]
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]:
    """Each chosen fact's best cosine for each of the query's word pieces (MaxSim's max).

    Args:
        query_states: The query's unit word-piece states, shape ``(m, DIMENSIONS)``.
        embeddings: Every candidate's stored embedding (``is_ours``).
        chosen: Indexes of the candidates to match.

    Returns:
        ``(rows, best)``: the chosen indexes that have stored word pieces (formats 2-3),
        in ``chosen`` order, and shape ``(len(rows), m)``: for each of them and each
        query piece, the best cosine of that piece with any of the fact's sign vectors.
        Both empty when the query has no word pieces or no chosen fact has any.
    """
    rows = [int(index) for index in chosen if word_piece_count(embeddings[index])]
    if not len(query_states) or not rows:
        return np.zeros(0, dtype=np.intp), np.zeros((0, len(query_states)))
    # One unpack and one product for all chosen facts, then a maximum per fact.
    chosen_embeddings = [embeddings[index] for index in rows]
    unit_query = query_states.T * np.float32(1.0 / math.sqrt(DIMENSIONS))
    similarity = stacked_token_signs(chosen_embeddings) @ unit_query
    counts = [word_piece_count(item) for item in chosen_embeddings]
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    best = np.maximum.reduceat(similarity, starts, axis=0).astype(np.float64)
    return np.asarray(rows, dtype=np.intp), best


def token_columns(
    best: npt.NDArray[np.float64], rows: npt.NDArray[np.intp], count: int
) -> npt.NDArray[np.float64]:
    """The four token features from ``piece_matches``' matrix (see the module doc).

    ``tokens`` is MaxSim: the mean over the query's pieces of each row of ``best``.
    ``tokens_z`` is the mean over the query's pieces of the fact's z-score for that
    piece among the matched facts (how much the fact stands out on each query word,
    so a piece every fact matches, like "what", counts for little). Each ``_gap`` is
    the value minus its best. Candidates outside ``rows`` get the smallest matched
    value of each column (all zeros when nothing was matched), as in training.

    Args:
        best: Shape ``(len(rows), m)``.
        rows: The candidate index of each row of ``best``.
        count: How many candidates there are.

    Returns:
        Shape ``(count, 4)``: ``tokens``, ``tokens_gap``, ``tokens_z``, ``tokens_z_gap``.
    """
    columns: list[npt.NDArray[np.float64]] = []
    if len(rows):
        spread = best.std(axis=0) + 1e-6
        values = (best.mean(axis=1), ((best - best.mean(axis=0)) / spread).mean(axis=1))
    else:
        values = (np.zeros(0), np.zeros(0))
    for matched in values:
        column = np.full(count, float(matched.min()) if len(matched) else 0.0)
        column[rows] = matched
        columns.extend((column, column - column.max()))
    return np.column_stack(columns)


def _sigmoid(logit: float) -> float:
    """``1 / (1 + e^-logit)``, without overflow."""
    return 1.0 / (1.0 + math.exp(-min(max(logit, -30.0), 30.0)))


def unrelated(query: str, texts: Sequence[str], matrix: npt.NDArray[np.float64]) -> bool:
    """Whether the query is unrelated to the store (see the module doc): no text shares
    any of its terms and none is similar at all, or its names are unknown to every text
    and no text shares another of its terms or is loosely similar to it.

    Args:
        query: The recall query.
        texts: The store's fact texts.
        matrix: Their features (``FEATURES`` columns first, as ``features`` gives).

    Returns:
        ``True`` when the raised cut applies.
    """
    if not len(texts):
        return False
    best_cosine = float(matrix[0, _COS_BEST])
    weak_words = float(matrix[:, _LEX].max()) < UNRELATED_LEXICAL
    if weak_words and best_cosine < UNRELATED_COSINE_ALONE and not near_miss(query, texts):
        return True
    return (weak_words or best_cosine < UNRELATED_COSINE) and names_unknown(query, texts)


def near_miss(query: str, texts: Sequence[str]) -> bool:
    """Whether a misspelt query word is a slip away from a word of the texts.

    A query word counts when it has five or more letters, is not a stop word and is
    not a whole word of MiniLM's WordPiece vocabulary (typos such as "athentication"
    or "dedline" are not; the vocabulary lacks some real words, such as "bake", so
    four-letter words are left out: "bake" must not "nearly match" "make"). It
    nearly matches a text word of four or more letters at an optimal-string-alignment
    distance (insert, delete, substitute, swap two neighbours) of 1, or 2 for words
    of eight letters or more, sharing its first or its last letter.

    Args:
        query: The recall query.
        texts: The store's fact texts.

    Returns:
        ``True`` when some misspelt query word nearly matches a text word.
    """
    vocabulary = _known_words()
    typos = {
        word
        for word in _WORD_PART.findall(query.lower())
        if len(word) >= 5 and word.isalpha() and word not in vocabulary and word not in STOP_WORDS
    }
    if not typos:
        return False
    words = {word for word in _WORD_PART.findall("\n".join(texts).lower()) if len(word) >= 4}
    for typo in typos:
        limit = 1 if len(typo) < 8 else 2
        for word in words:
            if abs(len(word) - len(typo)) > limit or (word[0] != typo[0] and word[-1] != typo[-1]):
                continue
            if _edits_within(typo, word, limit):
                return True
    return False


@functools.cache
def _known_words() -> frozenset[str]:
    """The whole words of MiniLM's WordPiece vocabulary (no ``##`` pieces), read once."""
    lines = VOCAB_FILE.read_text(encoding="utf-8").split("\n")
    return frozenset(line for line in lines if line.isalpha())


def _edits_within(first: str, second: str, limit: int) -> bool:
    """Whether the optimal-string-alignment distance of two words is at most ``limit``."""
    previous_previous: list[int] = []
    previous = list(range(len(second) + 1))
    for i, left in enumerate(first, 1):
        current = [i] + [0] * len(second)
        for j, right in enumerate(second, 1):
            cost = left != right
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and left == second[j - 2] and first[i - 2] == right:
                current[j] = min(current[j], previous_previous[j - 2] + 1)
        if min(current) > limit:
            return False
        previous_previous, previous = previous, current
    return previous[-1] <= limit


def names_unknown(query: str, texts: Sequence[str]) -> bool:
    """Whether the query names something that no text mentions.

    A name is a capitalized word after the query's first character (``France``,
    ``Caroline``, ``PostgreSQL``), taken as its ``LexicalScorer`` terms (stemmed,
    stop words such as ``I`` or ``Then`` dropped). True when the query has at least
    one such term and none of them occurs in any of ``texts`` (case-insensitive, as
    a word or a word's stem, found like ``lexical_coverage`` finds terms).

    Args:
        query: The recall query.
        texts: The store's fact texts.

    Returns:
        ``False`` for a query without names.
    """
    names = {term for word in _NAME.findall(query) for term in _TERMS.terms(word)}
    if not names:
        return False
    joined = "\n".join(texts).lower()
    prefixes = {term[:-1] if len(term) > 3 else term for term in names}
    return not any(
        names.intersection(_TERMS.terms(word)) for _, word in _prefixed_words(joined, prefixes)
    )


def _seconds(moment: datetime) -> float:
    """POSIX-style seconds of ``moment`` (naive datetimes read as UTC)."""
    if moment.tzinfo is None:
        return (moment - _EPOCH).total_seconds()
    return moment.timestamp()


def features(
    query: str,
    texts: Sequence[str],
    vectors: FloatArray,
    query_vector: FloatArray,
    times: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]:
    """Compute the ``FEATURES`` matrix for one query over its candidates.

    Args:
        query: The recall query.
        texts: The candidate fact texts.
        vectors: Their unit embeddings, shape ``(n, d)``.
        query_vector: The query's unit embedding, shape ``(d,)``.
        times: Their creation times in seconds, shape ``(n,)``.

    Returns:
        Shape ``(n, len(FEATURES))``, float64, columns in ``FEATURES`` order.
    """
    count = len(texts)
    cos = (vectors @ query_vector).astype(np.float64)
    lex = lexical_coverage(query, texts)
    spread = float(cos.std())
    cos_z = (cos - cos.mean()) / spread if spread > 1e-6 else np.zeros(count)
    hybrid = 0.8 * cos + 0.2 * lex
    nearby = nearby_best(hybrid, times)
    rank = np.empty(count)
    rank[np.argsort(-hybrid, kind="stable")] = np.arange(1, count + 1)
    columns = (
        cos,
        lex,
        cos - cos.max(),
        lex - lex.max(),
        cos_z,
        nearby,
        nearby - hybrid.max(),
        np.log(rank),
        np.full(count, cos.max()),
    )
    return np.column_stack(columns)


def nearby_best(
    values: npt.NDArray[np.float64], times: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """Best of ``values`` among each fact and its neighbours in creation order.

    Args:
        values: One value per fact.
        times: Their creation times in seconds (ties keep the given order).

    Returns:
        For each fact, the largest value among itself and the ``NEARBY_FACTS`` facts
        before and after it in time order that were created within 30 minutes of it.
    """
    order = np.argsort(times, kind="stable")
    ordered, moments = values[order], times[order]
    best = ordered.copy()
    for shift in range(1, NEARBY_FACTS + 1):
        if shift >= len(ordered):
            break
        close = np.abs(moments[shift:] - moments[:-shift]) <= _NEARBY_SECONDS
        later = np.where(close, ordered[shift:], -np.inf)
        earlier = np.where(close, ordered[:-shift], -np.inf)
        best[:-shift] = np.maximum(best[:-shift], later)
        best[shift:] = np.maximum(best[shift:], earlier)
    result = np.empty_like(values)
    result[order] = best
    return result


_TERMS = LexicalScorer()
_EPOCH = datetime(1970, 1, 1)
_WORD_PART = re.compile(r"[^\W_]+")
_NAME = re.compile(r"(?<!^)\b[A-Z][\w'-]*")


def _candidate_words(joined: str, prefixes: set[str]) -> list[tuple[int, str]]:
    """``(offset, word)`` of every word of ``joined`` that starts with one of ``prefixes``.

    Each ASCII prefix is found with its own pattern, the prefix then ``[^\\W_]*`` (the
    regular expression engine scans for a literal prefix at C speed), and a match
    whose preceding character is a letter or digit (the prefix sits inside a word) is
    dropped: about 1.6x faster than a ``str.find`` loop, and many times faster than
    one pattern with a look-behind or an alternation over a long text. Words are
    split at underscores as ``LexicalScorer.terms`` splits them (``run_id`` is ``run``
    and ``id``). Other prefixes may sit inside a word (Han and kana are matched
    character by character), so any word containing one counts. A word is reported
    once even when several prefixes start it. Sorted by offset.
    """
    found: dict[int, str] = {}
    for at, word in _prefixed_words(joined, prefixes):
        found.setdefault(at, word)
    return sorted(found.items())


def _prefixed_words(joined: str, prefixes: set[str]) -> Iterator[tuple[int, str]]:
    """``_candidate_words`` lazily, prefix by prefix, repeats included (so a caller
    looking for one match stops at the first).

    A match that starts inside a word runs to that word's end, so no word start is
    skipped by the scan resuming after it.
    """
    for prefix in prefixes:
        if prefix.isascii():
            for match in _word_from(prefix).finditer(joined):
                at = match.start()
                if not (at and joined[at - 1].isalnum()):
                    yield at, match.group()
        else:
            for match in _word_around(prefix).finditer(joined):
                yield match.start(), match.group()


@functools.lru_cache(maxsize=4096)
def _word_from(prefix: str) -> re.Pattern[str]:
    """The pattern of a word part (``[^\\W_]+``) that starts with ``prefix``."""
    return re.compile(re.escape(prefix) + r"[^\W_]*")


@functools.lru_cache(maxsize=1024)
def _word_around(prefix: str) -> re.Pattern[str]:
    """The pattern of a ``\\w+`` word that contains ``prefix`` anywhere."""
    return re.compile(r"\w*" + re.escape(prefix) + r"\w*")


def lexical_coverage(query: str, texts: Sequence[str]) -> npt.NDArray[np.float64]:
    """BM25-weighted coverage of the query's terms by each text, in [0, 1].

    The same quantity as ``LexicalScorer``'s raw coverage (stemmed terms without stop
    words, BM25 IDF over ``texts``, saturated term frequency, divided by the sum of the
    query's 6 largest IDFs), computed over all texts at once (``_candidate_words``)
    so that 10,000 candidates take a few milliseconds. Lengths are measured in characters.
    """
    count = len(texts)
    terms = sorted(set(_TERMS.terms(query)))
    if not terms or not count:
        return np.zeros(count)
    joined = "\n".join(texts).lower()
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=count) + 1
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    index_of = {term: position for position, term in enumerate(terms)}
    stems: dict[str, tuple[int, ...]] = {}
    positions: list[int] = []
    term_ids: list[int] = []
    for start, word in _candidate_words(joined, {t[:-1] if len(t) > 3 else t for t in terms}):
        found = stems.get(word)
        if found is None:
            found = tuple(index_of[term] for term in _TERMS.terms(word) if term in index_of)
            stems[word] = found
        for term_id in found:
            positions.append(start)
            term_ids.append(term_id)
    if not positions:
        return np.zeros(count)
    documents = np.searchsorted(starts, np.asarray(positions), side="right") - 1
    tf = np.zeros((count, len(terms)))
    np.add.at(tf, (documents, np.asarray(term_ids)), 1.0)
    df = (tf > 0).sum(axis=0)
    idf = np.log(1.0 + (count - df + 0.5) / (df + 0.5))
    full = float(np.sort(idf)[::-1][:_COVERAGE_TERMS].sum())
    norm = _K1 * (1.0 - _B + _B * lengths / lengths.mean())
    saturated = tf * (_K1 + 1.0) / (tf + norm[:, None])
    match_value = 0.9 * np.minimum(1.0, saturated) + 0.1 * saturated / (_K1 + 1.0)
    coverage = (match_value * idf).sum(axis=1) / full
    result: npt.NDArray[np.float64] = np.minimum(1.0, coverage)
    return result
