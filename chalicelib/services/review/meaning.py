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
Alice" have the same words in an order no such reading explains, two values of one kind
trading places: ``roles_swapped``. An order no reading explains that is not such an
exchange ("The fleet has 8 nodes" / "There are 8 nodes in the fleet": a count and a thing
trade places) is ``reordered``: neither the same fact nor a contradiction.
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
QUANTITY_KINDS = frozenset({"number", "date", "time"})
"""Kinds of value that say how many, when or how much: a phrase holding one never trades
places with a phrase holding none in a role swap (``_exchange``)."""


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
        exchanged: the order differs as two phrases of one kind trading places ("Alice
            reports to Bob" / "Bob reports to Alice"), which no equivalent reading explains.
    """

    complete: bool
    same_order: bool
    moved: bool
    typos: tuple[tuple[str, str], ...]
    joined: tuple[tuple[str, str], ...]
    frame: tuple[str, ...]
    exchanged: bool = False

    @property
    def roles_swapped(self) -> bool:
        """The same words in an order that changes who does what (see the docstring)."""
        return self.complete and not self.same_order and self.exchanged

    @property
    def reordered(self) -> bool:
        """The same words in an order no reading explains and no exchange of two values of
        one kind makes: a rephrasing the rules cannot read, never a contradiction."""
        return self.complete and not self.same_order and not self.exchanged


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
    # a frame word paired with its partner (itself, or misspelt: "prefers" / "perfers")
    # stands outside the order on both sides
    framed = {
        pair
        for side, pairs in ((a, pairing.of_a), (b, pairing.of_b))
        for token, pair in zip(side.tokens, pairs, strict=True)
        if pair is not None and token.value in FRAME_VALUES
    }
    of_a = [None if pair in framed else pair for pair in pairing.of_a]
    of_b = [None if pair in framed else pair for pair in pairing.of_b]
    marks = Counter(m for _, m in _roles(a)) == Counter(m for _, m in _roles(b))
    same = _sequence(a, of_a, marks) == _sequence(b, of_b, marks)
    passive_a, passive_b = len(a.agents) > len(b.agents), len(b.agents) > len(a.agents)
    readings_a = _readings(a, of_a, marks, passive_a)
    readings_b = _readings(b, of_b, marks, passive_b)
    moved = not same and any(_one_move(x, y) for x in readings_a for y in readings_b)
    same_order = (same and not passive_a and not passive_b) or moved
    quantities = {
        pair
        for token, pair in zip(a.tokens, of_a, strict=True)
        if pair is not None and token.kind in QUANTITY_KINDS
    }
    exchanged = not same_order and any(
        _exchange(x, y, quantities)
        for x in readings_a | {_sequence(a, of_a, marks)}
        for y in readings_b | {_sequence(b, of_b, marks)}
    )
    return Reading(True, same_order, moved, typos, joined, frame, exchanged)


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


def shared_order_kept(a: Shape, b: Shape) -> bool:
    """Whether the values both facts hold come in one order, or in orders one moved
    phrase explains ("In the morning the user drinks tea" / "The user drinks coffee in
    the morning"). Two facts that differ in a word *and* whose shared values are shuffled
    past that are a rephrasing step 3 cannot read, not one attribute with two values."""
    ids = {value: n for n, value in enumerate(sorted(set(a.values) & set(b.values)))}
    order_a = tuple(dict.fromkeys(ids[v] for v in a.values if v in ids))
    order_b = tuple(dict.fromkeys(ids[v] for v in b.values if v in ids))
    return _one_move(order_a, order_b)


def _exchange(x: tuple[Item, ...], y: tuple[Item, ...], quantities: set[int]) -> bool:
    """``y`` is ``x`` with two phrases trading places (past their common start and end,
    ``x`` reads A M B and ``y`` reads B M A), both holding a quantity or neither: two people,
    two services, two ports trade roles; a count and a thing do not."""
    if len(x) != len(y) or x == y:
        return False
    start = 0
    while x[start] == y[start]:
        start += 1
    end = 0
    while x[len(x) - 1 - end] == y[len(y) - 1 - end]:
        end += 1
    middle_x, middle_y = x[start : len(x) - end], y[start : len(y) - end]
    size = len(middle_x)
    for left in range(1, size):
        for right in range(1, size - left + 1):
            first, between, last = (
                middle_x[:left],
                middle_x[left : size - right],
                middle_x[size - right :],
            )
            if middle_y == last + between + first and _counts(first, quantities) == _counts(
                last, quantities
            ):
                return True
    return False


def _counts(phrase: tuple[Item, ...], quantities: set[int]) -> bool:
    """Whether a phrase of pair ids holds a quantity (a number, a date, a time)."""
    return any(item in quantities for item in phrase if isinstance(item, int))


def _real(word: str, known: frozenset[str]) -> bool:
    """A word of the vocabulary, or one with a regular ending added to a word of it:
    "approves", "pushes", "approved", "deployed" (never an ending English would not
    write there: "acess" is not "aces" + "s")."""
    if word in known:
        return True
    stem = word[:-1]
    if word.endswith("s") and not stem.endswith("s") and stem in known:
        return True
    if word.endswith("es") and word[:-2].endswith(("s", "x", "z", "ch", "sh")):
        return word[:-2] in known
    if word.endswith("d") and stem.endswith("e") and stem in known:
        return True
    return word.endswith("ed") and not word[:-2].endswith("e") and word[:-2] in known


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
                return list(range(start, _particle_end(tokens, pairs, end, rest) + 1))
            if rest is None:
                break
    return None


def _particle_end(
    tokens: tuple[Token, ...], pairs: list[int | None], end: int, rest: str | None
) -> int:
    """The last token of a word written apart: the one after ``end`` when it is the
    particle ``rest`` written as a word of its own ("set up" / "setup"), else ``end``."""
    after = end + 1
    if rest and after < len(tokens) and pairs[after] is None and _letters(tokens[after]) == rest:
        return after
    return end


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
    real_x, real_y = _real(x, known), _real(y, known)
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
