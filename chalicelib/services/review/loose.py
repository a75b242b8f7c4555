"""Duplicates a person would call duplicates although their words differ
(docs/reference.md#review-step-2, docs/issues.md#issue-26-item-1): the review's "same facts"
rule (``sameness.compare``) also answers ``duplicate`` for two facts of the same polarity
that are

* **the same text but for formatting**: case, spacing, hyphens, punctuation, articles, or
  a filler that adds nothing ("FYI:", "Heads up:", "Just so you know,", "Note that", …);
* **the same words but for one misspelt word** (``typo_pair``): one letter inserted,
  dropped, replaced or two swapped, where the other word is a real word (in the
  embedder's vocabulary) and the misspelt one is not, or, when neither is, only an
  insertion, a deletion or a swap in a long word; never two real words ("east"/"west",
  "stable"/"staple"), never a change at the word's first letter ("synchronous" /
  "asynchronous"), never numbers, paths or identifiers that differ;
* **the same content in another frame** (``reframed``): the same values once the words
  of a frame ("is … by", "in", "'s name", "called", "would rather … than") are set
  aside, the other words all shared, details of each kind in the same order, and the
  frame words changed: the same words in another order ("Alice reports to Bob" / "Bob
  reports to Alice") are not a duplicate, because order carries meaning there.

A misspelt or reframed pair must also mean the same by its sentence embeddings when
both have one (``TYPO_MEANING``, ``sameness.DUPLICATE_MEANING``).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from functools import lru_cache
from pathlib import Path

from chalicelib.services.review.details import Shape, shape, stem
from chalicelib.services.review.vocabulary import ENVIRONMENTS

VOCABULARY_FILE = Path(__file__).resolve().parents[2] / "data" / "minilm-l6-vocab.txt"
TYPO_MEANING = 0.6
"""Cosine a pair differing in one misspelt word must reach (the misspelling moves the
embedding; bench/review_quality.py)."""
_ARTICLES = frozenset({"the", "a", "an"})
_SPECIAL = frozenset(ENVIRONMENTS)
_FRAME_WORDS = frozenset(
    """is are was were be been being by in at on of for from s called call named name
    known as the a an that which its it prefer prefers would have has rather than instead
    over""".split()  # noqa: SIM905
)
"""Words a rephrasing adds or drops without changing what a fact says."""
_FRAME_VALUES = frozenset({"call", "name", "known", "prefer", "rather", "instead"})
"""Values (stems) a frame carries: set aside when two facts' values are compared."""
_PHRASES = (
    r"fyi|for your information|heads[\s-]*up|just so you know|just a heads[\s-]*up"
    r"|as a heads[\s-]*up|keep in mind(?: that)?|note that|please note(?: that)?"
    r"|just a reminder|friendly reminder|psa|btw|by the way|n\.?b\.?"
)
_FILLER_PREFIX = re.compile(
    rf"^\s*(?:(?:{_PHRASES})\b|(?:remember|reminder|note|important|update)(?=\s*[:,\-\u2013\u2014]))"
    r"[\s,:;.!\-\u2013\u2014]*",
    re.IGNORECASE,
)
_FILLER_SUFFIX = re.compile(
    r"[\s,;:.\-\u2013\u2014(]*\b(?:fyi|btw|just so you know|as a heads[\s-]*up)\b[\s).!]*$",
    re.IGNORECASE,
)


def without_filler(text: str) -> str:
    """``text`` without a leading or trailing filler that adds nothing ("FYI:", "Heads up:",
    "Just so you know,", "Note that", "… btw"); the text itself when nothing else is left."""
    stripped = text
    for _ in range(2):
        shorter = _FILLER_PREFIX.sub("", stripped, count=1)
        if shorter == stripped:
            break
        stripped = shorter
    stripped = _FILLER_SUFFIX.sub("", stripped)
    return stripped if re.search(r"\w", stripped) else text


_COMPOUND_HEADS = frozenset(
    """auto re pre non multi co sub self cross back up down set log sign read write check
    look roll fail hand time over on off in out e web data key pass work under inter
    micro hot cold""".split()  # noqa: SIM905
)
_COMPOUND_TAILS = frozenset(
    """up in out on off over back down only time line based side wide free less like
    ware point base case book box""".split()  # noqa: SIM905
)
"""Parts of English compounds written closed, hyphenated or open ("auto-scales",
"autoscales", "log in", "login", "read-only", "readonly"); a join of other words ("bob-dev"
/ "bobdev", a handle) is not taken for the same word."""


def same_words(a: str, b: str) -> bool:
    """``a`` and ``b`` say the same words but for case, spacing, hyphens, punctuation,
    articles and fillers, and for compounds written closed on one side and hyphenated or
    open on the other (``_COMPOUND_HEADS``, ``_COMPOUND_TAILS``)."""
    if not letters(a) or letters(a) != letters(b):
        return False
    words_a = [word for word in _words(a) if word not in _ARTICLES]
    words_b = [word for word in _words(b) if word not in _ARTICLES]
    i = j = 0
    while i < len(words_a) and j < len(words_b):
        if words_a[i] == words_b[j]:
            i, j = i + 1, j + 1
            continue
        step = _compound(words_a, i, words_b[j]) or _compound(words_b, j, words_a[i])
        if step is None:
            return False
        if len(words_a[i]) < len(words_b[j]):
            i += step
            j += 1
        else:
            j += step
            i += 1
    return i == len(words_a) and j == len(words_b)


def _compound(words: list[str], start: int, closed: str) -> int | None:
    """How many of ``words`` from ``start`` spell ``closed`` as a compound, or None."""
    joined = ""
    for count, word in enumerate(words[start:], start=1):
        joined += word
        if joined == closed and count > 1:
            parts = words[start : start + count]
            return count if parts[0] in _COMPOUND_HEADS or parts[-1] in _COMPOUND_TAILS else None
        if not closed.startswith(joined):
            return None
    return None


@lru_cache(maxsize=65536)
def letters(text: str) -> str:
    """The text's letters and digits only, case-folded, without fillers and articles:
    equal for two texts that differ only in case, spacing, hyphens or punctuation."""
    words = _words(text)
    return "".join(word for word in words if word not in _ARTICLES)


def _words(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKC", without_filler(text)).casefold()
    folded = re.sub(r"[\u2019']s\b", " s", folded)
    return re.findall(r"[^\W_]+", folded)


@lru_cache(maxsize=1)
def vocabulary() -> frozenset[str]:
    """The embedder's whole-word vocabulary (lower case): what counts as a real word."""
    words = VOCABULARY_FILE.read_text(encoding="utf-8").split()
    return frozenset(word for word in words if word.isalpha() and word.islower())


def edits(x: str, y: str) -> tuple[int, str]:
    """The restricted Damerau-Levenshtein distance of ``x`` and ``y`` (insertions,
    deletions, substitutions, swaps of two neighbours) and, when it is 1, which edit
    (``insert``, ``delete``, ``substitute``, ``swap``; else ``""``)."""
    rows = [list(range(len(y) + 1))]
    for i in range(1, len(x) + 1):
        row = [i] + [0] * len(y)
        for j in range(1, len(y) + 1):
            cost = 0 if x[i - 1] == y[j - 1] else 1
            row[j] = min(rows[i - 1][j] + 1, row[j - 1] + 1, rows[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and x[i - 1] == y[j - 2] and x[i - 2] == y[j - 1]:
                row[j] = min(row[j], rows[i - 2][j - 2] + 1)
        rows.append(row)
    distance = rows[len(x)][len(y)]
    if distance != 1:
        return distance, ""
    if len(x) != len(y):
        return 1, "insert" if len(y) > len(x) else "delete"
    differ = [n for n in range(len(x)) if x[n] != y[n]]
    return 1, "swap" if len(differ) == 2 else "substitute"


def typo_pair(x: str, y: str) -> bool:
    """Whether ``x`` and ``y`` (lower-case words) are one word, one of them misspelt (see
    the module docstring)."""
    if x == y or not (x.isalpha() and y.isalpha()) or min(len(x), len(y)) < 4:
        return False
    if _SPECIAL.intersection((x, y)):
        return False  # an environment ("prod", "dev") is a value, never a misspelling
    if x[0] != y[0]:
        # a letter added or changed at the front makes another word more often than a
        # misspelling: "synchronous" / "asynchronous", "east" / "west"
        return False
    known = vocabulary()
    real_x, real_y = x in known, y in known
    if real_x and real_y:
        return False
    distance, edit = edits(x, y)
    if real_x or real_y:
        return distance == 1 or (distance == 2 and min(len(x), len(y)) >= 8)
    return distance == 1 and edit != "substitute" and min(len(x), len(y)) >= 6


def misspelt(a: str, b: str) -> bool:
    """The same words but one misspelt one (articles and fillers aside); a word inside a
    path, an identifier, a URL or a number is never taken for a misspelling."""
    chunks_a, chunks_b = _chunks(a), _chunks(b)
    if len(chunks_a) != len(chunks_b):
        return False
    differ = [(x, y) for x, y in zip(chunks_a, chunks_b, strict=True) if x != y]
    return len(differ) == 1 and typo_pair(*differ[0])


def _chunks(text: str) -> list[str]:
    """The text's whitespace-separated pieces, case-folded, outer punctuation stripped,
    articles and fillers left out."""
    folded = unicodedata.normalize("NFKC", without_filler(text)).casefold()
    pieces = (piece.strip(".,;:!?()[]{}\"'\u201c\u201d\u2018\u2019") for piece in folded.split())
    return [piece for piece in pieces if piece and piece not in _ARTICLES]


def reframed(a: str, b: str) -> bool:
    """The same content in another frame, or with a phrase moved from the front to the end
    (see the module docstring)."""
    stems_a, stems_b = Counter(_stems(a)), Counter(_stems(b))
    changed = (stems_a - stems_b) + (stems_b - stems_a)
    if not changed and not _rotation(_stems(a), _stems(b)):
        return False
    if any(word not in _FRAME_WORDS for word in changed.elements()):
        return False
    shape_a, shape_b = shape(without_filler(a)), shape(without_filler(b))
    if shape_a.negations != shape_b.negations or sorted(shape_a.quoted) != sorted(shape_b.quoted):
        return False
    if _content(shape_a) != _content(shape_b):
        return False
    if "by" in changed:
        # a passive turns "X owns Y" into "Y is owned by X": the order must change with
        # it, or the roles swapped ("Alice is managed by Bob" / "Alice manages Bob")
        plain_a = [word for word in _stems(a) if word not in _FRAME_WORDS]
        plain_b = [word for word in _stems(b) if word not in _FRAME_WORDS]
        return plain_a != plain_b
    return _kind_orders(shape_a) == _kind_orders(shape_b)


def roles_swapped(a: str, b: str) -> bool:
    """The same words with their roles swapped, which a duplicate never has: the same
    words in another order that is not a phrase moved from the end to the front ("Alice
    reports to Bob" / "Bob reports to Alice", "deploy api before worker" / "deploy worker
    before api"), or a passive that kept the order ("Alice is managed by Bob" / "Alice
    manages Bob")."""
    stems_a, stems_b = _stems(a), _stems(b)
    plain_a = [word for word in stems_a if word not in _FRAME_WORDS]
    plain_b = [word for word in stems_b if word not in _FRAME_WORDS]
    changed = (Counter(stems_a) - Counter(stems_b)) + (Counter(stems_b) - Counter(stems_a))
    if not changed:
        # a phrase moved from the end to the front ("Every night the warehouse is loaded")
        # keeps the roles; two words that trade places do not
        return stems_a != stems_b and not _rotation(stems_a, stems_b)
    passive = "by" in changed and all(word in _FRAME_WORDS for word in changed.elements())
    return passive and plain_a == plain_b


def _rotation(a: list[str], b: list[str]) -> bool:
    """``b`` is ``a`` with a leading part moved to the end (or the other way round)."""
    return len(a) == len(b) and any(a[n:] + a[:n] == b for n in range(1, len(a)))


def _stems(text: str) -> list[str]:
    return [
        stem(_IRREGULAR.get(word, word)) if word not in _FRAME_WORDS else word
        for word in _words(text)
    ]


_IRREGULAR = {
    "built": "build",
    "ran": "run",
    "written": "write",
    "wrote": "write",
    "made": "make",
    "kept": "keep",
    "sent": "send",
    "held": "hold",
    "led": "lead",
    "paid": "pay",
    "taken": "take",
    "took": "take",
    "given": "give",
    "gave": "give",
    "shown": "show",
    "driven": "drive",
    "drove": "drive",
    "chosen": "choose",
    "chose": "choose",
    "seen": "see",
    "saw": "see",
    "spent": "spend",
    "bought": "buy",
    "brought": "bring",
    "found": "find",
    "told": "tell",
    "sold": "sell",
    "caught": "catch",
    "begun": "begin",
    "began": "begin",
    "done": "do",
    "did": "do",
    "got": "get",
    "gotten": "get",
    "hidden": "hide",
    "hid": "hide",
    "understood": "understand",
    "won": "win",
}
"""Irregular past forms, so a passive ("built by Jenkins") meets its active ("Jenkins
builds")."""


def _content(found: Shape) -> Counter[str]:
    return Counter(
        stem(_IRREGULAR.get(value, value)) for value in found.values if value not in _FRAME_VALUES
    )


def _kind_orders(found: Shape) -> dict[str, list[str]]:
    """Each detail kind's values in text order (plain words and names may move: a name
    at a sentence's start reads as a plain word)."""
    orders: dict[str, list[str]] = {}
    for token in found.tokens:
        if token.kind not in ("word", "name") and token.value not in _FRAME_VALUES:
            orders.setdefault(token.kind, []).append(token.value)
    return orders
