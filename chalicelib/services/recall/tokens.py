"""Token counting for the recall budgets (SPEC §5: 12,000 tokens of memories, 2,000 of day log).

SPEC §5 asks for a real tokenizer of the cl100k/o200k class that works offline, not a
character estimate. ``Cl100kTokenCounter`` uses bpe-openai's cl100k_base encoding,
whose vocabulary ships inside the wheel: nothing is downloaded, at import or later.
"""

from typing import Protocol

import bpe_openai

_ENCODING_NAME = "cl100k_base"

# bpe-openai refuses a text of 1,000,000 characters or more, or one that makes more
# than 200,000 tokens. A character is at most 4 UTF-8 bytes, hence at most 4 tokens, so
# longer texts are counted in pieces of at most 50,000 characters (see ``_pieces``).
_PIECE_CHARS = 50_000


class _Encoding(Protocol):
    """The part of a bpe-openai (tiktoken-compatible) encoding this module uses."""

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids of ``text``, special-token strings encoded as plain text."""
        ...


class TokenCounter(Protocol):
    """Counts the tokens of a text the way the recall budgets do (SPEC §5)."""

    def count(self, text: str) -> int:
        """Number of tokens in ``text``.

        Args:
            text: Any text (may be empty).

        Returns:
            The token count, >= 0.
        """
        ...


class Cl100kTokenCounter:
    """``TokenCounter`` with OpenAI's cl100k_base encoding (bpe-openai, offline; SPEC §5).

    The encoding (about 1 s and some tens of MB to build) is loaded on the first
    ``count`` and kept by the instance; building the counter costs nothing. Special-token
    strings such as ``"<|endoftext|>"`` are counted as the ordinary text they are (7
    tokens for that one), never as control tokens and never as an error: memories are
    user text. A lone surrogate, which a JSON string can carry, is counted as U+FFFD.
    """

    def __init__(self) -> None:
        """Create the counter; the encoding is not loaded yet."""
        self._encoding: _Encoding | None = None

    def count(self, text: str) -> int:
        """Number of cl100k_base tokens in ``text``, special-token strings read as text.

        Args:
            text: Any text, of any length. Texts over 50,000 characters are counted in
                pieces cut before a space that starts a word, where cl100k's
                pre-tokenizer splits anyway, so the count is exact; a piece with no
                such space is cut at 50,000 characters and may count a token or two
                more than the whole would.

        Returns:
            The token count, >= 0 (0 for the empty string).
        """
        if not text:
            return 0
        if self._encoding is None:
            self._encoding = bpe_openai.get_encoding(_ENCODING_NAME)
        encode = self._encoding.encode_ordinary
        return sum(len(encode(piece)) for piece in _pieces(text, _PIECE_CHARS))


def _pieces(text: str, size: int) -> list[str]:
    """Split ``text`` into pieces of at most ``size`` characters for counting.

    Each cut is made just before a space followed by a non-space character: cl100k's
    pre-tokenizer always starts a new pre-token there (" word", " 42", " !"), and BPE
    never merges across pre-tokens, so the pieces' counts add up to the whole's. Where
    a window holds no such space the cut falls at ``size`` characters.
    """
    pieces = []
    start = 0
    while len(text) - start > size:
        end = start + size
        cut = text.rfind(" ", start + 1, end)
        while cut > start and text[cut + 1].isspace():
            cut = text.rfind(" ", start + 1, cut)
        if cut <= start:
            cut = end
        pieces.append(text[start:cut])
        start = cut
    pieces.append(text[start:])
    return pieces
