"""Recall relevance scoring (docs/reference.md#8-recall): the pluggable ``Scorer`` and the default
lexical one.

``LexicalScorer`` is a BM25-style scorer in pure Python: no network, no model files, no
third-party code, so it runs inside the Lambda within recall's time budget. Its scores
are calibrated on the recall benchmark's development half
(docs/reference.md#recall-benchmark) so that the docs/reference.md#8-recall
cut-off of 0.5 means "probably useful"; ``bench/recall_quality_lexical.py`` measures it.
"""

import math
import re
from collections.abc import Sequence
from itertools import chain
from typing import Protocol

# Function words and question scaffolding ("what kind of", "describe") that carry no
# topic. Checked against the lower-cased surface word, before stemming.
# fmt: off
STOP_WORDS = frozenset((
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any",
    "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both",
    "but", "by", "can", "could", "d", "describe", "did", "do", "does", "doing", "done", "down",
    "during", "each", "ever", "few", "for", "from", "further", "had", "has", "have", "having",
    "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in",
    "into", "is", "it", "its", "itself", "just", "kind", "ll", "m", "many", "me", "mention",
    "mentioned", "more", "most", "much", "my", "myself", "no", "nor", "not", "now", "of", "off",
    "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "re",
    "s", "same", "she", "should", "so", "some", "sort", "such", "t", "than", "that", "the",
    "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those",
    "through", "to", "too", "type", "under", "until", "up", "us", "ve", "very", "was", "we",
    "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with",
    "would", "you", "your", "yours", "yourself", "yourselves",
))
# fmt: on

# Common irregular forms the suffix rules cannot reach, mapped to their base form.
# fmt: off
_IRREGULAR = {
    "ate": "eat", "became": "become", "began": "begin", "begun": "begin", "bought": "buy",
    "broke": "break", "broken": "break", "brought": "bring", "built": "build", "came": "come",
    "caught": "catch", "children": "child", "chose": "choose", "chosen": "choose",
    "drawn": "draw", "drew": "draw", "driven": "drive", "drove": "drive", "dying": "die",
    "eaten": "eat", "fallen": "fall", "feet": "foot", "fell": "fall", "felt": "feel",
    "flew": "fly", "flown": "fly", "fought": "fight", "found": "find", "gave": "give",
    "given": "give", "goes": "go", "gone": "go", "got": "get", "gotten": "get", "grew": "grow",
    "grown": "grow", "heard": "hear", "held": "hold", "kept": "keep", "knew": "know",
    "known": "know", "led": "lead", "left": "leave", "lost": "lose", "lying": "lie",
    "made": "make", "men": "man", "met": "meet", "paid": "pay", "people": "person", "ran": "run",
    "ridden": "ride", "rode": "ride", "said": "say", "sang": "sing", "saw": "see", "seen": "see",
    "sent": "send", "slept": "sleep", "sold": "sell", "spent": "spend", "spoke": "speak",
    "spoken": "speak", "stood": "stand", "sung": "sing", "swam": "swim", "taken": "take",
    "taught": "teach", "thought": "think", "told": "tell", "took": "take", "tying": "tie",
    "understood": "understand", "went": "go", "women": "woman", "won": "win", "wore": "wear",
    "worn": "wear", "written": "write", "wrote": "write",
}
# fmt: on

# Documents are split into runs of word characters (``\w+``, one fast C call per text);
# each distinct run then becomes its terms once, through a cache. Within a run, "_"
# separates parts and so does a camelCase hump (``parseHeaderLinks``, ``HTTPServer``):
# an identifier matches its pieces, and the whole identifier, lower-cased, is one more
# term, so a question naming it exactly finds it first. Han ideographs, hiragana and
# katakana, written without spaces, are one term per character (as Lucene's
# StandardTokenizer does). A dotted path (``requests.utils.quote``) is three runs.
_WORD_PATTERN = r"\w+"
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_PART_PATTERN = f"[{_CJK}]|[^\\W_{_CJK}]+"
_HUMP = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
"""Where a camelCase part starts: a capital after a small letter, or the last capital
of a run of capitals followed by a small letter (``HTTPServer``)."""

_VOWELS = frozenset("aeiouy")
_TERM_CACHE_LIMIT = 200_000
# A term's match is mostly min(1, bm25_tf), so one occurrence in a document of average
# length counts in full; a small share of bm25_tf / (k1 + 1), which keeps growing with
# tf and shrinking with length, orders documents that cover the same terms.
_SMOOTH_SHARE = 0.1
_CAPPED_SHARE = 1.0 - _SMOOTH_SHARE


class Scorer(Protocol):
    """Relevance of stored facts to a recall query (docs/reference.md#8-recall); pluggable."""

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        """Relevance of each document to the query, each in [0, 1]; same order as documents.

        Args:
            query: The task text or conversation message (at most 4,000 chars,
                docs/reference.md#5-limits).
            documents: The fact texts to score.

        Returns:
            One score per document, in ``documents`` order; 0.5 and above means
            "probably useful" (the docs/reference.md#8-recall cut-off).
        """
        ...


def stem(word: str) -> str:
    """Reduce a lower-case word to a light English stem.

    Strips plural and verb endings (``s``, ``es``, ``ies``, ``ed``, ``ing``), ``ly`` on
    longer adverbs and a final ``e``, undoubles a consonant left by ``ing``/``ed``
    ("running" -> "run") and maps common irregular forms ("ran" -> "run"). The stem is
    only a matching key: "deploys", "deployed" and "deploying" all give "deploy";
    "made", "make" and "making" all give "mak". Three-letter words only lose a final
    ``e`` or ``y`` ("use" -> "us", "try" -> "tri"); shorter words, and words that are
    not plain ASCII letters, are returned unchanged.

    Args:
        word: One lower-case word.

    Returns:
        The stem (never empty).
    """
    word = _IRREGULAR.get(word, word)
    if len(word) <= 2 or not (word.isascii() and word.isalpha()):
        return word
    base = _strip_suffix(word) if len(word) > 3 else word
    if len(base) > 2 and base[-1] == "e":
        # "hope", "hoped", "hoping" and "hopes" meet at "hop".
        base = base[:-1]
    elif len(base) > 2 and base[-1] == "y" and base[-2] not in _VOWELS:
        # "study", "studies" and "studied" meet at "studi".
        base = base[:-1] + "i"
    return base


def _strip_suffix(word: str) -> str:
    """Remove at most one inflectional suffix from ``word`` (see ``stem``)."""
    if word.endswith(("ies", "ied")):
        return word[:-2] if len(word) > 4 else word[:-1]
    if word.endswith("sses") or word.endswith(("ches", "shes", "xes", "zes")):
        return word[:-2]
    if word.endswith("ses"):
        return word[:-1]
    if word.endswith("s"):
        return word if word.endswith(("ss", "us", "is")) else word[:-1]
    if word.endswith("ing"):
        return _strip_verb_ending(word, 3)
    if word.endswith("ed") and not word.endswith("eed"):
        return _strip_verb_ending(word, 2)
    if word.endswith("ly") and len(word) >= 7 and not word.endswith("ily"):
        return word[:-2]
    return word


def _strip_verb_ending(word: str, size: int) -> str:
    """Drop an ``ing``/``ed`` ending when what is left still has a vowel."""
    base = word[:-size]
    if len(base) < 2 or _VOWELS.isdisjoint(base):
        return word
    if len(base) >= 4 and base[-1] == base[-2] and base[-1] not in "aeioulsz":
        return base[:-1]
    return base


class LexicalScorer:
    """BM25-style lexical relevance mapped to [0, 1] (the default docs/reference.md#8-recall
    scorer).

    Terms are lower-cased, stemmed words without stop words. Each distinct query term
    gets the BM25 IDF over the documents being scored, ``ln(1 + (N - df + 0.5) / (df +
    0.5))``; a term found in no document gets the largest IDF (``df = 0``), so words the
    store has never seen count against every document. A document's raw score is its
    weighted coverage of the query: the sum over matched terms of ``idf * match``
    divided by the sum of the ``coverage_terms`` largest IDFs of the query (capped at 1).
    ``match`` is ``0.9 * min(1, bm25_tf) + 0.1 * bm25_tf / (k1 + 1)`` with ``bm25_tf =
    tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average_length))`` (lengths in
    words), so one occurrence in an average-length document counts almost in full and
    the small uncapped share orders documents that cover the same terms. Capping the
    divisor at a few terms keeps a long task text from diluting every score. Finally a
    piecewise-linear map sends raw ``useful_coverage`` to 0.5 (and 0 to 0, 1 to 1):
    the ranking is the coverage ranking, and 0.5 is the cut-off calibrated on the
    recall benchmark (``bench/recall_quality_lexical.py``).

    Not thread-safe (the word -> terms cache is per instance); use one per thread.
    """

    def __init__(
        self,
        *,
        k1: float = 1.2,
        b: float = 0.75,
        coverage_terms: int = 6,
        useful_coverage: float = 0.1,
    ) -> None:
        """Configure the scorer; nothing is compiled or cached until the first ``score``.

        Args:
            k1: BM25 term-frequency saturation, > 0.
            b: BM25 length normalisation, in [0, 1].
            coverage_terms: how many of the query's highest-IDF terms make a full match
                (raw coverage 1.0), >= 1.
            useful_coverage: the raw coverage, in (0, 1), that maps to the 0.5 cut-off;
                calibrated on the recall benchmark (docs/reference.md#8-recall).

        Raises:
            ValueError: when a parameter is outside its range.
        """
        if k1 <= 0 or not 0 <= b <= 1 or coverage_terms < 1 or not 0 < useful_coverage < 1:
            raise ValueError(
                "need k1 > 0, 0 <= b <= 1, coverage_terms >= 1, 0 < useful_coverage < 1"
            )
        self._k1 = k1
        self._b = b
        self._coverage_terms = coverage_terms
        self._useful_coverage = useful_coverage
        self._words: re.Pattern[str] | None = None
        self._parts: re.Pattern[str] | None = None
        self._terms_of: dict[str, tuple[str, ...]] = {}
        self._words_with: dict[str, set[str]] = {}

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        """Relevance of each document to the query, each in [0, 1]; same order as documents.

        Args:
            query: The task text or conversation message (docs/reference.md#8-recall).
            documents: The fact texts to score (any number; IDF is computed over them).

        Returns:
            One score per document in ``documents`` order, in [0, 1]; >= 0.5 means
            "probably useful" (docs/reference.md#8-recall). All zeros when the query has no terms
            (empty, or only stop words) or shares none with the documents; ``[]`` for no documents.
        """
        if not documents:
            return []
        zeros = [0.0] * len(documents)
        query_terms = set(self.terms(query))
        if not query_terms:
            return zeros
        find_words = self._word_pattern().findall
        words_by_document = [find_words(text) for text in documents]
        matching = self._matching_words(words_by_document, query_terms)
        if not matching:
            return zeros
        matching_words = frozenset(matching)
        term_counts = [
            _count_terms(words, matching) if not matching_words.isdisjoint(words) else {}
            for words in words_by_document
        ]
        idf = _idf(query_terms, term_counts)
        full_match = sum(sorted(idf.values(), reverse=True)[: self._coverage_terms])
        average_length = sum(map(len, words_by_document)) / len(documents) or 1.0
        return [
            self._calibrate(self._coverage(counts, len(words), average_length, idf) / full_match)
            if counts
            else 0.0
            for words, counts in zip(words_by_document, term_counts, strict=True)
        ]

    def terms(self, text: str) -> list[str]:
        """The terms the scorer matches on: lower-cased, stemmed, stop words dropped.

        An identifier (a ``\\w+`` run with "_" or a camelCase hump) gives its parts'
        terms, then the whole run lower-cased as one more term (``word_terms``).

        Args:
            text: Any text.

        Returns:
            The terms in text order, repeats kept (a Han or kana character is one term).
        """
        words = self._word_pattern().findall(text)
        terms_of = self._cache_terms(set(words))
        return [term for word in words for term in terms_of[word]]

    def _word_pattern(self) -> re.Pattern[str]:
        """The compiled ``\\w+`` pattern, compiled on first use."""
        if self._words is None:
            self._words = re.compile(_WORD_PATTERN)
        return self._words

    def _cache_terms(self, words: set[str]) -> dict[str, tuple[str, ...]]:
        """Fill the word -> terms cache (and its inverse) for ``words``; return the cache."""
        terms_of = self._terms_of
        missing = words.difference(terms_of)
        if len(terms_of) + len(missing) > _TERM_CACHE_LIMIT:
            terms_of.clear()
            self._words_with.clear()
            missing = words
        words_with = self._words_with
        hump = _HUMP.search
        for word in missing:
            if word.isascii() and "_" not in word and (word.islower() or not hump(word)):
                # The common case, kept inline: this loop runs once per new word.
                lower = word.lower()
                if lower in STOP_WORDS:
                    terms_of[word] = ()
                    continue
                term = stem(lower)
                terms_of[word] = (term,)
                words_with.setdefault(term, set()).add(word)
                continue
            terms = self.word_terms(word)
            terms_of[word] = terms
            for term in terms:
                words_with.setdefault(term, set()).add(word)
        return terms_of

    def word_terms(self, word: str) -> tuple[str, ...]:
        """The terms of one ``\\w+`` run (any case), as ``terms`` gives them.

        The run is cut into parts at "_", at camelCase humps (``_HUMP``) and around
        each Han or kana character; each part, lower-cased, is dropped when a stop word
        and stemmed otherwise. A run of two or more parts without Han or kana (an
        identifier: ``parse_header_links``, ``getUserId``) also gives the whole run,
        lower-cased and stemmed, as its last term. Examples: ``parse_header_links`` ->
        ``("pars", "header", "link", "parse_header_links")``; ``HTTPServer`` ->
        ``("http", "server", "httpserver")``; ``Deploys`` -> ``("deploy",)``.

        Args:
            word: One ``\\w+`` run.

        Returns:
            Its terms (empty for a stop word).
        """
        if self._parts is None:
            self._parts = re.compile(_PART_PATTERN)
        pieces = [
            piece for part in self._parts.findall(word) for piece in _HUMP.split(part) if piece
        ]
        terms = [
            stem(lower) for lower in (piece.lower() for piece in pieces) if lower not in STOP_WORDS
        ]
        if len(pieces) > 1 and not any(len(piece) == 1 and not piece.isascii() for piece in pieces):
            terms.append(stem(word.lower()))
        return tuple(terms)

    def _matching_words(
        self, words_by_document: list[list[str]], query_terms: set[str]
    ) -> dict[str, tuple[str, ...]]:
        """Map each distinct document word that holds a query term to those query terms."""
        vocabulary = set(chain.from_iterable(words_by_document))
        terms_of = self._cache_terms(vocabulary)
        found: set[str] = set()
        for term in query_terms:
            found.update(self._words_with.get(term, set()) & vocabulary)
        return {
            word: tuple(term for term in terms_of[word] if term in query_terms) for word in found
        }

    def _coverage(
        self, counts: dict[str, int], length: int, average_length: float, idf: dict[str, float]
    ) -> float:
        """Sum over the query terms in one document of ``idf * match`` (see the class doc)."""
        k1 = self._k1
        norm = k1 * (1.0 - self._b + self._b * length / average_length)
        total = 0.0
        for term, tf in counts.items():
            saturated = tf * (k1 + 1.0) / (tf + norm)
            total += idf[term] * (
                _CAPPED_SHARE * min(1.0, saturated) + _SMOOTH_SHARE * saturated / (k1 + 1.0)
            )
        return total

    def _calibrate(self, coverage: float) -> float:
        """Map raw coverage in [0, 1] to a score with ``useful_coverage`` at 0.5."""
        cut = self._useful_coverage
        if coverage >= cut:
            return min(1.0, 0.5 + 0.5 * (coverage - cut) / (1.0 - cut))
        return 0.5 * coverage / cut


def _count_terms(words: list[str], matching: dict[str, tuple[str, ...]]) -> dict[str, int]:
    """Occurrences of each query term among one document's words."""
    counts: dict[str, int] = {}
    for word in words:
        for term in matching.get(word, ()):
            counts[term] = counts.get(term, 0) + 1
    return counts


def _idf(query_terms: set[str], term_counts: list[dict[str, int]]) -> dict[str, float]:
    """BM25 IDF, ``ln(1 + (N - df + 0.5) / (df + 0.5))``, of each query term (df may be 0)."""
    document_frequency = dict.fromkeys(query_terms, 0)
    for counts in term_counts:
        for term in counts:
            document_frequency[term] += 1
    total = len(term_counts)
    return {
        term: math.log(1.0 + (total - df + 0.5) / (df + 0.5))
        for term, df in document_frequency.items()
    }
