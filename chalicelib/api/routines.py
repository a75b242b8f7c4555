"""Routine routes (docs/reference.md#routes-routines, docs/reference.md#9-review), under
``/api/v1``: list, read, create again, pause, resume and delete an agent's "Memory dreaming"
routine.

Persons do everything; the owner agent may read. A routine is addressed by its
``rtn_…`` id or its agent's ``agt_…`` id.
"""

from __future__ import annotations

from typing import Any

from chalice.app import Blueprint, Response

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
from chalicelib.models.requests import EmptyRequest
from chalicelib.models.responses import RoutineList, RoutineObject
from chalicelib.models.routine import CreateRoutineRequest, RoutineQuery
from chalicelib.services.access.who import refuse_agents
from chalicelib.services.paging import decode_next_token, encode_next_token
from chalicelib.services.review.routines import (
    ROUTINE_CHANGES_ARE_FOR_PERSONS,
    ROUTINE_CREATION_IS_FOR_PERSONS,
)

routines_api = Blueprint(__name__)


def _request() -> Any:
    return routines_api.current_request


@routines_api.route("/routines", methods=["GET"], content_types=ANY_CONTENT)
@endpoint
def list_routines() -> Response:
    """List routines: an agent its own; a person one agent's (``agentId``) or all."""
    call = call_context(_request(), takes_query=True)
    query = validate(dict(query_params(_request())), RoutineQuery)
    routines, continue_after = call.services.routines.list(
        call.principal,
        query.agent_id,
        query.limit,
        decode_next_token(query.next_token, prefix="agt"),
    )
    return json_response(
        RoutineList(
            data=[RoutineObject.model_validate(routine.to_wire()) for routine in routines],
            next_token=encode_next_token(continue_after),
        ).wire()
    )


@routines_api.route("/routines", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
@idempotent(routines_api)
def create_routine() -> Response:
    """A person creates an agent's routine (again) -> 201, or 200 when it exists."""
    call = call_context(_request())
    refuse_agents(call.principal, ROUTINE_CREATION_IS_FOR_PERSONS)
    body = parse_body(_request().raw_body, CreateRoutineRequest)
    routine, created = call.services.routines.create(call.principal, body.agent_id)
    return json_response(routine.to_wire(), 201 if created else 200)


@routines_api.route("/routines/{routine_id}", methods=["GET"], content_types=ANY_CONTENT)
@endpoint
def get_routine(routine_id: str) -> Response:
    """One routine (person, or the owner agent)."""
    call = call_context(_request())
    return json_response(call.services.routines.get(call.principal, routine_id).to_wire())


@routines_api.route("/routines/{routine_id}", methods=["DELETE"], content_types=ANY_CONTENT)
@endpoint
@idempotent(routines_api)
def delete_routine(routine_id: str) -> Response:
    """A person deletes a routine; the answer shows it with ``status: deleted``."""
    call = call_context(_request())
    refuse_agents(call.principal, ROUTINE_CHANGES_ARE_FOR_PERSONS)
    parse_body(_request().raw_body, EmptyRequest)
    return json_response(call.services.routines.delete(call.principal, routine_id).to_wire())


@routines_api.route("/routines/{routine_id}/pause", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
@idempotent(routines_api)
def pause_routine(routine_id: str) -> Response:
    """A person pauses a routine (idempotent)."""
    call = call_context(_request())
    refuse_agents(call.principal, ROUTINE_CHANGES_ARE_FOR_PERSONS)
    parse_body(_request().raw_body, EmptyRequest)
    return json_response(call.services.routines.pause(call.principal, routine_id).to_wire())


@routines_api.route("/routines/{routine_id}/resume", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
@idempotent(routines_api)
def resume_routine(routine_id: str) -> Response:
    """A person resumes a routine (idempotent)."""
    call = call_context(_request())
    refuse_agents(call.principal, ROUTINE_CHANGES_ARE_FOR_PERSONS)
    parse_body(_request().raw_body, EmptyRequest)
    return json_response(call.services.routines.resume(call.principal, routine_id).to_wire())


reject_other_methods(
    routines_api,
    {
        "/routines": ["GET", "POST"],
        "/routines/{routine_id}": ["GET", "DELETE"],
        "/routines/{routine_id}/pause": ["POST"],
        "/routines/{routine_id}/resume": ["POST"],
    },
)
