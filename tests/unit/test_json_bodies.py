"""Integers too long for Python's ``int`` in request bodies (chalicelib/api/http.py,
chalicelib/api/exact_json.py): a clean ``invalid_request`` in ordinary bodies, the
digits kept in exact ones (key-value values, MCP)."""

from __future__ import annotations

import pytest

from chalicelib.api.exact_json import load_exact
from chalicelib.api.http import parse_json_body
from chalicelib.errors import InvalidRequest
from chalicelib.limits import JSON_INTEGER_MAX_DIGITS
from chalicelib.services.kv.json_text import JsonNumber, stringify

HUGE = "7" * 5000


@pytest.mark.parametrize("sign", ["", "-"])
def test_an_ordinary_body_refuses_a_huge_integer_without_python_internals(sign: str) -> None:
    with pytest.raises(InvalidRequest) as raised:
        parse_json_body(f'{{"limit": {sign}{HUGE}}}'.encode())
    message = str(raised.value)
    assert "5000 digits" in message and str(JSON_INTEGER_MAX_DIGITS) in message
    assert "sys." not in message and "set_int_max_str_digits" not in message


def test_an_ordinary_body_still_reads_integers_up_to_the_limit() -> None:
    longest = "1" * JSON_INTEGER_MAX_DIGITS
    assert parse_json_body(f'{{"n": {longest}, "m": 5}}'.encode()) == {"n": int(longest), "m": 5}


def test_an_exact_body_keeps_a_huge_integer_as_its_text() -> None:
    parsed = load_exact(f'{{"v": [-{HUGE}, 12]}}'.encode())
    first, second = parsed["v"]
    assert isinstance(first, JsonNumber) and first.text == "-" + HUGE
    assert second == 12 and isinstance(second, int)
    assert stringify(parsed) == f'{{"v":[-{HUGE},12]}}'
