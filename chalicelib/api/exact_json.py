"""JSON bodies that keep every number exactly as sent: the key-value routes and MCP.

Like ``http.parse_json_body`` (NaN/Infinity, duplicate keys and lone
surrogates are ``invalid_request``), except that a number with a fraction or an
exponent becomes a ``JsonNumber`` (exact value, original text) instead of a
rounded ``float``, and so does an integer over ``JSON_INTEGER_MAX_DIGITS`` digits
(Python will not convert it to ``int``), so ``remember`` stores it digit for digit
(``kv_json``).
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel

from chalicelib.api.http import check_encodable, reject_constant, reject_duplicate_keys, validate
from chalicelib.errors import InvalidRequest
from chalicelib.limits import JSON_INTEGER_MAX_DIGITS
from chalicelib.services.kv.json_text import JsonNumber

ModelT = TypeVar("ModelT", bound=BaseModel)


def exact_int(text: str) -> int | JsonNumber:
    """``parse_int``: an ``int``, or a ``JsonNumber`` keeping the digits of one over
    ``JSON_INTEGER_MAX_DIGITS`` digits."""
    return int(text) if len(text.lstrip("-")) <= JSON_INTEGER_MAX_DIGITS else JsonNumber(text)


def load_exact(raw_body: bytes | None) -> Any:
    """Parse a body as one JSON value of any type, numbers exact.

    Raises:
        InvalidRequest: empty, not UTF-8, not JSON, NaN/Infinity, a key given
            twice in one object, a lone surrogate, or nesting too deep.
    """
    try:
        text = (raw_body or b"").decode("utf-8")
        parsed = json.loads(
            text,
            parse_float=JsonNumber,
            parse_int=exact_int,
            parse_constant=reject_constant,
            object_pairs_hook=reject_duplicate_keys,
        )
    except RecursionError as error:
        raise InvalidRequest("The body is nested too deeply.") from error
    except (UnicodeDecodeError, ValueError) as error:
        raise InvalidRequest(f"The body is not valid JSON: {error}.") from error
    check_encodable(parsed)
    return parsed


def parse_exact_body(raw_body: bytes | None, model: type[ModelT]) -> ModelT:
    """Parse a body as one JSON object (empty means ``{}``), numbers exact, and validate it.

    Raises:
        InvalidRequest: see ``load_exact``; not an object; wrong types, unknown
            or missing fields.
    """
    parsed = load_exact(raw_body) if raw_body and raw_body.strip() else {}
    if not isinstance(parsed, dict):
        raise InvalidRequest("The body must be a JSON object.")
    return validate(parsed, model)
