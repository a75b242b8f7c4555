"""Recall's reranking stage (docs/reference.md#8-recall, docs/DECISIONS.md#reranker-issue-28):
the cross-encoder re-scores the second stage's best facts, its fitted stage gives their
new ``p`` and its own cut; when the reranker is not ready, fails or runs out of its CPU
budget, the two stages' scores stand."""

import json
import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from chalicelib.services.recall import deadline
from chalicelib.services.recall.cut import MAX_KEPT, Cut, capped
from chalicelib.services.recall.embedding import MiniLMEmbedder
from chalicelib.services.recall.relevance import (
    RERANK_PIECES,
    UNRELATED_CROSS_LOGIT,
    WEIGHTS_FILE,
    Candidate,
    RelevanceScorer,
)
from chalicelib.services.recall.reranker import (
    MIN_PAIR_PIECES,
    MODEL_FILE,
    STAGE_FEATURES,
    CrossEncoder,
    Stage,
    merged,
    stage_features,
)

NOW = datetime(2025, 6, 1, tzinfo=UTC)
FACTS = [
    "Caroline adopted a guinea pig named Oscar last spring.",
    "Melanie goes camping in the mountains with her kids every summer.",
    "The deploy pipeline for the billing service runs on Fridays.",
    "John plays basketball for his college team and trains daily.",
    "Caroline's guinea pig Oscar likes carrots and hay.",
    "Melanie painted a sunrise over the lake last week.",
]
QUERY = "What pet did Caroline adopt?"
STAGE = Stage(candidates=3, intercept=0.0, weights=(0.0, 1.0, 0.0, 0.0), cut=Cut(0.2, 0.0, 0.5))
"""A stage whose ``p`` is the cross-encoder's logit alone, cut at 0.2."""


class FakeReranker:
    """A reranker whose logit for a text is set by the test; records what it read."""

    def __init__(
        self,
        logits: dict[str, float],
        *,
        ready: bool = True,
        budget_runs_out: bool = False,
        fails: bool = False,
    ) -> None:
        self._logits = logits
        self._ready = ready
        self._budget_runs_out = budget_runs_out
        self._fails = fails
        self.read: list[list[str]] = []
        self.queries: list[str] = []
        self.background_loads = 0
        self.pair_pieces: list[int] = []

    @property
    def ready(self) -> bool:
        return self._ready

    def load(self) -> None:
        self._ready = True

    def load_in_background(self) -> None:
        self.background_loads += 1

    def logits(
        self,
        query: str,
        texts: Sequence[str],
        cpu_budget: float | None = None,
        pair_pieces: int = 256,
    ) -> np.ndarray | None:
        del cpu_budget
        self.pair_pieces.append(pair_pieces)
        if self._fails:
            raise RuntimeError("boom")
        self.queries.append(query)
        self.read.append(list(texts))
        if self._budget_runs_out:
            return None
        return np.array([self._logits.get(text, -5.0) for text in texts], dtype=np.float32)


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.fixture(scope="module")
def candidates(embedder: MiniLMEmbedder) -> list[Candidate]:
    return [
        Candidate(text, NOW - timedelta(days=index), embedding)
        for index, (text, embedding) in enumerate(zip(FACTS, embedder.embed(FACTS), strict=True))
    ]


def two_stage_scores(embedder: MiniLMEmbedder, candidates: list[Candidate]) -> list[float]:
    return RelevanceScorer(embedder).score(QUERY, candidates, NOW)


def test_the_cross_encoder_reads_the_second_stages_best_and_reorders_them(
    embedder: MiniLMEmbedder, candidates: list[Candidate]
) -> None:
    before = np.array(two_stage_scores(embedder, candidates))
    top = [FACTS[int(i)] for i in np.argsort(-before, kind="stable")[:3]]
    # The cross-encoder prefers the third of the top three, then the second.
    fake = FakeReranker({top[2]: 4.0, top[1]: 1.0, top[0]: -4.0})
    scores = RelevanceScorer(embedder, reranker=fake, stage=STAGE).score(QUERY, candidates, NOW)
    assert [set(read) for read in fake.read] == [set(top)]
    order = [FACTS[int(i)] for i in np.argsort(-np.array(scores), kind="stable")]
    assert order[:3] == [top[2], top[1], top[0]]
    # The stage's cut: p = sigmoid(cross logit) >= 0.2 is kept (score >= 0.5).
    kept = {text for text, score in zip(FACTS, scores, strict=True) if score >= 0.5}
    assert kept == {top[2], top[1]}


def test_a_fact_the_cross_encoder_did_not_read_never_ranks_above_one_it_read() -> None:
    logits = np.array([3.0, 2.0, 1.0, 0.5])
    chosen = np.array([0, 1])
    stage = np.array([-2.0, -1.0])
    result = merged(logits, chosen, stage)
    assert list(result[:2]) == [-2.0, -1.0]
    assert result[2] <= stage.min() and result[3] <= stage.min()
    assert result[3] <= result[2]


def test_stage_features_are_the_logits_and_their_gaps_to_the_best() -> None:
    matrix = stage_features(np.array([1.0, 3.0]), np.array([0.5, 2.5], dtype=np.float32))
    assert matrix.shape == (2, len(STAGE_FEATURES))
    assert matrix.tolist() == [[1.0, 0.5, -2.0, -2.0], [3.0, 2.5, 0.0, 0.0]]
    assert stage_features(np.zeros(0), np.zeros(0, dtype=np.float32)).shape == (0, 4)


@pytest.mark.parametrize(
    "fake",
    [
        FakeReranker({}, budget_runs_out=True),
        FakeReranker({}, fails=True),
    ],
    ids=["budget spent", "reranker raises"],
)
def test_the_two_stages_scores_stand_when_the_reranker_cannot_finish(
    embedder: MiniLMEmbedder, candidates: list[Candidate], fake: FakeReranker
) -> None:
    scores = RelevanceScorer(embedder, reranker=fake, stage=STAGE).score(QUERY, candidates, NOW)
    assert scores == two_stage_scores(embedder, candidates)


def test_a_scorer_that_may_not_wait_starts_loading_and_scores_with_two_stages(
    embedder: MiniLMEmbedder, candidates: list[Candidate]
) -> None:
    fake = FakeReranker({FACTS[3]: 5.0}, ready=False)
    scorer = RelevanceScorer(embedder, reranker=fake, stage=STAGE, wait_for_reranker=False)
    assert scorer.score(QUERY, candidates, NOW) == two_stage_scores(embedder, candidates)
    assert fake.background_loads >= 1 and fake.read == []
    fake.load()  # the background load finished
    assert scorer.score(QUERY, candidates, NOW) != two_stage_scores(embedder, candidates)
    assert len(fake.read) == 1


def test_a_scorer_that_waits_loads_the_reranker_first(
    embedder: MiniLMEmbedder, candidates: list[Candidate]
) -> None:
    fake = FakeReranker({}, ready=False)
    RelevanceScorer(embedder, reranker=fake, stage=STAGE).score(QUERY, candidates, NOW)
    assert fake.ready and fake.background_loads == 0 and len(fake.read) == 1


def test_a_file_without_the_stage_has_none_and_other_features_are_refused(tmp_path: Path) -> None:
    record = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    shipped = Stage.load(WEIGHTS_FILE)
    assert shipped is not None and shipped.candidates == record["crossEncoder"]["candidates"]
    without = tmp_path / "without.json"
    without.write_text(json.dumps({k: v for k, v in record.items() if k != "crossEncoder"}))
    assert Stage.load(without) is None
    record["crossEncoder"]["features"] = ["logit"]
    other = tmp_path / "other.json"
    other.write_text(json.dumps(record))
    with pytest.raises(ValueError, match="other features"):
        Stage.load(other)


needs_weights = pytest.mark.skipif(
    not MODEL_FILE.exists(), reason="reranker weights not built (make builds them)"
)


@pytest.fixture(scope="module")
def cross_encoder() -> CrossEncoder:
    return CrossEncoder()


@needs_weights
def test_the_cross_encoder_ranks_the_answer_above_an_unrelated_fact(
    cross_encoder: CrossEncoder,
) -> None:
    logits = cross_encoder.logits(QUERY, [FACTS[2], FACTS[0], FACTS[3]])
    assert logits is not None and logits.shape == (3,)
    assert float(logits[1]) > float(logits[0]) + 3 and float(logits[1]) > float(logits[2]) + 3
    # Order of the texts does not change a text's logit (batching pads, masks hide it).
    again = cross_encoder.logits(QUERY, [FACTS[0]])
    assert again is not None and abs(float(again[0]) - float(logits[1])) < 1e-3


@needs_weights
def test_the_cross_encoder_stops_when_its_cpu_budget_is_spent(
    cross_encoder: CrossEncoder,
) -> None:
    cross_encoder.load()
    many = FACTS * 20  # 120 pairs: several batches
    assert cross_encoder.logits(QUERY, many, cpu_budget=1e-6) is None
    assert cross_encoder.logits(QUERY, [], cpu_budget=1e-6) is not None


@needs_weights
def test_the_weights_load_once_in_the_background() -> None:
    finder_calls: list[int] = []
    lock = threading.Lock()

    def finder() -> Path:
        with lock:
            finder_calls.append(1)
        return MODEL_FILE

    model = CrossEncoder(finder)
    assert not model.ready
    for _ in range(3):
        model.load_in_background()
    for thread in threading.enumerate():
        if thread.name == "reranker-load":
            thread.join(timeout=60)
    assert model.ready and len(finder_calls) == 1


def test_at_most_forty_facts_pass_the_cut() -> None:
    logits = np.linspace(5.0, 1.0, 100)
    cut = capped(logits, 0.0)
    assert int((logits >= cut).sum()) == MAX_KEPT
    assert logits[MAX_KEPT] < cut < logits[MAX_KEPT - 1]
    # Fewer than the cap pass: the cut stands.
    assert capped(logits, 4.5) == 4.5
    assert capped(logits[:10], -100.0) == -100.0
    # Ties at the boundary all fall below it.
    tied = np.array([3.0] * 10 + [2.0] * 60)
    assert int((tied >= capped(tied, 0.0)).sum()) == 10


def test_a_scorer_keeps_at_most_forty_however_many_pass_its_cut(
    embedder: MiniLMEmbedder,
) -> None:
    texts = [f"Caroline adopted a guinea pig named Oscar, number {n}." for n in range(60)]
    many = [
        Candidate(text, NOW - timedelta(minutes=index), embedding)
        for index, (text, embedding) in enumerate(zip(texts, embedder.embed(texts), strict=True))
    ]
    # Every fact re-ranked, every one far above the stage's cut (p >= 0.88 against 0.2).
    fake = FakeReranker({text: 2.0 + 0.01 * n for n, text in enumerate(texts)})
    stage = Stage(candidates=60, intercept=0.0, weights=(0.0, 1.0, 0.0, 0.0), cut=STAGE.cut)
    scores = RelevanceScorer(embedder, reranker=fake, stage=stage).score(QUERY, many, NOW)
    kept = {text for text, score in zip(texts, scores, strict=True) if score >= 0.5}
    assert kept == set(texts[20:])  # the 40 with the highest logits


def test_a_query_the_cross_encoder_finds_nothing_for_keeps_nothing_in_the_same_order(
    embedder: MiniLMEmbedder, candidates: list[Candidate]
) -> None:
    query = "how many moons does jupiter have"
    every = Stage(candidates=len(FACTS), intercept=0.0, weights=STAGE.weights, cut=STAGE.cut)
    far = {text: UNRELATED_CROSS_LOGIT - 4.0 + 0.1 * n for n, text in enumerate(FACTS)}
    scores = RelevanceScorer(embedder, reranker=FakeReranker(far), stage=every).score(
        query, candidates, NOW
    )
    assert max(scores) < 0.5
    assert list(np.argsort(scores)) == list(range(len(FACTS)))  # the cross-encoder's order
    # One fact the cross-encoder finds relevant is enough to keep it.
    near = dict(far, **{FACTS[5]: UNRELATED_CROSS_LOGIT + 9.0})
    scores = RelevanceScorer(embedder, reranker=FakeReranker(near), stage=every).score(
        query, candidates, NOW
    )
    assert [text for text, score in zip(FACTS, scores, strict=True) if score >= 0.5] == [FACTS[5]]


def test_a_fact_a_clause_found_is_read_with_that_clause(
    embedder: MiniLMEmbedder, candidates: list[Candidate]
) -> None:
    task = "Which pet did Caroline adopt; when does the billing deploy pipeline run?"
    fake = FakeReranker({})
    RelevanceScorer(embedder, reranker=fake, stage=STAGE).score(task, candidates, NOW)
    pairs = {
        text: query for query, texts in zip(fake.queries, fake.read, strict=True) for text in texts
    }
    # Each clause's best fact is read, against the clause that found it.
    assert pairs[FACTS[2]] == "when does the billing deploy pipeline run"
    assert pairs[FACTS[0]] in (task, "Which pet did Caroline adopt")
    assert sum(len(texts) for texts in fake.read) <= STAGE.candidates + 2


@pytest.mark.parametrize(
    ("fake", "state"),
    [
        (FakeReranker({FACTS[0]: 5.0}), deadline.RERANKER_RAN),
        (FakeReranker({}, budget_runs_out=True), deadline.RERANKER_OVER_BUDGET),
        (FakeReranker({}, fails=True), deadline.RERANKER_FAILED),
        (FakeReranker({}, ready=False), deadline.RERANKER_LOADING),
        (None, deadline.RERANKER_OFF),
    ],
    ids=["ran", "over budget", "failed", "loading", "off"],
)
def test_the_scorer_says_what_the_reranker_did(
    embedder: MiniLMEmbedder, candidates: list[Candidate], fake: FakeReranker | None, state: str
) -> None:
    scorer = RelevanceScorer(
        embedder, reranker=fake, stage=STAGE if fake else None, wait_for_reranker=False
    )
    with deadline.scoring(60) as run:
        scorer.score(QUERY, candidates, NOW)
    assert run.reranker == state and run.stage in {"reranker", "first stage"}


def test_a_passed_deadline_stops_the_scorer_before_its_next_stage(
    embedder: MiniLMEmbedder, candidates: list[Candidate]
) -> None:
    fake = FakeReranker({FACTS[0]: 5.0})
    scorer = RelevanceScorer(embedder, reranker=fake, stage=STAGE)
    with deadline.scoring(0) as run, pytest.raises(deadline.DeadlinePassed) as passed:
        scorer.score(QUERY, candidates, NOW)
    assert passed.value.stage == "lexical scan" == run.stage
    assert fake.read == [] and run.reranker is None  # nothing after the deadline ran
    # Outside a recall's scoring there is no deadline.
    assert len(scorer.score(QUERY, candidates, NOW)) == len(candidates)


def test_the_cross_encoder_reads_a_bounded_number_of_pieces_per_recall(
    embedder: MiniLMEmbedder, candidates: list[Candidate]
) -> None:
    fake = FakeReranker({FACTS[0]: 5.0})
    RelevanceScorer(embedder, reranker=fake, stage=STAGE).score(QUERY, candidates, NOW)
    (pieces,) = fake.pair_pieces
    assert pieces * sum(len(read) for read in fake.read) <= RERANK_PIECES


@needs_weights
def test_a_pair_is_cut_to_its_pieces_the_query_to_half(cross_encoder: CrossEncoder) -> None:
    long_query, long_fact = "deploy the billing service " * 40, "staging cluster notes " * 80
    ids, segments = cross_encoder.pair_ids(long_query, long_fact, 80)
    assert len(ids) == 80 and segments.count(0) == 40
    assert len(cross_encoder.pair_ids(long_query, long_fact)[0]) == 256
    assert len(cross_encoder.pair_ids(long_query, long_fact, 1)[0]) == MIN_PAIR_PIECES


@needs_weights
def test_the_cross_encoder_stops_at_the_recall_deadline(cross_encoder: CrossEncoder) -> None:
    cross_encoder.load()
    with deadline.scoring(0), pytest.raises(deadline.DeadlinePassed, match="reranker batch"):
        cross_encoder.logits(QUERY, FACTS)
