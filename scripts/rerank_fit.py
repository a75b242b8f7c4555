"""Fit recall's reranking stage and its cut on the benchmark's development half
(docs/reference.md#8-recall; design and figures: docs/DECISIONS.md#reranker-issue-28).

Read from where docs/reference.md#recall-benchmark says, never copied. For every question
(own store under both timings, and another conversation's store for the floor), the
second stage's probabilities come from models that never saw the store's conversation
(``recall_benchmark.loco_models``); the cross-encoder reads the best ``k`` of them; the
reranking stage (``reranker.STAGE_FEATURES``) is a logistic regression fitted leaving one
conversation out. The cut (``cut.Cut``) is then chosen on those held-out probabilities:
the best pooled Hit@kept such that every conversation's median kept stays at most
``MAX_MEDIAN_KEPT`` and the pooled p90 at most ``MAX_P90_KEPT`` under both timings, and
questions asked of another store keep a median of at most ``MAX_FOREIGN_MEDIAN``.
Nested: the same choice made without each conversation, applied to it, gives the figures
a store the cut never saw would see (their spread is printed). Cross-encoder logits are
cached in ``--cache`` (a pickle keyed by question and fact text).
"""

from __future__ import annotations

import json
import pickle
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from chalicelib.services.recall import embedding, relevance, reranker
from chalicelib.services.recall.cut import MAX_KEPT, Cut
from scripts import recall_benchmark as rb
from scripts.build_recall_model import PROBABILITY_IF_UNRELATED

DEFAULT_DATA = rb.DEFAULT_DATA
CANDIDATE_CHOICES = (10, 20)
CANDIDATES = 10
MAX_MEDIAN_KEPT = 14
"""Every conversation's median kept (categories 1-4, each timing) is at most this: the
target (15) less a margin for unseen stores."""
MAX_P90_KEPT = MAX_KEPT
"""The pooled p90 of kept (each timing) is at most this: the cap (``cut.MAX_KEPT``) holds it
on any store, so the rule spends it on Hit@kept."""
MAX_FOREIGN_MEDIAN = 15
FLOORS = [round(0.002 * step, 3) for step in range(1, 60)]
RELATIVES = [round(0.01 * step, 2) for step in range(0, 80)]

Cache = dict[tuple[str, str], float]


def top_positions(probabilities: np.ndarray, k: int) -> np.ndarray:
    """The best ``k`` positions, ties in file order (as recall sorts)."""
    order = np.lexsort((np.arange(len(probabilities)), -probabilities))
    return order[:k]


def _logit(probabilities: np.ndarray) -> np.ndarray:
    clipped = np.clip(probabilities, 1e-12, 1 - 1e-12)
    result: np.ndarray = np.log(clipped / (1 - clipped))
    return result


def cross_logits(
    bench: rb.Benchmark,
    pairs: Sequence[rb.QuestionPairs],
    second: Sequence[np.ndarray],
    k: int,
    cache: Cache,
) -> list[np.ndarray]:
    """The cross-encoder's logits of each question's best ``k`` (by ``second``)."""
    model = reranker.CrossEncoder()
    result = []
    seconds = 0.0
    fresh = 0
    for item, probabilities in zip(pairs, second, strict=True):
        texts = bench.stores[item.asked_of].texts
        chosen = top_positions(probabilities, k)
        wanted = [texts[i] for i in chosen if (item.question, texts[i]) not in cache]
        if wanted:
            started = time.perf_counter()
            scores = model.logits(item.question, wanted)
            assert scores is not None
            seconds += time.perf_counter() - started
            fresh += len(wanted)
            cache.update(
                ((item.question, t), float(s)) for t, s in zip(wanted, scores, strict=True)
            )
        result.append(np.array([cache[(item.question, texts[i])] for i in chosen]))
    if fresh:
        print(f"cross-encoder: {fresh:,} new pairs in {seconds:.1f} s")
    return result


def stage_matrix(second: np.ndarray, cross: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(chosen, features)`` of one question: its best ``k`` and their stage inputs."""
    chosen = top_positions(second, k)
    return chosen, reranker.stage_features(_logit(second[chosen]), cross[: len(chosen)])


def fit_stage(
    pairs: Sequence[rb.QuestionPairs],
    second: Sequence[np.ndarray],
    cross: Sequence[np.ndarray],
    k: int,
    excluded: set[str],
) -> tuple[float, np.ndarray]:
    """The reranking stage fitted on the own pairs of every conversation not excluded."""
    rows, targets = [], []
    for item, probabilities, logits in zip(pairs, second, cross, strict=True):
        if item.conversation in excluded or item.asked_of != item.conversation:
            continue
        chosen, matrix = stage_matrix(probabilities, logits, k)
        rows.append(matrix)
        targets.append(rb.labels(item)[chosen])
    return rb.fit_logistic(np.concatenate(rows), np.concatenate(targets))


def stage_probabilities(
    second: np.ndarray, cross: np.ndarray, k: int, model: tuple[float, np.ndarray]
) -> np.ndarray:
    """Every fact's probability after reranking (``reranker.merged``); when the
    cross-encoder finds none of the facts it read relevant
    (``relevance.UNRELATED_CROSS_LOGIT``), scaled down below every cut (nothing kept, the
    order unchanged), as recall does."""
    chosen, matrix = stage_matrix(second, cross, k)
    logits = reranker.merged(_logit(second), chosen, model[0] + matrix @ model[1])
    result: np.ndarray = 1.0 / (1.0 + np.exp(-np.clip(logits, -30, 30)))
    if len(cross) and float(np.max(cross[: len(chosen)])) < relevance.UNRELATED_CROSS_LOGIT:
        result = result * 1e-6
    return result


def _foreign_members(own: rb.Table, foreign: rb.Table, chosen: np.ndarray) -> np.ndarray:
    """The foreign questions that involve no conversation left out of ``chosen``."""
    excluded = {item.conversation for item, keep in zip(own.pairs, chosen, strict=True) if not keep}
    return np.array(
        [
            item.conversation not in excluded and item.asked_of not in excluded
            for item in foreign.pairs
        ]
    )


def choose_cut(own: rb.Table, foreign: rb.Table, members: np.ndarray | None = None) -> Cut:
    """The cut of the module doc, on the questions ``members`` of ``own`` (all by default)."""
    chosen = np.ones(len(own.pairs), dtype=bool) if members is None else members
    groups: dict[tuple[str, str], np.ndarray] = {}
    for index, item in enumerate(own.pairs):
        if chosen[index] and item.category != rb.ADVERSARIAL:
            groups.setdefault((item.conversation, item.timing), np.zeros(len(own.pairs), bool))
            groups[(item.conversation, item.timing)][index] = True
    timings = [own.mask(timing=timing) & chosen & own.scored for timing in rb.TIMINGS]
    foreign_members = _foreign_members(own, foreign, chosen)
    best: tuple[float, Cut] | None = None
    for floor in FLOORS:
        if (
            float(
                np.median(foreign.kept(Cut(floor, 0.0, PROBABILITY_IF_UNRELATED))[foreign_members])
            )
            > MAX_FOREIGN_MEDIAN
        ):
            continue
        for relative in RELATIVES:
            rule = Cut(floor, relative, PROBABILITY_IF_UNRELATED)
            counts = own.kept(rule)
            if max(float(np.median(counts[group])) for group in groups.values()) > MAX_MEDIAN_KEPT:
                continue
            if max(rb.percentile(list(counts[group]), 0.9) for group in timings) > MAX_P90_KEPT:
                continue
            scored = chosen & own.scored
            hit = float(np.mean(own.first[scored] < counts[scored]))
            if best is None or hit > best[0]:
                best = (hit, rule)
    if best is None:
        raise ValueError("no cut meets the limits")
    return best[1]


def _row(name: str, table: rb.Table, cut: Cut, members: np.ndarray | None = None) -> str:
    figures = table.figures(cut, members)
    return (
        f"| {name} | {figures.mrr:.3f} | {figures.recall10:.3f} | {figures.hit:.3f} | "
        f"{figures.median:g} | {figures.p90:g} | {figures.none5:.3f} |"
    )


@dataclass
class Reranked:
    """The reranking stage of one ``k`` evaluated leaving one conversation out: every
    question's probabilities after it (own stores and foreign ones) and the cut chosen on
    them."""

    k: int
    own: rb.Table
    foreign: rb.Table
    cut: Cut
    cross_own: list[np.ndarray]


def rerank(
    bench: rb.Benchmark,
    tables: tuple[rb.Table, rb.Table],
    second: tuple[list[np.ndarray], list[np.ndarray]],
    k: int,
    cache: Cache,
) -> Reranked:
    """The stage on the best ``k``, fitted without each question's conversation, applied
    to the held-out second-stage probabilities ``second`` (own, foreign) of the pairs of
    ``tables`` (own, foreign); the cut chosen on the result (``choose_cut``)."""
    own, foreign = tables[0].pairs, tables[1].pairs
    cross_own = cross_logits(bench, own, second[0], k, cache)
    cross_foreign = cross_logits(bench, foreign, second[1], k, cache)
    folds = {c: fit_stage(own, second[0], cross_own, k, {c}) for c in bench.conversations}
    third_own = [
        stage_probabilities(p, x, k, folds[item.asked_of])
        for item, p, x in zip(own, second[0], cross_own, strict=True)
    ]
    third_foreign = [
        stage_probabilities(p, x, k, folds[item.asked_of])
        for item, p, x in zip(foreign, second[1], cross_foreign, strict=True)
    ]
    table_own, table_foreign = rb.Table(own, third_own), rb.Table(foreign, third_foreign)
    return Reranked(k, table_own, table_foreign, choose_cut(table_own, table_foreign), cross_own)


def load_cache(cache_file: Path) -> Cache:
    """The cross-encoder logits cached by earlier runs (empty when there is none)."""
    if not cache_file.exists():
        return {}
    loaded: Cache = pickle.loads(cache_file.read_bytes())
    return loaded


def save_cache(cache_file: Path, cache: Cache) -> None:
    """Keep the cross-encoder logits for the next run."""
    cache_file.write_bytes(pickle.dumps(cache))


def train(data: Path, cache_file: Path) -> None:
    """Fit, print the figures, and write the ``crossEncoder`` part of
    ``recall-relevance.json`` (module doc)."""
    cache = load_cache(cache_file)
    bench = rb.load_benchmark(data, embedding.MiniLMEmbedder())
    own, foreign = rb.own_pairs(bench), rb.foreign_pairs(bench)
    models = rb.loco_models(own, bench.conversations)
    second = (rb.held_out(own, models), rb.held_out(foreign, models))
    coefficients = relevance.Coefficients.load()
    base = (rb.Table(own, second[0]), rb.Table(foreign, second[1]))
    header = "| ranker | MRR | R@10 | Hit@kept | median kept | p90 kept | cat. 5 keeps none |"
    print(header)
    print("| --- | --- | --- | --- | --- | --- | --- |")
    print(_row("two stages (today's cut)", base[0], coefficients.cut))
    for k in CANDIDATE_CHOICES:
        result = rerank(bench, base, second, k, cache)
        save_cache(cache_file, cache)
        print(_row(f"+ cross-encoder on the top {k}", result.own, result.cut))
        if k == CANDIDATES:
            nested_figures(result.own, result.foreign, bench.conversations)
            per_category(base[0], coefficients.cut, result.own, result.cut)
            model = fit_stage(own, second[0], result.cross_own, k, set())
            _write(model, result.cut, k)


def nested_figures(own: rb.Table, foreign: rb.Table, conversations: Sequence[str]) -> None:
    """The cut chosen without each conversation, applied to it (module doc)."""
    print("nested (cut fitted without the conversation):")
    for conversation in conversations:
        members = np.array([item.conversation != conversation for item in own.pairs])
        cut = choose_cut(own, foreign, members)
        for timing in rb.TIMINGS:
            mask = own.mask(conversation=conversation, timing=timing)
            f = own.figures(cut, mask)
            print(
                f"  {conversation} {timing}: cut max({cut.floor:g}, {cut.relative:g} p_max); "
                f"MRR {f.mrr:.3f} Hit@kept {f.hit:.3f} median {f.median:g} p90 {f.p90:g}"
            )


def per_category(base: rb.Table, base_cut: Cut, table: rb.Table, cut: Cut) -> None:
    """MRR and Hit@kept per category, before and after the reranker."""
    for category in (1, 2, 3, 4):
        members = np.array([item.category == category for item in table.pairs])
        before, after = base.figures(base_cut, members), table.figures(cut, members)
        print(
            f"  category {category} ({before.questions} questions): MRR {before.mrr:.3f} -> "
            f"{after.mrr:.3f}; Hit@kept {before.hit:.3f} -> {after.hit:.3f}; median kept "
            f"{before.median:g} -> {after.median:g}"
        )


def _write(model: tuple[float, np.ndarray], cut: Cut, k: int) -> None:
    """Put the stage into ``recall-relevance.json`` beside the two stages."""
    record = json.loads(relevance.WEIGHTS_FILE.read_text(encoding="utf-8"))
    record["crossEncoder"] = {
        "features": list(reranker.STAGE_FEATURES),
        "candidates": k,
        "intercept": model[0],
        "weights": [float(value) for value in model[1]],
        "cut": {
            "floor": cut.floor,
            "relative": cut.relative,
            "floor_if_unrelated": cut.floor_if_unrelated,
            "rule": (
                f"best pooled Hit@kept with every conversation's leave-one-out median kept "
                f"<= {MAX_MEDIAN_KEPT}, pooled p90 <= {MAX_P90_KEPT} under both timings, "
                f"foreign stores' median <= {MAX_FOREIGN_MEDIAN}"
            ),
        },
    }
    relevance.WEIGHTS_FILE.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(f"wrote the crossEncoder stage into {relevance.WEIGHTS_FILE.name}")
