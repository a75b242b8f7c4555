"""HTTP plumbing under :class:`pinework.Client` and :class:`pinework.AsyncClient`:
an authenticated session that sends the requests of ``pinework._calls``, retries what is
safe to retry, decodes answers into models and turns every failure into a
:class:`PineworkAPIError` (docs/reference.md#6-errors). The headers, the retries, the
decoding and the error mapping are written once (``_Session``); the two transports differ
only in how one request is exchanged and how a pause is waited (``ApiSession`` on
``httpx.Client``, ``AsyncApiSession`` on ``httpx.AsyncClient``).
"""

from __future__ import annotations

import asyncio
import copy
import datetime as dt
import inspect
import math
import os
import time
import uuid
from collections.abc import Callable, Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any, Self, TypedDict, TypeVar
from urllib.parse import quote

import httpx
from pydantic import ValidationError

from pinework.errors import CONNECTION_ERROR, INVALID_RESPONSE, PineworkAPIError
from pinework.models import WireModel

if TYPE_CHECKING:
    from pinework._calls import Request

DEFAULT_API_URL = "http://127.0.0.1:8000"
"""Where the local server listens; used when ``PINEWORK_API_URL`` is unset."""

API_PREFIX = "/api/v1"
"""Path prefix of every route (docs/reference.md#7-http-api), appended to the base URL."""

DEFAULT_TIMEOUT = 30.0
"""Seconds to wait per request phase; API Gateway itself gives up at 29 s."""

ModelT = TypeVar("ModelT", bound=WireModel)

try:
    _USER_AGENT = f"pinework-python/{version('pinework')}"
except PackageNotFoundError:  # a source tree that is not installed
    _USER_AGENT = "pinework-python"


RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
"""Answers worth another try of a request that is safe to repeat."""
RUN_HEADER_LIMIT = 128
"""Characters of a run header: run id, task key, session id (docs/reference.md#5-limits)."""
MAX_RETRY_DELAY = 10.0
"""The longest wait between two tries, in seconds (a longer ``Retry-After`` is cut)."""


class _Session:
    """What the sync and the async session share: headers, retries, decoding.

    Args:
        base_url: the server root, without or with the ``/api/v1`` prefix.
        token: bearer token; ``None`` sends no ``Authorization`` header.
        run_id: sent as ``X-Pinework-Run`` when set.
        task_key: sent as ``X-Pinework-Task`` when set.
        transport: an httpx transport (sync or async, as the session) instead of the network.
        timeout: seconds per request phase.
        api_key: sent as ``X-Api-Key`` when set (key-value scope, docs/reference.md#10-key-value).
        max_retries: how often a request that is safe to repeat is sent again after a
            connection error, a timeout, 429, 5xx or 409 ``idempotency_key_in_use``.
            A request that changes state is safe to repeat because it carries an
            ``Idempotency-Key`` (one is made when the caller gave none).

    Raises:
        ValueError: ``base_url`` is not an ``http://`` or ``https://`` URL,
            ``max_retries`` is negative, or a header value cannot be sent (``header_value``).
    """

    def __init__(
        self,
        base_url: str,
        token: str | None,
        run_id: str | None,
        task_key: str | None,
        transport: Any,
        timeout: float,
        *,
        api_key: str | None = None,
        max_retries: int = 0,
    ) -> None:
        if max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        self.api_url = api_root(base_url)
        self.max_retries = max_retries
        self.headers = {"Accept": "application/json", "User-Agent": _USER_AGENT}
        if token:
            self.headers["Authorization"] = f"Bearer {header_value(token, 'the token', 4096)}"
        if run_id:
            self.headers["X-Pinework-Run"] = header_value(run_id, "the run id", RUN_HEADER_LIMIT)
        if task_key:
            self.headers["X-Pinework-Task"] = header_value(
                task_key, "the task key", RUN_HEADER_LIMIT
            )
        if api_key:
            self.headers["X-Api-Key"] = header_value(api_key, "the X-Api-Key", 4096)
        # The headers of the run a per-run session is bound to (for_run), over the above.
        self.run_headers: dict[str, str] = {}
        # A per-run session shares its parent's connections and leaves closing them to it.
        self.owns_connections = True
        self.connect(transport, timeout)

    def connect(self, transport: Any, timeout: float) -> None:
        """Open the connection pool (the transport's own)."""
        raise NotImplementedError

    def for_run(self, run_id: str | None, task_key: str | None, session_id: str | None) -> Self:
        """A copy of this session that sends a run's headers (those given) with every
        request and shares the connections: ``ClientCore.for_run`` (pinework/_core.py).

        Raises:
            ValueError: a value that cannot be a header (``header_value``).
        """
        given = {
            "X-Pinework-Session": (session_id, "the session id"),
            "X-Pinework-Task": (task_key, "the task key"),
            "X-Pinework-Run": (run_id, "the run id"),
        }
        bound = copy.copy(self)
        bound.owns_connections = False
        bound.run_headers = {
            **self.run_headers,
            **{
                name: header_value(value, what, RUN_HEADER_LIMIT)
                for name, (value, what) in given.items()
                if value
            },
        }
        return bound

    async def exchange(self, call: Request[Any], headers: dict[str, str]) -> httpx.Response:
        """Send one request with ``headers`` over the client's; the transport's own.

        Raises:
            httpx.TransportError: no answer arrived.
        """
        raise NotImplementedError

    async def pause(self, seconds: float, sleep: Callable[[float], object] | None = None) -> None:
        """Wait ``seconds`` (``sleep``: the caller's own way to wait); the transport's own."""
        raise NotImplementedError

    async def send(self, call: Request[ModelT]) -> ModelT:
        """Send one request (retrying as ``max_retries`` allows) and decode its answer.

        Returns:
            The decoded answer; its ``raw`` is the body as received, its ``etag`` the
            ``ETag`` header.

        Raises:
            PineworkAPIError: the server's error envelope; ``connection_error``
                (status 0) when no answer arrived; ``invalid_response`` when the
                answer is not the documented JSON.
        """
        headers = self.request_headers(call)
        attempt = 0
        while True:
            try:
                response = await self.exchange(call, headers)
            except httpx.TransportError as exc:
                delay = self.retry_delay(call, headers, attempt, None)
                if delay is None:
                    raise self.connection_error(exc) from exc
            else:
                delay = self.retry_delay(call, headers, attempt, response)
                if delay is None:
                    return self.decode(call, response)
            await self.pause(delay)
            attempt += 1

    def request_headers(self, call: Request[Any]) -> dict[str, str]:
        """The run's headers and the call's own, with an ``Idempotency-Key`` when the call
        changes state and may be retried (the same key on every try)."""
        headers = {**self.run_headers, **call.headers}
        if call.changes_state and self.max_retries and "Idempotency-Key" not in headers:
            headers["Idempotency-Key"] = str(uuid.uuid4())
        return headers

    def retry_delay(
        self,
        call: Request[Any],
        headers: dict[str, str],
        attempt: int,
        response: httpx.Response | None,
    ) -> float | None:
        """Seconds to wait before the next try, or None to stop (``response`` is None
        after a connection error or a timeout)."""
        if attempt >= self.max_retries:
            return None
        if call.changes_state and "Idempotency-Key" not in headers:
            return None  # not safe to repeat
        if response is not None:
            in_use = (
                response.status_code == 409 and _error_code(response) == "idempotency_key_in_use"
            )
            if response.status_code not in RETRY_STATUSES and not in_use:
                return None
            given = _retry_after(response.headers.get("Retry-After"))
            if given is not None:
                return min(given, MAX_RETRY_DELAY)
        backoff: float = 0.5 * 2**attempt
        return min(backoff, MAX_RETRY_DELAY)

    def connection_error(self, exc: httpx.TransportError) -> PineworkAPIError:
        """The client's ``connection_error`` for a request that got no answer."""
        return PineworkAPIError(
            CONNECTION_ERROR,
            f"could not reach the Pinework API at {self.api_url} "
            f"({type(exc).__name__}: {str(exc) or 'no detail'}); check PINEWORK_API_URL "
            "and that the server is running",
            0,
        )

    def decode(self, call: Request[ModelT], response: httpx.Response) -> ModelT:
        """Decode a 2xx answer into the call's model (with its ``ETag``), or raise the
        error the answer carries."""
        data = _success_json(response)
        try:
            model = call.model.from_wire(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "body"
            raise PineworkAPIError(
                INVALID_RESPONSE,
                f"{call.method} {response.request.url} answered with JSON that is not a "
                f"{call.model.__name__} ({exc.error_count()} problem(s); first: {where}: "
                f"{first['msg']}); is PINEWORK_API_URL a Pinework server of a compatible "
                "version?",
                response.status_code,
            ) from exc
        model._etag = response.headers.get("ETag")
        return model


class ApiSession(_Session):
    """The sync transport: an ``httpx.Client`` bound to one API root and one principal (see
    ``_Session``). Its ``exchange`` and ``pause`` block, so the coroutines of
    ``pinework._core`` that use them finish without ever suspending.

    """

    def connect(self, transport: httpx.BaseTransport | None, timeout: float) -> None:
        """Open an ``httpx.Client`` with the principal's headers."""
        self._http = httpx.Client(
            base_url=self.api_url, headers=self.headers, transport=transport, timeout=timeout
        )

    def close(self) -> None:
        """Close the underlying connections (a per-run session leaves them open)."""
        if self.owns_connections:
            self._http.close()

    async def exchange(self, call: Request[Any], headers: dict[str, str]) -> httpx.Response:
        """Send one request and wait for its answer (blocking).

        Raises:
            httpx.TransportError: no answer arrived.
        """
        return self._http.request(
            call.method, call.path, json=call.json, params=call.params, headers=headers
        )

    async def pause(self, seconds: float, sleep: Callable[[float], object] | None = None) -> None:
        """Wait ``seconds`` (blocking: ``time.sleep`` unless ``sleep`` is given)."""
        (time.sleep if sleep is None else sleep)(seconds)


class AsyncApiSession(_Session):
    """The async transport: an ``httpx.AsyncClient`` bound to one API root and one principal
    (see ``_Session``): the same requests, retries and answers as ``ApiSession``.

    """

    def connect(self, transport: httpx.AsyncBaseTransport | None, timeout: float) -> None:
        """Open an ``httpx.AsyncClient`` with the principal's headers."""
        self._http = httpx.AsyncClient(
            base_url=self.api_url, headers=self.headers, transport=transport, timeout=timeout
        )

    async def close(self) -> None:
        """Close the underlying connections (a per-run session leaves them open)."""
        if self.owns_connections:
            await self._http.aclose()

    async def exchange(self, call: Request[Any], headers: dict[str, str]) -> httpx.Response:
        """Send one request and await its answer.

        Raises:
            httpx.TransportError: no answer arrived.
        """
        return await self._http.request(
            call.method, call.path, json=call.json, params=call.params, headers=headers
        )

    async def pause(self, seconds: float, sleep: Callable[[float], object] | None = None) -> None:
        """Wait ``seconds`` (``asyncio.sleep`` unless ``sleep`` is given; its result is
        awaited when it is awaitable)."""
        if sleep is None:
            await asyncio.sleep(seconds)
            return
        waited = sleep(seconds)
        if inspect.isawaitable(waited):
            await waited


class EnvSettings(TypedDict):
    """What ``settings_from_env`` reads (keyword arguments of both clients)."""

    base_url: str
    token: str | None
    run_id: str | None
    task_key: str | None
    api_key: str | None


def settings_from_env(environ: Mapping[str, str] | None = None) -> EnvSettings:
    """A client's settings from ``PINEWORK_API_URL``, ``PINEWORK_TOKEN``,
    ``PINEWORK_RUN``, ``PINEWORK_TASK`` (docs/reference.md#12-cli) and ``PINEWORK_API_KEY``.

    Args:
        environ: the variables to read; ``os.environ`` when omitted.

    Returns:
        Keyword arguments of ``Client`` / ``AsyncClient``; unset or empty variables
        are ``None`` (the URL falls back to ``DEFAULT_API_URL``).
    """
    env = os.environ if environ is None else environ

    def read(name: str) -> str | None:
        return env.get(name, "").strip() or None

    return {
        "base_url": read("PINEWORK_API_URL") or DEFAULT_API_URL,
        "token": read("PINEWORK_TOKEN"),
        "run_id": read("PINEWORK_RUN"),
        "task_key": read("PINEWORK_TASK"),
        "api_key": read("PINEWORK_API_KEY"),
    }


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


def header_value(value: str, what: str, limit: int) -> str:
    """``value`` as an HTTP header value the server takes (docs/reference.md#run-headers):
    printable ASCII (spaces inside), at most ``limit`` characters; checked here so a bad
    one is named before anything is sent, not reported as a connection error.

    Raises:
        ValueError: a character outside printable ASCII (named with its position), white
            space at either end, or too long.
    """
    for position, char in enumerate(value, start=1):
        if not " " <= char <= "~":
            raise ValueError(
                f"{what} holds {char!r} (U+{ord(char):04X}) at character {position}: only "
                "printable ASCII (letters, digits, spaces and punctuation) can be sent in a "
                "header"
            )
    if value != value.strip():
        raise ValueError(f"{what} starts or ends with white space: {value!r}")
    if len(value) > limit:
        raise ValueError(f"{what} has {len(value)} characters; the limit is {limit}")
    return value


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
    """Render an expiry for the wire (docs/reference.md#7-http-api: an RFC 3339 timestamp or a
    date).

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
    """Turn a non-2xx response into the error of its envelope (docs/reference.md#6-errors)."""
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


def _error_code(response: httpx.Response) -> str | None:
    """The ``error.code`` of an answer's envelope, if it has one."""
    try:
        body = response.json()
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) else None


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
