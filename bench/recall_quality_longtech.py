"""Measure the shipped recall scorer against plain BM25 on long technical stores
(docs/DECISIONS.md, docs/issues.md#issue-40-item-3), or on any data of the recall-eval format.

Data: ``bench/longtech_generate.py``'s set (``bench/data/longtech``, regenerated when
missing) or ``--data`` (the LoCoMo-derived development half reads the same way). Each
conversation is one agent's store, every fact saved at its ``date`` with its stored
embedding (``Embedder.embed``, as recall reads it). Each question is scored by the
shipped ``RelevanceScorer`` (with the cross-encoder when its weights are in
``models/``) and by plain BM25 (``rank_bm25.BM25Okapi`` over lower-cased ``\\w+``
words), facts ranked best first (equal scores: the newer first, as recall does).

Printed per split (``tune`` / ``held-out``, by conversation; LoCoMo has none: ``all``)
and per kind: MRR of the scorer and of BM25, Hit@kept (a question with an evidence
fact scored >= 0.5), median / p90 / max kept; questions without evidence
(``abstention``) apart: their median and max kept. LoCoMo's questions without evidence
are skipped and its category 5 (``adversarial``) is left out of ``overall``. Then the
scorer's time per recall (noisy on a shared
machine). Stored embeddings are cached in ``/tmp`` by text.

Usage::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/recall_quality_longtech.py \\
        [--data DIR] [--split tune|held-out] [--no-rerank] [--every N]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import pickle
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # the Lambda's one BLAS thread

import numpy as np
from rank_bm25 import BM25Okapi

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from chalicelib.services.recall.embedding import VOCAB_FILE, MiniLMEmbedder  # noqa: E402
from chalicelib.services.recall.relevance import Candidate, RelevanceScorer  # noqa: E402
from chalicelib.services.recall.reranker import (  # noqa: E402
    MAX_PAIR_PIECES,
    MODEL_FILE,
    CrossEncoder,
)
from chalicelib.services.recall.wordpiece import MAX_TOKENS, WordPieceTokenizer  # noqa: E402
from scripts.recall_benchmark import percentile, read_jsonl  # noqa: E402

LONGTECH = REPO_ROOT / "bench" / "data" / "longtech"
CACHE = Path("/tmp/pinework-recall-embeddings.pickle")
_WORDS = re.compile(r"\w+")
ABSTENTION = "abstention"
APART = "adversarial"
"""LoCoMo's category 5 (a detail of the store's own people swapped) is reported apart."""


@dataclass
class Tally:
    """Figures of one group of questions."""

    mrr: list[float] = field(default_factory=list)
    bm25: list[float] = field(default_factory=list)
    hits: list[bool] = field(default_factory=list)
    kept: list[int] = field(default_factory=list)

    def line(self, label: str) -> str:
        """One printed row."""
        if not self.mrr:
            return (
                f"{label:<28} {len(self.kept):>4} {'':>6} {'':>6} {'':>6} {'':>8}"
                f" {statistics.median(self.kept):>6g} {percentile(self.kept, 0.9):>5g}"
                f" {max(self.kept):>5}"
            )
        mrr, bm25 = statistics.mean(self.mrr), statistics.mean(self.bm25)
        return (
            f"{label:<28} {len(self.mrr):>4} {mrr:6.3f} {bm25:6.3f} {mrr - bm25:+6.3f}"
            f" {statistics.mean(self.hits):8.3f} {statistics.median(self.kept):>6g}"
            f" {percentile(self.kept, 0.9):>5g} {max(self.kept):>5}"
        )


HEADER = (
    f"{'':<28} {'n':>4} {'MRR':>6} {'BM25':>6} {'diff':>6} {'Hit@kept':>8} {'kept':>6}"
    f" {'p90':>5} {'max':>5}"
)


def embedded(texts: list[str], embedder: MiniLMEmbedder) -> list[bytes]:
    """Stored embeddings of ``texts``, from the cache (``CACHE``, by text) where it has
    them; new ones are added to it (replaced whole, so runs side by side lose at most
    each other's additions)."""
    keys = [hashlib.sha256(text.encode()).hexdigest() for text in texts]
    cache = _read_cache()
    missing = sorted(
        {key: text for key, text in zip(keys, texts, strict=True) if key not in cache}.items()
    )
    for start in range(0, len(missing), 256):
        batch = missing[start : start + 256]
        fresh = embedder.embed([text for _, text in batch])
        cache = {
            **_read_cache(),
            **cache,
            **{key: item for (key, _), item in zip(batch, fresh, strict=True)},
        }
        partial = CACHE.with_suffix(f".{os.getpid()}")
        partial.write_bytes(pickle.dumps(cache))
        partial.replace(CACHE)
    return [cache[key] for key in keys]


def _read_cache() -> dict[str, bytes]:
    """The embedding cache (empty when there is none)."""
    if not CACHE.exists():
        return {}
    loaded: dict[str, bytes] = pickle.loads(CACHE.read_bytes())
    return loaded


def first_rank(scores: np.ndarray, times: np.ndarray, evidence: np.ndarray) -> float:
    """1 / rank of the first evidence fact; ties broken newer first."""
    order = np.lexsort((-times, -scores))
    position = int(np.flatnonzero(evidence[order])[0])
    return 1.0 / (position + 1)


def words(text: str) -> list[str]:
    """Plain BM25's terms: lower-cased ``\\w+`` runs."""
    return _WORDS.findall(text.lower())


def score_store(
    records: list[dict[str, object]],
    questions: list[dict[str, object]],
    scorer: RelevanceScorer,
    stored: list[bytes],
    tallies: dict[tuple[str, str], Tally],
) -> list[float]:
    """Score one store's questions into ``tallies``; return the scorer's seconds per recall."""
    texts = [str(record["text"]) for record in records]
    moments = [datetime.fromisoformat(str(record["date"])) for record in records]
    candidates = [
        Candidate(text, moment, item)
        for text, moment, item in zip(texts, moments, stored, strict=True)
    ]
    times = np.array([moment.timestamp() for moment in moments])
    ids = np.array([str(record["id"]) for record in records])
    now = max(moments) + timedelta(days=1)
    bm25 = BM25Okapi([words(text) for text in texts])
    spent = []
    for record in questions:
        question = str(record["question"])
        split = str(record.get("split", "all"))
        started = time.perf_counter()
        scores = np.array(scorer.score(question, candidates, now))
        spent.append(time.perf_counter() - started)
        kept = int((scores >= 0.5).sum())
        evidence = np.isin(ids, [str(item) for item in record["evidence_ids"]])  # type: ignore[attr-defined]
        kind = str(record.get("category_name", record["category"]))
        if not evidence.any():
            if kind == ABSTENTION:  # other questions without evidence are not scored
                tallies[(split, kind)].kept.append(kept)
            continue
        mrr = first_rank(scores, times, evidence)
        plain = first_rank(bm25.get_scores(words(question)), times, evidence)
        groups = [(split, kind)] if kind == APART else [(split, "overall"), (split, kind)]
        for group in groups:
            tally = tallies[group]
            tally.kept.append(kept)
            tally.mrr.append(mrr)
            tally.bm25.append(plain)
            tally.hits.append(bool((evidence & (scores >= 0.5)).any()))
    return spent


def report(tallies: dict[tuple[str, str], Tally], spent: list[float]) -> None:
    """Print the table of each split, then the time per recall."""
    for split in sorted({split for split, _ in tallies}):
        print(f"\n=== {split}")
        print(HEADER)
        print(tallies[(split, "overall")].line("overall"))
        for (group_split, kind), tally in sorted(tallies.items()):
            if group_split == split and kind != "overall":
                print(tally.line(kind))
    print(
        f"\nscorer time per recall: p50 {statistics.median(spent) * 1000:.0f} ms,"
        f" p95 {percentile(spent, 0.95) * 1000:.0f} ms, max {max(spent) * 1000:.0f} ms"
        f" ({len(spent)} recalls; a shared machine: noisy)"
    )


def lengths(texts: list[str]) -> None:
    """How many facts the embedder (``MAX_TOKENS`` word pieces with ``[CLS]``/``[SEP]``)
    and the cross-encoder (``MAX_PAIR_PIECES`` with a 16-piece question) read cut."""
    tokenizer = WordPieceTokenizer(VOCAB_FILE.read_text(encoding="utf-8").split("\n"))
    pieces = [len(tokenizer.encode(text, max_tokens=100_000)) for text in texts]
    embedder_cut = sum(count > MAX_TOKENS for count in pieces)
    pair_cut = sum(count - 2 > MAX_PAIR_PIECES - 16 - 3 for count in pieces)
    print(
        f"word pieces per fact: median {statistics.median(pieces):g}, p90"
        f" {percentile(pieces, 0.9):g}, max {max(pieces)}; cut by the embedder"
        f" ({MAX_TOKENS}): {embedder_cut / len(texts):.1%}; cut in a cross-encoder pair"
        f" ({MAX_PAIR_PIECES}, 16-piece question): {pair_cut / len(texts):.1%}"
    )


def main() -> int:
    """Score every question; print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=LONGTECH)
    parser.add_argument("--split", choices=("tune", "held-out", "all"), default="all")
    parser.add_argument("--no-rerank", action="store_true")
    parser.add_argument("--every", type=int, default=1, help="score every Nth question only")
    arguments = parser.parse_args()
    if arguments.data == LONGTECH and not (LONGTECH / "memories.jsonl").exists():
        generator = REPO_ROOT / "bench" / "longtech_generate.py"
        subprocess.run([sys.executable, str(generator)], check=True)
    memories: dict[str, list[dict[str, object]]] = defaultdict(list)
    for record in read_jsonl(arguments.data / "memories.jsonl"):
        memories[str(record["conv"])].append(record)
    questions = [
        record
        for number, record in enumerate(read_jsonl(arguments.data / "queries.jsonl"))
        if (arguments.split == "all" or record.get("split", "all") == arguments.split)
        and number % arguments.every == 0
    ]
    embedder = MiniLMEmbedder()
    rerank = not arguments.no_rerank and MODEL_FILE.is_file()
    scorer = RelevanceScorer(embedder, reranker=CrossEncoder() if rerank else None)
    print(f"data {arguments.data}, split {arguments.split}, reranker {'on' if rerank else 'off'}")
    tallies: dict[tuple[str, str], Tally] = defaultdict(Tally)
    spent: list[float] = []
    for conversation in sorted({str(record["conv"]) for record in questions}):
        records = memories[conversation]
        stored = embedded([str(record["text"]) for record in records], embedder)
        asked = [record for record in questions if record["conv"] == conversation]
        spent += score_store(records, asked, scorer, stored, tallies)
    report(tallies, spent)
    lengths([str(record["text"]) for records in memories.values() for record in records])
    return 0


if __name__ == "__main__":
    sys.exit(main())
