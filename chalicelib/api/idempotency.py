"""``Idempotency-Key`` on the routes that change state (docs/issues.md#issue-15,
docs/reference.md#14-operations).

A view decorated with ``idempotent`` (inside ``endpoint``) behaves as before when
the request has no ``Idempotency-Key``. With one, the caller's scope and the key
name one record (``IdempotencyService``, 24 hours):

* the first request runs and its answer (status, headers, body) is stored;
* a retry with the same key and the same request (route, path, query string, body,
  ``If-Match`` and the ``X-Pinework-*`` run headers) gets that answer again, with
  ``Idempotent-Replayed: true``, and writes nothing;
* the same key with another request: 422 ``idempotency_key_reused``;
* while the first request still runs: 409 ``idempotency_key_in_use`` with
  ``Retry-After: 1``.

Answers are kept when the request ran to a decision: 2xx, and 4xx errors that the
same request would get again. Failures a retry may not repeat (5xx, 429
``rate_limited``, 409 ``conflict`` after losing races, 412 ``precondition_failed``:
nothing changed, and the retry that follows carries the fresh ``ETag``) release the
key instead, so the retry runs. The scope is the principal (agents and persons, by their bearer
token); on the key-value routes it is the principal, else the ``X-Api-Key`` or
anonymous scope (``kv_caller_scope``). docs/DECISIONS.md "Idempotency-Key".
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import zlib
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from chalice.app import Response

from chalicelib.api.http import View, error_response
from chalicelib.errors import Conflict, IdempotencyKeyInUse, InvalidRequest, PineworkError
from chalicelib.wiring import services

IDEMPOTENCY_HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
KEY_MAX_CHARS = 255
"""The longest ``Idempotency-Key`` (Stripe's limit): printable ASCII."""
DEFAULT_DEADLINE_MS = 30_000
"""How long a first request holds its key when no Lambda context says (30 s, the
API function's timeout)."""
COMPRESS_FROM_BYTES = 16_384
"""Stored bodies at least this long are kept zlib-compressed (DynamoDB items stop at 400 KB)."""
MAX_STORED_BYTES = 300_000
"""A stored (compressed) body over this is not kept; see ``_stored``."""
RUN_HEADERS = ("x-pinework-run", "x-pinework-task", "x-pinework-session", "if-match")
"""Headers that are part of a request's identity (``request_fingerprint``)."""
RELEASED_CODES = frozenset({"conflict", "rate_limited", "internal_error", "precondition_failed"})
"""Errors a retry may not get again: the key is released, not answered."""

Scope = Callable[[Any], str]
"""Names the caller's scope of keys from the request (raises ``Unauthorized``)."""


def principal_scope(request: Any) -> str:
    """The scope of a bearer route: the authenticated principal.

    Raises:
        Unauthorized: missing or unknown bearer token (before any key is read).
    """
    principal = services().auth.authenticate(request.headers.get("authorization"))
    return f"principal#{principal.workspace_id}#{principal.id}"


def idempotent(blueprint: Any, scope: Scope = principal_scope) -> Callable[[View], View]:
    """Make a state-changing view honour ``Idempotency-Key`` (see the module).

    Args:
        blueprint: the view's blueprint (its current request and Lambda context).
        scope: names the caller's key scope; ``principal_scope`` by default.

    Returns:
        A decorator; the decorated view has ``idempotent = True`` (the OpenAPI
        document reads it).
    """

    def decorate(view: View) -> View:
        @functools.wraps(view)
        def wrapped(*args: Any, **kwargs: Any) -> Response:
            request = blueprint.current_request
            header = request.headers.get(IDEMPOTENCY_HEADER.lower())
            if header is None:
                return view(*args, **kwargs)
            key = check_key(header)
            scoped_key = f"{scope(request)}#{key}"
            run_headers = [request.headers.get(name) for name in RUN_HEADERS]
            fingerprint = request_fingerprint(
                view.__name__, kwargs, request.raw_body, run_headers, canonical_query(request)
            )
            try:
                outcome = services().idempotency.run(
                    scoped_key,
                    fingerprint,
                    lambda: _answer(view, args, kwargs),
                    deadline_ms=_deadline_ms(blueprint),
                )
            except _Released as released:
                return released.response
            except IdempotencyKeyInUse as error:
                busy = error_response(error)
                busy.headers["Retry-After"] = "1"
                return busy
            response = _response(outcome.answer)
            if outcome.replayed:
                response.headers[REPLAYED_HEADER] = "true"
            return response

        wrapped.idempotent = True  # type: ignore[attr-defined]
        return wrapped

    return decorate


def is_idempotent(view: Any) -> bool:
    """Whether a (possibly further wrapped) view was decorated with ``idempotent``."""
    while view is not None:
        if getattr(view, "idempotent", False):
            return True
        view = getattr(view, "__wrapped__", None)
    return False


def check_key(header: str) -> str:
    """The key of an ``Idempotency-Key`` header: 1 to 255 printable ASCII characters.

    A key sent as a structured-field string (``"abc"``, the IETF draft's form) is
    the same key as ``abc``.

    Raises:
        InvalidRequest: empty, too long, or not printable ASCII.
    """
    key = header.strip()
    if len(key) >= 2 and key.startswith('"') and key.endswith('"'):
        key = key[1:-1]
    if not key or len(key) > KEY_MAX_CHARS or not all(" " <= ch <= "~" for ch in key):
        raise InvalidRequest(
            f"Idempotency-Key must be 1 to {KEY_MAX_CHARS} printable ASCII characters, "
            "such as a UUID; send the same key again only to retry the same request."
        )
    return key


def request_fingerprint(
    route: str,
    path_params: dict[str, Any],
    raw_body: bytes | None,
    run_headers: list[str | None] | None = None,
    query: list[tuple[str, str]] | None = None,
) -> str:
    """SHA-256 hex of what makes two requests the same: the route, its path
    parameters, the body as JSON (key order and spacing do not matter; a body that
    is not JSON counts byte for byte), the ``X-Pinework-*`` headers (an agent's run,
    task and session change what a request stores) and ``If-Match`` (``RUN_HEADERS``),
    and the query string (``canonical_query``)."""
    parts = [
        route,
        sorted(path_params.items()),
        canonical_body(raw_body),
        run_headers or [],
        query or [],
    ]
    return hashlib.sha256(json.dumps(parts, default=str).encode("utf-8")).hexdigest()


def canonical_query(request: Any) -> list[tuple[str, str]]:
    """The query string for the fingerprint: every (name, value) pair, repeated names
    included, sorted, so ``?b=2&a=1`` is the same request as ``?a=1&b=2`` and
    ``?a=1&a=2`` is not ``?a=1`` (docs/reference.md#14-operations)."""
    params = request.query_params
    if not params:
        return []
    return sorted((name, value) for name in params for value in params.getlist(name))


def canonical_body(raw_body: bytes | None) -> str:
    """A body's text for the fingerprint: its JSON value with object keys sorted
    (numbers exactly as sent, ``1`` unlike ``1.0`` and ``"1"``); ``raw:<sha256>`` when
    it is not JSON; ``empty`` when there is none."""
    if not raw_body or not raw_body.strip():
        return "empty"
    try:
        parsed = json.loads(raw_body.decode("utf-8"), parse_float=Decimal, parse_constant=str)
        return repr(_sorted_json(parsed))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return "raw:" + hashlib.sha256(raw_body).hexdigest()


def _sorted_json(value: Any) -> Any:
    """A JSON value as nested tuples with every object's keys sorted."""
    if isinstance(value, dict):
        return ("{", tuple(sorted((k, _sorted_json(v)) for k, v in value.items())))
    if isinstance(value, list):
        return ("[", tuple(_sorted_json(item) for item in value))
    return value


class _Released(Exception):
    """The answer is sent but not kept: the key is released (``RELEASED_CODES``, 5xx)."""

    def __init__(self, response: Response) -> None:
        super().__init__(response.status_code)
        self.response = response


def _answer(view: View, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Run the view once and return its answer to keep, or raise to release the key."""
    try:
        response = view(*args, **kwargs)
    except PineworkError as error:
        if error.code in RELEASED_CODES:
            raise
        response = error_response(error)
    if response.status_code >= 500 or response.status_code == 429:
        raise _Released(response)
    return _stored(response)


def _stored(response: Response) -> dict[str, Any]:
    """A Chalice response as a JSON-ready record (bodies over 16 KiB zlib-compressed).

    An answer too large to keep even compressed (over 300 KB, several MB of JSON)
    is kept as a 409 ``conflict`` telling a retry to read the result instead: the
    retry still writes nothing.
    """
    body = response.body
    text = body.decode("utf-8") if isinstance(body, bytes) else str(body or "")
    headers = {name: value for name, value in (response.headers or {}).items()}
    if len(text) < COMPRESS_FROM_BYTES:
        return {"status": response.status_code, "headers": headers, "body": text}
    packed = base64.b64encode(zlib.compress(text.encode("utf-8"))).decode("ascii")
    if len(packed) <= MAX_STORED_BYTES:
        return {"status": response.status_code, "headers": headers, "zbody": packed}
    too_large = error_response(
        Conflict(
            "The first request with this Idempotency-Key succeeded, but its answer was too "
            "large to keep; read the result (for a review: GET /reviews)."
        )
    )
    return _stored(too_large)


def _response(answer: dict[str, Any]) -> Response:
    """Rebuild the Chalice response of a stored (or just made) answer."""
    if "zbody" in answer:
        body = zlib.decompress(base64.b64decode(answer["zbody"])).decode("utf-8")
    else:
        body = answer["body"]
    return Response(body=body, status_code=int(answer["status"]), headers=dict(answer["headers"]))


def _deadline_ms(blueprint: Any) -> int:
    """The time the request may still run: the Lambda context's, else 30 s."""
    try:
        remaining = blueprint.lambda_context.get_remaining_time_in_millis()
    except (AttributeError, RuntimeError):
        return DEFAULT_DEADLINE_MS
    if isinstance(remaining, int | float) and remaining > 0:
        return int(remaining)
    return DEFAULT_DEADLINE_MS
