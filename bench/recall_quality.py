"""Measure the calibrated recall scorer on the recall-eval benchmark (SPEC §8).

Figures, per category, for categories 1-4 together ("overall") and category 5
(adversarial: questions about people or things the store does not hold):

- R@5, R@10: share of a question's evidence facts among the first 5 / 10;
- MRR: mean of 1 / rank of the first evidence fact;
- Hit@kept: share of questions with an evidence fact scored >= 0.5 (the SPEC §8 cut);
- kept: how many facts score >= 0.5 (median and 90th percentile);
- none kept: share of questions where nothing scores >= 0.5 (what category 5 wants).

Three tables: **leave-one-conversation-out** (both regressions refitted on the other
four conversations for each conversation's questions, cut chosen the same way: the
figures that predict an unseen store), once with the facts stamped with the
dataset's dates and once saved in one burst (one second apart, in order, as a client
loading a store through the API would) and the **shipped model** through
``RelevanceScorer.score`` with stored embeddings (in-sample: it was fitted on this
data; for the record only). Then every question of categories 1-4 asked of another
conversation's store (people the store never heard of: it should keep nothing),
tasks of three questions joined (each question's evidence, with and without the
clause-by-clause pass),
the scoring time for 10,000 candidates with stored
embeddings, and the query / save-time embedding cost.

Usage::

    .venv/bin/python bench/recall_quality.py [--data DIR]
"""

import argparse
import random
import statistics
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from chalicelib.services.recall.embedding import MiniLMEmbedder  # noqa: E402
from chalicelib.services.recall.relevance import Candidate, RelevanceScorer, names_unknown  # noqa: E402
from scripts.build_recall_model import (  # noqa: E402
    ADVERSARIAL,
    DEFAULT_DATA,
    TIMINGS,
    QuestionPairs,
    benchmark_pairs,
    choose_cut,
    leave_one_conversation_out,
    read_jsonl,
)

CUT_OFF = 0.5


def percentile(values: list[int], share: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def table(title: str, pairs: list[QuestionPairs], scores: list[np.ndarray], cut: float) -> None:
    """Print the figures of ``scores`` (one array per question) kept at ``cut``."""
    groups: dict[str, list[tuple[QuestionPairs, np.ndarray]]] = defaultdict(list)
    for item, score in zip(pairs, scores, strict=True):
        groups[f"category {item.category}"].append((item, score))
        if item.category != ADVERSARIAL:
            groups["overall (1-4)"].append((item, score))
    print(f"\n{title}")
    print(
        f"{'questions':<14} {'n':>4} {'R@5':>6} {'R@10':>6} {'MRR':>6} {'Hit@kept':>9}"
        f" {'kept med':>8} {'p90':>5} {'none kept':>9}"
    )
    for name in sorted(groups):
        r5, r10, rr, hit, kept, none = [], [], [], [], [], []
        for item, score in groups[name]:
            order = np.lexsort((-np.arange(len(score)), -score))
            ranked = item.evidence[order]
            total = ranked.sum()
            r5.append(ranked[:5].sum() / total)
            r10.append(ranked[:10].sum() / total)
            rr.append(1.0 / (int(np.argmax(ranked)) + 1))
            keep = score >= cut
            hit.append(float((keep & item.evidence).any()))
            kept.append(int(keep.sum()))
            none.append(float(not keep.any()))
        print(
            f"{name:<14} {len(kept):>4} {statistics.mean(r5):6.3f} {statistics.mean(r10):6.3f}"
            f" {statistics.mean(rr):6.3f} {statistics.mean(hit):9.3f}"
            f" {statistics.median(kept):8.1f} {percentile(kept, 0.9):5.0f}"
            f" {statistics.mean(none):9.3f}"
        )


def unknown_people(
    pairs: list[QuestionPairs],
    stores: dict[str, list[Candidate]],
    scorer: RelevanceScorer,
    now: datetime,
) -> None:
    """Ask every question of categories 1-4 of the next conversation's store (whose
    people never appear in the question): what should keep nothing."""
    conversations = sorted(stores)
    kept, with_unknown_names = [], []
    for item in pairs:
        if item.category == ADVERSARIAL:
            continue
        other = conversations[(conversations.index(item.conversation) + 1) % len(conversations)]
        scores = scorer.score(item.question, stores[other], now)
        kept.append(sum(score >= CUT_OFF for score in scores))
        with_unknown_names.append(names_unknown(item.question, [c.text for c in stores[other]]))
    print(
        f"\nquestions asked of another conversation's store (people it never heard of), "
        f"shipped model: {len(kept)} questions, keep nothing "
        f"{statistics.mean(k == 0 for k in kept):.3f}, kept median {statistics.median(kept):.1f} "
        f"p90 {percentile(kept, 0.9):.0f}; the question's names unknown to the store "
        f"{statistics.mean(with_unknown_names):.3f}"
    )


def tasks_of_three(
    pairs: list[QuestionPairs],
    stores: dict[str, list[Candidate]],
    embedder: MiniLMEmbedder,
    now: datetime,
) -> None:
    """Join three questions of one conversation (categories 1-4, a fixed shuffle) into
    one task text, as a run-start task that asks for several things; score it with
    and without the clause-by-clause pass, and measure each question's evidence."""
    by_conversation: dict[str, list[QuestionPairs]] = defaultdict(list)
    for item in pairs:
        if item.category != ADVERSARIAL:
            by_conversation[item.conversation].append(item)
    tasks = []
    shuffler = random.Random(7)
    for conversation in sorted(by_conversation):
        questions = by_conversation[conversation]
        shuffler.shuffle(questions)
        tasks.extend(questions[start : start + 3] for start in range(0, len(questions) - 2, 3))
    for label, by_clause in (("by clause (shipped)", True), ("whole task only", False)):
        scorer = RelevanceScorer(embedder, by_clause=by_clause)
        ranks, hits, kept = [], [], []
        for task in tasks:
            text = " ".join(item.question for item in task)
            scores = np.array(scorer.score(text, stores[task[0].conversation], now))
            order = np.lexsort((-np.arange(len(scores)), -scores))
            kept.append(int((scores >= CUT_OFF).sum()))
            for item in task:
                ranks.append(1.0 / (int(np.argmax(item.evidence[order])) + 1))
                hits.append(float((item.evidence & (scores >= CUT_OFF)).any()))
        if by_clause:
            print(f"\ntasks of three questions of one conversation ({len(tasks)} tasks):")
        print(
            f"  {label:<20} per-question MRR {statistics.mean(ranks):.3f}, Hit@kept "
            f"{statistics.mean(hits):.3f}; kept per task median {statistics.median(kept):.1f} "
            f"p90 {percentile(kept, 0.9):.0f}"
        )


def speed(data: Path, embedder: MiniLMEmbedder, scorer: RelevanceScorer) -> None:
    """Time one recall over 10,000 candidates with stored embeddings."""
    texts = [str(record["text"]) for record in read_jsonl(data / "memories.jsonl")]
    stored = embedder.embed(texts)
    base = datetime(2024, 1, 1, tzinfo=UTC)
    candidates = [
        Candidate(
            f"{texts[i % len(texts)]} ({i})", base + timedelta(hours=i), stored[i % len(texts)]
        )
        for i in range(10_000)
    ]
    questions = [str(r["question"]) for r in read_jsonl(data / "queries.jsonl")][:20]
    now = base + timedelta(days=500)
    durations, embed_query = [], []
    for question in questions:
        started = time.perf_counter()
        embedder.embed_query(question)
        embed_query.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        scorer.score(question, candidates, now)
        durations.append((time.perf_counter() - started) * 1000)
    print(
        f"\nscore 10,000 candidates (stored embeddings, query embedded inside): median "
        f"{statistics.median(durations):.1f} ms, max {max(durations):.1f} ms; of which "
        f"query embedding median {statistics.median(embed_query):.1f} ms"
    )
    started = time.perf_counter()
    embedder.embed(texts[:200])
    print(f"save-time embedding: {(time.perf_counter() - started) * 1000 / 200:.1f} ms per fact")


def main() -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    arguments = parser.parse_args()
    data = arguments.data.resolve()
    embedder = MiniLMEmbedder()
    pairs = benchmark_pairs(data, embedder)
    held_out = leave_one_conversation_out(pairs)
    cut = choose_cut(pairs, held_out)
    print(f"data {data}; leave-one-conversation-out probability cut {cut:.4f} (= score 0.5)")
    for timing in TIMINGS:
        chosen = [index for index, item in enumerate(pairs) if item.timing == timing]
        table(
            f"leave-one-conversation-out, facts stamped {timing} (predicts an unseen store)",
            [pairs[i] for i in chosen],
            [held_out[i] for i in chosen],
            cut,
        )
    pairs = [item for item in pairs if item.timing == "dates"]
    scorer = RelevanceScorer(embedder)
    shipped = []
    facts: dict[str, list[dict[str, object]]] = defaultdict(list)
    for record in read_jsonl(data / "memories.jsonl"):
        facts[str(record["conv"])].append(record)
    stores = {
        conversation: [
            Candidate(
                str(record["text"]),
                datetime.fromisoformat(str(record["date"])),
                stored,
            )
            for record, stored in zip(
                records, embedder.embed([str(r["text"]) for r in records]), strict=True
            )
        ]
        for conversation, records in facts.items()
    }
    now = datetime(2030, 1, 1)
    for item in pairs:
        shipped.append(np.array(scorer.score(item.question, stores[item.conversation], now)))
    table("shipped model via RelevanceScorer.score (in-sample)", pairs, shipped, CUT_OFF)
    unknown_people(pairs, stores, scorer, now)
    tasks_of_three(pairs, stores, embedder, now)
    speed(data, embedder, scorer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
