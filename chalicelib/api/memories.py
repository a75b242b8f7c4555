"""Routes of the agent-memory API (docs/reference.md#7-http-api), under ``/api/v1``.

Each view: authenticate, parse, call one service method, render. No rules here.
"""

from __future__ import annotations

from typing import Any

from chalice.app import Blueprint, Response

from chalicelib.api.as_of import as_of_list, as_of_memory
from chalicelib.api.context import call_context, query_params
from chalicelib.api.http import (
    ANY_CONTENT,
    endpoint,
    json_response,
    parse_body,
    reject_other_methods,
    validate,
)
from chalicelib.api.idempotency import idempotent
from chalicelib.api.preconditions import etag_header, expected_versions
from chalicelib.errors import MemoryDayAgentOnly
from chalicelib.models.as_of import AsOfQuery
from chalicelib.models.requests import (
    ArchiveRequest,
    DayLineRequest,
    EditRequest,
    EmptyRequest,
    EraseRequest,
    ListQuery,
    Paging,
    SaveFactRequest,
    VetoRequest,
)
from chalicelib.models.responses import AuditList, AuditObject, MemoryList, MemoryObject
from chalicelib.services.access.who import refuse_agents, refuse_persons
from chalicelib.services.memory.day_log import DAY_LOG_IS_FOR_AGENTS
from chalicelib.services.memory.erase import ERASE_IS_FOR_PERSONS
from chalicelib.services.memory.service import EDIT_IS_FOR_PERSONS, VETO_IS_FOR_PERSONS
from chalicelib.services.paging import decode_next_token, encode_next_token

memories_api = Blueprint(__name__)


def _request() -> Any:
    return memories_api.current_request


def _memory_response(call_memory: Any, status: int = 200) -> Response:
    """One memory's answer, with its ``ETag`` (docs/issues.md#issue-15)."""
    memory, wired = call_memory
    return json_response(memory.to_wire(wired.clock.now()), status, etag_header(memory))


@memories_api.route("/memories", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
@idempotent(memories_api)
def save_fact() -> Response:
    """Save a fact (agent, or person naming ``agentId``) -> 201 memory."""
    call = call_context(_request())
    body = parse_body(_request().raw_body, SaveFactRequest)
    memory = call.services.memories.save(call.principal, body, call.run)
    return _memory_response((memory, call.services), 201)


@memories_api.route("/memories/day", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
@idempotent(memories_api)
def append_day_line() -> Response:
    """Append a line to today's day log (agents only) -> 201 new row or 200."""
    call = call_context(_request())
    refuse_persons(call.principal, MemoryDayAgentOnly, DAY_LOG_IS_FOR_AGENTS)
    body = parse_body(_request().raw_body, DayLineRequest)
    result = call.services.day_log.append_day_line(call.principal, body.line, call.run)
    return _memory_response((result.memory, call.services), 201 if result.created else 200)


@memories_api.route("/memories", methods=["GET"], content_types=ANY_CONTENT)
@endpoint
def list_memories() -> Response:
    """List memories newest first with ``nextToken`` pagination (``tag``/``anyTag``
    filters: docs/reference.md#tags; ``meta``, repeated, each a condition:
    docs/reference.md#metadata-filters)."""
    call = call_context(_request(), takes_query=True)
    params: dict[str, Any] = dict(query_params(_request(), repeatable=("tag", "anyTag", "meta")))
    if "meta" in params:  # each condition apart: a condition may hold a comma
        params["meta"] = _request().query_params.getlist("meta")
    if "asOf" in params:
        return as_of_list(call, params)  # docs/reference.md#as-of-a-moment
    query = validate(params, ListQuery)
    page = call.services.memories.list(call.principal, query)
    now = call.services.clock.now()
    return json_response(
        MemoryList(
            data=[MemoryObject.model_validate(memory.to_wire(now)) for memory in page.memories],
            next_token=encode_next_token(page.continue_after),
        ).wire()
    )


@memories_api.route("/memories/{memory_id}", methods=["GET"], content_types=ANY_CONTENT)
@endpoint
def get_memory(memory_id: str) -> Response:
    """One memory (owner agent or person); with ``asOf``, as it was then."""
    call = call_context(_request(), takes_query=True)
    as_of = validate(dict(query_params(_request())), AsOfQuery).as_of
    if as_of is not None:
        return as_of_memory(call, memory_id, as_of)  # docs/reference.md#as-of-a-moment
    return _memory_response((call.services.memories.get(call.principal, memory_id), call.services))


@memories_api.route("/memories/{memory_id}", methods=["PATCH"], content_types=ANY_CONTENT)
@endpoint
@idempotent(memories_api)
def edit_memory(memory_id: str) -> Response:
    """A person edits text, expiry and/or tags (``If-Match`` honoured)."""
    call = call_context(_request())
    refuse_agents(call.principal, EDIT_IS_FOR_PERSONS)
    body = parse_body(_request().raw_body, EditRequest)
    versions = expected_versions(_request(), memory_id)
    memory = call.services.memories.edit(
        call.principal, memory_id, body, expected_versions=versions
    )
    return _memory_response((memory, call.services))


@memories_api.route("/memories/{memory_id}/archive", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
@idempotent(memories_api)
def archive_memory(memory_id: str) -> Response:
    """Archive with a required reason (owner agent or person; ``If-Match`` honoured)."""
    call = call_context(_request())
    body = parse_body(_request().raw_body, ArchiveRequest)
    versions = expected_versions(_request(), memory_id)
    memory = call.services.memories.archive(
        call.principal, memory_id, body, expected_versions=versions
    )
    return _memory_response((memory, call.services))


@memories_api.route("/memories/{memory_id}/veto", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
@idempotent(memories_api)
def veto_memory(memory_id: str) -> Response:
    """A person vetoes: archived with reason ``vetoed`` (``If-Match`` honoured)."""
    call = call_context(_request())
    refuse_agents(call.principal, VETO_IS_FOR_PERSONS)
    body = parse_body(_request().raw_body, VetoRequest)
    versions = expected_versions(_request(), memory_id)
    memory = call.services.memories.veto(
        call.principal, memory_id, body.reason, expected_versions=versions
    )
    return _memory_response((memory, call.services))


@memories_api.route("/memories/{memory_id}/erase", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
@idempotent(memories_api)
def erase_memory(memory_id: str) -> Response:
    """A person erases a memory: its tombstone (docs/reference.md#erasing-a-memory;
    ``If-Match`` honoured)."""
    call = call_context(_request())
    refuse_agents(call.principal, ERASE_IS_FOR_PERSONS)
    body = parse_body(_request().raw_body, EraseRequest)
    versions = expected_versions(_request(), memory_id)
    memory = call.services.erasure.erase(
        call.principal, memory_id, body.reason, expected_versions=versions
    )
    return _memory_response((memory, call.services))


@memories_api.route("/memories/{memory_id}/unarchive", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
@idempotent(memories_api)
def unarchive_memory(memory_id: str) -> Response:
    """Bring an archived memory back (docs/reference.md#unarchive-rules; ``If-Match`` honoured)."""
    call = call_context(_request())
    parse_body(_request().raw_body, EmptyRequest)
    versions = expected_versions(_request(), memory_id)
    memory = call.services.memories.unarchive(call.principal, memory_id, expected_versions=versions)
    return _memory_response((memory, call.services))


@memories_api.route("/memories/{memory_id}/history", methods=["GET"], content_types=ANY_CONTENT)
@endpoint
def memory_history(memory_id: str) -> Response:
    """The audit records of one memory, oldest first, paged (``limit``, ``nextToken``)."""
    call = call_context(_request(), takes_query=True)
    query = validate(dict(query_params(_request())), Paging)
    records, continue_after = call.services.memories.history(
        call.principal,
        memory_id,
        query.limit,
        decode_next_token(query.next_token, prefix="aud"),
    )
    return json_response(
        AuditList(
            data=[AuditObject.model_validate(record.to_wire()) for record in records],
            next_token=encode_next_token(continue_after),
        ).wire()
    )


reject_other_methods(
    memories_api,
    {
        "/memories": ["GET", "POST"],
        "/memories/day": ["POST"],
        "/memories/{memory_id}": ["GET", "PATCH"],
        "/memories/{memory_id}/archive": ["POST"],
        "/memories/{memory_id}/veto": ["POST"],
        "/memories/{memory_id}/unarchive": ["POST"],
        "/memories/{memory_id}/erase": ["POST"],
        "/memories/{memory_id}/history": ["GET"],
    },
)
