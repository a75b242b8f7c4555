"""The features the recall relevance model reads (docs/reference.md#8-recall,
docs/DECISIONS.md#recall):
``features`` gives the first stage's ``FEATURES`` columns for one query over its
candidate facts (cosine of the sentence embeddings, BM25-weighted lexical coverage
``lexical_coverage``, their gaps to the best candidate, the cosine's z-score, the best
hybrid score among the facts saved next to each one ``nearby_best``, the log rank and
the best cosine), and ``token_match`` the second stage's four word-piece columns (late
interaction, "MaxSim", between the query's word pieces and the fact's stored sign
bits, ``piece_matches`` then ``token_columns``). Pure numpy over what the caller has
decoded; ``relevance.RelevanceScorer`` combines them.
"""

import functools
import math
import re
from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt

from chalicelib.services.recall.embedding import (
    DIMENSIONS,
    FloatArray,
    stacked_token_signs,
    word_piece_count,
)
from chalicelib.services.recall.lexical import LexicalScorer

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
"""The first stage's columns, in ``features`` order: cosine, lexical coverage, each
minus its best, the cosine's z-score, ``nearby_best`` of the hybrid score (0.8 cos +
0.2 lex) and that minus the best hybrid, the log of the hybrid rank, the best cosine."""

NEARBY_FACTS = 3
"""Facts saved just before and after a fact (within 30 minutes) count as nearby."""
_NEARBY_SECONDS = 30 * 60
_K1 = 1.2
_B = 0.75
_COVERAGE_TERMS = 6


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
    """The four token features from ``piece_matches``' matrix (docs/DECISIONS.md#recall).

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


def features(
    query: str,
    texts: Sequence[str],
    vectors: FloatArray,
    query_vector: FloatArray,
    times: npt.NDArray[np.float64],
    scan: "TermScan | None" = None,
) -> npt.NDArray[np.float64]:
    """Compute the ``FEATURES`` matrix for one query over its candidates.

    Args:
        query: The recall query.
        texts: The candidate fact texts.
        vectors: Their unit embeddings, shape ``(n, d)``.
        query_vector: The query's unit embedding, shape ``(d,)``.
        times: Their creation times in seconds, shape ``(n,)``.
        scan: A ``TermScan`` of ``texts`` shared with other queries (``lexical_coverage``).

    Returns:
        Shape ``(n, len(FEATURES))``, float64, columns in ``FEATURES`` order.
    """
    count = len(texts)
    cos = (vectors @ query_vector).astype(np.float64)
    lex = lexical_coverage(query, texts, scan)
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


TERMS = LexicalScorer()
"""The term rules (stemmed, stop words dropped) of every recall feature and gate."""


def _candidate_words(
    joined: str, prefixes: set[str], cased: str | None = None
) -> list[tuple[int, str]]:
    """``(offset, word)`` of every ``\\w+`` run of ``joined`` with a part that starts
    with one of ``prefixes`` (``prefixed_words``), each run once, sorted by offset."""
    found: dict[int, str] = {}
    for at, word in prefixed_words(joined, prefixes, cased):
        found.setdefault(at, word)
    return sorted(found.items())


def prefixed_words(
    joined: str, prefixes: set[str], cased: str | None = None
) -> Iterator[tuple[int, str]]:
    """``(offset, run)`` of the ``\\w+`` runs of ``joined`` that hold a part starting
    with one of ``prefixes``, lazily, prefix by prefix, repeats included (so a caller
    looking for one match stops at the first).

    ``joined`` is lower-case text; ``cased`` (default ``joined``) the same text in its
    own case, of the same length, where the runs are read (``LexicalScorer.terms``
    splits camelCase there). Each ASCII prefix is found with its own pattern, the
    prefix then ``[^\\W_]*`` (the regular expression engine scans for a literal prefix
    at C speed). A match counts where a part starts (``LexicalScorer.word_terms``):
    at the start of a run, after "_", or at a camelCase hump of ``cased``; a match
    inside a part is dropped. It is reported as the whole run holding it, at the
    run's offset (``parse_header_links`` for the prefix ``head``), so the caller reads
    every term of the run, the whole identifier included. Other prefixes (Han and
    kana, matched character by character) may sit anywhere in a run.
    """
    text = joined if cased is None or len(cased) != len(joined) else cased
    for prefix in prefixes:
        if prefix.isascii():
            for match in _word_from(prefix).finditer(joined):
                at = match.start()
                if _part_starts(joined, text, at):
                    yield _whole_run(text, at)
        else:
            for match in _word_around(prefix).finditer(joined):
                yield match.start(), text[match.start() : match.end()]


_RUN_CHAR = re.compile(r"\w")
_RUN_START = re.compile(r"\w*\Z")
_RUN = re.compile(r"\w+")
_RUN_BACK = 64
"""How far back a run's start is looked for (longer identifiers are read from there)."""


def _part_starts(joined: str, text: str, at: int) -> bool:
    """Whether a part of a run starts at ``at``: the run's start, after "_", or at a
    camelCase hump of ``text``."""
    return (
        not at
        or not _RUN_CHAR.match(joined, at - 1)
        or joined[at - 1] == "_"
        or (_at_hump(text, at))
    )


def _at_hump(text: str, at: int) -> bool:
    """Whether a camelCase part starts at ``at`` (``lexical._HUMP``'s rule)."""
    if not text[at].isupper():
        return False
    before = text[at - 1]
    return before.islower() or (before.isupper() and at + 1 < len(text) and text[at + 1].islower())


def _whole_run(text: str, at: int) -> tuple[int, str]:
    """The ``\\w+`` run of ``text`` that holds offset ``at``: its offset and text."""
    window = max(0, at - _RUN_BACK)
    found = _RUN_START.search(text, window, at)
    start = found.start() if found is not None else at
    match = _RUN.match(text, start)
    return start, match.group() if match is not None else text[at]


@functools.lru_cache(maxsize=4096)
def _word_from(prefix: str) -> re.Pattern[str]:
    """The pattern of a word part (``[^\\W_]+``) that starts with ``prefix``."""
    return re.compile(re.escape(prefix) + r"[^\W_]*")


@functools.lru_cache(maxsize=1024)
def _word_around(prefix: str) -> re.Pattern[str]:
    """The pattern of a ``\\w+`` word that contains ``prefix`` anywhere."""
    return re.compile(r"\w*" + re.escape(prefix) + r"\w*")


def lexical_coverage(
    query: str, texts: Sequence[str], scan: "TermScan | None" = None
) -> npt.NDArray[np.float64]:
    """BM25-weighted coverage of the query's terms by each text, in [0, 1].

    The same quantity as ``LexicalScorer``'s raw coverage (stemmed terms without stop
    words, BM25 IDF over ``texts``, saturated term frequency, divided by the sum of the
    query's 6 largest IDFs), computed over all texts at once (``_candidate_words``)
    so that 10,000 candidates take a few milliseconds. Lengths are measured in characters.

    Args:
        scan: the term counts of ``texts`` for a set of terms holding the query's
            (``TermScan``: one scan shared by every pass of a recall); default: a scan
            for this query's terms alone.
    """
    count = len(texts)
    terms = sorted(set(TERMS.terms(query)))
    if not terms or not count:
        return np.zeros(count)
    if scan is None or not scan.covers(terms):
        scan = TermScan(texts, terms)
    tf = scan.counts(terms)
    if not tf.any():
        return np.zeros(count)
    df = (tf > 0).sum(axis=0)
    idf = np.log(1.0 + (count - df + 0.5) / (df + 0.5))
    full = float(np.sort(idf)[::-1][:_COVERAGE_TERMS].sum())
    lengths = scan.lengths
    norm = _K1 * (1.0 - _B + _B * lengths / lengths.mean())
    saturated = tf * (_K1 + 1.0) / (tf + norm[:, None])
    match_value = 0.9 * np.minimum(1.0, saturated) + 0.1 * saturated / (_K1 + 1.0)
    coverage = (match_value * idf).sum(axis=1) / full
    result: npt.NDArray[np.float64] = np.minimum(1.0, coverage)
    return result


class TermScan:
    """How often each of ``terms`` occurs in each of ``texts`` (``lexical_coverage``'s
    term frequencies), from one scan of the texts joined and lowered
    (``_candidate_words``). A recall builds one for the terms of its query and every
    clause, so its passes share one scan of the store instead of one each
    (docs/DECISIONS.md#issue-40-bounded-recall).

    Args:
        texts: the candidate texts.
        terms: the terms to count (``LexicalScorer.terms``: stemmed, stop words dropped).
    """

    def __init__(self, texts: Sequence[str], terms: Sequence[str]) -> None:
        count = len(texts)
        self.terms = sorted(set(terms))
        self.lengths = np.fromiter(map(len, texts), dtype=np.int64, count=count) + 1
        self._tf = np.zeros((count, len(self.terms)))
        self._column = {term: position for position, term in enumerate(self.terms)}
        if not count or not self.terms:
            return
        cased = "\n".join(texts)  # identifiers split at their humps in their own case
        joined = cased.lower()
        starts = np.concatenate(([0], np.cumsum(self.lengths)[:-1]))
        stems: dict[str, tuple[int, ...]] = {}
        positions: list[int] = []
        term_ids: list[int] = []
        prefixes = {t[:-1] if len(t) > 3 else t for t in self.terms}
        for start, word in _candidate_words(joined, prefixes, cased):
            found = stems.get(word)
            if found is None:
                found = tuple(
                    self._column[term] for term in TERMS.terms(word) if term in self._column
                )
                stems[word] = found
            for term_id in found:
                positions.append(start)
                term_ids.append(term_id)
        if positions:
            documents = np.searchsorted(starts, np.asarray(positions), side="right") - 1
            np.add.at(self._tf, (documents, np.asarray(term_ids)), 1.0)

    def covers(self, terms: Sequence[str]) -> bool:
        """Whether every one of ``terms`` was counted."""
        return all(term in self._column for term in terms)

    def counts(self, terms: Sequence[str]) -> npt.NDArray[np.float64]:
        """Shape ``(len(texts), len(terms))``: each text's count of each term (all
        ``covers``)."""
        result: npt.NDArray[np.float64] = self._tf[:, [self._column[term] for term in terms]]
        return result
