"""The recall benchmark's development half as the fitting script and the bench read it
(docs/reference.md#8-recall): stores, question-by-fact features, the two logistic regressions,
held-out fits and the figures of a cut.

The data (LoCoMo-derived, CC BY-NC 4.0) is read from where docs/reference.md#recall-benchmark
says, never copied. Each conversation is one agent's store. A question is scored
against its own conversation's facts ("own" pairs, once per timing: ``dates`` stamps
the facts with the dataset's session dates, ``burst`` saves them one second apart in
file order) or, for the cut's floor, against the next conversation's facts
("foreign" pairs: nothing there is evidence; people the store never heard of).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from chalicelib.services.recall import (  # noqa: E402
    embedding,
    relevance,
    relevance_features,
    unrelated,
)
from chalicelib.services.recall.cut import MAX_KEPT, Cut  # noqa: E402

ADVERSARIAL = 5
L2 = 1.0  # ridge penalty of the logistic regression (on the summed log-loss)
TIMINGS = ("dates", "burst")
DEFAULT_DATA = REPO_ROOT / ".." / "shared" / "recall-eval" / "dev"


def read_jsonl(path: Path) -> list[dict[str, object]]:
    """Decode every non-blank line of a JSON-lines file."""
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


@dataclass
class Store:
    """One conversation's facts as recall sees them (stored embeddings decoded)."""

    texts: list[str]
    ids: np.ndarray
    stored: list[bytes]
    vectors: np.ndarray
    times: dict[str, np.ndarray]


@dataclass
class Benchmark:
    """The stores and the scorable questions (with ``evidence_ids``), embedded once."""

    stores: dict[str, Store]
    questions: list[dict[str, object]]
    queries: list[tuple[np.ndarray, np.ndarray]]  # (vector, word-piece states) per question

    @property
    def conversations(self) -> list[str]:
        """The conversations, sorted."""
        return sorted(self.stores)


def load_benchmark(
    data: Path,
    embedder: embedding.Embedder,
    fact_text: Callable[[str], str] | None = None,
    queries_of: Benchmark | None = None,
) -> Benchmark:
    """Embed every fact (through the stored form, ``embed`` then ``decode``, exactly as
    recall reads it) and every scorable question.

    Args:
        data: The development half's folder.
        embedder: The embedder (MiniLM).
        fact_text: Applied to each fact's text before embedding (a variant of the data,
            such as hard-wrapped facts); the identity by default.
        queries_of: Reuse that benchmark's question embeddings (same questions).
    """
    facts: dict[str, list[dict[str, object]]] = defaultdict(list)
    for record in read_jsonl(data / "memories.jsonl"):
        facts[str(record["conv"])].append(record)
    stores = {}
    for conversation, records in facts.items():
        texts = [str(record["text"]) for record in records]
        stored = embedder.embed([fact_text(text) for text in texts] if fact_text else texts)
        dates = [datetime.fromisoformat(str(record["date"])).timestamp() for record in records]
        stores[conversation] = Store(
            texts=texts,
            ids=np.array([str(record["id"]) for record in records]),
            stored=stored,
            vectors=embedding.decode(stored),
            times={"dates": np.array(dates), "burst": np.arange(len(records), dtype=np.float64)},
        )
    questions = [record for record in read_jsonl(data / "queries.jsonl") if record["evidence_ids"]]
    if queries_of is not None:
        queries = queries_of.queries
    else:
        queries = [embedder.embed_query(str(record["question"])) for record in questions]
    return Benchmark(stores, questions, queries)


@dataclass
class QuestionPairs:
    """One benchmark question against one store's facts."""

    conversation: str  # the question's
    asked_of: str  # the store's (the question's own, or another for foreign pairs)
    question: str
    category: int
    timing: str
    features: np.ndarray  # (facts, len(FEATURES)): the first stage
    pieces: np.ndarray  # (facts, query pieces): each fact's best cosine per query piece
    evidence: np.ndarray  # (facts,) bool: the fact holds evidence (none for foreign)
    unrelated: bool  # unrelated.unrelated: the cut's floor rises
    extra: dict[str, np.ndarray] = field(default_factory=dict)

    def rerank(self, first_weights: np.ndarray) -> np.ndarray:
        """The ``RERANK_FEATURES`` matrix as recall builds it with these first weights:
        the token match kept for the best ``RERANK_CANDIDATES`` facts only."""
        order = np.argsort(-(self.features @ first_weights), kind="stable")
        chosen = order[: relevance.RERANK_CANDIDATES]
        tokens = relevance_features.token_columns(self.pieces[chosen], chosen, len(self.pieces))
        return np.column_stack([self.features, tokens])


def _pairs(
    bench: Benchmark, index: int, asked_of: str, timings: Iterable[str]
) -> list[QuestionPairs]:
    """One question (by index) against store ``asked_of``, once per timing."""
    record = bench.questions[index]
    store = bench.stores[asked_of]
    question = str(record["question"])
    vector, states = bench.queries[index]
    rows, pieces = relevance_features.piece_matches(
        states, store.stored, np.arange(len(store.stored))
    )
    assert len(rows) == len(store.stored)  # every fact is embedded with word pieces here
    own = asked_of == str(record["conv"])
    evidence = np.isin(store.ids, [str(item) for item in record["evidence_ids"]])  # type: ignore[attr-defined]
    result = []
    for timing in timings:
        features = relevance_features.features(
            question, store.texts, store.vectors, vector, store.times[timing]
        )
        result.append(
            QuestionPairs(
                conversation=str(record["conv"]),
                asked_of=asked_of,
                question=question,
                category=int(str(record["category"])),
                timing=timing,
                features=features,
                pieces=pieces,
                evidence=evidence if own else np.zeros(len(store.texts), dtype=bool),
                unrelated=unrelated.unrelated(question, store.texts, features),
            )
        )
    return result


def own_pairs(bench: Benchmark, timings: Sequence[str] = TIMINGS) -> list[QuestionPairs]:
    """Every scorable question against its own conversation's facts, once per timing."""
    return [
        item
        for index, record in enumerate(bench.questions)
        for item in _pairs(bench, index, str(record["conv"]), timings)
    ]


def foreign_pairs(bench: Benchmark) -> list[QuestionPairs]:
    """Every question of categories 1-4 asked of the next conversation's store (sorted
    order, wrapping), facts saved in one burst: what the cut's floor is fitted on."""
    conversations = bench.conversations
    result = []
    for index, record in enumerate(bench.questions):
        if int(str(record["category"])) == ADVERSARIAL:
            continue
        other = conversations[(conversations.index(str(record["conv"])) + 1) % len(conversations)]
        result.extend(_pairs(bench, index, other, ("burst",)))
    return result


def labels(pairs: QuestionPairs) -> np.ndarray:
    """Training labels: the evidence facts, none for an adversarial question."""
    if pairs.category == ADVERSARIAL:
        return np.zeros(len(pairs.evidence))
    return pairs.evidence.astype(np.float64)


def fit_logistic(
    features: np.ndarray, targets: np.ndarray, l2: float = L2
) -> tuple[float, np.ndarray]:
    """Ridge logistic regression by Newton's method on standardised features.

    Returns:
        ``(intercept, weights)`` on the original feature scale.
    """
    mean = features.mean(axis=0)
    scale = features.std(axis=0)
    scale[scale < 1e-9] = 1.0
    x = np.column_stack([np.ones(len(features)), (features - mean) / scale])
    beta = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ beta, -30, 30)))
        gradient = x.T @ (p - targets) + penalty * beta
        hessian = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    weights = beta[1:] / scale
    intercept = float(beta[0] - (mean / scale) @ beta[1:])
    return intercept, weights


Extra = Callable[["QuestionPairs", np.ndarray], np.ndarray]
"""Trial columns for the second stage: ``(pairs, chosen)`` -> shape ``(facts, k)``, where
``chosen`` are the first stage's ``RERANK_CANDIDATES`` best (as at recall)."""


@dataclass(frozen=True)
class Model:
    """Both stages' fitted regressions (the second gives ``p``)."""

    first_intercept: float
    first_weights: np.ndarray
    intercept: float
    weights: np.ndarray
    extra: Extra | None = None

    def matrix(self, pairs: QuestionPairs) -> np.ndarray:
        """The second stage's input for one question (plus any trial columns)."""
        matrix = pairs.rerank(self.first_weights)
        if self.extra is None:
            return matrix
        order = np.argsort(-(pairs.features @ self.first_weights), kind="stable")
        return np.column_stack([matrix, self.extra(pairs, order[: relevance.RERANK_CANDIDATES])])

    def probabilities(self, pairs: QuestionPairs) -> np.ndarray:
        """The second stage's probabilities for one question's facts."""
        logits = self.intercept + self.matrix(pairs) @ self.weights
        return 1.0 / (1.0 + np.exp(-np.clip(logits, -30, 30)))


def fit(
    pairs: Sequence[QuestionPairs],
    extra: Extra | None = None,
) -> Model:
    """Fit both stages on own ``pairs``: the first, then the second on the features
    that the first one's choice of candidates gives (``extra``: trial columns added to
    the second stage, for the bench's experiments)."""
    targets = np.concatenate([labels(item) for item in pairs])
    first_intercept, first_weights = fit_logistic(
        np.concatenate([item.features for item in pairs]), targets
    )
    shell = Model(first_intercept, first_weights, 0.0, np.zeros(0), extra)
    intercept, weights = fit_logistic(np.concatenate([shell.matrix(p) for p in pairs]), targets)
    return Model(first_intercept, first_weights, intercept, weights, extra)


def fit_without(
    pairs: Sequence[QuestionPairs],
    excluded: set[str],
    extra: Extra | None = None,
) -> Model:
    """``fit`` on the pairs of every conversation not in ``excluded``."""
    return fit([item for item in pairs if item.conversation not in excluded], extra)


def held_out(pairs: Sequence[QuestionPairs], models: dict[str, Model]) -> list[np.ndarray]:
    """Each pair's probabilities from the model that never saw its store's conversation
    (``models[c]`` fitted without conversation ``c``)."""
    return [models[item.asked_of].probabilities(item) for item in pairs]


def loco_models(
    pairs: Sequence[QuestionPairs],
    conversations: Sequence[str],
    extra: Extra | None = None,
) -> dict[str, Model]:
    """Leave-one-conversation-out: one model per conversation, fitted without it."""
    return {
        conversation: fit_without(pairs, {conversation}, extra) for conversation in conversations
    }


def kept(probabilities: np.ndarray, cut: Cut, unrelated: bool) -> int:
    """How many facts a question keeps under ``cut`` (its best ``p`` sets the cut)."""
    if not len(probabilities):
        return 0
    passing = int((probabilities >= cut.probability(float(probabilities.max()), unrelated)).sum())
    return min(passing, MAX_KEPT)


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


class Table:
    """Questions' probabilities sorted best first, ready for many cuts at once.

    Ties keep file order (as recall's sort does). ``first`` is the 0-based position of
    a question's first evidence fact (a large number when it has none), so a cut that
    keeps ``k`` facts hits when ``first < k``.
    """

    def __init__(self, pairs: Sequence[QuestionPairs], scores: Sequence[np.ndarray]) -> None:
        """Sort each question's probabilities (one row per pair, padded with -inf)."""
        self.pairs = list(pairs)
        width = max(len(score) for score in scores)
        self.matrix = np.full((len(scores), width), -np.inf)
        self.first = np.full(len(scores), 10**9)
        self.recall5 = np.zeros(len(scores))
        self.recall10 = np.zeros(len(scores))
        for row, (item, score) in enumerate(zip(pairs, scores, strict=True)):
            order = np.lexsort((np.arange(len(score)), -score))
            self.matrix[row, : len(score)] = score[order]
            ranked = item.evidence[order]
            if ranked.any():
                self.first[row] = int(np.argmax(ranked))
                self.recall5[row] = ranked[:5].sum() / ranked.sum()
                self.recall10[row] = ranked[:10].sum() / ranked.sum()
        self.best = self.matrix[:, 0]
        self.unrelated = np.array([item.unrelated for item in pairs])
        self.scored = np.array([item.category != ADVERSARIAL for item in pairs])

    def kept(self, cut: Cut | Sequence[Cut]) -> np.ndarray:
        """How many facts each question keeps (one cut for all, or one per question)."""
        cuts = [cut] * len(self.pairs) if isinstance(cut, Cut) else list(cut)
        floors = np.array(
            [
                c.floor_if_unrelated if u else c.floor
                for c, u in zip(cuts, self.unrelated, strict=True)
            ]
        )
        shares = np.array([c.relative for c in cuts])
        thresholds = np.maximum(floors, shares * self.best)
        result: np.ndarray = np.minimum((self.matrix >= thresholds[:, None]).sum(axis=1), MAX_KEPT)
        return result

    def figures(
        self, cut: Cut | Sequence[Cut], members: np.ndarray | None = None, *, apart: bool = False
    ) -> Figures:
        """The table's figures for the questions ``members`` (a boolean mask; all by
        default): categories 1-4, or with ``apart`` every member (category 5 alone)."""
        counts = self.kept(cut)
        chosen = np.ones(len(self.pairs), dtype=bool) if members is None else members
        scored = chosen if apart else chosen & self.scored
        adversarial = chosen & ~self.scored
        return Figures(
            questions=int(scored.sum()),
            mrr=float(np.mean(1.0 / (self.first[scored] + 1))),
            recall5=float(self.recall5[scored].mean()),
            recall10=float(self.recall10[scored].mean()),
            hit=float(np.mean(self.first[scored] < counts[scored])),
            median=float(np.median(counts[scored])),
            p90=float(percentile(list(counts[scored]), 0.9)),
            none5=float(np.mean(counts[adversarial] == 0)) if adversarial.any() else float("nan"),
        )

    def mask(self, *, timing: str | None = None, conversation: str | None = None) -> np.ndarray:
        """The questions of one timing and/or one conversation."""
        return np.array(
            [
                (timing is None or item.timing == timing)
                and (conversation is None or item.conversation == conversation)
                for item in self.pairs
            ]
        )


@dataclass(frozen=True)
class Figures:
    """A group of questions' figures (categories 1-4; category 5 apart)."""

    questions: int
    mrr: float
    recall5: float
    recall10: float
    hit: float
    median: float
    p90: float
    none5: float  # category 5: share that keeps nothing
