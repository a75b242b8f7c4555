"""How a metadata filter as sent becomes its conditions (docs/reference.md#metadata-filters).

One condition is ``key:value`` (equality), ``key:in:a|b|c`` (one of the values), or
``key:op:value`` with ``op`` one of ``eq``, ``in``, ``gt``, ``gte``, ``lt``, ``lte``
(``key:eq:gt:3`` names the string ``gt:3``). A value as sent is text, so for equality
and ``in`` a text that reads as a number (``3``, ``-1.5``, ``2e3``) names both that
number and the string, ``true`` / ``false`` both the boolean and the string, and a
date (``2026-12-07``) the moment (metadata strings that are dates are compared as
moments, ``models/metadata_filter.py``). A range's bound is a number, a date or
(by code point) a string, and keeps only values of that type. Every refusal is 400
``metadata_filter_invalid``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal

from chalicelib.errors import MemoryMetadataInvalid, MetadataFilterInvalid
from chalicelib.limits import MAX_FILTER_IN_VALUES, MAX_FILTER_METADATA, METADATA_STRING_MAX_CHARS
from chalicelib.models.metadata_filter import (
    NUMBER_MAX_EXPONENT,
    RANGE_OPERATORS,
    MetaCondition,
    index_text,
    number_text,
)
from chalicelib.services.memory.metadata import metadata_key

OPERATORS = ("eq", "in", *RANGE_OPERATORS)
"""The operators a condition may name (equality when none is named)."""

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _number(text: str) -> str | None:
    """The index text of ``text`` read as a number, else None.

    Raises:
        MetadataFilterInvalid: a number beyond 10^±``NUMBER_MAX_EXPONENT``.
    """
    if not _NUMBER.fullmatch(text):
        return None
    value = Decimal(text)
    if value and abs(value.adjusted()) > NUMBER_MAX_EXPONENT:
        raise MetadataFilterInvalid(
            f"The number {text[:50]!r} is out of range: a filter's number is within "
            f"10^-{NUMBER_MAX_EXPONENT} to 10^{NUMBER_MAX_EXPONENT}."
        )
    return number_text(text)


def _equal_texts(text: str) -> tuple[str, ...]:
    """The index texts a value sent for equality names (the module's rule)."""
    as_string = index_text(text)
    if not as_string.startswith("s:"):
        return (as_string,)  # a date: stored date strings are filed as dates
    if text in ("true", "false"):
        return (index_text(text == "true"), as_string)
    number = _number(text)
    return (as_string,) if number is None else (number, as_string)


def _range(key: str, operator: str, text: str) -> MetaCondition:
    """A range condition with one bound."""
    if text in ("true", "false"):
        raise MetadataFilterInvalid(
            f"{key}:{operator}:{text} compares a boolean: a range's bound is a number, a "
            "date or a string."
        )
    bound = _number(text) or index_text(text)
    if operator in ("gt", "gte"):
        return MetaCondition(key, kind=bound[0], low=bound, low_open=operator == "gt")
    return MetaCondition(key, kind=bound[0], high=bound, high_open=operator == "lt")


def _condition(raw: str) -> MetaCondition:
    """One condition as sent (the module's syntax)."""
    shown = repr(raw if len(raw) <= 60 else raw[:60] + "…")
    raw_key, colon, rest = raw.partition(":")
    if not colon:
        raise MetadataFilterInvalid(
            f"The metadata filter {shown} names no value: send key:value, key:in:a|b or "
            "key:op:value with op one of eq, in, gt, gte, lt, lte."
        )
    try:
        key = metadata_key(raw_key)
    except MemoryMetadataInvalid as error:
        raise MetadataFilterInvalid(f"In the metadata filter {shown}: {error.message}") from error
    operator, colon, value = rest.partition(":")
    if not colon or operator not in OPERATORS:
        operator, value = "eq", rest
    if len(value) > METADATA_STRING_MAX_CHARS * (MAX_FILTER_IN_VALUES if operator == "in" else 1):
        raise MetadataFilterInvalid(
            f"The value of the metadata filter {shown} is longer than a metadata value can be."
        )
    if operator in RANGE_OPERATORS:
        return _range(key, operator, value)
    values = value.split("|") if operator == "in" else [value]
    if len(values) > MAX_FILTER_IN_VALUES:
        raise MetadataFilterInvalid(
            f"The metadata filter {shown} names {len(values)} values; in names at most "
            f"{MAX_FILTER_IN_VALUES}."
        )
    texts = dict.fromkeys(text for one in values for text in _equal_texts(one))
    return MetaCondition(key, values=tuple(texts))


def meta_filter(raw: Sequence[str]) -> tuple[MetaCondition, ...]:
    """The conditions of a list's ``meta`` parameters or a recall's ``meta`` array, all
    of which a fact must meet (docs/reference.md#metadata-filters).

    Raises:
        MetadataFilterInvalid: more than ``MAX_FILTER_METADATA`` conditions, or one that
            breaks the syntax (the module's rules).
    """
    if len(raw) > MAX_FILTER_METADATA:
        raise MetadataFilterInvalid(
            f"A filter holds at most {MAX_FILTER_METADATA} metadata conditions; "
            f"{len(raw)} were sent."
        )
    return tuple(_condition(one) for one in raw)
