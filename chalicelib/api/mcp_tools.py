"""The MCP tools behind ``POST /api/v1/mcp`` (docs/reference.md#11-mcp): the
key-value tools (``remember``, ``recall``, ``forget``), the ``memory_*`` tools and the
``learning_*`` tools (docs/reference.md#15-learnings), each a ``ToolSpec`` whose input
schema is its pydantic request model and whose handler calls the same service as the HTTP
route and returns the same JSON; the ``memory_*`` and ``learning_*`` tools need a bearer
principal (``unauthorized`` otherwise). ``mcp_protocol`` frames them in JSON-RPC.
Choices: docs/DECISIONS.md#mcp-issue-5.

Which tool stores what (their descriptions tell agents): ``memory_save`` an agent's own
durable fact; ``memory_day`` what happened in this run; ``remember`` a value looked up by
its key; ``learning_propose`` a fact every agent of the workspace needs, which a person
approves before agents are told it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as mcp
from pydantic import BaseModel

from chalicelib.api.http import validate
from chalicelib.api.recalls import observe_recall, recall_body
from chalicelib.errors import MemoryTagInvalid, Unauthorized
from chalicelib.models.kv import ForgetRequest, KvRecallRequest, RememberRequest
from chalicelib.models.learning import LearningState, ProposeLearningRequest
from chalicelib.models.mcp import (
    LearningListArguments,
    MemoryArchiveArguments,
    MemoryGetArguments,
    MemoryListArguments,
)
from chalicelib.models.principal import Principal
from chalicelib.models.requests import (
    ArchiveRequest,
    DayLineRequest,
    ListQuery,
    RecallRequest,
    SaveFactRequest,
)
from chalicelib.services.kv.service import KvScope
from chalicelib.services.paging import encode_next_token
from chalicelib.services.run_context import RunContext
from chalicelib.wiring import Services


@dataclass(frozen=True)
class McpCaller:
    """Who one MCP request comes from.

    Attributes:
        services: the wired services.
        principal: the bearer principal, or None (only the key-value tools work then).
        kv_scope: resolves the key-value scope on first use (it may raise).
        run: the agent's ``X-Pinework-*`` run headers.
    """

    services: Services
    principal: Principal | None
    kv_scope: Callable[[], KvScope]
    run: RunContext


Handler = Callable[[McpCaller, Any], dict[str, Any]]


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool: its arguments model (the input schema) and what it does."""

    name: str
    description: str
    arguments: type[BaseModel]
    handler: Handler
    annotations: mcp.ToolAnnotations

    def to_tool(self) -> mcp.Tool:
        """The ``tools/list`` entry, input schema generated from ``arguments``."""
        schema = self.arguments.model_json_schema(by_alias=True)
        schema.pop("title", None)
        schema.pop("description", None)
        return mcp.Tool(
            name=self.name,
            description=self.description,
            input_schema=schema,
            annotations=self.annotations,
        )


def _remember(caller: McpCaller, arguments: RememberRequest) -> dict[str, Any]:
    return caller.services.kv.remember(
        caller.kv_scope(), arguments.key, arguments.value, arguments.if_revision
    ).to_wire()


def _recall(caller: McpCaller, arguments: KvRecallRequest) -> dict[str, Any]:
    kv = caller.services.kv
    if arguments.key is None:
        return kv.list_keys(caller.kv_scope(), arguments.cursor, arguments.limit).to_wire()
    return kv.recall(caller.kv_scope(), arguments.key).to_wire(arguments.with_revision)


def _forget(caller: McpCaller, arguments: ForgetRequest) -> dict[str, Any]:
    return caller.services.kv.forget(
        caller.kv_scope(), arguments.key, arguments.if_revision
    ).to_wire()


def _principal(caller: McpCaller) -> Principal:
    if caller.principal is None:
        raise Unauthorized(
            "The memory_* and learning_* tools need Authorization: Bearer <token> on the MCP "
            "connection; without a token only remember, recall and forget work."
        )
    return caller.principal


def _memory_save(caller: McpCaller, arguments: SaveFactRequest) -> dict[str, Any]:
    wired = caller.services
    memory = wired.memories.save(_principal(caller), arguments, caller.run)
    return memory.to_wire(wired.clock.now())


def _memory_day(caller: McpCaller, arguments: DayLineRequest) -> dict[str, Any]:
    wired = caller.services
    appended = wired.day_log.append_day_line(_principal(caller), arguments.line, caller.run)
    return appended.memory.to_wire(wired.clock.now())


def _memory_recall(caller: McpCaller, arguments: RecallRequest) -> dict[str, Any]:
    wired = caller.services
    principal = _principal(caller)
    started = time.perf_counter()
    result = wired.recall.recall(principal, arguments, caller.run)
    observe_recall("on_demand", result, started)
    return recall_body(result, wired.clock.now(), "recall")


def _memory_list(caller: McpCaller, arguments: MemoryListArguments) -> dict[str, Any]:
    wired = caller.services
    query: dict[str, Any] = {"all": "true" if arguments.all_statuses else "false"}
    for name, value in (
        ("agentId", arguments.agent_id),
        ("kind", arguments.kind),
        ("status", arguments.status),
        ("limit", arguments.limit),
        ("nextToken", arguments.next_token),
        ("tag", _tag_list(arguments.tags)),
        ("anyTag", _tag_list(arguments.any_tags)),
    ):
        if value is not None:
            query[name] = value
    page = wired.memories.list(_principal(caller), validate(query, ListQuery))
    now = wired.clock.now()
    return {
        "object": "list",
        "data": [memory.to_wire(now) for memory in page.memories],
        "nextToken": encode_next_token(page.continue_after),
    }


def _tag_list(tags: list[str] | None) -> str | None:
    """Typed tags as the list's comma-separated parameter; a tag holding a comma would
    split into two there, so it is refused (``memory_tag_invalid``, docs/reference.md#tags)."""
    if tags is None:
        return None
    if any("," in tag for tag in tags):
        raise MemoryTagInvalid("A tag has no comma: name each tag as its own string.")
    return ",".join(tags)


def _memory_get(caller: McpCaller, arguments: MemoryGetArguments) -> dict[str, Any]:
    """``memory_get``: as ``GET /memories/{id}`` (docs/reference.md#11-mcp): the memory.

    Raises:
        Unauthorized: no bearer principal.
        MemoryNotFound: no such memory in the caller's workspace (``memory_not_found``).
        MemoryNotOwn: another agent's memory, for an agent (``memory_not_own``).
    """
    wired = caller.services
    return wired.memories.get(_principal(caller), arguments.memory_id).to_wire(wired.clock.now())


def _memory_archive(caller: McpCaller, arguments: MemoryArchiveArguments) -> dict[str, Any]:
    wired = caller.services
    request = validate({"reason": arguments.reason}, ArchiveRequest)
    memory = wired.memories.archive(_principal(caller), arguments.memory_id, request)
    return memory.to_wire(wired.clock.now())


def _learning_propose(caller: McpCaller, arguments: ProposeLearningRequest) -> dict[str, Any]:
    """``learning_propose``: as ``POST /learnings`` (docs/reference.md#15-learnings): the
    learning object (a new one, or the live one that already says the same).

    Raises:
        Unauthorized: no bearer principal.
        LearningRejected, LearningLimitReached, RateLimited, MemoryTextTooLong,
        SecretInMemory: as the route (``learning_rejected``, ``learning_limit_reached``,
        ``rate_limited``, ``memory_text_too_long``, ``secret_in_memory``).
    """
    learning, _ = caller.services.learnings.propose(_principal(caller), arguments.text, caller.run)
    return learning.to_wire()


def _learning_list(caller: McpCaller, arguments: LearningListArguments) -> dict[str, Any]:
    """``learning_list``: as ``GET /learnings`` (docs/reference.md#15-learnings), one page of
    at most 200 (a workspace keeps at most 200 proposed and active learnings):
    ``{object: "list", data: [learning…], nextToken}``.

    Raises:
        Unauthorized: no bearer principal.
    """
    found, after = caller.services.learnings.list_learnings(
        _principal(caller),
        state=LearningState(arguments.state),
        query=arguments.q,
        limit=200,
        after=None,
    )
    return {
        "object": "list",
        "data": [learning.to_wire() for learning in found],
        "nextToken": encode_next_token(after),
    }


def _hints(*, read_only: bool, destructive: bool, idempotent: bool) -> mcp.ToolAnnotations:
    return mcp.ToolAnnotations(
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "remember",
        "Store a value under a key in your scope (workspace token, X-Api-Key, or anonymous by "
        "IP for 24 hours). A string is stored as given; any other JSON is stored as its compact "
        "JSON text. Use it for a value you read back by a key you chose (state, a cursor, a "
        "file); it is never told to you unasked (a durable fact you should be told is "
        "memory_save). ifRevision (from recall with withRevision) writes only over that "
        "revision (0: only a new key). Returns {stored, key, ttl}.",
        RememberRequest,
        _remember,
        _hints(read_only=False, destructive=True, idempotent=True),
    ),
    ToolSpec(
        "recall",
        "Read the string stored under a key: {key, value, found}. The value is not parsed "
        "back: JSON.parse it yourself if you stored an object. Without a key: a page of your "
        "keys {keys, count, next}; pass next as cursor for the next page (limit: 1-1000).",
        KvRecallRequest,
        _recall,
        _hints(read_only=True, destructive=False, idempotent=True),
    ),
    ToolSpec(
        "forget",
        "Delete a key from your scope: {deleted, key} (deleted is false if nothing was there).",
        ForgetRequest,
        _forget,
        _hints(read_only=False, destructive=True, idempotent=True),
    ),
    ToolSpec(
        "memory_save",
        "Save a durable fact (at most 500 characters, no secrets) to your own agent memory; "
        "optionally supersede one of your facts, and give the tool-output `evidence` "
        "(at most 2,000 characters) that supports it. Returns the memory. For facts every "
        "agent of the workspace needs, propose a learning instead (learning_propose); for "
        "what happened in this run, memory_day; for a value you look up by a key, remember.",
        SaveFactRequest,
        _memory_save,
        _hints(read_only=False, destructive=False, idempotent=False),
    ),
    ToolSpec(
        "memory_day",
        "Append one line (at most 300 characters) to today's UTC day log: what happened in "
        "this run (done, found, left open). You are told today's and yesterday's lines at "
        "the start of your runs; for a fact that should last, use memory_save. Returns the "
        "day row.",
        DayLineRequest,
        _memory_day,
        _hints(read_only=False, destructive=False, idempotent=False),
    ),
    ToolSpec(
        "memory_recall",
        "Recall the facts relevant to a query (default: the current task), scored, with the "
        "rendered block (the workspace's learnings and matching wiki sections under --- WIKI "
        "---, then your facts and the day log under --- MEMORY ---). "
        "Counts as a recall; `count: false` only previews.",
        RecallRequest,
        _memory_recall,
        _hints(read_only=False, destructive=False, idempotent=False),
    ),
    ToolSpec(
        "memory_list",
        "List memories newest first: kind (fact or day), status (active or archived; `all` "
        "for both), a person's agentId, limit (1-500) and nextToken for the next page. "
        "Returns {object: list, data: [memory], nextToken}.",
        MemoryListArguments,
        _memory_list,
        _hints(read_only=True, destructive=False, idempotent=True),
    ),
    ToolSpec(
        "memory_get",
        "Read one memory by id (mem_…), archived ones too: its text, kind, status, "
        "expiresAt, what it supersedes or was superseded by.",
        MemoryGetArguments,
        _memory_get,
        _hints(read_only=True, destructive=False, idempotent=True),
    ),
    ToolSpec(
        "memory_archive",
        "Archive one of your memories with a reason. Returns the archived memory.",
        MemoryArchiveArguments,
        _memory_archive,
        _hints(read_only=False, destructive=True, idempotent=False),
    ),
    ToolSpec(
        "learning_propose",
        "Propose a learning: a fact every agent of the workspace needs, not just you (at "
        "most 500 characters, no secrets), e.g. how the team's systems must be used. A "
        "person approves it (unless the workspace lets proposals go live at once); then "
        "every agent is told it at the start of its runs. Use it instead of memory_save when "
        "other agents need the fact too (memory_save keeps a fact only you are told), and "
        "instead of remember when agents should be told it without knowing a key (remember "
        "stores a value read back only by its key). Check learning_list first. Returns the "
        "learning (the live one that already says the same, if there is one); "
        "learning_rejected when a person rejected the same fact.",
        ProposeLearningRequest,
        _learning_propose,
        _hints(read_only=False, destructive=False, idempotent=True),
    ),
    ToolSpec(
        "learning_list",
        "List the workspace's learnings, newest first: the active ones (every agent is told "
        "them) by default, or those of `state` (proposed, rejected, retired: an agent sees "
        "its own proposals only); q filters by text (any case). Returns "
        "{object: list, data: [learning], nextToken}.",
        LearningListArguments,
        _learning_list,
        _hints(read_only=True, destructive=False, idempotent=True),
    ),
)
TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}
