"""Pinework memory for the OpenAI Agents SDK (docs/integrations/openai-agents.md,
docs/issues.md#issue-27): three function tools (``save_memory``, ``log_day``,
``recall_memory``) and dynamic instructions that put the run-start ``--- MEMORY ---`` block
into the agent's system prompt.

The run travels in the SDK's context object (``Runner.run(agent, input, context=...)``): a
:class:`PineworkRun`, or any object (or mapping) with the same attributes. Its session, task
and run id are sent as ``X-Pinework-Session``, ``X-Pinework-Task`` and ``X-Pinework-Run``
(docs/reference.md#run-headers) on every call the tools and the instructions make, through
``AsyncClient.for_run`` over the one :class:`pinework.AsyncClient` (and so the one connection
pool) they were given.

Example::

    client = pinework.AsyncClient.from_env()
    agent = Agent(
        name="builder",
        instructions=memory_instructions("You fix bugs.", client),
        tools=pinework_tools(client),
    )
    await Runner.run(agent, "Fix PIN-42", context=PineworkRun("chat-7", task="PIN-42"))

Needs the ``openai-agents`` extra: ``pip install "pinework[openai-agents]"``.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

try:
    from agents import Agent, RunContextWrapper, Tool, function_tool
    from agents.exceptions import UserError
    from agents.tool import default_tool_error_function
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        'pinework.integrations.openai_agents needs the OpenAI Agents SDK: pip install "pinework'
        '[openai-agents]" (the package openai-agents)'
    ) from exc

from pinework._wire import header_value
from pinework.async_client import AsyncClient
from pinework.errors import PineworkAPIError
from pinework.models import Memory, WireModel

__all__ = [
    "PineworkMemory",
    "PineworkRun",
    "memory_instructions",
    "pinework_tool_error",
    "pinework_tools",
    "run_from_context",
    "run_headers",
]

logger = logging.getLogger(__name__)

ModelT = TypeVar("ModelT", bound=WireModel)

HEADER_LIMIT = 128
"""Characters of a run header, session or task key (docs/reference.md#5-limits)."""

Instructions = str | Callable[[RunContextWrapper[Any], Agent[Any]], str | Awaitable[str]] | None
"""What an ``Agent``'s ``instructions`` may be (agents/agent.py): a string, a callable of
``(RunContextWrapper, Agent)`` returning a string or an awaitable of one, or ``None``."""


@dataclasses.dataclass(frozen=True)
class PineworkRun:
    """One agent run as Pinework sees it (docs/reference.md#2-concepts), passed to
    ``Runner.run(..., context=PineworkRun(...))``.

    Attributes:
        session_id: the conversation the agent may resume (``X-Pinework-Session``, the
            run-start recall's ``sessionId``): 1 to 128 printable ASCII characters.
        task: what the run works on, e.g. ``PIN-42`` (``X-Pinework-Task``: prefixes day
            lines, scored by run-start recall); at most 128 printable ASCII characters, no
            ``[`` or ``]`` (docs/reference.md#run-headers). ``None``: the client's own
            ``task_key``, if any.
        run_id: this execution, e.g. ``run_01J…`` (``X-Pinework-Run``: stored on what the run
            saves). ``None``: the client's own ``run_id``, if any.
        resumed: the session is being resumed; run-start recall is skipped when the session
            had one in the last 24 hours (docs/reference.md#run-start-recall).
        message: the user's first message, scored by run-start recall when there is no task
            (at most 4,000 characters; docs/reference.md#5-limits).
    """

    session_id: str
    task: str | None = None
    run_id: str | None = None
    resumed: bool = False
    message: str | None = None


def run_from_context(context: Any) -> PineworkRun | None:
    """Read the run from the SDK's context object (``RunContextWrapper.context``;
    docs/integrations/openai-agents.md#the-run).

    Args:
        context: a :class:`PineworkRun`; or any object or ``Mapping`` with a ``session_id``
            and optionally ``task``, ``run_id``, ``resumed`` and ``message``; or ``None``.

    Returns:
        The run; ``None`` when ``context`` is ``None`` or has no ``session_id``.

    Raises:
        TypeError: ``session_id``, ``task``, ``run_id`` or ``message`` is neither a string
            nor ``None``.
    """
    if context is None or isinstance(context, PineworkRun):
        return context
    session_id = _text_field(context, "session_id")
    if session_id is None:
        return None
    return PineworkRun(
        session_id=session_id,
        task=_text_field(context, "task"),
        run_id=_text_field(context, "run_id"),
        resumed=bool(_field(context, "resumed")),
        message=_text_field(context, "message"),
    )


def _field(context: Any, name: str) -> Any:
    """``context[name]`` for a mapping, else ``context.name``; ``None`` when absent."""
    if isinstance(context, Mapping):
        return context.get(name)
    return getattr(context, name, None)


def _text_field(context: Any, name: str) -> str | None:
    """A string field of the context, or ``None``; ``TypeError`` for another type."""
    value = _field(context, name)
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"the run context's {name} must be a string or None, not {type(value)}")


def run_headers(run: PineworkRun | None) -> dict[str, str]:
    """The ``X-Pinework-*`` headers of a run (docs/reference.md#run-headers).

    Args:
        run: the run; ``None`` sends none (the client's own headers stay).

    Returns:
        ``X-Pinework-Session`` always, ``X-Pinework-Task`` and ``X-Pinework-Run`` when set.

    Raises:
        ValueError: a value that cannot be sent: not printable ASCII, white space at an
            end, over 128 characters (``pinework._wire.header_value``).
    """
    if run is None:
        return {}
    headers = {"X-Pinework-Session": header_value(run.session_id, "the session id", HEADER_LIMIT)}
    if run.task:
        headers["X-Pinework-Task"] = header_value(run.task, "the task key", HEADER_LIMIT)
    if run.run_id:
        headers["X-Pinework-Run"] = header_value(run.run_id, "the run id", HEADER_LIMIT)
    return headers


def _for_run(client: AsyncClient, run: PineworkRun | None) -> AsyncClient:
    """``client`` bound to the run's headers (``AsyncClient.for_run``: they win over the
    client's own ``run_id``/``task_key``; the connections are shared), or ``client`` itself
    without a run.

    Raises:
        ValueError: a run header that cannot be sent.
    """
    if run is None:
        return client
    return client.for_run(run.run_id, task_key=run.task, session_id=run.session_id)


def pinework_tool_error(context: RunContextWrapper[Any], error: Exception) -> str:
    """The tools' ``failure_error_function`` (agents/tool.py): what the model is told when a
    tool call fails, instead of the run failing.

    Args:
        context: the tool call's context (unused).
        error: what the tool raised.

    Returns:
        For a :class:`PineworkAPIError`, ``"Pinework refused this: <code>: <message>"`` (the
        message says what to do, docs/reference.md#6-errors); for a ``ValueError`` (an
        argument or run header the client cannot send), ``"Pinework refused this:
        invalid_argument: <message>"``; for anything else the SDK's own
        ``default_tool_error_function`` text, which shows nothing of the exception.
    """
    if isinstance(error, PineworkAPIError):
        return f"Pinework refused this: {error.code}: {error.message}"
    if isinstance(error, ValueError):
        return f"Pinework refused this: invalid_argument: {error}"
    return default_tool_error_function(context, error)


def pinework_tools(client: AsyncClient) -> list[Tool]:
    """The Pinework function tools for an ``Agent``'s ``tools``
    (docs/integrations/openai-agents.md#tools).

    Args:
        client: the client the tools call, with an agent's bearer token. The run's headers
            come from each call's context (:func:`run_from_context`); without a run in the
            context, the client's own ``run_id`` and ``task_key`` are sent.

    Returns:
        ``[save_memory, log_day, recall_memory]``, each an ``agents.FunctionTool`` (typed
        ``list[Tool]`` as the SDK's own tool lists are, so ``Agent(tools=...)`` takes it):

        * ``save_memory(text, supersedes)``: save a durable fact of at most 500 characters
          (``POST /memories``), optionally replacing an older fact ``mem_…``; returns
          ``"Saved mem_… (expires YYYY-MM-DD)."``.
        * ``log_day(line)``: append one line of at most 300 characters to today's (UTC) day
          log (``POST /memories/day``); returns ``"Logged to the day log of YYYY-MM-DD."``.
        * ``recall_memory(query)``: on-demand recall (``POST /memories/recall``, counted and
          logged, docs/reference.md#on-demand-recall); returns the ``--- MEMORY ---`` block.

        A refused call (:class:`PineworkAPIError`: ``memory_text_too_long``,
        ``secret_in_memory``, ``memory_not_found``, ``connection_error``, …) is returned to
        the model as its error text (:func:`pinework_tool_error`); the run goes on.
    """

    async def save_memory(
        ctx: RunContextWrapper[Any], text: str, supersedes: str | None = None
    ) -> str:
        """Save one durable fact to long-term memory: something true beyond this task that a
        later run needs (a decision, a convention, where something lives). Never a secret.

        Args:
            text: the fact, self-contained, at most 500 characters.
            supersedes: the mem_... id of an older fact this one replaces, or null.
        """
        run = run_from_context(ctx.context)
        memory = await _for_run(client, run).save_fact(text, supersedes=supersedes)
        return _saved(memory)

    async def log_day(ctx: RunContextWrapper[Any], line: str) -> str:
        """Append one line to today's work log: what you just did or found, for the next
        runs of the next two days. One line, at most 300 characters.

        Args:
            line: the line, without a time or task (both are added).
        """
        run = run_from_context(ctx.context)
        row = await _for_run(client, run).append_day_line(line)
        return f"Logged to the day log of {row.date}."

    async def recall_memory(ctx: RunContextWrapper[Any], query: str) -> str:
        """Search long-term memory for facts about something, with today's and yesterday's
        work log. Returns the matching facts as a --- MEMORY --- block (with their mem_... ids).

        Args:
            query: what you need to know, in a few words.
        """
        run = run_from_context(ctx.context)
        result = await _for_run(client, run).recall(query=query)
        return result.block or "(nothing in memory)"

    return [
        function_tool(tool, failure_error_function=pinework_tool_error)
        for tool in (save_memory, log_day, recall_memory)
    ]


def _saved(memory: Memory) -> str:
    """What ``save_memory`` tells the model about a saved fact."""
    replaced = f", replacing {memory.supersedes}" if memory.supersedes else ""
    return f"Saved {memory.id} (expires {memory.expires_at.date().isoformat()}){replaced}."


_BLOCKS: weakref.WeakKeyDictionary[
    RunContextWrapper[Any], weakref.WeakKeyDictionary[AsyncClient, str | None]
] = weakref.WeakKeyDictionary()
"""The block each run (its ``RunContextWrapper``) got from each client: one run-start recall
per run and Pinework agent, whichever ``PineworkMemory`` (e.g. of two agents that hand off to
each other) asks first. Entries go with the run's wrapper."""


class PineworkMemory:
    """Dynamic instructions (agents/agent.py: a callable of ``(RunContextWrapper, Agent)``)
    that add the run-start recall's block to the base instructions
    (docs/integrations/openai-agents.md#instructions, docs/reference.md#run-start-recall).

    Args:
        client: the client to recall with (an agent's bearer token).
        base: the agent's own instructions: a string, a callable as an ``Agent`` takes, or
            ``None``.

    Calling the instance with ``(context, agent)`` returns the base instructions, a blank
    line, then the block (``--- MEMORY ---`` … ``--- END MEMORY ---``, with the
    learnings' block before it when there are some). Recall happens once per run and client
    (per ``RunContextWrapper``: the SDK calls instructions before every model call of the
    run, and agents of one run that hand off to each other share the block when they share
    the client); the base is evaluated each time.

    Only the base is returned when the recall is skipped (``resumed`` and the session had
    a run-start recall in the last 24 hours; the server decides) or fails: a
    :class:`PineworkAPIError` (unreachable server, ``invalid_request`` without a task or
    message, ``secret_in_memory`` …) or a ``ValueError`` (a run header that cannot be
    sent) is logged as a warning on this module's logger and the run goes on.

    Raises (when called):
        agents.exceptions.UserError: the run context holds no ``session_id``
            (:func:`run_from_context`).
    """

    def __init__(self, client: AsyncClient, base: Instructions = None) -> None:
        self.client = client
        self.base = base

    async def __call__(self, context: RunContextWrapper[Any], agent: Agent[Any]) -> str:
        """The instructions for this model call.

        Args:
            context: the run's context wrapper (its ``context`` holds the run).
            agent: the agent being run.

        Returns:
            The base instructions, then the block when there is one.
        """
        base = await self._base(context, agent)
        block = await self.block(context)
        if not block:
            return base
        return f"{base}\n\n{block}" if base else block

    async def block(self, context: RunContextWrapper[Any]) -> str | None:
        """The run-start recall's block for this run, recalled on the first call.

        Args:
            context: the run's context wrapper.

        Returns:
            The block; ``None`` when the recall was skipped or failed.

        Raises:
            agents.exceptions.UserError: the context holds no run.
        """
        recalled = _BLOCKS.setdefault(context, weakref.WeakKeyDictionary())
        if self.client in recalled:
            return recalled[self.client]
        run = run_from_context(context.context)
        if run is None:
            raise UserError(
                "Pinework memory instructions need the run in the context: "
                'Runner.run(agent, input, context=PineworkRun("<session id>", task=...))'
            )
        block = await self._recall(run)
        recalled[self.client] = block
        return block

    async def _recall(self, run: PineworkRun) -> str | None:
        """Run-start recall for ``run``; ``None`` (and a warning) when it fails."""
        try:
            result = await _for_run(self.client, run).recall_start(
                run.session_id, resumed=run.resumed, task=run.task, message=run.message
            )
        except (PineworkAPIError, ValueError) as exc:
            logger.warning(
                "Pinework run-start recall failed for session %r; the run goes on without "
                "memory: %s",
                run.session_id,
                exc,
            )
            return None
        if result.skipped:
            logger.info("Pinework run-start recall skipped: %s", result.reason)
            return None
        return result.block or None

    async def _base(self, context: RunContextWrapper[Any], agent: Agent[Any]) -> str:
        """The base instructions as text (a callable's result awaited when needed)."""
        if self.base is None or isinstance(self.base, str):
            return self.base or ""
        value = self.base(context, agent)
        if inspect.isawaitable(value):
            value = await value
        return value


def memory_instructions(base: Instructions, client: AsyncClient) -> PineworkMemory:
    """Dynamic instructions for ``Agent(instructions=...)``: ``base`` followed by the
    run-start recall's block (docs/integrations/openai-agents.md#instructions).

    Args:
        base: the agent's own instructions (a string, a callable of ``(context, agent)``,
            or ``None``).
        client: the client to recall with.

    Returns:
        A :class:`PineworkMemory` (a callable of ``(RunContextWrapper, Agent)`` returning an
        awaitable string), which recalls once per run.
    """
    return PineworkMemory(client, base)
