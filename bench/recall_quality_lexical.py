"""Measure a recall scorer's quality and speed on the recall-eval benchmark
(docs/reference.md#8-recall).

Each conversation in ``memories.jsonl`` is one agent's store. Every question in
``queries.jsonl`` with non-empty ``evidence_ids`` is scored against its conversation's
facts, which are then ranked best first (equal scores: the later fact first, as recall
does with newer memories). Printed per category, for categories 1-4 together
("overall") and for category 5 (adversarial) on its own:

- R@5, R@10: share of a question's evidence facts among the first 5 / 10;
- MRR: mean of 1 / rank of the first evidence fact;
- Hit@kept: share of questions with at least one evidence fact scored >= 0.5, the
  docs/reference.md#8-recall cut-off;
- kept: how many facts score >= 0.5 (median and 90th percentile).

Then the scoring time per question (milliseconds, per store of 184-324 facts) and for
one query against 10,000 facts built by repeating the benchmark's facts.

Usage::

    .venv/bin/python bench/recall_quality_lexical.py [--data DIR] [--scorer MODULE:CLASS]

``DIR`` defaults to the benchmark's development half where
docs/reference.md#recall-benchmark says; the data is read there and never copied.
``--scorer`` names a class whose
no-argument constructor builds a ``Scorer`` (default: the ``LexicalScorer``).
"""

import argparse
import importlib
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from chalicelib.services.recall.lexical import Scorer  # noqa: E402

DEFAULT_DATA = REPO_ROOT / ".." / "shared" / "recall-eval" / "dev"
DEFAULT_SCORER = "chalicelib.services.recall.lexical:LexicalScorer"
CUT_OFF = 0.5
ADVERSARIAL = 5
SPEED_DOCUMENTS = 10_000
SPEED_REPEATS = 20


@dataclass
class Fact:
    """One stored fact of the benchmark."""

    fact_id: str
    text: str


@dataclass
class Question:
    """One benchmark question with the ids of the facts that answer it."""

    conversation: str
    text: str
    category: int
    evidence: frozenset[str]


@dataclass
class Tally:
    """Per-question figures of one group of questions."""

    recall_at_5: list[float] = field(default_factory=list)
    recall_at_10: list[float] = field(default_factory=list)
    reciprocal_rank: list[float] = field(default_factory=list)
    hit_kept: list[float] = field(default_factory=list)
    kept: list[int] = field(default_factory=list)


def read_jsonl(path: Path) -> Iterable[dict[str, object]]:
    """Yield the JSON object on each non-blank line of ``path``.

    Args:
        path: A JSON-lines file.

    Returns:
        An iterator of the decoded objects, in file order.
    """
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def load(data: Path) -> tuple[dict[str, list[Fact]], list[Question]]:
    """Read the benchmark's stores and its scorable questions.

    Args:
        data: The directory holding ``memories.jsonl`` and ``queries.jsonl``.

    Returns:
        The facts of each conversation (file order) and the questions whose
        ``evidence_ids`` is non-empty.
    """
    stores: dict[str, list[Fact]] = defaultdict(list)
    for record in read_jsonl(data / "memories.jsonl"):
        stores[str(record["conv"])].append(Fact(str(record["id"]), str(record["text"])))
    questions = []
    for record in read_jsonl(data / "queries.jsonl"):
        evidence = record["evidence_ids"]
        if isinstance(evidence, list) and evidence:
            questions.append(
                Question(
                    conversation=str(record["conv"]),
                    text=str(record["question"]),
                    category=int(str(record["category"])),
                    evidence=frozenset(str(item) for item in evidence),
                )
            )
    return stores, questions


def build_scorer(spec: str) -> Scorer:
    """Instantiate the scorer class named ``module:Class`` with no arguments.

    Args:
        spec: A dotted module path and a class name separated by ``:``.

    Returns:
        The scorer.
    """
    module_name, _, class_name = spec.partition(":")
    scorer: Scorer = getattr(importlib.import_module(module_name), class_name)()
    return scorer


def add_question(
    tally: Tally, facts: list[Fact], scores: list[float], evidence: frozenset[str]
) -> None:
    """Add one question's ranking figures to ``tally``.

    Args:
        tally: The group's figures so far (updated in place).
        facts: The store's facts, in store order.
        scores: The scorer's output for these facts, same order.
        evidence: The ids of the facts that answer the question.
    """
    order = sorted(range(len(facts)), key=lambda index: (-scores[index], -index))
    ranked = [facts[index].fact_id for index in order]
    first = next((rank for rank, fact_id in enumerate(ranked, 1) if fact_id in evidence), None)
    kept = {fact.fact_id for fact, score in zip(facts, scores, strict=True) if score >= CUT_OFF}
    tally.recall_at_5.append(len(evidence.intersection(ranked[:5])) / len(evidence))
    tally.recall_at_10.append(len(evidence.intersection(ranked[:10])) / len(evidence))
    tally.reciprocal_rank.append(1.0 / first if first else 0.0)
    tally.hit_kept.append(1.0 if kept & evidence else 0.0)
    tally.kept.append(len(kept))


def percentile(values: Sequence[float], share: float) -> float:
    """The nearest-rank percentile of ``values`` (``share`` in [0, 1])."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def report_line(label: str, tally: Tally) -> str:
    """One printed row: R@5, R@10, MRR, Hit@kept and the kept median and p90."""
    return (
        f"{label:<14} {len(tally.kept):>4} {statistics.mean(tally.recall_at_5):6.3f}"
        f" {statistics.mean(tally.recall_at_10):6.3f} {statistics.mean(tally.reciprocal_rank):6.3f}"
        f" {statistics.mean(tally.hit_kept):9.3f} {statistics.median(tally.kept):8.1f}"
        f" {percentile(tally.kept, 0.9):6.0f}"
    )


def speed_at_scale(
    scorer: Scorer, stores: dict[str, list[Fact]], questions: list[Question]
) -> list[float]:
    """Milliseconds per ``score`` call against 10,000 facts (the benchmark's, repeated).

    Args:
        scorer: A new instance of the scorer under test (the first call is a cold one).
        stores: The benchmark stores (their texts are cycled, numbered to stay distinct).
        questions: Queries to use, first ``SPEED_REPEATS`` of them.

    Returns:
        The duration of each call, in milliseconds.
    """
    texts = [fact.text for facts in stores.values() for fact in facts]
    documents = [f"{texts[i % len(texts)]} ({i})" for i in range(SPEED_DOCUMENTS)]
    durations = []
    for question in questions[:SPEED_REPEATS]:
        started = time.perf_counter()
        scorer.score(question.text, documents)
        durations.append((time.perf_counter() - started) * 1000)
    return durations


def main() -> int:
    """Run the benchmark and print its figures.

    Returns:
        The process exit status (0).
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="recall-eval half directory"
    )
    parser.add_argument("--scorer", default=DEFAULT_SCORER, help="module:Class of the scorer")
    arguments = parser.parse_args()

    stores, questions = load(arguments.data.resolve())
    scorer = build_scorer(arguments.scorer)
    by_category: dict[int, Tally] = defaultdict(Tally)
    overall = Tally()
    durations = []
    for question in questions:
        facts = stores[question.conversation]
        started = time.perf_counter()
        scores = scorer.score(question.text, [fact.text for fact in facts])
        durations.append((time.perf_counter() - started) * 1000)
        add_question(by_category[question.category], facts, scores, question.evidence)
        if question.category != ADVERSARIAL:
            add_question(overall, facts, scores, question.evidence)

    print(f"scorer {arguments.scorer}, data {arguments.data}, cut-off {CUT_OFF}")
    print(f"{'questions':<14} {'n':>4} {'R@5':>6} {'R@10':>6} {'MRR':>6}", end="")
    print(f" {'Hit@kept':>9} {'kept med':>8} {'p90':>6}")
    for category in sorted(by_category):
        print(report_line(f"category {category}", by_category[category]))
    print(report_line("overall (1-4)", overall))
    average_store = sum(map(len, stores.values())) // len(stores)
    print(
        f"time per question ({average_store} facts on average): "
        f"mean {statistics.mean(durations):.2f} ms, p90 {percentile(durations, 0.9):.2f} ms"
    )
    at_scale = speed_at_scale(build_scorer(arguments.scorer), stores, questions)
    print(
        f"time per question with {SPEED_DOCUMENTS:,} facts: first (cold) {at_scale[0]:.1f} ms, "
        f"median {statistics.median(at_scale):.1f} ms, max {max(at_scale):.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
