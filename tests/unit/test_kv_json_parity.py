"""Parity of the key-value value formatting (``chalicelib/services/kv/json_text.py``, a
hand-written ``JSON.stringify``) with ``rfc8785``, the JSON Canonicalization Scheme
(docs/issues.md#issue-16-item-4: a stand-in gets a parity test).

RFC 8785 writes numbers and strings exactly as ECMAScript's ``JSON.stringify``
does, so the two must agree on every number a double holds exactly and on every
string's escaping. They legitimately differ in two places, each pinned below:

* object keys: JCS sorts them (by UTF-16 code units); JavaScript, and we, keep
  integer-like keys first in ascending order, then the rest as sent;
* numbers a double cannot hold exactly (more digits than 17, beyond 2**53 as
  integers, beyond the double range): JavaScript, and so JCS (which refuses
  integers past 2**53 outright), round them; we never round and keep the text as
  sent (docs/DECISIONS.md, "Numbers are never rounded").
"""

from __future__ import annotations

import json
import math
import struct
from decimal import Decimal
from typing import Any

import pytest
import rfc8785
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chalicelib.services.kv.json_text import JsonNumber, stringify

MANY = settings(max_examples=1500, deadline=None, database=None)
SAFE = 2**53 - 1


def jcs(value: Any) -> str:
    """The RFC 8785 text of ``value``."""
    return rfc8785.dumps(value).decode("utf-8")


def stored(body_text: str) -> str:
    """What ``remember`` stores for a value sent as this JSON text."""
    return stringify(json.loads(body_text, parse_float=JsonNumber))


EDGE_DOUBLES = [
    0.0,
    -0.0,
    1e21,
    1e20,
    123456789012345680000.0,
    1e-7,
    1e-6,
    0.000001234,
    5e-324,
    2.2250738585072014e-308,
    1.7976931348623157e308,
    0.1,
    0.2 + 0.1,
    1 / 3,
    -1.5,
    9007199254740992.0,
    2.0**60,
    123e-20,
    1e300,
    4.35,
    100.0,
]


@pytest.mark.parametrize("number", EDGE_DOUBLES, ids=repr)
def test_edge_doubles_are_written_as_jcs_writes_them(number: float) -> None:
    assert stringify(number) == jcs(number)
    assert stored(repr(number)) == jcs(number)  # sent as JSON text, parsed exactly


@MANY
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_double_is_written_as_jcs_writes_it(number: float) -> None:
    assert stringify(number) == jcs(number)
    assert stringify([number, {"n": number}]) == jcs([number, {"n": number}])


@MANY
@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_every_bit_pattern_of_a_finite_double_is_written_as_jcs_writes_it(bits: int) -> None:
    (number,) = struct.unpack("<d", bits.to_bytes(8, "little"))
    if math.isfinite(number):
        assert stringify(number) == jcs(number)
        assert stored(repr(number)) == jcs(number)


@MANY
@given(st.integers(min_value=-SAFE, max_value=SAFE))
@example(SAFE)
@example(-SAFE)
@example(0)
def test_safe_integers_are_written_as_jcs_writes_them(number: int) -> None:
    assert stringify(number) == jcs(number)
    assert stored(str(number)) == jcs(number)


number_texts = st.builds(
    lambda sign, whole, fraction, exponent: f"{sign}{whole}{fraction}{exponent}",
    st.sampled_from(["", "-"]),
    st.one_of(st.just("0"), st.from_regex(r"[1-9][0-9]{0,25}", fullmatch=True)),
    st.one_of(st.just(""), st.from_regex(r"\.[0-9]{1,25}", fullmatch=True)),
    st.one_of(st.just(""), st.from_regex(r"[eE][+-]?[0-9]{1,3}", fullmatch=True)),
)
"""JSON number tokens: integers, fractions, exponents, up to 25 digits each side."""


@MANY
@given(number_texts)
@example("1E2")
@example("1.10")
@example("-0")
@example("1e400")
@example("12345678901234567890123")
@example("0.1000000000000000055511151231257827")
@example("9007199254740993")
def test_a_sent_number_is_jcs_text_when_that_is_exact_and_else_kept_as_sent(text: str) -> None:
    double = float(text)
    written = stored(text)
    if math.isfinite(double) and Decimal(jcs(double)) == Decimal(text):
        # A double holds the value exactly: JavaScript, JCS and we agree.
        assert written == jcs(double)
    else:
        # Our one deliberate difference: never round, keep the text as sent.
        assert written == text


@MANY
@given(st.text(st.characters(exclude_categories=["Cs"])))
@example("\x00\x01\x08\t\n\x0b\x0c\r\x1f\x7f")
@example('"\\/')
@example("\u2028\u2029é😀\ufeff")
def test_strings_are_escaped_as_jcs_escapes_them(text: str) -> None:
    assert stringify([text]) == jcs([text])
    assert stringify({"k": text}) == jcs({"k": text})


def _utf16_order(key: str) -> bytes:
    return key.encode("utf-16-be")


def _array_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and (key == "0" or not key.startswith("0"))


json_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-SAFE, max_value=SAFE),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(st.characters(exclude_categories=["Cs"]), max_size=8),
)
json_values = st.recursive(
    json_leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(
            st.text(st.characters(exclude_categories=["Cs"]), max_size=6).filter(
                lambda key: not _array_index(key)
            ),
            children,
            max_size=4,
        ).map(lambda mapping: dict(sorted(mapping.items(), key=lambda kv: _utf16_order(kv[0])))),
    ),
    max_leaves=20,
)
"""JSON values whose objects are already in JCS key order and hold no integer-like key,
where JCS's sorted keys and JavaScript's insertion order coincide."""


@settings(max_examples=500, deadline=None, database=None)
@given(json_values)
def test_nested_values_in_jcs_key_order_are_written_as_jcs_writes_them(value: Any) -> None:
    if isinstance(value, str):
        value = [value]  # a bare string is stored as given, not as JSON text
    assert stringify(value) == jcs(value)


def test_object_keys_keep_javascript_order_where_jcs_sorts_them() -> None:
    value = {"b": 1, "2": 2, "a": 3, "1": 4, "01": 5}
    assert stringify(value) == '{"1":4,"2":2,"b":1,"a":3,"01":5}'  # JavaScript's order
    assert jcs(value) == '{"01":5,"1":4,"2":2,"a":3,"b":1}'  # sorted


@pytest.mark.parametrize(
    "text",
    ["9007199254740993", "12345678901234567890123", "-98765432109876543210", "1e400"],
)
def test_numbers_a_double_cannot_hold_are_kept_where_jcs_refuses_or_rounds(text: str) -> None:
    assert stored(text) == text
    value = json.loads(text, parse_float=JsonNumber)
    if isinstance(value, int):
        with pytest.raises(rfc8785.IntegerDomainError):
            jcs(value)
    elif math.isfinite(float(value)):
        assert jcs(float(value)) != text
