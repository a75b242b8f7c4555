"""docs/issues.md#issue-17's ranking trials for ``bench/recall_quality.py``: second-stage columns
the docs/issues.md#issue-17 research did not try, measured by leave-one-conversation-out MRR against
the shipped design (paired, with a bootstrap interval). None is shipped unless the bench
shows it is worth it (docs/DECISIONS.md, Recall).

- ``idf-weighted MaxSim``: the token match with each query word piece weighted by its
  word's BM25 IDF in the store itself (stop words and punctuation weigh nothing), so
  a rare query word counts more than a word every fact carries; plain and z-scored,
  with their gaps to the best.
- ``reverse MaxSim``: the fact's side of late interaction, the mean over the fact's
  word pieces of their best cosine with any query piece (how much of the fact the
  query covers), with its gap and z-score among the candidates.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from chalicelib.services.recall import embedding
from chalicelib.services.recall.lexical import STOP_WORDS
from chalicelib.services.recall.wordpiece import WordPieceTokenizer, basic_words, is_punctuation
from scripts import recall_benchmark as rb


def prepare(bench: rb.Benchmark, pairs: list[rb.QuestionPairs]) -> None:
    """Compute each pair's trial inputs once (``pairs[i].extra``): the query pieces'
    IDF weights and every fact's reverse MaxSim."""
    tokenizer = WordPieceTokenizer(embedding.VOCAB_FILE.read_text(encoding="utf-8").split("\n"))
    index = {str(record["question"]): i for i, record in enumerate(bench.questions)}
    store_words = {
        name: [set(basic_words(text)) for text in store.texts]
        for name, store in bench.stores.items()
    }
    signs = {
        name: embedding.stacked_token_signs(store.stored) * np.float32(1 / math.sqrt(384))
        for name, store in bench.stores.items()
    }
    starts = {
        name: np.concatenate(
            ([0], np.cumsum([embedding.word_piece_count(s) for s in store.stored])[:-1])
        )
        for name, store in bench.stores.items()
    }
    cache: dict[tuple[str, str], dict[str, np.ndarray]] = {}
    for item in pairs:
        key = (item.question, item.asked_of)
        if key not in cache:
            _, states = bench.queries[index[item.question]]
            words = store_words[item.asked_of]
            weights = []
            for word in basic_words(item.question):
                count = len(tokenizer.encode(word)) - 2
                if word in STOP_WORDS or (len(word) == 1 and is_punctuation(word)):
                    weight = 0.0
                else:
                    df = sum(word in fact for fact in words)
                    weight = math.log(1 + (len(words) - df + 0.5) / (df + 0.5))
                weights.extend([weight] * count)
            vector = np.asarray(weights[: len(states)], dtype=np.float64)
            if len(vector) != len(states) or vector.sum() <= 0:
                vector = np.ones(len(states))
            similarity = signs[item.asked_of] @ states.T
            reverse = np.add.reduceat(similarity.max(axis=1), starts[item.asked_of])
            counts = np.diff(np.append(starts[item.asked_of], len(similarity)))
            cache[key] = {"weights": vector, "reverse": reverse / counts}
        item.extra = cache[key]


def _fill(values: np.ndarray, chosen: np.ndarray, count: int) -> np.ndarray:
    """A column over all facts: the chosen facts' values, the others their minimum."""
    column = np.full(count, float(values.min()) if len(values) else 0.0)
    column[chosen] = values
    return column


def idf_maxsim(pairs: rb.QuestionPairs, chosen: np.ndarray) -> np.ndarray:
    """IDF-weighted ``tokens`` and ``tokens_z`` over the chosen facts, with gaps."""
    weights = pairs.extra["weights"] / pairs.extra["weights"].sum()
    best = pairs.pieces[chosen]
    spread = best.std(axis=0) + 1e-6
    columns = []
    for values in (best @ weights, ((best - best.mean(axis=0)) / spread) @ weights):
        column = _fill(values, chosen, len(pairs.pieces))
        columns.extend((column, column - column.max()))
    return np.column_stack(columns)


def reverse_maxsim(pairs: rb.QuestionPairs, chosen: np.ndarray) -> np.ndarray:
    """The fact side's MaxSim over the chosen facts, its gap and z-score."""
    values = pairs.extra["reverse"][chosen]
    spread = float(values.std()) or 1.0
    column = _fill(values, chosen, len(pairs.pieces))
    z = _fill((values - values.mean()) / spread, chosen, len(pairs.pieces))
    return np.column_stack([column, column - column.max(), z])


def both(pairs: rb.QuestionPairs, chosen: np.ndarray) -> np.ndarray:
    """Both trials' columns."""
    return np.column_stack([idf_maxsim(pairs, chosen), reverse_maxsim(pairs, chosen)])


TRIALS: dict[str, Callable[[rb.QuestionPairs, np.ndarray], np.ndarray]] = {
    "+ idf-weighted MaxSim (4 columns)": idf_maxsim,
    "+ reverse MaxSim (3 columns)": reverse_maxsim,
    "+ both": both,
}


def paired_difference(
    before: np.ndarray, after: np.ndarray, resamples: int = 2000
) -> tuple[float, float, float]:
    """Mean reciprocal-rank difference (after - before) over the same questions, with a
    95 % bootstrap interval: ``(low, mean, high)``. Arguments: 0-based positions of
    each question's first evidence fact."""
    difference = 1.0 / (after + 1.0) - 1.0 / (before + 1.0)
    draws = np.random.default_rng(17).integers(0, len(difference), (resamples, len(difference)))
    means = difference[draws].mean(axis=1)
    return (
        float(np.percentile(means, 2.5)),
        float(difference.mean()),
        float(np.percentile(means, 97.5)),
    )
