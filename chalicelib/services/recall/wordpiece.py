"""BERT's uncased WordPiece tokenizer in pure Python, for MiniLM (docs/reference.md#8-recall
recall).

``WordPieceTokenizer`` gives the token ids that the classic (pure Python)
``transformers`` ``BertTokenizer`` gives with ``do_lower_case=True`` (in transformers
5 that class is ``BertTokenizerLegacy``; ``BertTokenizer`` is the Rust-backed one),
with one deliberate difference: a literal ``[CLS]``, ``[SEP]``, ``[MASK]``, ``[PAD]``
or ``[UNK]`` in a fact or a query is plain text (``[``, ``mask``, ``]``), never the
special token, so a user's text cannot inject one. ``tests/unit/test_wordpiece_parity.py``
checks the ids against transformers on a varied corpus of more than a thousand strings
(code, CJK, kana, Hangul, emoji, accents, every kind of white space, control and format
characters, long words, those literals).

The steps, as BERT's ``BasicTokenizer`` then ``WordpieceTokenizer``:

1. clean: drop U+0000, U+FFFD and every character of a Unicode "C" category (control,
   format, surrogate, private use, unassigned) except tab, line feed and carriage
   return, which are white space, as is every ``Zs`` space: each becomes one space;
2. put spaces around each CJK ideograph;
3. NFC, split at white space, lower-case, NFD and drop the combining marks (``Mn``:
   accents), split off every punctuation character (ASCII symbols and Unicode ``P*``);
4. each word matched longest-prefix-first against the vocabulary (continuations
   prefixed ``##``); a word with no match, or longer than 100 characters, is ``[UNK]``.

Versions before embedding format 3 (``embedding_format``) dropped tab, line feed and
carriage return instead of reading them as spaces ("a\\tb" was "ab": multi-line facts
and tasks embedded wrongly) and kept private-use, surrogate and unassigned characters.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

MAX_TOKENS = 256
"""sentence-transformers' ``max_seq_length`` for all-MiniLM-L6-v2 (``[CLS]``/``[SEP]`` included)."""
MAX_WORD_CHARS = 100
"""BERT's ``max_input_chars_per_word``: a longer word is one ``[UNK]``."""

_LINE_SPACE = "\t\n\r"
# ASCII: drop the C0 controls and DEL, read tab, line feed and carriage return as spaces.
_ASCII_CLEAN: dict[int, str | None] = {
    **{code: None for code in range(32)},
    0x7F: None,
    **{ord(char): " " for char in _LINE_SPACE},
}
_WORD_CACHE_SIZE = 100_000


class WordPieceTokenizer:
    """BERT's uncased tokenizer for one vocabulary (see the module doc).

    Thread-safe for reading: the only state that changes is a word cache whose
    entries are computed identically by any thread.
    """

    def __init__(self, vocabulary: Sequence[str]) -> None:
        """Index ``vocabulary`` (one token per line of BERT's ``vocab.txt``, id = position).

        Raises:
            KeyError: when ``[CLS]``, ``[SEP]`` or ``[UNK]`` is missing.
        """
        self._ids = {token: index for index, token in enumerate(vocabulary)}
        self.cls_id = self._ids["[CLS]"]
        self.sep_id = self._ids["[SEP]"]
        self.unk_id = self._ids["[UNK]"]
        self._word_cache: dict[str, tuple[int, ...]] = {}

    def encode(self, text: str, max_tokens: int = MAX_TOKENS) -> list[int]:
        """Token ids of ``text`` between ``[CLS]`` and ``[SEP]``, at most ``max_tokens``
        in all (the text's pieces are cut at ``max_tokens - 2``, as transformers'
        ``truncation=True`` does)."""
        ids = [self.cls_id]
        limit = max_tokens - 1
        for word in basic_words(text):
            pieces = self._word_cache.get(word)
            if pieces is None:
                pieces = self._word_pieces(word)
                if len(self._word_cache) < _WORD_CACHE_SIZE:
                    self._word_cache[word] = pieces
            ids.extend(pieces)
            if len(ids) >= limit:
                del ids[limit:]
                break
        ids.append(self.sep_id)
        return ids

    def _word_pieces(self, word: str) -> tuple[int, ...]:
        """Greedy longest-match-first WordPiece split of one basic word."""
        if len(word) > MAX_WORD_CHARS:
            return (self.unk_id,)
        pieces: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                found = self._ids.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return (self.unk_id,)
            pieces.append(found)
            start = end
        return tuple(pieces)


def basic_words(text: str) -> list[str]:
    """BERT's basic tokenisation (steps 1-3 of the module doc): cleaned, lower-cased,
    accent-free words and single punctuation characters, in text order."""
    if text.isascii():
        cleaned = text.translate(_ASCII_CLEAN).lower()
        if cleaned.isalnum():
            return [cleaned]
    else:
        cleaned = _clean_unicode(text)
    words: list[str] = []
    for chunk in cleaned.split():
        if chunk.isalnum():
            words.append(chunk)
            continue
        current: list[str] = []
        for char in chunk:
            if is_punctuation(char):
                if current:
                    words.append("".join(current))
                    current = []
                words.append(char)
            else:
                current.append(char)
        if current:
            words.append("".join(current))
    return words


def _clean_unicode(text: str) -> str:
    """Steps 1-3 up to the punctuation split for text with non-ASCII characters."""
    characters: list[str] = []
    for char in text:
        if char in _LINE_SPACE:
            characters.append(" ")
            continue
        code = ord(char)
        if code == 0xFFFD:
            continue
        category = unicodedata.category(char)
        if category[0] == "C":
            continue
        if category == "Zs":
            characters.append(" ")
        elif is_cjk(code):
            characters.append(f" {char} ")
        else:
            characters.append(char)
    cleaned = unicodedata.normalize("NFC", "".join(characters)).lower()
    decomposed = unicodedata.normalize("NFD", cleaned)
    return "".join(char for char in decomposed if unicodedata.category(char) != "Mn")


def is_punctuation(char: str) -> bool:
    """BERT's punctuation test: ASCII symbols plus Unicode ``P*`` categories."""
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def is_cjk(code: int) -> bool:
    """Whether code point ``code`` is a CJK ideograph (BERT puts spaces around each)."""
    return (
        0x4E00 <= code <= 0x9FFF
        or 0x3400 <= code <= 0x4DBF
        or 0x20000 <= code <= 0x2A6DF
        or 0x2A700 <= code <= 0x2B73F
        or 0x2B740 <= code <= 0x2B81F
        or 0x2B820 <= code <= 0x2CEAF
        or 0xF900 <= code <= 0xFAFF
        or 0x2F800 <= code <= 0x2FA1F
    )
