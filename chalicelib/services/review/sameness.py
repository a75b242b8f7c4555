"""Step 4 of the review's sameness judgment (docs/reference.md#review-step-1): the
decision, with a reason a person reads. A maintainer reads the judgment top to bottom:

1. ``normalize`` — filler set aside, contractions spelled out;
2. ``details.shape`` — values, details (numbers, names, versions, times, environments),
   quoted strings, negations, and where "is" / "by" / "from" / "to" stand;
3. ``meaning.read_alike`` — the same words in any order, one word misspelt or written
   apart, frame words aside; and whether the order keeps who does what;
4. ``compare`` (here) — ``duplicate`` when step 3 pairs every word, the details and
   the negations are equal and the order is kept (or a phrase moved); ``different``
   when the same words swap roles ("Alice reports to Bob" / "Bob reports to Alice");
   ``unrelated`` when the same words come in an order step 3 cannot read and no two
   values of one kind trade places (a conflict needs one attribute with two values);
   else, from the values that differ: ``covers``/``covered`` (one says all the other
   says, and more), ``different`` (one subject's attribute with two values: "port 5432"
   / "port 6432", or one says "not"), ``unrelated`` (two subjects, two attributes, or
   nothing in common).

Every ``Relation`` carries ``reason``: "same words in another order; details equal:
5432". When both facts carry a sentence embedding, ``covers`` and "one subject" also
need their cosine (``COVER_MEANING``, ``SUBJECT_MEANING``); a duplicate does not (the
comparison: docs/DECISIONS.md#one-readable-sameness-judgment-issue-43).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from chalicelib.services.review.details import Shape, Token, shape
from chalicelib.services.review.meaning import Reading, read_alike, shared_order_kept
from chalicelib.services.review.normalize import has_filler
from chalicelib.services.review.vocabulary import DETERMINERS

if TYPE_CHECKING:  # numpy loads with the embedder, on first use (cold start)
    from chalicelib.services.recall.embedding import FloatArray

COVER_MEANING = 0.6
"""Cosine a fact must reach with one it covers."""
SUBJECT_MEANING = 0.55
"""Cosine two facts must reach to be about one subject."""
SUBJECT_SHARED = 2
SUBJECT_SHARE = 0.5
MAX_SWAPPED = 3

VALUE_KINDS = frozenset({"number", "date", "time", "url", "email", "path", "identifier"})
"""Kinds of token a fact attaches to its subject as a value (``different_subjects``)."""

RelationKind = Literal["duplicate", "covers", "covered", "different", "unrelated"]


@dataclass(frozen=True)
class Relation:
    """How fact ``a`` relates to fact ``b``.

    Attributes:
        kind: ``duplicate``; ``covers`` (``a`` says all of ``b`` and more);
            ``covered`` (``b`` says all of ``a`` and more); ``different`` (one
            subject, different details or polarity); ``unrelated``.
        only_a: the tokens of ``a`` whose values ``b`` lacks, in ``a``'s order.
        only_b: the tokens of ``b`` whose values ``a`` lacks, in ``b``'s order.
        polarity_differs: they say "not" / "never" / "no" a different number of times.
        similarity: cosine of the embeddings, or None when one is missing.
        reason: why, for a person ("same words in another order; details equal: 5432").
    """

    kind: RelationKind
    only_a: tuple[Token, ...]
    only_b: tuple[Token, ...]
    polarity_differs: bool
    similarity: float | None
    reason: str = ""

    @property
    def qualifiers_only(self) -> bool:
        """The facts differ only in environments or cloud regions (``prod`` ≠ ``staging``)."""
        differing = self.only_a + self.only_b
        return bool(differing) and all(
            token.kind == "environment" or token.is_region for token in differing
        )

    def difference(self) -> str:
        """What differs, for a person: ``5432 ≠ 6432``, ``"not" on one side``, …"""
        parts = []
        if self.only_a or self.only_b:
            left = ", ".join(token.raw or token.value for token in self.only_a) or "—"
            right = ", ".join(token.raw or token.value for token in self.only_b) or "—"
            parts.append(f"{left} ≠ {right}")
        if self.polarity_differs:
            parts.append("one says not")
        return "; ".join(parts) or self.reason or "quoted strings or the order of details"


def vector_of(embedding: bytes | None) -> FloatArray | None:
    """The unit sentence vector of a stored embedding of ours, else None."""
    from chalicelib.services.recall.embedding import decode, is_ours

    if not is_ours(embedding):
        return None
    assert embedding is not None
    vector: FloatArray = decode([embedding])[0]
    return vector


def compare(
    a: str, b: str, vector_a: FloatArray | None = None, vector_b: FloatArray | None = None
) -> Relation:
    """How fact text ``a`` relates to fact text ``b`` (see the module docstring).

    Args:
        a, b: the facts' texts.
        vector_a, vector_b: their unit sentence vectors (``vector_of``), if known.

    Returns:
        The relation, with the values that differ as written and its ``reason``.
    """
    similarity = None if vector_a is None or vector_b is None else float(vector_a @ vector_b)
    shape_a, shape_b = shape(a), shape(b)
    if (
        shape_a.negations == shape_b.negations
        and _quotes_in(shape_a, shape_b)
        and _quotes_in(shape_b, shape_a)
    ):
        reading = read_alike(shape_a, shape_b)
        if reading.complete and reading.same_order:
            reason = _same_reason(a, b, shape_a, reading)
            return Relation("duplicate", (), (), False, similarity, reason)
        if reading.roles_swapped:
            reason = "the same words, but in an order that changes who does what to whom"
            return Relation("different", (), (), False, similarity, reason)
        if reading.reordered:
            reason = (
                "the same words and details in an order no rule reads, with no two values "
                "of one kind trading places: both kept, not a conflict"
            )
            return Relation("unrelated", (), (), False, similarity, reason)
    relation = _compare(shape_a, shape_b, similarity)
    return Relation(
        relation.kind,
        relation.only_a,
        relation.only_b,
        relation.polarity_differs,
        similarity,
        _differ_reason(relation),
    )


def _same_reason(a: str, b: str, found: Shape, reading: Reading) -> str:
    """Why two facts are duplicates, in a person's words."""
    parts = []
    if reading.moved:
        parts.append("same words in another order")
    elif not reading.typos and not reading.joined and not reading.frame:
        parts.append("same words")
    if has_filler(a) or has_filler(b):
        parts.append("a filler set aside")
    # which side is the misspelling is not known here (the kept wording is chosen apart)
    parts += [f"“{x}” and “{y}” one misspelling apart" for x, y in reading.typos]
    parts += [f"“{x}” written as “{y}”" for x, y in reading.joined]
    if reading.frame:
        parts.append("said another way (" + ", ".join(f"“{w}”" for w in reading.frame) + ")")
    details = [token.raw or token.value for token in found.tokens if token.kind != "word"]
    parts.append("details equal: " + ", ".join(details) if details else "no details to differ")
    return "; ".join(parts)


def _differ_reason(relation: Relation) -> str:
    """Why two facts are not duplicates, in a person's words."""
    if relation.kind == "covers":
        return "the first says all the second says, and more: " + relation.difference()
    if relation.kind == "covered":
        return "the second says all the first says, and more: " + relation.difference()
    if relation.kind == "different":
        return "one subject, two values: " + relation.difference()
    return "different subjects or attributes: " + relation.difference()


def _compare(shape_a: Shape, shape_b: Shape, similarity: float | None) -> Relation:
    """``compare``'s rule on the values that differ (the module docstring)."""
    counts_a, counts_b = Counter(shape_a.values), Counter(shape_b.values)
    missing_from_b, missing_from_a = counts_a - counts_b, counts_b - counts_a
    only_a = _written(shape_a, missing_from_b)
    only_b = _written(shape_b, missing_from_a)
    shared = sum((counts_a & counts_b).values())
    polarity_differs = shape_a.negations != shape_b.negations
    quotes_of_a_in_b = _quotes_in(shape_a, shape_b)
    quotes_of_b_in_a = _quotes_in(shape_b, shape_a)
    ordered = _details_in_order(shape_a, shape_b)

    def meaning(threshold: float) -> bool:
        return similarity is None or similarity >= threshold

    kind: RelationKind | None = None
    if not polarity_differs and ordered:
        kind = _containment(only_a, only_b, quotes_of_a_in_b, quotes_of_b_in_a, meaning)
    if kind is None:
        smaller = min(len(shape_a.values), len(shape_b.values))
        one_subject = (
            shared >= max(1, min(SUBJECT_SHARED, smaller - 1))
            and shared >= SUBJECT_SHARE * smaller
            and meaning(SUBJECT_MEANING)
        )
        swapped = len(only_a) <= MAX_SWAPPED and len(only_b) <= MAX_SWAPPED
        kind = (
            _one_subject_kind(polarity_differs, only_a, only_b)
            if one_subject and swapped
            else "unrelated"
        )
        if kind == "different" and different_subjects(shape_a, shape_b, only_a, only_b):
            kind = "unrelated"
    if (
        kind == "different"
        and not polarity_differs
        and only_a
        and only_b
        and not _same_attribute(shape_a, shape_b, only_a, only_b)
    ):
        kind = "unrelated"
    if (
        kind == "different"
        and not polarity_differs
        and not any(_detail_kind(token) for token in only_a + only_b)
        and not shared_order_kept(shape_a, shape_b)
    ):
        kind = "unrelated"  # other words, and the shared ones shuffled: a rephrasing
    return Relation(kind, only_a, only_b, polarity_differs, similarity)


ATTRIBUTE_WINDOW = 2
"""Values on either side of a differing detail that name its attribute ("port 5432",
"TTL was raised to 600 seconds")."""


def _same_attribute(
    shape_a: Shape, shape_b: Shape, only_a: Sequence[Token], only_b: Sequence[Token]
) -> bool:
    """Whether the facts give one attribute different values, which is a contradiction
    (docs/issues.md#issue-26-item-2): words for words ("tea" / "coffee"), or a differing
    detail on each side of one kind next to a value both facts hold ("port 5432" / "port
    6432", "at 02:00" / "at 03:00"). Details of no common kind, or of one kind but beside
    different words ("six brokers" / "version 3.6"), are two attributes of one subject."""
    values_a, values_b = set(shape_a.values), set(shape_b.values)
    details_a = [t for t in only_a if _detail_kind(t) and t.value not in values_b]
    details_b = [t for t in only_b if _detail_kind(t) and t.value not in values_a]
    if not details_a or not details_b:
        # a value one side says twice ("live in the prod account"): count, not presence
        details_a = [t for t in only_a if _detail_kind(t)]
        details_b = [t for t in only_b if _detail_kind(t)]
    if not details_a and not details_b:
        return True
    shared = values_a & values_b
    for left in details_a:
        for right in details_b:
            if _detail_kind(left) != _detail_kind(right):
                continue
            if _beside(shape_a, left) & _beside(shape_b, right) & shared:
                return True
    return False


def _detail_kind(token: Token) -> str | None:
    """A token's kind as a value of an attribute: None for a plain word, a name written
    in lower case or an acronym (``UTC``, ``VPN``: words more than values)."""
    if token.kind == "word" or (token.kind == "identifier" and token.value.isalpha()):
        return None
    return "name" if token.kind in ("name", "identifier") and token.value.isalpha() else token.kind


def _beside(found: Shape, token: Token) -> set[str]:
    """The values within ``ATTRIBUTE_WINDOW`` tokens of ``token`` in its fact."""
    position = next(n for n, own in enumerate(found.tokens) if own is token)
    start, end = max(0, position - ATTRIBUTE_WINDOW), position + ATTRIBUTE_WINDOW + 1
    return {other.value for other in found.tokens[start:end] if other is not token}


def _containment(
    only_a: tuple[Token, ...],
    only_b: tuple[Token, ...],
    quotes_of_a_in_b: bool,
    quotes_of_b_in_a: bool,
    meaning: Callable[[float], bool],
) -> RelationKind | None:
    """``duplicate``, ``covers`` or ``covered`` for two facts of the same polarity whose
    details come in the same order, or None when neither holds the other."""
    if only_a and not only_b and quotes_of_b_in_a and meaning(COVER_MEANING):
        return "covers"
    if only_b and not only_a and quotes_of_a_in_b and meaning(COVER_MEANING):
        return "covered"
    return None


def _one_subject_kind(
    polarity_differs: bool, only_a: tuple[Token, ...], only_b: tuple[Token, ...]
) -> RelationKind:
    """``different`` or ``unrelated`` for two facts about one subject with at most
    ``MAX_SWAPPED`` values each that the other lacks."""
    if polarity_differs:
        # "X is on" vs "X is not on": the negation, and at most one other value.
        if max(len(only_a), len(only_b)) <= 1:
            return "different"
        return "unrelated"
    if only_a and only_b:
        # whether the two values are of one attribute is checked by the caller
        # (``_same_attribute``, docs/issues.md#issue-26-item-2)
        return "different"
    if not only_a and not only_b:
        # Same values, but quoted strings, the order of details, or the meaning differ.
        return "different"
    return "unrelated"


def different_subjects(
    shape_a: Shape, shape_b: Shape, only_a: Sequence[Token], only_b: Sequence[Token]
) -> bool:
    """True when two facts give their values to different subjects: each side's
    differing tokens (``only_a``, ``only_b``) hold a subject qualifier *and* a value
    (a ``VALUE_KINDS`` token that is not the qualifier). "The prod database listens on
    port 6432" / "The staging database … 5432", "The us-east-1 cluster has 12 nodes" /
    "The eu-west-1 cluster has 8 nodes", "Python 3.11 is used by the API" / "Python
    3.12 is used by the worker" are two subjects; "The API uses Python 3.11" / "… 3.12"
    (only the value differs) is one. See ``_qualifies`` for what a qualifier is."""
    return _qualified_value(shape_a, only_a) and _qualified_value(shape_b, only_b)


def _qualified_value(found: Shape, differing: Sequence[Token]) -> bool:
    """``differing`` (tokens of ``found``) holds a subject qualifier and a value."""
    qualifiers = [token for token in differing if _qualifies(found, token, differing)]
    values = [
        token
        for token in differing
        if token.kind in VALUE_KINDS and all(token is not q for q in qualifiers)
    ]
    return bool(qualifiers) and bool(values)


def _qualifies(found: Shape, token: Token, differing: Sequence[Token]) -> bool:
    """A subject qualifier: an environment (``prod``), a cloud region (``us-east-1``),
    or a noun in a subject's place (first in its sentence, or right after a determiner:
    "by *the* API", "*the* billing service") that is not written next to a differing
    value (in "uses Python 3.11" / "uses Node 20" the noun is part of the value)."""
    if token.kind == "environment" or token.is_region:
        return True
    if token.kind not in ("word", "name", "identifier"):
        return False
    if token.after in DETERMINERS:
        return True  # "for *the* frontend", "by *the* worker"
    if token.after:
        return False
    position = next(n for n, own in enumerate(found.tokens) if own is token)
    neighbours = found.tokens[max(0, position - 1) : position + 2]
    return not any(
        other is not token
        and other.kind in VALUE_KINDS
        and any(other is changed for changed in differing)
        for other in neighbours
    )


def is_duplicate(
    a: str, b: str, vector_a: FloatArray | None = None, vector_b: FloatArray | None = None
) -> bool:
    """True when ``a`` and ``b`` say the same thing (``compare(...).kind == "duplicate"``)."""
    return compare(a, b, vector_a, vector_b).kind == "duplicate"


def covers(
    newer: str, older: str, vector_newer: FloatArray | None, vector_older: FloatArray | None
) -> bool:
    """True when ``newer`` says everything ``older`` says (a duplicate, or more)."""
    return compare(newer, older, vector_newer, vector_older).kind in ("duplicate", "covers")


def duplicate_key(text: str) -> str:
    """A key equal for any two duplicates (their sorted values and polarity): the
    review groups facts by it and the veto index stores it (a necessary condition;
    ``is_duplicate`` confirms)."""
    found = shape(text)
    return f"{found.negations}\x1e" + "\x1f".join(sorted(found.values))


def _written(found: Shape, missing: Counter[str]) -> tuple[Token, ...]:
    """The tokens of ``found`` whose values ``missing`` counts, in text order."""
    left = Counter(missing)
    result = []
    for token in found.tokens:
        if left[token.value] > 0:
            left[token.value] -= 1
            result.append(token)
    return tuple(result)


def _quotes_in(source: Shape, other: Shape) -> bool:
    """Every quoted string of ``source`` appears verbatim in ``other``."""
    return all(quoted in other.plain for quoted in source.quoted)


def _details_in_order(a: Shape, b: Shape) -> bool:
    """The details both facts state (a detail in either) come in the same order."""
    both = set(a.values) & set(b.values)
    details = (a.detail_values | b.detail_values) & both
    return _first_seen(a.values, details) == _first_seen(b.values, details)


def _first_seen(values: Sequence[str], wanted: set[str] | frozenset[str]) -> list[str]:
    seen: dict[str, None] = {}
    for value in values:
        if value in wanted:
            seen.setdefault(value, None)
    return list(seen)
