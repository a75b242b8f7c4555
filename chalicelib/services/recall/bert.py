"""A BERT encoder in plain numpy, shared by recall's sentence embedder
(``embedding.MiniLMEmbedder``) and its reranker (``reranker.CrossEncoder``)
(docs/reference.md#8-recall).

``BertEncoder`` reads the weights of one model from an ``.npz`` in the layout the build
scripts write (``scripts/build_recall_model.py``, ``scripts/build_reranker.py``): each
linear layer as ``<name>.q`` (int8, ``(out, in)``) with ``<name>.scale`` (float32, one per
output row); query, key and value stacked as ``layer<i>.qkv``; the token table as
``token.q``/``token.scale`` (its rows dequantised as they are looked up); ``position``
and ``segment`` tables as float16; biases and layer norms as float32. Every other array
(a pooler, a classifier) is kept as it is, float32, for the model that uses it
(``BertEncoder.weight``). Hidden size 384, 12 heads, exact (erf) GELU, LayerNorm epsilon
1e-12, as in the MiniLM models both files come from.
"""

import math
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]

HIDDEN = 384
_HEADS = 12
_LAYER_NORM_EPS = 1e-12


def _gelu(values: FloatArray) -> FloatArray:
    """BERT's exact (erf) GELU, in place on ``values`` (which it returns).

    The error function is Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7); its argument is
    capped at 9 (erf is 1 in float32 there) so that ``exp`` never makes subnormals, which
    are slow on every later operation.
    """
    absolute = np.abs(values)
    absolute *= np.float32(1.0 / math.sqrt(2.0))
    np.minimum(absolute, np.float32(9.0), out=absolute)
    t = absolute * np.float32(0.3275911)
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    poly = t * np.float32(1.061405429)
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += np.float32(coefficient)
        poly *= t
    np.multiply(absolute, absolute, out=absolute)
    np.negative(absolute, out=absolute)
    np.exp(absolute, out=absolute)
    poly *= absolute
    # poly is now 1 - erf(|x| / sqrt 2); the normal CDF is 1/2 + sign(x) (1 - poly) / 2.
    np.subtract(np.float32(1.0), poly, out=poly)
    np.copysign(poly, values, out=poly)
    poly += np.float32(1.0)
    values *= poly
    values *= np.float32(0.5)
    return values


def _gelu_tanh(values: FloatArray) -> FloatArray:
    """GELU's tanh approximation, in place on ``values`` (which it returns); within 5e-4
    of the exact one and several times faster in numpy (the reranker's choice,
    docs/DECISIONS.md#reranker-issue-28)."""
    inner = values * values
    inner *= np.float32(0.044715 * math.sqrt(2.0 / math.pi))
    inner += np.float32(math.sqrt(2.0 / math.pi))
    inner *= values
    np.tanh(inner, out=inner)
    inner += np.float32(1.0)
    values *= inner
    values *= np.float32(0.5)
    return values


def layer_norm(values: FloatArray, weight: FloatArray, bias: FloatArray) -> FloatArray:
    """LayerNorm over the last axis (epsilon 1e-12)."""
    mean = values.mean(axis=-1, keepdims=True)
    centred = values - mean
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    result: FloatArray = centred / np.sqrt(variance + _LAYER_NORM_EPS) * weight + bias
    return result


class BertEncoder:
    """The transformer layers of one BERT model (see the module doc), loaded lazily.

    Thread-safe: the weights are read once under a lock and are read-only afterwards;
    each call works on its own arrays.
    """

    def __init__(
        self, model_file: Path | Callable[[], Path], layers: int, *, exact_gelu: bool = True
    ) -> None:
        """Remember where the weights are; nothing is read yet.

        Args:
            model_file: The ``.npz`` (module doc), or what finds it on first load (a
                download, for weights kept outside the Lambda package).
            layers: How many transformer layers it holds (``layer0`` ... ).
            exact_gelu: The erf GELU the models were trained with; ``False`` takes the
                tanh approximation (faster, within 5e-4 per activation).
        """
        self._model_file = model_file
        self._layers = layers
        self._gelu = _gelu if exact_gelu else _gelu_tanh
        self._lock = threading.Lock()
        self._weights: dict[str, FloatArray] = {}
        self._token_table: npt.NDArray[np.int8] | None = None
        self._token_scale: FloatArray | None = None

    @property
    def loaded(self) -> bool:
        """Whether the weights are in memory."""
        return self._token_table is not None

    def load(self) -> None:
        """Read and dequantise the weights once (under a lock).

        Raises:
            OSError: the file cannot be read (or whatever finding it raised);
                ``KeyError``/``ValueError``: it is not in the layout of the module doc.
        """
        if self._token_table is not None:
            return
        with self._lock:
            if self._token_table is not None:
                return
            source = self._model_file
            with np.load(source() if callable(source) else source) as archive:
                weights: dict[str, FloatArray] = {}
                for name in archive.files:
                    if name.endswith(".scale") or name == "token.q":
                        continue
                    array = archive[name]
                    if name.endswith(".q"):
                        base = name[: -len(".q")]
                        scale = archive[base + ".scale"].astype(np.float32)
                        matrix = array.astype(np.float32) * scale[:, None]
                        # Stored (out, in); kept as a contiguous (in, out) copy:
                        # ``x @ W`` on it is 2-3x faster than on the ``W.T`` view.
                        weights[base] = np.ascontiguousarray(matrix.T)
                    else:
                        weights[name] = array.astype(np.float32)
                token_scale = archive["token.scale"].astype(np.float32)
                self._weights = weights
                self._token_scale = token_scale
                self._token_table = archive["token.q"]

    def weight(self, name: str) -> FloatArray:
        """A loaded array by name (a linear layer as ``(in, out)``); call ``load`` first.

        Raises:
            KeyError: the file has no such array.
        """
        return self._weights[name]

    def hidden(
        self, batch: Sequence[Sequence[int]], segments: Sequence[Sequence[int]] | None = None
    ) -> tuple[FloatArray, FloatArray]:
        """The last layer's states of a batch of token-id lists (loads on first use).

        Args:
            batch: Token ids per sequence (``[CLS] ... [SEP]``), at most as many as the
                position table has rows.
            segments: Segment ids (0 or 1) per token, same shapes; default all 0.

        Returns:
            ``(hidden, mask)``: shapes ``(b, longest, 384)`` (padding rows unused) and
            ``(b, longest)`` (1.0 on real tokens).
        """
        self.load()
        w = self._weights
        assert self._token_table is not None and self._token_scale is not None
        size = len(batch)
        length = max(map(len, batch))
        ids = np.zeros((size, length), dtype=np.int64)
        kinds = np.zeros((size, length), dtype=np.int64)
        mask = np.zeros((size, length), dtype=np.float32)
        for row, tokens in enumerate(batch):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1.0
            if segments is not None:
                kinds[row, : len(tokens)] = segments[row]
        # Linear layers, GELU and layer norms run on the real tokens only, packed as one
        # (tokens, 384) matrix (one large matrix product instead of a padded batch of
        # small ones); attention runs on the padded (b, heads, longest, 32) view.
        real = mask.reshape(-1) > 0
        flat_ids = ids.reshape(-1)[real]
        positions = np.tile(np.arange(length), size)[real]
        tokens_in = self._token_table[flat_ids].astype(np.float32)
        tokens_in *= self._token_scale[flat_ids][:, None]
        hidden = tokens_in + w["position"][positions] + w["segment"][kinds.reshape(-1)[real]]
        hidden = layer_norm(hidden, w["embeddings.norm.weight"], w["embeddings.norm.bias"])
        head = HIDDEN // _HEADS
        blocked = (1.0 - mask)[:, None, None, :] * np.float32(-1e9)
        padded = np.zeros((size * length, 3 * HIDDEN), dtype=np.float32)
        for layer in range(self._layers):
            p = f"layer{layer}."
            qkv = hidden @ w[p + "qkv"]
            qkv += w[p + "qkv.bias"]
            padded[real] = qkv
            heads = padded.reshape(size, length, 3, _HEADS, head).transpose(2, 0, 3, 1, 4)
            query, key, value = heads[0], heads[1], heads[2]
            attention = query @ key.transpose(0, 1, 3, 2)
            attention *= np.float32(1.0 / math.sqrt(head))
            attention += blocked
            attention -= attention.max(axis=-1, keepdims=True)
            np.exp(attention, out=attention)
            attention /= attention.sum(axis=-1, keepdims=True)
            context = (attention @ value).transpose(0, 2, 1, 3).reshape(size * length, HIDDEN)
            output = context[real] @ w[p + "attention.out"]
            output += w[p + "attention.out.bias"]
            output += hidden
            hidden = layer_norm(output, w[p + "norm1.weight"], w[p + "norm1.bias"])
            inner = hidden @ w[p + "ffn.in"]
            inner += w[p + "ffn.in.bias"]
            output = self._gelu(inner) @ w[p + "ffn.out"]
            output += w[p + "ffn.out.bias"]
            output += hidden
            hidden = layer_norm(output, w[p + "norm2.weight"], w[p + "norm2.bias"])
        states = np.zeros((size * length, HIDDEN), dtype=np.float32)
        states[real] = hidden
        hidden = states.reshape(size, length, HIDDEN)
        return hidden, mask
