"""The one client core (docs/issues.md#issue-48, item 5): what :class:`pinework.Client` and
:class:`pinework.AsyncClient` are, written once.

* The requests are described once, in ``pinework._calls``; :class:`ClientCore` turns each
  description into a method of both clients (:class:`Operation`, :class:`Listing`), with the
  description's name, arguments and docstring.
* The steps of a description are run by one engine (:func:`_advance`), written as coroutines
  over a session of ``pinework._wire``: the async session awaits ``httpx.AsyncClient``; the
  sync session blocks on ``httpx.Client`` inside the same coroutines, which therefore never
  suspend and are finished by :func:`complete` without an event loop.
* ``for_run(...)`` gives a client bound to one run (its ``X-Pinework-Run``,
  ``X-Pinework-Task`` and ``X-Pinework-Session``) over the same connections.

So a new route is one function in ``pinework._calls`` and one line in :class:`ClientCore`.
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Generator, Mapping
from types import MethodType
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, Self, TypeVar, cast, overload

from pinework import _calls as calls
from pinework import _wiki_calls as wiki_calls
from pinework._calls import Emit, Invoke, Pages, Pause, Request, Runnable
from pinework._wire import (
    API_PREFIX,
    DEFAULT_API_URL,
    DEFAULT_TIMEOUT,
    _Session,
    settings_from_env,
)
from pinework.errors import PineworkAPIError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from pinework.async_client import AsyncClient
    from pinework.client import Client

P = ParamSpec("P")
T = TypeVar("T")
ItemT = TypeVar("ItemT")
SessionT = TypeVar("SessionT", bound=_Session)
TransportT = TypeVar("TransportT")

Steps = Generator[Any, Any, Any]
"""A program as the engine drives it."""


async def _perform(
    step: Request[Any] | Pause | Invoke,
    session: _Session,
    invoke: Callable[[Invoke], Awaitable[Any]],
) -> Any:
    """Carry out one step: send a request, wait a pause, or call the client's operation."""
    if isinstance(step, Request):
        return await session.send(step)
    if isinstance(step, Pause):
        return await session.pause(step.seconds, step.sleep)
    if isinstance(step, Invoke):
        return await invoke(step)
    raise TypeError(f"a client program yielded {step!r}, not a Request, Pause or Invoke")


async def _advance(
    steps: Steps, session: _Session, invoke: Callable[[Invoke], Awaitable[Any]]
) -> tuple[bool, Any]:
    """Run a program to its next emitted item, ``(False, item)``, or to its end, ``(True,
    result)``. Each step's answer is sent back into the program; a refusal
    (:class:`PineworkAPIError`) is thrown into it, where it may be caught."""
    reply: Any = None
    error: PineworkAPIError | None = None
    while True:
        try:
            step = steps.throw(error) if error is not None else steps.send(reply)
        except StopIteration as done:
            return True, done.value
        if isinstance(step, Emit):
            return False, step.item
        reply, error = None, None
        try:
            reply = await _perform(step, session, invoke)
        except PineworkAPIError as refused:
            error = refused


def complete(awaitable: Coroutine[Any, Any, T]) -> T:
    """The result of a coroutine of the sync client, which never suspends (its I/O blocks).

    Raises:
        RuntimeError: the coroutine awaited something that suspends (only an event loop
            could finish it; use :class:`pinework.AsyncClient`).
    """
    try:
        awaitable.send(None)
    except StopIteration as done:
        return cast(T, done.value)
    awaitable.close()
    raise RuntimeError("the sync client awaited something that suspends; use AsyncClient")


def _method_signature(build: Callable[..., Any]) -> inspect.Signature:
    """The signature of a description, with ``self`` in front, as a method's."""
    signature = inspect.signature(build)
    self_parameter = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return signature.replace(
        parameters=[self_parameter, *signature.parameters.values()],
        return_annotation=inspect.Signature.empty,
    )


class _Described(Generic[P, T]):
    """A method of both clients made from one description of ``pinework._calls``: each
    client class says how it runs the description (``_operation_method`` or
    ``_listing_method``), and the method takes the description's name, arguments and
    docstring."""

    binder = "_operation_method"

    def __init__(self, build: Callable[P, T]) -> None:
        self.build = build
        self.name = build.__name__
        self._methods: dict[type[Any], Callable[..., Any]] = {}

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self.name = name

    def method_of(self, owner: type[Any]) -> Callable[..., Any]:
        """The plain function that ``owner`` (a client class) has as this method."""
        method = self._methods.get(owner)
        if method is None:
            method = getattr(owner, self.binder)(self.build)
            functools.update_wrapper(method, self.build)
            del method.__wrapped__  # its own signature is set below, with self
            method.__signature__ = _method_signature(self.build)
            method.__qualname__ = f"{owner.__qualname__}.{self.name}"
            method.__module__ = owner.__module__
            self._methods[owner] = method
        return method

    def bind(self, client: object | None, owner: type[Any]) -> Any:
        """The method as ``owner`` has it, bound to ``client`` when one is given."""
        method = self.method_of(owner)
        return method if client is None else MethodType(method, client)


class Operation(_Described[P, Runnable[T]]):
    """An operation that answers one result: ``Client.x(...)`` returns it,
    ``AsyncClient.x(...)`` is a coroutine of it."""

    @overload
    def __get__(self, client: None, owner: type[Any]) -> Callable[..., Any]: ...

    @overload
    def __get__(self, client: Client, owner: type[Any]) -> Callable[P, T]: ...

    @overload
    def __get__(
        self, client: AsyncClient, owner: type[Any]
    ) -> Callable[P, Coroutine[Any, Any, T]]: ...

    def __get__(self, client: object | None, owner: type[Any]) -> Any:
        """The method, bound to ``client`` (or, from the class, the plain function)."""
        return self.bind(client, owner)


class Listing(_Described[P, Pages[ItemT]]):
    """An operation that lists items page by page: ``Client.iter_x(...)`` returns an
    iterator, ``AsyncClient.iter_x(...)`` an async iterator; pages are asked for lazily."""

    binder = "_listing_method"

    @overload
    def __get__(self, client: None, owner: type[Any]) -> Callable[..., Any]: ...

    @overload
    def __get__(self, client: Client, owner: type[Any]) -> Callable[P, Iterator[ItemT]]: ...

    @overload
    def __get__(
        self, client: AsyncClient, owner: type[Any]
    ) -> Callable[P, AsyncIterator[ItemT]]: ...

    def __get__(self, client: object | None, owner: type[Any]) -> Any:
        """The method, bound to ``client`` (or, from the class, the plain function)."""
        return self.bind(client, owner)


class ClientCore(Generic[SessionT, TransportT]):
    """What both clients are: their settings, their per-run copies and every operation of
    ``pinework._calls``; :class:`pinework.Client` and :class:`pinework.AsyncClient` add only
    how a description is run (blocking or awaited) and how they are closed.

    Takes the arguments of :class:`pinework.Client` (``transport`` an async one for
    :class:`pinework.AsyncClient`).

    Raises:
        ValueError: ``base_url`` is not an ``http://`` or ``https://`` URL, ``max_retries``
            is negative, or a header value cannot be sent.
    """

    session_class: type[SessionT]

    def __init__(
        self,
        base_url: str = DEFAULT_API_URL,
        token: str | None = None,
        run_id: str | None = None,
        task_key: str | None = None,
        *,
        transport: TransportT | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        api_key: str | None = None,
        max_retries: int = 0,
    ) -> None:
        self._session = self.session_class(
            base_url,
            token,
            run_id,
            task_key,
            transport,
            timeout,
            api_key=api_key,
            max_retries=max_retries,
        )

    @classmethod
    def from_env(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        transport: TransportT | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 0,
    ) -> Self:
        """Build a client from ``PINEWORK_API_URL``, ``PINEWORK_TOKEN``, ``PINEWORK_RUN``,
        ``PINEWORK_TASK`` (docs/reference.md#12-cli) and ``PINEWORK_API_KEY`` (key-value
        scope).

        Args:
            environ: the variables to read; ``os.environ`` when omitted.
            transport: see the class.
            timeout: see the class.
            max_retries: see the class.

        Returns:
            The client; unset or empty variables fall back to the defaults.

        Raises:
            ValueError: ``PINEWORK_API_URL`` is not an http(s) URL.
        """
        return cls(
            **settings_from_env(environ),
            transport=transport,
            timeout=timeout,
            max_retries=max_retries,
        )

    @property
    def api_url(self) -> str:
        """The URL every route path is appended to (it ends with ``/api/v1``)."""
        return self._session.api_url

    @property
    def root_url(self) -> str:
        """The server's root URL (the API URL without ``/api/v1``): where the dashboard is."""
        return self.api_url.removesuffix(API_PREFIX)

    def for_run(
        self,
        run_id: str | None = None,
        *,
        task_key: str | None = None,
        session_id: str | None = None,
    ) -> Self:
        """A client for one run (docs/reference.md#run-headers): every request it sends
        carries the run's headers, over this client's own ``run_id`` and ``task_key``.

        It shares this client's connections and settings (token, retries, timeout);
        closing it does nothing, closing this client closes both. Make one per run, e.g.
        per agent run of a framework that serves many runs with one client.

        Args:
            run_id: this execution (``X-Pinework-Run``: stored on what the run saves);
                ``None`` keeps this client's.
            task_key: what the run works on, e.g. ``PIN-42`` (``X-Pinework-Task``);
                ``None`` keeps this client's.
            session_id: the conversation the run belongs to (``X-Pinework-Session``).

        Returns:
            A client of the same class.

        Raises:
            ValueError: a value that cannot be sent as a header: not printable ASCII,
                white space at an end, or over 128 characters.
        """
        bound = copy.copy(self)
        bound._session = self._session.for_run(run_id, task_key, session_id)
        return bound

    async def _result(self, program: Runnable[T]) -> T:
        """Run a program to its result (the coroutine both clients' ``run`` finish)."""
        done, value = await self._next(iter(program))
        if not done:
            raise TypeError("a program that emits items is a listing: iterate it")
        return cast(T, value)

    async def _next(self, steps: Steps) -> tuple[bool, Any]:
        """:func:`_advance` over this client's session."""
        return await _advance(steps, self._session, self._invoke)

    async def _invoke(self, step: Invoke) -> Any:
        """Call this client's own operation (the client's flavour of it)."""
        raise NotImplementedError

    # Agent memory (docs/reference.md#7-http-api)
    save_fact = Operation(calls.save_fact)
    append_day_line = Operation(calls.append_day_line)
    list_memories = Operation(calls.list_memories)
    iter_memories = Listing(calls.iter_memories)
    get_memory = Operation(calls.get_memory)
    edit_memory = Operation(calls.edit_memory)
    archive = Operation(calls.archive)
    veto = Operation(calls.veto)
    erase = Operation(calls.erase)
    unarchive = Operation(calls.unarchive)
    history = Operation(calls.history)
    recall = Operation(calls.recall)
    recall_start = Operation(calls.recall_start)
    recall_log = Operation(calls.recall_log)
    recall_block = Operation(calls.recall_block)

    # Routines (docs/reference.md#routes-routines, docs/reference.md#9-review)
    list_routines = Operation(calls.list_routines)
    get_routine = Operation(calls.get_routine)
    create_routine = Operation(calls.create_routine)
    pause_routine = Operation(calls.pause_routine)
    resume_routine = Operation(calls.resume_routine)
    delete_routine = Operation(calls.delete_routine)

    # Reviews (docs/reference.md#routes-reviews, docs/reference.md#9-review)
    run_review = Operation(calls.run_review)
    list_reviews = Operation(calls.list_reviews)
    get_review = Operation(calls.get_review)
    wait_for_review = Operation(calls.wait_for_review)
    approve_review_action = Operation(calls.approve_review_action)
    reject_review_action = Operation(calls.reject_review_action)
    undo_review_action = Operation(calls.undo_review_action)
    list_pending_actions = Operation(calls.list_pending_actions)

    # The dashboard (docs/reference.md#13-dashboard)
    sign_in_link = Operation(calls.sign_in_link)

    # Learnings (docs/reference.md#15-learnings)
    propose_learning = Operation(calls.propose_learning)
    list_learnings = Operation(calls.list_learnings)
    iter_learnings = Listing(calls.iter_learnings)
    get_learning = Operation(calls.get_learning)
    approve_learning = Operation(calls.approve_learning)
    edit_learning = Operation(calls.edit_learning)
    reject_learning = Operation(calls.reject_learning)
    retire_learning = Operation(calls.retire_learning)
    learning_history = Operation(calls.learning_history)

    # Change events (docs/reference.md#change-events)
    list_events = Operation(calls.list_events)

    # Wiki pages (docs/reference.md#17-wiki-pages)
    list_pages = Operation(wiki_calls.list_pages)
    get_page = Operation(wiki_calls.get_page)
    create_page = Operation(wiki_calls.create_page)
    edit_page = Operation(wiki_calls.edit_page)
    publish_page = Operation(wiki_calls.publish_page)
    archive_page = Operation(wiki_calls.archive_page)
    page_history = Operation(wiki_calls.page_history)
    # Webhook endpoints (docs/reference.md#webhooks)
    create_webhook = Operation(calls.create_webhook)
    list_webhooks = Operation(calls.list_webhooks)
    delete_webhook = Operation(calls.delete_webhook)
    test_webhook = Operation(calls.test_webhook)
    resume_webhook = Operation(calls.resume_webhook)
    list_webhook_deliveries = Operation(calls.list_webhook_deliveries)

    # Key-value meta-tools (docs/reference.md#10-key-value)
    kv_remember = Operation(calls.kv_remember)
    kv_recall = Operation(calls.kv_recall)
    kv_keys = Operation(calls.kv_keys)
    iter_kv_keys = Listing(calls.iter_kv_keys)
    kv_forget = Operation(calls.kv_forget)
