"""The HTTP edge: body parsing, the error envelope, JSON responses (docs/conventions.md#rule-2).

Bodies are parsed from ``raw_body`` ourselves, so broken JSON is our
``invalid_request`` and Chalice's own error shape never reaches a client. Every
view is wrapped by ``endpoint``: domain errors become their status and the
envelope; anything unexpected becomes a logged 500 in the same envelope.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from chalice.app import Response
from pydantic import BaseModel, ValidationError

from chalicelib.api.observe import note_error
from chalicelib.errors import (
    STATUS_BY_CODE,
    InvalidRequest,
    MethodNotAllowed,
    PineworkError,
    RateLimited,
)
from chalicelib.limits import JSON_INTEGER_MAX_DIGITS

logger = logging.getLogger(__name__)

ModelT = TypeVar("ModelT", bound=BaseModel)
View = Callable[..., Response]

_WRAPPED_VIEWS: set[str] = set()
"""Names of the views wrapped by ``endpoint``; a test checks every route is here."""


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """Render ``body`` as compact UTF-8 JSON with the given status."""
    return Response(
        body=json.dumps(body, ensure_ascii=False, separators=(",", ":")),
        status_code=status,
        headers={"Content-Type": "application/json", **(headers or {})},
    )


ANY_CONTENT = ["*/*"]
"""Route content types: any reaches our own parser, so Chalice's 415 never does."""


def error_response(error: PineworkError) -> Response:
    """Render a domain error as ``{"error": {"code", "message"}}`` with its status
    (docs/reference.md#6-errors)."""
    status = STATUS_BY_CODE.get(error.code, 500)
    note_error(error.code)
    headers = None
    if isinstance(error, RateLimited):
        headers = {"Retry-After": str(error.retry_after_seconds)}
    return json_response({"error": {"code": error.code, "message": error.message}}, status, headers)


def endpoint(view: View) -> View:
    """Wrap a view so every failure leaves in the spec's envelope, never Chalice's."""

    @functools.wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Response:
        try:
            return view(*args, **kwargs)
        except PineworkError as error:
            return error_response(error)
        except Exception:
            # Written as type, AWS code and frames only (chalicelib.api.telemetry).
            logger.exception("unhandled error in %s", view.__name__)
            return error_response(PineworkError("Something went wrong on our side; try again."))

    _WRAPPED_VIEWS.add(view.__name__)
    return wrapped


ALL_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD")


def reject_other_methods(blueprint: Any, allowed: dict[str, list[str]]) -> None:
    """Answer every method a path does not serve with 405 in our envelope.

    Without this, Chalice answers in its own error shape (docs/conventions.md#rule-2).

    Args:
        blueprint: the Chalice blueprint the paths belong to.
        allowed: path -> the methods its real views serve.
    """
    for path, methods in allowed.items():
        others = [method for method in ALL_METHODS if method not in methods]

        def not_allowed(*_: Any, _methods: list[str] = methods, **__: Any) -> Response:
            response = error_response(
                MethodNotAllowed(f"Use {' or '.join(_methods)} on this path.")
            )
            response.headers["Allow"] = ", ".join(_methods)
            return response

        not_allowed.__name__ = "not_allowed_" + "".join(ch if ch.isalnum() else "_" for ch in path)
        blueprint.route(path, methods=others, content_types=ANY_CONTENT)(endpoint(not_allowed))


def parse_json_body(raw_body: bytes | None) -> dict[str, Any]:
    """Parse a request body as one JSON object; an empty body is ``{}``.

    Raises:
        InvalidRequest: not UTF-8, not JSON, NaN/Infinity, a lone surrogate, or
            not an object.
    """
    if not raw_body or not raw_body.strip():
        return {}
    try:
        text = raw_body.decode("utf-8")
        parsed = json.loads(
            text,
            parse_int=limited_int,
            parse_constant=reject_constant,
            object_pairs_hook=reject_duplicate_keys,
        )
    except RecursionError as error:
        raise InvalidRequest("The body is nested too deeply.") from error
    except (UnicodeDecodeError, ValueError) as error:
        raise InvalidRequest(f"The body is not valid JSON: {error}.") from error
    if not isinstance(parsed, dict):
        raise InvalidRequest("The body must be a JSON object.")
    check_encodable(parsed)
    return parsed


def parse_body(raw_body: bytes | None, model: type[ModelT]) -> ModelT:
    """Parse and validate a body against a request model.

    Raises:
        InvalidRequest: see ``parse_json_body``; wrong types; unknown or missing fields.
    """
    return validate(parse_json_body(raw_body), model)


def validate(data: dict[str, Any], model: type[ModelT]) -> ModelT:
    """Validate a dict against a model, turning pydantic errors into ``invalid_request``."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise InvalidRequest(describe(error)) from error


def describe(error: ValidationError) -> str:
    """A one-line account of what was wrong in a request."""
    problems = []
    for item in error.errors()[:3]:
        where = ".".join(str(part) for part in item["loc"]) or "body"
        kind = item["type"]
        if kind == "extra_forbidden":
            problems.append(f"unknown field {where!r}")
        elif kind == "missing":
            problems.append(f"{where!r} is required")
        else:
            problems.append(f"{where!r}: {item['msg']}")
    return "Invalid request: " + "; ".join(problems) + "."


def reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook``: build a JSON object, refusing a key given twice."""
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"the key {key!r} appears twice")
        result[key] = value
    return result


def limited_int(text: str) -> int:
    """``parse_int``: an integer of at most ``JSON_INTEGER_MAX_DIGITS`` digits.

    Raises:
        InvalidRequest: a longer integer (Python's own error would name its internals).
    """
    digits = len(text.lstrip("-"))
    if digits > JSON_INTEGER_MAX_DIGITS:
        raise InvalidRequest(
            f"A number in the body has {digits} digits; numbers here have at most "
            f"{JSON_INTEGER_MAX_DIGITS}."
        )
    return int(text)


def reject_constant(name: str) -> Any:
    """``parse_constant``: NaN and Infinity are not JSON."""
    raise ValueError(f"{name} is not JSON")


def check_encodable(value: Any) -> None:
    """Reject lone surrogates anywhere (valid JSON text, but not encodable UTF-8).

    Iterative, so any nesting depth the parser accepted is checked without recursion.

    Raises:
        InvalidRequest: a string (or key) holds a lone surrogate.
    """
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as error:
                raise InvalidRequest("The body holds an invalid Unicode character.") from error
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
