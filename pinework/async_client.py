"""The asyncio client of the Pinework Memory HTTP API (docs/issues.md#issue-15-item-5), for agents
that run on an event loop.

:class:`AsyncClient` has the methods of :class:`pinework.Client`, with the same
arguments and results, as coroutines over one ``httpx.AsyncClient``. Both are made from the
one description of each request in ``pinework._calls`` (``pinework._core``), so they cannot
drift apart (a test compares the requests they send); see :class:`pinework.Client` for
what each argument means.

Example::

    async with AsyncClient.from_env(max_retries=2) as client:
        memory = await client.save_fact("The deploy bucket is in eu-west-1.")
        result = await client.recall(query="deploy")
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx

from pinework._calls import Invoke, Pages, Runnable
from pinework._core import ClientCore
from pinework._wire import AsyncApiSession

__all__ = ["AsyncClient"]

T = TypeVar("T")


class AsyncClient(ClientCore[AsyncApiSession, httpx.AsyncBaseTransport]):
    """A connection to one Pinework API as one principal, for asyncio code.

    Args:
        base_url: see :class:`pinework.Client`.
        token: see :class:`pinework.Client`.
        run_id: see :class:`pinework.Client`.
        task_key: see :class:`pinework.Client`.
        transport: an async httpx transport to use instead of the network (tests
            pass an ``httpx.MockTransport``).
        timeout: seconds per request phase.
        api_key: see :class:`pinework.Client`.
        max_retries: see :class:`pinework.Client` (waits with ``asyncio.sleep``).

    Every method raises :class:`pinework.PineworkAPIError` for a failed call (the
    error codes of :class:`pinework.Client`'s method of the same name) and
    ``ValueError`` for arguments that cannot be sent. :meth:`for_run` gives a client bound
    to one run.

    Raises:
        ValueError: ``base_url`` is not an ``http://`` or ``https://`` URL.
    """

    session_class = AsyncApiSession

    async def run(self, program: Runnable[T]) -> T:
        """Run a request description or a program of them (as :meth:`pinework.Client.run`).

        Raises:
            PineworkAPIError: a refusal the program did not catch.
        """
        return await self._result(program)

    async def aclose(self) -> None:
        """Close the underlying connections. The client is unusable afterwards."""
        await self._session.close()

    async def __aenter__(self) -> Self:
        """Use the client in an ``async with`` block.

        Returns:
            The client itself.
        """
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Close the client at the end of the ``async with`` block."""
        await self.aclose()

    async def _iterate(self, listing: Pages[Any]) -> AsyncIterator[Any]:
        steps = iter(listing)
        while not (answer := await self._next(steps))[0]:
            yield answer[1]

    async def _invoke(self, step: Invoke) -> Any:
        return await getattr(self, step.operation)(*step.args, **step.kwargs)

    @staticmethod
    def _operation_method(
        build: Callable[..., Runnable[Any]],
    ) -> Callable[..., Coroutine[Any, Any, Any]]:
        async def method(self: AsyncClient, *args: Any, **kwargs: Any) -> Any:
            return await self.run(build(*args, **kwargs))

        return method

    @staticmethod
    def _listing_method(build: Callable[..., Pages[Any]]) -> Callable[..., AsyncIterator[Any]]:
        async def method(self: AsyncClient, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            async for item in self._iterate(build(*args, **kwargs)):
                yield item

        return method
