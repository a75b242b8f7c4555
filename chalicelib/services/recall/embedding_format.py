"""The stored recall embedding's format (SPEC §8): tags, sizes and the checks that need
no numpy, so the API's import chain stays light (docs/DECISIONS.md "Cold start").

``chalicelib.services.recall.embedding`` writes and reads these bytes (and re-exports
every name here); ``EmbeddingBackfill`` and the relevance scorer check them.
"""

from __future__ import annotations

DIMENSIONS = 384
SENTENCE_FORMAT = 1
"""Tag of the sentence-only stored embedding (earlier versions; still read)."""
EMBEDDING_FORMAT = 2
"""Tag of the stored embedding with word-piece sign bits (what ``embed`` writes)."""
SENTENCE_BYTES = 1 + DIMENSIONS
TOKEN_BYTES = DIMENSIONS // 8
MAX_STORED_TOKENS = 48
"""Word pieces kept per fact (a 500-character fact may have ~120): 2.7 KB at most."""


def is_ours(embedding: bytes | None) -> bool:
    """Whether ``embedding`` was made by ``embedding.encode`` (format 2) or by an
    earlier version (format 1, the sentence part only): right tag and size."""
    if embedding is None or len(embedding) < SENTENCE_BYTES:
        return False
    if embedding[0] == SENTENCE_FORMAT:
        return len(embedding) == SENTENCE_BYTES
    return (
        embedding[0] == EMBEDDING_FORMAT
        and len(embedding) > SENTENCE_BYTES
        and len(embedding) == SENTENCE_BYTES + 1 + TOKEN_BYTES * embedding[SENTENCE_BYTES]
    )


def is_current(embedding: bytes | None) -> bool:
    """Whether ``embedding`` is what ``encode`` writes now (format 2, with word pieces).

    Missing, foreign and format-1 embeddings are not: recall embeds the first two
    on the fly and gives format 1 no token match, and ``pinework admin
    backfill-embeddings`` (``EmbeddingBackfill``) rewrites all three.
    """
    return embedding is not None and embedding[0] == EMBEDDING_FORMAT and is_ours(embedding)


def word_piece_count(embedding: bytes) -> int:
    """How many word pieces an embedding of ours stores (0 for format 1)."""
    return embedding[SENTENCE_BYTES] if embedding[0] == EMBEDDING_FORMAT else 0
