"""Whether a recall query is unrelated to the store (docs/reference.md#8-recall,
docs/DECISIONS.md#recall):
``unrelated`` decides, from the first stage's features and the fact texts, that no
fact of the store can be what the query asks about (it names someone or something no
fact mentions, ``names_unknown``, and nothing else matches; or nothing matches at all
and no misspelt query word is a slip from a word of the store, ``near_miss``). For
such a query the cut's floor rises (``cut.Cut.floor_if_unrelated``), so only strong
matches are kept.
"""

import functools
import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from chalicelib.services.recall.embedding import VOCAB_FILE
from chalicelib.services.recall.lexical import STOP_WORDS
from chalicelib.services.recall.relevance_features import FEATURES, TERMS, prefixed_words

UNRELATED_LEXICAL = 0.05
"""Below this best ``lex`` no fact contains any of the query's terms."""
UNRELATED_COSINE = 0.25
"""Below this best cosine no fact is even loosely similar (with unknown names)."""
UNRELATED_COSINE_ALONE = 0.15
"""Below this best cosine no fact is similar at all (names or not)."""
_LEX = FEATURES.index("lex")
_COS_BEST = FEATURES.index("cos_best")


def unrelated(query: str, texts: Sequence[str], matrix: npt.NDArray[np.float64]) -> bool:
    """Whether the query is unrelated to the store (see the module doc): no text shares
    any of its terms and none is similar at all, or its names are unknown to every text
    and no text shares another of its terms or is loosely similar to it.

    Args:
        query: The recall query.
        texts: The store's fact texts.
        matrix: Their features (``FEATURES`` columns first, as ``features`` gives).

    Returns:
        ``True`` when the raised cut applies.
    """
    if not len(texts):
        return False
    best_cosine = float(matrix[0, _COS_BEST])
    weak_words = float(matrix[:, _LEX].max()) < UNRELATED_LEXICAL
    if weak_words and best_cosine < UNRELATED_COSINE_ALONE and not near_miss(query, texts):
        return True
    return (weak_words or best_cosine < UNRELATED_COSINE) and names_unknown(query, texts)


def near_miss(query: str, texts: Sequence[str]) -> bool:
    """Whether a misspelt query word is a slip away from a word of the texts.

    A query word counts when it has five or more letters, is not a stop word and is
    not a whole word of MiniLM's WordPiece vocabulary (typos such as "athentication"
    or "dedline" are not; the vocabulary lacks some real words, such as "bake", so
    four-letter words are left out: "bake" must not "nearly match" "make"). It
    nearly matches a text word of four or more letters at an optimal-string-alignment
    distance (insert, delete, substitute, swap two neighbours) of 1, or 2 for words
    of eight letters or more, sharing its first or its last letter.

    Args:
        query: The recall query.
        texts: The store's fact texts.

    Returns:
        ``True`` when some misspelt query word nearly matches a text word.
    """
    vocabulary = _known_words()
    typos = {
        word
        for word in _WORD_PART.findall(query.lower())
        if len(word) >= 5 and word.isalpha() and word not in vocabulary and word not in STOP_WORDS
    }
    if not typos:
        return False
    words = {word for word in _WORD_PART.findall("\n".join(texts).lower()) if len(word) >= 4}
    for typo in typos:
        limit = 1 if len(typo) < 8 else 2
        for word in words:
            if abs(len(word) - len(typo)) > limit or (word[0] != typo[0] and word[-1] != typo[-1]):
                continue
            if _edits_within(typo, word, limit):
                return True
    return False


@functools.cache
def _known_words() -> frozenset[str]:
    """The whole words of MiniLM's WordPiece vocabulary (no ``##`` pieces), read once."""
    lines = VOCAB_FILE.read_text(encoding="utf-8").split("\n")
    return frozenset(line for line in lines if line.isalpha())


def _edits_within(first: str, second: str, limit: int) -> bool:
    """Whether the optimal-string-alignment distance of two words is at most ``limit``."""
    previous_previous: list[int] = []
    previous = list(range(len(second) + 1))
    for i, left in enumerate(first, 1):
        current = [i] + [0] * len(second)
        for j, right in enumerate(second, 1):
            cost = left != right
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and left == second[j - 2] and first[i - 2] == right:
                current[j] = min(current[j], previous_previous[j - 2] + 1)
        if min(current) > limit:
            return False
        previous_previous, previous = previous, current
    return previous[-1] <= limit


def names_unknown(query: str, texts: Sequence[str]) -> bool:
    """Whether the query names something that no text mentions.

    A name is a capitalized word after the query's first character (``France``,
    ``Caroline``, ``PostgreSQL``), taken as its ``LexicalScorer`` terms (stemmed,
    stop words such as ``I`` or ``Then`` dropped). True when the query has at least
    one such term and none of them occurs in any of ``texts`` (case-insensitive, as
    a word or a word's stem, found like ``lexical_coverage`` finds terms).

    Args:
        query: The recall query.
        texts: The store's fact texts.

    Returns:
        ``False`` for a query without names.
    """
    names = {term for word in _NAME.findall(query) for term in TERMS.terms(word.lower())}
    if not names:
        return False
    joined = "\n".join(texts).lower()
    prefixes = {term[:-1] if len(term) > 3 else term for term in names}
    return not any(
        names.intersection(TERMS.terms(word)) for _, word in prefixed_words(joined, prefixes)
    )


_WORD_PART = re.compile(r"[^\W_]+")
_NAME = re.compile(r"(?<!^)\b[A-Z][\w'-]*")
