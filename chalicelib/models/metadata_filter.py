"""A metadata filter (docs/reference.md#metadata-filters): the conditions a list or a
recall keeps facts by, and the one ordered text every metadata value is compared as.

A stored value becomes its *index text* (``index_text``): a type letter, ``:``, then
an encoding that orders as the values do, so the metadata index (``MEMORYMETA#``,
``storage/memory_metadata.py``) answers equality by key prefix and ranges by key
range, and a page re-checks a memory with the same comparison (``holds_metadata``):

- ``b:0`` / ``b:1``: false / true;
- ``n:…``: a number, in an order-preserving decimal form (negatives, zero, positives;
  then the power of ten, then the digits; compared to ``NUMBER_DIGITS`` significant
  digits), so ``3`` and ``3.0`` are the same value;
- ``d:…``: a string that is an ISO 8601 date (``2026-12-07``, the start of that UTC
  day) or date and time (``2026-12-07T10:30:00+02:00``; without an offset, UTC), as
  the UTC instant to the microsecond: dates compare as moments;
- ``s:…``: any other string, compared by code point.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

NUMBER_DIGITS = 40
"""Significant digits of a number's index text: two numbers equal to this many digits
compare equal (a float has 17)."""

NUMBER_MAX_EXPONENT = 4000
"""The largest power of ten (either sign) a filter's number may have: the index text
holds it in four digits, and a stored number is within it by the metadata size limit."""

_DATE = re.compile(
    r"\d{4}-\d{2}-\d{2}"
    r"(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?P<fraction>\.\d{1,9})?)?(?P<zone>[Zz]|[+-]\d{2}:\d{2})?)?"
)
_TOP = "\U0010ffff"
"""A character after every other: the top of a key range."""

RANGE_OPERATORS = ("gt", "gte", "lt", "lte")
"""The range operators: above, at or above, below, at or below."""


def _number_text(value: Decimal) -> str:
    """``n:`` and the order-preserving form of ``value``: ``1`` negative, ``2`` zero,
    ``3`` positive; then the power of ten (biased by 5000, four digits; inverted for a
    negative); then the significant digits (each complemented to 9, and ``~`` after
    them, for a negative, so a longer magnitude sorts first)."""
    sign, digit_tuple, exponent = value.as_tuple()
    digits = "".join(str(digit) for digit in digit_tuple).lstrip("0")
    if not digits:
        return "n:2"
    assert isinstance(exponent, int), "finite numbers only"
    power = exponent + len(digits) - 1
    digits = digits.rstrip("0")[:NUMBER_DIGITS]
    if sign == 0:
        return f"n:3{power + 5000:04d}{digits}"
    complemented = "".join(str(9 - int(digit)) for digit in digits)
    return f"n:1{4999 - power:04d}{complemented}~"


def _date_text(text: str) -> str | None:
    """``d:`` and the UTC instant of ``text`` when it is an ISO 8601 date or date and
    time (``_DATE``, a real calendar date), else None."""
    match = _DATE.fullmatch(text)
    if match is None:
        return None
    normalized = text.replace("t", "T").replace("z", "Z")
    fraction = match.group("fraction")
    if fraction and len(fraction) > 7:
        normalized = normalized.replace(fraction, fraction[:7], 1)
    try:
        moment = datetime.fromisoformat(normalized)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return "d:" + moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    except (ValueError, OverflowError):
        return None


def index_text(value: str | int | float | bool) -> str:
    """The index text of a stored metadata value (the module's order)."""
    if isinstance(value, bool):
        return "b:1" if value else "b:0"
    if isinstance(value, int):
        return _number_text(Decimal(value))
    if isinstance(value, float):
        return _number_text(Decimal(repr(value)))
    return _date_text(value) or f"s:{value}"


def number_text(text: str) -> str:
    """The index text of a number written as ``text`` (a filter's value)."""
    return _number_text(Decimal(text))


def text_top(text: str) -> str:
    """The top of a key range holding every index text up to ``text`` whatever follows
    it in a key: ``text`` cut before its first character at or below ``#`` (the key's
    separator, which must sort after a shorter value), then the last character."""
    cut = next((at for at, char in enumerate(text) if char <= "#"), len(text))
    return text[:cut] + _TOP


@dataclass(frozen=True)
class MetaCondition:
    """One condition of a metadata filter (docs/reference.md#metadata-filters).

    ``key``: the metadata key (normalized). ``values``: for equality and ``in``, the
    index texts any of which the fact's value must have (a value sent as text that
    reads as a number or a boolean names both the number or boolean and the string).
    ``low`` / ``high``: for a range, the bounds' index texts (``None``: open), each
    inclusive unless ``low_open`` / ``high_open``; both of one type, the letter
    ``kind`` (``n``, ``d`` or ``s``)."""

    key: str
    values: tuple[str, ...] = ()
    kind: str = ""
    low: str | None = None
    high: str | None = None
    low_open: bool = False
    high_open: bool = False

    @property
    def is_range(self) -> bool:
        """True for a range (no list of values)."""
        return not self.values

    def matches(self, text: str | None) -> bool:
        """True when a fact whose value of ``key`` has the index text ``text`` (``None``:
        the fact lacks the key) meets the condition."""
        if text is None:
            return False
        if not self.is_range:
            return text in self.values
        if not text.startswith(f"{self.kind}:"):
            return False
        if self.low is not None and (text < self.low or (self.low_open and text == self.low)):
            return False
        return self.high is None or not (text > self.high or (self.high_open and text == self.high))


def holds_metadata(
    metadata: Mapping[str, str | int | float | bool], conditions: Sequence[MetaCondition]
) -> bool:
    """True when ``metadata`` meets every one of ``conditions`` (none: True)."""
    return all(
        condition.matches(
            None if condition.key not in metadata else index_text(metadata[condition.key])
        )
        for condition in conditions
    )
