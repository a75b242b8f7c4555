"""Token counting for the recall budgets (docs/reference.md#5-limits: 12,000 tokens of memories,
2,000 of day log).

docs/reference.md#5-limits asks for a real tokenizer of the cl100k/o200k class that works offline,
not a character estimate. ``Cl100kTokenCounter`` uses ``tiktoken`` with OpenAI's cl100k_base
vocabulary read from ``chalicelib/data/cl100k_base.tiktoken`` (vendored, hash-checked):
``tiktoken`` would otherwise download it on first use (docs/conventions.md#pitfalls), so its own
loader is never called. ``tiktoken`` is imported on the first count, not when this module is
(cold start: docs/DECISIONS.md "Cold start").
"""

from __future__ import annotations

import base64
import functools
import hashlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

VOCABULARY_PATH = Path(__file__).resolve().parents[2] / "data" / "cl100k_base.tiktoken"
"""The vendored vocabulary (licence and source: ``cl100k_base.LICENSE.md`` beside it)."""
VOCABULARY_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
"""The hash ``tiktoken`` requires of the cl100k_base file it downloads."""
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|"""
    r""" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
"""cl100k_base's pre-tokenizer (``tiktoken_ext.openai_public.cl100k_base``)."""
CL100K_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
"""cl100k_base's control tokens; counting never emits them (``encode_ordinary``)."""
PIECE_MAX_CHARS = 1_000
"""The longest text handed to the encoder at once. tiktoken 0.11 (the newest with
wheels for the python3.11 Lambda runtime) is quadratic on a long run without spaces
(80,000 CJK characters: 35 s), so longer texts are counted in pieces (see ``pieces``).
A memory line (a fact of at most 500 characters with its id and date) and a day line
(at most 300 with its prefix) are always shorter, so their counts are exact."""


class Encoding(Protocol):
    """The part of a ``tiktoken.Encoding`` this module uses."""

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids of ``text``, special-token strings encoded as plain text."""
        ...


class TokenCounter(Protocol):
    """Counts the tokens of a text the way the recall budgets do (docs/reference.md#5-limits)."""

    def count(self, text: str) -> int:
        """Number of tokens in ``text``.

        Args:
            text: Any text (may be empty).

        Returns:
            The token count, >= 0.
        """
        ...


@functools.cache
def load_cl100k(path: Path = VOCABULARY_PATH) -> Encoding:
    """Build tiktoken's cl100k_base encoding from the vendored vocabulary file, once per
    process and path (the encoding is immutable and thread-safe, as tiktoken's own
    registry shares it).

    Args:
        path: a ``.tiktoken`` file (``base64(token bytes) rank`` per line).

    Returns:
        A ``tiktoken.Encoding`` named ``cl100k_base`` (about 0.2 s and 30 MB to build).

    Raises:
        ValueError: the file is not the cl100k_base vocabulary (its SHA-256 differs).
    """
    import tiktoken  # here, not at import: it is a cold-start cost only recall pays

    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != VOCABULARY_SHA256:
        raise ValueError(f"{path} is not OpenAI's cl100k_base vocabulary (SHA-256 differs)")
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }
    encoding: Encoding = tiktoken.Encoding(
        name="cl100k_base",
        pat_str=CL100K_PATTERN,
        mergeable_ranks=ranks,
        special_tokens=CL100K_SPECIAL_TOKENS,
    )
    return encoding


class Cl100kTokenCounter:
    """``TokenCounter`` with OpenAI's cl100k_base encoding (tiktoken, offline;
    docs/reference.md#5-limits).

    The encoding is built on the first ``count`` (once per instance, thread-safe) and
    kept; building the counter costs nothing. Special-token strings such as
    ``"<|endoftext|>"`` are counted as the ordinary text they are (7 tokens for that
    one), never as control tokens and never as an error: memories are user text. A
    lone surrogate, which a JSON string can carry, is counted as U+FFFD.

    Args:
        load: builds the encoding; ``load_cl100k`` unless a test injects another.
    """

    def __init__(self, load: Callable[[], Encoding] = load_cl100k) -> None:
        """Create the counter; the encoding is not loaded yet."""
        self._load = load
        self._encoding: Encoding | None = None
        self._lock = threading.Lock()

    def count(self, text: str) -> int:
        """Number of cl100k_base tokens in ``text``, special-token strings read as text.

        Args:
            text: Any text, of any length. Texts over ``PIECE_MAX_CHARS`` characters
                are counted in pieces cut before a space that starts a word, where
                cl100k's pre-tokenizer splits anyway, so the count is exact; a piece
                with no such space is cut at ``PIECE_MAX_CHARS`` characters and may
                count a token or two more than the whole would.

        Returns:
            The token count, >= 0 (0 for the empty string).
        """
        if not text:
            return 0
        encode = self._loaded().encode_ordinary
        return sum(len(encode(piece)) for piece in pieces(text, PIECE_MAX_CHARS))

    def _loaded(self) -> Encoding:
        if self._encoding is None:
            with self._lock:
                if self._encoding is None:
                    self._encoding = self._load()
        return self._encoding


def pieces(text: str, size: int) -> list[str]:
    """Split ``text`` into pieces of at most ``size`` characters for counting.

    Each cut is made just before a space followed by a non-space character: cl100k's
    pre-tokenizer always starts a new pre-token there (" word", " 42", " !"), and BPE
    never merges across pre-tokens, so the pieces' counts add up to the whole's. Where
    a window holds no such space the cut falls at ``size`` characters.

    Args:
        text: any text.
        size: the longest piece, >= 2.

    Returns:
        The pieces, in order; joined they are ``text``.
    """
    found = []
    start = 0
    while len(text) - start > size:
        end = start + size
        cut = text.rfind(" ", start + 1, end)
        while cut > start and text[cut + 1].isspace():
            cut = text.rfind(" ", start + 1, cut)
        if cut <= start:
            cut = end
        found.append(text[start:cut])
        start = cut
    found.append(text[start:])
    return found
