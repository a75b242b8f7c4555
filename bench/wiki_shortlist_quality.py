"""What the wiki's first stage changes (docs/issues.md#issue-45-item-3): sections found for
tasks when the scorer reads every section against when it reads the first stage's
shortlist (``SectionIndexer.candidates``), on the project's own ``docs/*.md`` cut into
pages as publishing cuts them (``bench/wiki_scale.py``'s ``docs_sections``).

Tasks are made from the sections themselves, of two kinds: a section's own heading
(when it has at least three words: the task names the topic) and one sentence from the
middle of its text (at least eight words), each answered by that section. Sections are
split by position into a tuning half (even) and a held-out half (odd); only the
held-out half's figures are reported as the result (``--half tune`` prints the other).
Unrelated tasks (``UNRELATED``, written for this check) should get no section.

Per configuration: Hit@1, Hit@5 (the answering section among the first 1 or 5 by
score), Hit@kept (among the sections at 0.5 or more, at most ``MAX_RECALLED_SECTIONS``),
MRR over the ranking (a section the scorer did not read ranks after those it read), and
the share of unrelated tasks with no section kept.

Usage: ``.venv/bin/python bench/wiki_shortlist_quality.py [--tasks 40] [--half held-out]
[--reranker on|off|both]``
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import _offline  # noqa: F401

from bench.wiki_scale import docs_sections
from chalicelib import wiring
from chalicelib.deferred import relevance_scorer, shared_cross_encoder
from chalicelib.limits import MAX_RECALLED_SECTIONS
from chalicelib.models.page import IndexedPage, IndexedSection
from chalicelib.services.recall.candidates import Candidate, CandidateScorer
from chalicelib.services.recall.tokens import Cl100kTokenCounter
from chalicelib.services.wiki.index import SectionIndexer
from chalicelib.storage.model_files import LocalModelFile

UNRELATED = (
    "Bake a sourdough loaf with a crisp crust for Sunday lunch",
    "Which hiking boots are best for a wet autumn in the Alps?",
    "Write a birthday poem for my grandmother who loves roses",
    "Plan a three-day trip to Lisbon with a tight budget",
    "How long should I boil an egg for a runny yolk?",
    "Suggest names for a golden retriever puppy",
    "Translate good morning, how are you into Portuguese",
    "What is the offside rule in football?",
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


class MemoryStore:
    """A section store in memory, one record a docs page."""

    def __init__(self, pages: list[IndexedPage]) -> None:
        self._pages = pages

    def pages(self, workspace_id: str) -> list[IndexedPage]:
        """Every page record."""
        del workspace_id
        return self._pages

    def sections(self, workspace_id: str) -> list[IndexedSection]:
        """Every section."""
        return [s for page in self.pages(workspace_id) for s in page.sections]

    def replace(self, *_: Any) -> None:
        """Not used."""

    def remove(self, *_: Any) -> None:
        """Not used."""


def as_pages(sections: Sequence[IndexedSection]) -> list[IndexedPage]:
    """The docs sections grouped into pages (a new page at each index 0)."""
    grouped: list[list[IndexedSection]] = []
    for section in sections:
        if section.index == 0 or not grouped:
            grouped.append([])
        grouped[-1].append(section)
    pages = []
    for number, group in enumerate(grouped):
        page_id = f"pag_{number:04d}"
        kept = tuple(
            IndexedSection(
                "wsp_q", page_id, 1, s.index, s.anchor, s.heading_path, s.slug, s.text, s.embedding
            )
            for s in group
        )
        pages.append(IndexedPage(f"docs/{page_id}", page_id, 1, kept))
    return pages


def tasks(pages: list[IndexedPage], half: str, count: int) -> list[tuple[str, tuple[str, int]]]:
    """``count`` tasks of the half, half of each kind, drawn with a fixed seed."""
    headings: list[tuple[str, tuple[str, int]]] = []
    sentences: list[tuple[str, tuple[str, int]]] = []
    position = 0
    for page in pages:
        for section in page.sections:
            position += 1
            if (position % 2 == 0) != (half == "tune"):
                continue
            target = (section.page_id, section.index)
            heading = section.heading_path[-1]
            if len(section.heading_path) > 1 and len(heading.split()) >= 3:
                headings.append((heading, target))
            parts = [p for p in _SENTENCE.split(section.text) if len(p.split()) >= 8]
            if parts and not parts[len(parts) // 2].lstrip().startswith(("|", "`", "-")):
                sentences.append((" ".join(parts[len(parts) // 2].split()[:30]), target))
    rng = random.Random(45)
    return rng.sample(headings, min(count // 2, len(headings))) + rng.sample(
        sentences, min(count - count // 2, len(sentences))
    )


def ranking(
    scorer: CandidateScorer, read: list[IndexedSection], query: str, now: datetime
) -> list[tuple[float, IndexedSection]]:
    """The read sections by score, best first (ties by page and position)."""
    scores = scorer.score(query, [Candidate(s.scored_text, now, s.embedding) for s in read], now)
    return sorted(zip(scores, read, strict=True), key=lambda p: (-p[0], p[1].page_id, p[1].index))


def evaluate(
    name: str,
    pick: Callable[[str], list[IndexedSection]],
    scorer: CandidateScorer,
    asked: list[tuple[str, tuple[str, int]]],
) -> None:
    """Print one configuration's figures."""
    now = datetime.now(UTC)
    hit1 = hit5 = kept_hits = 0
    reciprocal = 0.0
    started = time.perf_counter()
    for query, target in asked:
        ranked = ranking(scorer, pick(query), query, now)
        found = [(s.page_id, s.index) for _, s in ranked]
        kept = [(s.page_id, s.index) for score, s in ranked if score >= 0.5]
        kept = kept[:MAX_RECALLED_SECTIONS]
        if target in found:
            rank = found.index(target) + 1
            reciprocal += 1 / rank
            hit1 += rank == 1
            hit5 += rank <= 5
        kept_hits += target in kept
    seconds = (time.perf_counter() - started) / max(len(asked), 1)
    empty = sum(
        not [1 for score, _ in ranking(scorer, pick(q), q, now) if score >= 0.5] for q in UNRELATED
    )
    n = len(asked)
    print(
        f"{name:<34} n={n:<3} Hit@1 {hit1 / n:.3f}  Hit@5 {hit5 / n:.3f}  "
        f"Hit@kept {kept_hits / n:.3f}  MRR {reciprocal / n:.3f}  "
        f"unrelated with none {empty}/{len(UNRELATED)}  {seconds:.2f} s a task",
        flush=True,
    )


def main() -> int:
    """Build the pages and tasks, and print each configuration's figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--half", choices=("held-out", "tune"), default="held-out")
    parser.add_argument("--reranker", choices=("on", "off", "both"), default="both")
    args = parser.parse_args()
    embedder = wiring.default_embedder()
    pages = as_pages(docs_sections(embedder))
    asked = tasks(pages, args.half, args.tasks)
    indexer = SectionIndexer(MemoryStore(pages), Cl100kTokenCounter(), embedder, lambda *_: None)
    every = [s for page in pages for s in page.sections]
    print(f"{len(pages)} pages, {len(every)} sections, {len(asked)} tasks ({args.half} half)")
    scorers: list[tuple[str, CandidateScorer]] = []
    if args.reranker in ("on", "both"):
        weights = LocalModelFile(wiring.RERANKER_WEIGHTS_FILE).path
        scorers.append(("reranker", relevance_scorer(embedder, shared_cross_encoder("q", weights))))
    if args.reranker in ("off", "both"):
        scorers.append(("two stages", relevance_scorer(embedder)))
    for label, scorer in scorers:
        evaluate(f"every section, {label}", lambda _q: every, scorer, asked)
        evaluate(f"shortlist, {label}", lambda q: indexer.candidates("wsp_q", q)[0], scorer, asked)
    return 0


if __name__ == "__main__":
    sys.exit(main())
