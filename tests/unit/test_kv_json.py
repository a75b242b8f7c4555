"""How key-value values become stored strings (docs/reference.md#10-key-value): JSON.stringify's
layout, numbers never rounded (docs/issues.md#issue-5, DECISIONS: number handling)."""

from __future__ import annotations

import json
import shutil
import subprocess
from decimal import Decimal
from typing import Any

import pytest

from chalicelib.errors import InvalidRequest
from chalicelib.services.kv.json_text import JsonNumber, javascript_number, stringify


def stored(body_text: str) -> str:
    """What remember stores for a value sent as this JSON text."""
    return stringify(json.loads(body_text, parse_float=JsonNumber))


# Sent text -> stored text; where a double can hold the value this is exactly
# what JavaScript's JSON.stringify(JSON.parse(text)) prints.
JAVASCRIPT_CASES = [
    ('{"a": 1}', '{"a":1}'),
    (
        '{"a": [1, 2, {"b": null}], "c": true, "d": false}',
        '{"a":[1,2,{"b":null}],"c":true,"d":false}',
    ),
    ("1.10", "1.1"),
    ("1E2", "100"),
    ("1e21", "1e+21"),
    ("1000000000000000000000", "1e+21"),
    ("123456789012345680000", "123456789012345680000"),
    ("-0", "0"),
    ("-0.0", "0"),
    ("0.1", "0.1"),
    ("1e-7", "1e-7"),
    ("0.000001", "0.000001"),
    ("123e-20", "1.23e-18"),
    ("5e-324", "5e-324"),
    ("1.7976931348623157e308", "1.7976931348623157e+308"),
    ("9007199254740992", "9007199254740992"),
    ("[1.5, 2.50, -3e-5]", "[1.5,2.5,-0.00003]"),
    ('{"b":1,"2":2,"a":3,"1":4,"01":5}', '{"1":4,"2":2,"b":1,"a":3,"01":5}'),
    ('{"é": "ü\\u2028\\n\\u0001\\"\\\\/"}', '{"é":"ü\u2028\\n\\u0001\\"\\\\/"}'),
    ("null", "null"),
    ("[]", "[]"),
    ("{}", "{}"),
]

# Values a double cannot hold: JavaScript would round them; we keep every digit.
EXACT_CASES = [
    ("12345678901234567890123", "12345678901234567890123"),
    ("9007199254740993", "9007199254740993"),
    ("0.1000000000000000055511151231257827", "0.1000000000000000055511151231257827"),
    ("1e400", "1e400"),
    ("-1E400", "-1E400"),
    ("1e-400", "1e-400"),
    (
        '{"big": 123456789012345678901234567890, "f": 1.10}',
        '{"big":123456789012345678901234567890,"f":1.1}',
    ),
]


@pytest.mark.parametrize(("sent", "expected"), JAVASCRIPT_CASES)
def test_values_are_written_like_json_stringify(sent: str, expected: str) -> None:
    assert stored(sent) == expected


@pytest.mark.parametrize(("sent", "expected"), EXACT_CASES)
def test_numbers_a_double_cannot_hold_keep_every_digit(sent: str, expected: str) -> None:
    assert stored(sent) == expected


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_javascript_cases_match_node() -> None:
    script = (
        "const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "process.stdout.write(JSON.stringify(cases.map(t => JSON.stringify(JSON.parse(t)))));"
    )
    sent = [case for case, _ in JAVASCRIPT_CASES]
    result = subprocess.run(
        ["node", "-e", script], input=json.dumps(sent), capture_output=True, text=True, check=True
    )
    assert json.loads(result.stdout) == [expected for _, expected in JAVASCRIPT_CASES]


def test_a_string_is_stored_as_given() -> None:
    for text in ["plain", "", '{"a": 1}', "  spaced  ", "ünï 🎉\n\t", "1.10"]:
        assert stringify(text) == text


@pytest.mark.parametrize(
    "value", [float("nan"), float("inf"), -float("inf"), [1, float("nan")], Decimal("NaN")]
)
def test_nan_and_infinity_are_invalid(value: Any) -> None:
    with pytest.raises(InvalidRequest):
        stringify(value)


@pytest.mark.parametrize("value", [{1: "a"}, {"a": object()}, {"a": {1, 2}}, b"bytes", "\ud83d"])
def test_values_that_are_not_json_are_invalid(value: Any) -> None:
    with pytest.raises(InvalidRequest):
        stringify(value)


def test_python_floats_and_ints_print_like_javascript() -> None:
    assert stringify([0.1, 1.0, 1e21, 2**60, 10**400, True]) == (
        "[0.1,1,1e+21,1152921504606846976," + "1" + "0" * 400 + ",true]"
    )
    assert javascript_number(-1.5e-7) == "-1.5e-7"
    assert javascript_number(123456789.125) == "123456789.125"


def test_deep_nesting_is_invalid_not_a_crash() -> None:
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(InvalidRequest):
        stringify(deep)
