"""Step 3 of the review's sameness judgment (docs/reference.md#review-step-1): whether
two facts say the same words, whatever their order, and whether their order keeps who
does what to whom.

``read_alike(a, b)`` pairs the values of two ``details.Shape`` s:

1. the same value (case, punctuation, articles, stems and the synonym table already
   made equal by ``details``);
2. one word written apart, hyphenated or closed ("front end" / "front-end" /
   "frontend", "Argo CD" / "ArgoCD");
3. one word misspelt (``typo_pair``): one letter inserted, dropped, replaced or two
   swapped, never at the first letter, never two real words ("stale" / "stable"),
   never an environment, a number, a path or an identifier;
4. what is left over must be frame words only ("called", "named", "where", "prefers" /
   "would rather", …): "The partner is called Miguel" and "The partner, Miguel, …" say
   the same.

Then the order: the paired values read as a sequence must be the same sequence once a
sentence is read in each of its equivalent forms — "X is Y" as "Y is X", "Y is owned by
X" as "X owns Y" — and after at most one phrase moved (a fronted adverbial, a clause
moved to the end, "only" or "always" anywhere). "Alice reports to Bob" and "Bob reports to
Alice" have the same words in an order no such reading explains: ``roles_swapped``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from pathlib import Path

from chalicelib.services.review.details import Shape, Token
from chalicelib.services.review.vocabulary import ENVIRONMENTS, IRREGULAR, STOP_WORDS

VOCABULARY_FILE = Path(__file__).resolve().parents[2] / "data" / "minilm-l6-vocab.txt"
FRAME_VALUES = frozenset(
    {"call", "name", "known", "where", "when", "what", "who", "there", "prefer", "rather"}
)
"""Values (stems) a rephrasing adds or drops without changing what a fact says."""
FLOATING = frozenset({"onli", "usual", "typic", "general", "often", "current"})
"""Adverbs that may stand anywhere in a sentence ("only", "usually"): they must be on
both sides, but their place is not part of the order."""
ROLE_MARKS = frozenset({"from", "to", "into", "onto", "than", "by", "'s"})
"""Marks (``details.MARKS``) that stay in the order and keep their value: "from X to Y"
is not "from Y to X", "Hana's manager" is not "Victor's manager"."""
_SPECIAL = frozenset(ENVIRONMENTS)
_PARTICLES = frozenset({"in", "on", "up", "out", "off"})
"""A closed word may end in one of these stop words written apart ("login" / "log in")."""
_MOST_JOINED = 3


@dataclass(frozen=True)
class Reading:
    """How the words of two facts pair up.

    Attributes:
        complete: every value has its partner, or is a frame word.
        same_order: the pairs read in one order (see the module docstring).
        moved: the order differs but an equivalent reading explains it.
        typos: ``(in a, in b)`` for each pair of words one misspelling apart.
        joined: ``(apart, together)`` for each word written apart on one side.
        frame: frame words only one side says ("called").
    """

    complete: bool
    same_order: bool
    moved: bool
    typos: tuple[tuple[str, str], ...]
    joined: tuple[tuple[str, str], ...]
    frame: tuple[str, ...]

    @property
    def roles_swapped(self) -> bool:
        """The same words in an order that changes who does what (see the docstring)."""
        return self.complete and not self.same_order


class _Pairing:
    """Which value of ``a`` goes with which of ``b`` (a shared id), built step by step."""

    def __init__(self, a: Shape, b: Shape) -> None:
        self.a, self.b = a, b
        self.of_a: list[int | None] = [None] * len(a.tokens)
        self.of_b: list[int | None] = [None] * len(b.tokens)
        self.typos: list[tuple[str, str]] = []
        self.joined: list[tuple[str, str]] = []
        self._next = 0

    def pair(self, i: int, js: Sequence[int], into_b: bool = True) -> None:
        """Give token ``i`` of one side and tokens ``js`` of the other one new id."""
        mine, theirs = (self.of_a, self.of_b) if into_b else (self.of_b, self.of_a)
        mine[i] = self._next
        for j in js:
            theirs[j] = self._next
        self._next += 1

    def same_values(self) -> None:
        """Step 1: the same value, first unpaired occurrence."""
        for i, token in enumerate(self.a.tokens):
            j = next(
                (
                    j
                    for j, other in enumerate(self.b.tokens)
                    if self.of_b[j] is None and other.value == token.value
                ),
                None,
            )
            if j is not None:
                self.pair(i, [j])

    def written_apart(self) -> None:
        """Step 2: one word written apart, hyphenated or closed."""
        for into_b in (True, False):
            left, right = (self.a, self.b) if into_b else (self.b, self.a)
            mine, theirs = (self.of_a, self.of_b) if into_b else (self.of_b, self.of_a)
            for i, token in enumerate(left.tokens):
                if mine[i] is not None or not _spellable(token):
                    continue
                span = _apart(token, right.tokens, theirs)
                if span is not None:
                    self.pair(i, span, into_b)
                    apart = " ".join(right.tokens[j].raw for j in span)
                    self.joined.append((apart, token.raw) if into_b else (token.raw, apart))

    def misspelt(self) -> None:
        """Step 3: one word misspelt."""
        for i, token in enumerate(self.a.tokens):
            if self.of_a[i] is not None or not _spellable(token):
                continue
            for j, other in enumerate(self.b.tokens):
                if self.of_b[j] is None and _spellable(other) and typo_pair(token, other):
                    self.pair(i, [j])
                    self.typos.append((token.raw, other.raw))
                    break

    def left_over(self) -> tuple[list[str], list[str]]:
        """The values of each side without a partner."""
        return (
            [t.value for n, t in enumerate(self.a.tokens) if self.of_a[n] is None],
            [t.value for n, t in enumerate(self.b.tokens) if self.of_b[n] is None],
        )


def read_alike(a: Shape, b: Shape) -> Reading:
    """Pair the values of ``a`` and ``b`` and read their order (the module docstring)."""
    pairing = _Pairing(a, b)
    pairing.same_values()
    pairing.written_apart()
    pairing.misspelt()
    left_a, left_b = pairing.left_over()
    frame = tuple(v for v in left_a + left_b if v in FRAME_VALUES)
    typos, joined = tuple(pairing.typos), tuple(pairing.joined)
    if len(frame) != len(left_a) + len(left_b):
        return Reading(False, False, False, typos, joined, frame)
    marks = Counter(m for _, m in _roles(a)) == Counter(m for _, m in _roles(b))
    same = _sequence(a, pairing.of_a, marks) == _sequence(b, pairing.of_b, marks)
    passive_a, passive_b = len(a.agents) > len(b.agents), len(b.agents) > len(a.agents)
    readings_a = _readings(a, pairing.of_a, marks, passive_a)
    readings_b = _readings(b, pairing.of_b, marks, passive_b)
    moved = not same and any(_one_move(x, y) for x in readings_a for y in readings_b)
    same_order = (same and not passive_a and not passive_b) or moved
    return Reading(True, same_order, moved, typos, joined, frame)


Item = int | str


def _roles(found: Shape) -> list[tuple[int, str]]:
    return [(at, word) for at, word in found.marks if word in ROLE_MARKS]


def _sequence(found: Shape, pairs: list[int | None], with_marks: bool) -> tuple[Item, ...]:
    """The pair ids in text order (one id once, floating adverbs left out), with the
    role marks between them when ``with_marks``."""
    marks = _roles(found) if with_marks else []
    items: list[Item] = []
    for n, token in enumerate(found.tokens):
        items.extend(word for at, word in marks if at == n)
        pair = pairs[n]
        if pair is None or token.value in FLOATING or token.value in FRAME_VALUES:
            continue
        if not items or items[-1] != pair:
            items.append(pair)
    items.extend(word for at, word in marks if at >= len(found.tokens))
    return tuple(items)


def _readings(
    found: Shape, pairs: list[int | None], with_marks: bool, passive: bool
) -> set[tuple[Item, ...]]:
    """The sequence, and its sides swapped at each "is" ("X is Y" as "Y is X"); a
    passive ("Y is owned by X") only as its active ("X owns Y")."""
    sequence = _sequence(found, pairs, with_marks)
    cuts = [_cut(found, pairs, at, with_marks) for at in found.copulas]
    if passive:
        result = set()
        for agent in found.agents:
            k = _cut(found, pairs, agent, with_marks)
            for c in cuts:
                if c < k:
                    after = tuple(x for x in sequence[k:] if x != "by")
                    result.add(after + sequence[c:k] + sequence[:c])
        return result
    result = {sequence}
    for at, c in zip(found.copulas, cuts, strict=True):
        if 0 < c < len(sequence) and not _verb_after(found, at):
            result.add(sequence[c:] + sequence[:c])
    return result


def _verb_after(found: Shape, at: int) -> bool:
    """The word after an "is" is a verb form ("is upgraded", "is running"): the sentence
    says what is done to its subject, and its sides do not swap."""
    if at >= len(found.tokens):
        return False
    word = found.tokens[at].raw.casefold()
    return word.endswith(("ed", "en", "ing")) or word in IRREGULAR or word in IRREGULAR.values()


def _cut(found: Shape, pairs: list[int | None], at: int, with_marks: bool) -> int:
    """The place in ``_sequence``'s output of the mark standing before token ``at``."""
    short = Shape(found.tokens[:at], (), 0, "", tuple(m for m in found.marks if m[0] < at))
    return len(_sequence(short, pairs[:at], with_marks))


def _one_move(x: tuple[Item, ...], y: tuple[Item, ...]) -> bool:
    """``y`` is ``x`` with at most one phrase moved: past their common start and end,
    what is left of one is a rotation of the other's."""
    if x == y:
        return True
    if len(x) != len(y) or _bound(x) != _bound(y):
        return False
    start = 0
    while x[start] == y[start]:
        start += 1
    end = 0
    while end < len(x) - start and x[len(x) - 1 - end] == y[len(y) - 1 - end]:
        end += 1
    middle_x, middle_y = x[start : len(x) - end], y[start : len(y) - end]
    if len(middle_x) < 2:
        return False  # two values that trade places swap roles ("X is Y's manager")
    doubled = middle_x + middle_x
    return any(doubled[n : n + len(middle_y)] == middle_y for n in range(1, len(middle_x)))


def _handle(token: Token) -> bool:
    """A short hyphenated identifier (fewer than seven letters: "bob-dev") made of words
    of three letters or more: its spelling is its identity, never the same as "bobdev".
    One whose part is a prefix or a particle ("on-call", "e-mail", "set-up") is a word."""
    if token.kind != "identifier" or "-" not in token.raw or len(_letters(token)) >= 7:
        return False
    parts = token.raw.casefold().split("-")
    return not any(len(p) < 3 or p in STOP_WORDS or p in _PARTICLES for p in parts)


def _bound(sequence: tuple[Item, ...]) -> Counter[tuple[Item, Item]]:
    """Each role mark with the value it belongs to ("Hana" before "'s", "X" after "from")."""
    pairs: Counter[tuple[Item, Item]] = Counter()
    for left, right in pairwise(sequence):
        if right == "'s" or (isinstance(left, str) and left != "'s"):
            pairs[(left, right)] += 1
    return pairs


def _spellable(token: Token) -> bool:
    return token.kind in ("word", "name", "identifier", "environment") and (
        _letters(token).isalpha()
    )


def _letters(token: Token) -> str:
    raw = token.raw.casefold()
    if raw.endswith(("'s", "\u2019s")):
        raw = raw[:-2]
    return "".join(c for c in raw if c.isalnum())


def _apart(token: Token, tokens: tuple[Token, ...], pairs: list[int | None]) -> list[int] | None:
    """The run of unpaired ``tokens`` that spells ``token`` another way, or None: a word
    written closed against two or three written apart ("frontend" / "front end", "login"
    / "log in"), or a hyphenated word against its parts ("point-of-contact" / "point of
    contact"; never a short hyphenated identifier, ``_handle``)."""
    raw = token.raw.casefold()
    if "-" in raw:
        parts = [part for part in raw.split("-") if part and part not in STOP_WORDS]
        for start in range(len(tokens) - len(parts) + 1):
            span = list(range(start, start + len(parts)))
            if all(
                pairs[j] is None and _letters(tokens[j]) == part
                for j, part in zip(span, parts, strict=True)
            ):
                return span
    closed = _letters(token)
    if _handle(token):
        return None
    for start in range(len(tokens)):
        joined = ""
        for end in range(start, min(start + _MOST_JOINED, len(tokens))):
            if pairs[end] is not None or not _spellable(tokens[end]) or _handle(tokens[end]):
                break
            joined += _letters(tokens[end])
            rest = closed[len(joined) :] if closed.startswith(joined) else None
            whole = joined == closed or rest in _PARTICLES
            if whole and (end > start or tokens[end].raw.casefold() != closed):
                return list(range(start, end + 1))
            if rest is None:
                break
    return None


@lru_cache(maxsize=1)
def vocabulary() -> frozenset[str]:
    """The embedder's whole-word vocabulary (lower case): what counts as a real word."""
    words = VOCABULARY_FILE.read_text(encoding="utf-8").split()
    return frozenset(word for word in words if word.isalpha() and word.islower())


def edits(x: str, y: str) -> tuple[int, str]:
    """The restricted Damerau-Levenshtein distance of ``x`` and ``y`` and, when it is 1,
    which edit (``insert``, ``delete``, ``substitute``, ``swap``; else ``""``)."""
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


def typo_pair(first: Token, second: Token) -> bool:
    """Whether two words are one word, one of them misspelt: the same first letter, not
    two real words (in the embedder's vocabulary), not an environment; one real word
    and one letter inserted, dropped or swapped (replaced: in a word of seven letters or
    more; two edits: six or more); or neither real, one
    letter inserted, dropped or swapped in a word of five letters or more (a lower-case
    word may also have one letter replaced)."""
    x, y = _letters(first), _letters(second)
    if x == y or min(len(x), len(y)) < 4 or x[0] != y[0]:
        return False
    if x in _SPECIAL and y in _SPECIAL:
        return False  # two environments ("prod", "dev") are two values
    known = vocabulary()
    real_x, real_y = x in known, y in known
    if real_x and real_y:
        return False
    distance, edit = edits(x, y)
    if real_x or real_y:
        if distance == 1 and edit == "substitute":
            return min(len(x), len(y)) >= 7  # "linter" / "linker": another word
        return distance == 1 or (distance == 2 and min(len(x), len(y)) >= 6)
    if distance != 1 or min(len(x), len(y)) < 5:
        return False
    if edit == "substitute":
        return first.kind == second.kind == "word" and min(len(x), len(y)) >= 7
    return True
