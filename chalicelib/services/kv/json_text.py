"""How a key-value ``value`` becomes the stored string (docs/reference.md#kv-values):
a string as given, anything else written once the way JavaScript's ``JSON.stringify``
writes it (compact, non-ASCII kept, JavaScript's escapes, key order and number
forms), except that a number is never rounded: one a double cannot hold exactly is
kept digit for digit as sent (the API parses bodies with ``parse_float=JsonNumber``).
NaN and infinities are ``invalid_request``. The rules, the one deliberate difference
and the parity test against ``rfc8785``: docs/DECISIONS.md#key-value-meta-tools-issue-5
and docs/DECISIONS.md#references-tests-and-stand-ins-issue-16.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from chalicelib.errors import InvalidRequest

_MAX_ARRAY_INDEX = 2**32 - 2
"""Largest integer-like key JavaScript orders first (an array index)."""
_SAFE_INTEGER = 2**53
"""Below this every integer is a double and JavaScript prints its digits as they are."""


class JsonNumber(Decimal):
    """A JSON number with a fraction or an exponent, keeping the text it was sent as.

    Use as ``json.loads(text, parse_float=JsonNumber)``; ``text`` is the token
    verbatim (e.g. ``"1.10"``, ``"1e400"``), the value is exact.
    """

    text: str

    def __new__(cls, text: str) -> JsonNumber:
        """Build the exact value of ``text`` and remember the text."""
        number = super().__new__(cls, text)
        number.text = text
        return number


def stringify(value: Any) -> str:
    """Return the stored string of a value: a string as given, anything else serialized.

    Args:
        value: any JSON value as parsed (``dict``, ``list``, ``str``, ``int``,
            ``JsonNumber``/``Decimal``, ``float``, ``bool``, ``None``).

    Returns:
        The string to store (docs/reference.md#10-key-value).

    Raises:
        InvalidRequest: NaN or an infinity, a non-string object key, a value of
            a non-JSON type, a lone surrogate, or nesting too deep to write.
    """
    if isinstance(value, str):
        text = value
    else:
        parts: list[str] = []
        try:
            _write(value, parts)
        except RecursionError as error:
            raise InvalidRequest("The value is nested too deeply.") from error
        text = "".join(parts)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InvalidRequest("The value holds an invalid Unicode character.") from error
    return text


def number_text(number: int | float | Decimal) -> str:
    """Print a number like JavaScript's ``JSON.stringify``, never rounding (see module doc).

    Raises:
        InvalidRequest: NaN or an infinity.
    """
    if isinstance(number, bool):
        raise InvalidRequest("A boolean is not a number.")
    if isinstance(number, int):
        return _integer_text(number)
    if isinstance(number, float):
        if not math.isfinite(number):
            raise InvalidRequest("NaN and Infinity are not JSON; send a finite number.")
        return javascript_number(number)
    return _decimal_text(number)


def javascript_number(number: float) -> str:
    """ECMAScript ``Number::toString`` of a finite double (what ``JSON.stringify`` prints).

    Python's ``repr`` gives the same shortest round-tripping digits; only the
    layout differs (JavaScript: ``1e+21``, ``1e-7``, ``123``, ``0.000001``).
    """
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    _, digit_tuple, exponent = Decimal(repr(abs(number))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    exponent = int(exponent) + (len(digit_tuple) - len(digits))
    k = len(digits)
    n = exponent + k  # the value is 0.<digits> x 10^n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    power = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{sign}{mantissa}e{'+' if power >= 0 else '-'}{abs(power)}"


def _integer_text(number: int) -> str:
    if -_SAFE_INTEGER < number < _SAFE_INTEGER:
        return str(number)
    try:
        as_javascript = javascript_number(float(number))
    except OverflowError:
        return str(number)
    return as_javascript if Decimal(as_javascript) == number else str(number)


def _decimal_text(number: Decimal) -> str:
    if not number.is_finite():
        raise InvalidRequest("NaN and Infinity are not JSON; send a finite number.")
    double = float(number)
    if math.isfinite(double):
        as_javascript = javascript_number(double)
        if Decimal(as_javascript) == number:
            return as_javascript
    if isinstance(number, JsonNumber):
        return number.text
    return str(number).replace("E", "e")


def _write(value: Any, parts: list[str]) -> None:
    if value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, str):
        parts.append(json.dumps(value, ensure_ascii=False))
    elif isinstance(value, int | float | Decimal):
        parts.append(number_text(value))
    elif isinstance(value, list | tuple):
        parts.append("[")
        for position, item in enumerate(value):
            if position:
                parts.append(",")
            _write(item, parts)
        parts.append("]")
    elif isinstance(value, Mapping):
        _write_object(value, parts)
    else:
        raise InvalidRequest(f"A {type(value).__name__} is not a JSON value.")


def _write_object(value: Mapping[Any, Any], parts: list[str]) -> None:
    for key in value:
        if not isinstance(key, str):
            raise InvalidRequest("Object keys must be strings.")
    parts.append("{")
    for position, key in enumerate(javascript_key_order(list(value))):
        if position:
            parts.append(",")
        parts.append(json.dumps(key, ensure_ascii=False))
        parts.append(":")
        _write(value[key], parts)
    parts.append("}")


def javascript_key_order(keys: list[str]) -> list[str]:
    """Order object keys as a JavaScript object does: array indexes ascending, then the rest
    in insertion order (``{"b":1,"2":2,"a":3,"1":4}`` -> ``1, 2, b, a``)."""
    indexes = [key for key in keys if _is_array_index(key)]
    if not indexes:
        return keys
    others = [key for key in keys if not _is_array_index(key)]
    return sorted(indexes, key=int) + others


def _is_array_index(key: str) -> bool:
    if not key.isascii() or not key.isdigit() or (len(key) > 1 and key[0] == "0"):
        return False
    return len(key) <= 10 and int(key) <= _MAX_ARRAY_INDEX
