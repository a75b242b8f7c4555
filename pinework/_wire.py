"""HTTP plumbing under :class:`pinework.Client`: one authenticated session that
sends JSON, decodes answers into models and turns every failure into a
:class:`PineworkAPIError` (SPEC §6).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
from pydantic import ValidationError

from pinework.errors import CONNECTION_ERROR, INVALID_RESPONSE, PineworkAPIError
from pinework.models import WireModel

DEFAULT_API_URL = "http://127.0.0.1:8000"
"""Where the local server listens; used when ``PINEWORK_API_URL`` is unset."""

API_PREFIX = "/api/v1"
"""Path prefix of every route (SPEC §7), appended to the base URL."""

DEFAULT_TIMEOUT = 30.0
"""Seconds to wait per request phase; API Gateway itself gives up at 29 s."""

ModelT = TypeVar("ModelT", bound=WireModel)

try:
    _USER_AGENT = f"pinework-python/{version('pinework')}"
except PackageNotFoundError:  # a source tree that is not installed
    _USER_AGENT = "pinework-python"


class ApiSession:
    """An ``httpx.Client`` bound to one API root and one principal.

    Args:
        base_url: the server root, without or with the ``/api/v1`` prefix.
        token: bearer token; ``None`` sends no ``Authorization`` header.
        run_id: sent as ``X-Pinework-Run`` when set.
        task_key: sent as ``X-Pinework-Task`` when set.
        transport: an httpx transport to use instead of the network.
        timeout: seconds per request phase.
        api_key: sent as ``X-Api-Key`` when set (key-value scope, SPEC §10).

    Raises:
        ValueError: ``base_url`` is not an ``http://`` or ``https://`` URL.
    """

    def __init__(
        self,
        base_url: str,
        token: str | None,
        run_id: str | None,
        task_key: str | None,
        transport: httpx.BaseTransport | None,
        timeout: float,
        *,
        api_key: str | None = None,
    ) -> None:
        self.api_url = api_root(base_url)
        headers = {"Accept": "application/json", "User-Agent": _USER_AGENT}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if run_id:
            headers["X-Pinework-Run"] = run_id
        if task_key:
            headers["X-Pinework-Task"] = task_key
        if api_key:
            headers["X-Api-Key"] = api_key
        self._http = httpx.Client(
            base_url=self.api_url, headers=headers, transport=transport, timeout=timeout
        )

    def close(self) -> None:
        """Close the underlying connections."""
        self._http.close()

    def call(
        self,
        method: str,
        path: str,
        model: type[ModelT],
        *,
        json: Any = None,
        params: Mapping[str, str] | None = None,
    ) -> ModelT:
        """Send one request and decode its 2xx answer into ``model``.

        Args:
            method: the HTTP method.
            path: the route below ``/api/v1``, e.g. ``/memories``.
            model: the result type.
            json: the JSON body, if any.
            params: the query parameters, if any.

        Returns:
            The decoded answer; its ``raw`` is the body as received.

        Raises:
            PineworkAPIError: the server's error envelope; ``connection_error``
                (status 0) when no answer arrived; ``invalid_response`` when the
                answer is not the documented JSON.
        """
        response = self._send(method, path, json=json, params=params)
        data = _success_json(response)
        try:
            return model.from_wire(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "body"
            raise PineworkAPIError(
                INVALID_RESPONSE,
                f"{method} {response.request.url} answered with JSON that is not a "
                f"{model.__name__} ({exc.error_count()} problem(s); first: {where}: "
                f"{first['msg']}); is PINEWORK_API_URL a Pinework server of a compatible "
                "version?",
                response.status_code,
            ) from exc

    def _send(
        self,
        method: str,
        path: str,
        *,
        json: Any,
        params: Mapping[str, str] | None,
    ) -> httpx.Response:
        try:
            return self._http.request(method, path, json=json, params=params)
        except httpx.TransportError as exc:
            raise PineworkAPIError(
                CONNECTION_ERROR,
                f"could not reach the Pinework API at {self.api_url} "
                f"({type(exc).__name__}: {str(exc) or 'no detail'}); check PINEWORK_API_URL "
                "and that the server is running",
                0,
            ) from exc


def api_root(base_url: str) -> str:
    """Normalise a base URL to end with exactly one ``/api/v1``.

    Args:
        base_url: e.g. ``http://127.0.0.1:8000`` or ``https://host/api/v1/``.

    Returns:
        The URL without a trailing slash, ending in ``/api/v1``.

    Raises:
        ValueError: not an ``http://`` or ``https://`` URL.
    """
    url = base_url.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise ValueError(
            f"the API URL must start with http:// or https://, got {base_url!r} "
            "(check PINEWORK_API_URL)"
        )
    return url if url.endswith(API_PREFIX) else url + API_PREFIX


def memory_path(memory_id: str, action: str | None = None) -> str:
    """Build ``/memories/{id}[/{action}]`` with the id escaped as one path segment.

    Args:
        memory_id: the ``mem_…`` id as given by the caller.
        action: a sub-resource such as ``archive``.

    Returns:
        The path below ``/api/v1``.

    Raises:
        ValueError: the id is empty or a dot segment (it would address another route).
    """
    path = f"/memories/{path_segment(memory_id, 'a memory id')}"
    return f"{path}/{action}" if action else path


def path_segment(value: str, what: str) -> str:
    """``value`` escaped as one URL path segment.

    Args:
        value: an id or number as given by the caller.
        what: what it names, for the error (``a memory id``, ``an action``).

    Raises:
        ValueError: ``value`` is empty or a dot segment (it would address another route).
    """
    if value in ("", ".", ".."):
        raise ValueError(f"not {what}: {value!r}")
    return quote(value, safe="")


def format_expiry(value: str | dt.datetime | dt.date) -> str:
    """Render an expiry for the wire (SPEC §7: an RFC 3339 timestamp or a date).

    Args:
        value: an aware datetime, a date (the end of that UTC day, server-side),
            or a string passed through unchanged.

    Returns:
        ``YYYY-MM-DDTHH:MM:SS[.ffffff]Z`` for datetimes, ``YYYY-MM-DD`` for dates.

    Raises:
        ValueError: a naive datetime (its time zone would be a guess).
    """
    if isinstance(value, dt.datetime):
        if value.utcoffset() is None:
            raise ValueError("expires_at must be timezone-aware (e.g. tzinfo=datetime.UTC)")
        return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _success_json(response: httpx.Response) -> Any:
    """Decode a 2xx body, or raise the error the response carries."""
    if not response.is_success:
        raise _error_from(response)
    try:
        return response.json()
    except ValueError as exc:
        raise PineworkAPIError(
            INVALID_RESPONSE,
            f"{response.request.method} {response.request.url} answered HTTP "
            f"{response.status_code} with a body that is not JSON: {_snippet(response)}",
            response.status_code,
        ) from exc


def _error_from(response: httpx.Response) -> PineworkAPIError:
    """Turn a non-2xx response into the error of its envelope (SPEC §6)."""
    retry_after = _retry_after(response.headers.get("Retry-After"))
    try:
        body = response.json()
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        code, message = error.get("code"), error.get("message")
        if isinstance(code, str) and code and isinstance(message, str):
            return PineworkAPIError(code, message, response.status_code, retry_after=retry_after)
    return PineworkAPIError(
        INVALID_RESPONSE,
        f"{response.request.method} {response.request.url} answered HTTP "
        f"{response.status_code} without a Pinework error envelope: {_snippet(response)}",
        response.status_code,
        retry_after=retry_after,
    )


def _retry_after(header: str | None) -> float | None:
    """Parse a ``Retry-After`` given in seconds; HTTP dates and junk give ``None``."""
    if header is None:
        return None
    try:
        seconds = float(header)
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _snippet(response: httpx.Response, limit: int = 200) -> str:
    """The start of a response body, for error messages."""
    text = response.text.strip()
    if not text:
        return "(empty body)"
    return repr(text[:limit] + ("…" if len(text) > limit else ""))
