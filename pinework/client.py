"""The Python client of the Pinework Memory HTTP API (docs/reference.md#7-http-api,
docs/reference.md#10-key-value).

One :class:`Client` wraps an ``httpx.Client``, adds the bearer token and the
run/task headers to every request, and turns answers into the typed models of
:mod:`pinework.models`. Every failure is a :class:`PineworkAPIError`. Its methods are the
operations described once in ``pinework._calls`` (shared with :class:`pinework.AsyncClient`
through ``pinework._core``).

Example::

    with Client.from_env() as client:
        memory = client.save_fact("The deploy bucket is in eu-west-1.")
        for scored in client.recall(query="deploy").memories:
            print(scored.score, scored.memory.text)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx

from pinework._calls import Invoke, Pages, Runnable
from pinework._core import ClientCore, complete
from pinework._wire import API_PREFIX, DEFAULT_API_URL, DEFAULT_TIMEOUT, ApiSession
from pinework.errors import PineworkAPIError

__all__ = ["API_PREFIX", "DEFAULT_API_URL", "DEFAULT_TIMEOUT", "Client", "PineworkAPIError"]

T = TypeVar("T")


class Client(ClientCore[ApiSession, httpx.BaseTransport]):
    """A connection to one Pinework API as one principal.

    Args:
        base_url: the server root (``PINEWORK_API_URL``), without or with the
            ``/api/v1`` prefix, e.g. ``http://127.0.0.1:8000``.
        token: the bearer token of an agent or a person; ``None`` sends no
            ``Authorization`` header (anonymous; only the key-value routes accept it).
        run_id: sent as ``X-Pinework-Run`` when set.
        task_key: sent as ``X-Pinework-Task`` when set (e.g. ``PIN-42``).
        transport: an httpx transport to use instead of the network (tests pass
            an ``httpx.MockTransport``).
        timeout: seconds per request phase.
        api_key: sent as ``X-Api-Key`` (a bring-your-own key scoping the
            key-value tools, docs/reference.md#10-key-value); a bearer token takes precedence.
        max_retries: how often a request is sent again after a connection error, a
            timeout, 429, 5xx or 409 ``idempotency_key_in_use`` (default 0). Requests
            that change state then carry an ``Idempotency-Key`` (yours, or one the
            client makes), so a retry never writes twice.

    The methods that change state take ``idempotency_key`` (send the same key
    again to retry safely, within 24 hours); those that change one memory take
    ``if_match`` (its ``etag``: refused with ``precondition_failed`` when someone
    changed it since). :meth:`for_run` gives a client bound to one run.

    Raises:
        ValueError: ``base_url`` is not an ``http://`` or ``https://`` URL.
    """

    session_class = ApiSession

    def run(self, program: Runnable[T]) -> T:
        """Run a request description or a program of them (``pinework._calls``; the
        integrations' programs) and return its result.

        Raises:
            PineworkAPIError: a refusal the program did not catch.
        """
        return complete(self._result(program))

    def close(self) -> None:
        """Close the underlying connections. The client is unusable afterwards."""
        self._session.close()

    def __enter__(self) -> Self:
        """Use the client in a ``with`` block.

        Returns:
            The client itself.
        """
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Close the client at the end of the ``with`` block."""
        self.close()

    def _iterate(self, listing: Pages[Any]) -> Iterator[Any]:
        steps = iter(listing)
        while not (answer := complete(self._next(steps)))[0]:
            yield answer[1]

    async def _invoke(self, step: Invoke) -> Any:
        return getattr(self, step.operation)(*step.args, **step.kwargs)

    @staticmethod
    def _operation_method(build: Callable[..., Runnable[Any]]) -> Callable[..., Any]:
        def method(self: Client, *args: Any, **kwargs: Any) -> Any:
            return self.run(build(*args, **kwargs))

        return method

    @staticmethod
    def _listing_method(build: Callable[..., Pages[Any]]) -> Callable[..., Iterator[Any]]:
        def method(self: Client, *args: Any, **kwargs: Any) -> Iterator[Any]:
            return self._iterate(build(*args, **kwargs))

        return method
