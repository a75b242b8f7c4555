"""The stored recall embedding's format (docs/reference.md#8-recall): tags, sizes and the checks
that need no numpy, so the API's import chain stays light (docs/DECISIONS.md "Cold start").

``chalicelib.services.recall.embedding`` writes and reads these bytes (and re-exports
every name here); ``EmbeddingBackfill`` and the relevance scorer check them.
"""

from __future__ import annotations

DIMENSIONS = 384
SENTENCE_FORMAT = 1
"""Tag of the sentence-only stored embedding (earlier versions; still read)."""
WORD_PIECE_FORMAT = 2
"""Tag of the stored embedding with word-piece sign bits made by the tokenizer before
its fix (tab, line feed and carriage return dropped: ``wordpiece``); still read."""
EMBEDDING_FORMAT = 3
"""Tag of what ``embed`` writes now: format 2's layout from the fixed tokenizer."""
TOKEN_FORMATS = (WORD_PIECE_FORMAT, EMBEDDING_FORMAT)
"""The tags whose bytes carry word-piece sign bits (same layout)."""
SENTENCE_BYTES = 1 + DIMENSIONS
TOKEN_BYTES = DIMENSIONS // 8
MAX_STORED_TOKENS = 48
"""Word pieces kept per fact (a 500-character fact may have ~120): 2.7 KB at most."""


def is_ours(embedding: bytes | None) -> bool:
    """Whether ``embedding`` was made by ``embedding.encode`` (format 3) or by an
    earlier version (format 2, the same layout; format 1, the sentence part only):
    right tag and size."""
    if embedding is None or len(embedding) < SENTENCE_BYTES:
        return False
    if embedding[0] == SENTENCE_FORMAT:
        return len(embedding) == SENTENCE_BYTES
    return (
        embedding[0] in TOKEN_FORMATS
        and len(embedding) > SENTENCE_BYTES
        and len(embedding) == SENTENCE_BYTES + 1 + TOKEN_BYTES * embedding[SENTENCE_BYTES]
    )


def is_current(embedding: bytes | None) -> bool:
    """Whether ``embedding`` is what ``encode`` writes now (format 3, with word pieces).

    Missing, foreign, format-1 and format-2 embeddings are not: recall embeds the
    first two on the fly, gives format 1 no token match and reads format 2 as it is
    (its sign bits are right unless the fact's text has a tab, a line break or a
    control character), and ``pinework admin backfill-embeddings``
    (``EmbeddingBackfill``) rewrites all four.
    """
    return embedding is not None and embedding[0] == EMBEDDING_FORMAT and is_ours(embedding)


def word_piece_count(embedding: bytes) -> int:
    """How many word pieces an embedding of ours stores (0 for format 1)."""
    return embedding[SENTENCE_BYTES] if embedding[0] in TOKEN_FORMATS else 0


def sentence_stand_in(prefix: bytes | None, size: int) -> bytes | None:
    """What the scorer's first stage reads of a stored embedding, rebuilt from the recall
    index's copy of its first ``SENTENCE_BYTES + 1`` bytes and its full ``size``
    (docs/issues.md#issue-23-item-1).

    Returns:
        The embedding itself when it is format 1 (the sentence part is all of it); a
        format-1 embedding of the same sentence vector when it is format 2 or 3 (the
        word pieces are fetched later, for the candidates the second stage reads);
        ``None`` when the stored embedding is missing or not ours (``is_ours``'s checks
        on tag and size), so the scorer embeds the text as it would have.
    """
    if prefix is None or len(prefix) < SENTENCE_BYTES:
        return None
    tag = prefix[0]
    if tag == SENTENCE_FORMAT:
        return prefix[:SENTENCE_BYTES] if size == SENTENCE_BYTES else None
    if tag not in TOKEN_FORMATS or len(prefix) <= SENTENCE_BYTES:
        return None
    if size <= SENTENCE_BYTES or size != SENTENCE_BYTES + 1 + TOKEN_BYTES * prefix[SENTENCE_BYTES]:
        return None
    return bytes([SENTENCE_FORMAT]) + prefix[1:SENTENCE_BYTES]
