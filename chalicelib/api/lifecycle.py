"""A person's data lifecycle routes (docs/reference.md#erasing-an-agent-a-person-or-a-workspace,
docs/reference.md#exports-for-a-person, docs/issues.md#issue-24-item-8), under ``/api/v1``: erase an
agent of the workspace and follow the erasure, export an agent or the workspace and fetch
the file from a short-lived link. Both run in the review worker; the routes answer 202.
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
from chalicelib.errors import AgentNotInWorkspace
from chalicelib.models.lifecycle import (
    EraseAgentRequest,
    ErasureList,
    ErasureObject,
    ErasureQuery,
    ExportRequest,
)
from chalicelib.services.access.who import refuse_agents
from chalicelib.services.lifecycle.requests import (
    ERASURE_IS_FOR_PERSONS,
    ERASURE_TOKEN,
    EXPORT_IS_FOR_PERSONS,
)
from chalicelib.services.paging import decode_next_token, encode_next_token

lifecycle_api = Blueprint(__name__)


def _request() -> Any:
    return lifecycle_api.current_request


@lifecycle_api.route("/agents/{agent_id}/erase", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
@idempotent(lifecycle_api)
def erase_agent(agent_id: str) -> Response:
    """A person erases an agent of their workspace with everything of it: 202 with the
    erasure (queued or running), 200 once it is done; ``GET /erasures/{id}`` follows it."""
    call = call_context(_request())
    refuse_agents(call.principal, ERASURE_IS_FOR_PERSONS)
    body = parse_body(_request().raw_body, EraseAgentRequest)
    try:
        erasure, done = call.services.lifecycle.erase_agent(call.principal, agent_id, body.reason)
    except AgentNotInWorkspace as missing:
        # An id in the path answers as missing, as memory ids do (docs/reference.md#ids-in-paths).
        raise missing.as_missing() from missing
    if done:
        return json_response(erasure)
    return json_response(erasure, 202, headers={"Location": f"/api/v1/erasures/{agent_id}"})


@lifecycle_api.route("/erasures", methods=["GET"], content_types=ANY_CONTENT)
@endpoint
def list_erasures() -> Response:
    """The workspace's past erasures (memories, agents, persons), newest first, paged
    (``limit``, ``nextToken``)."""
    call = call_context(_request(), takes_query=True)
    query = validate(dict(query_params(_request())), ErasureQuery)
    after = decode_next_token(query.next_token, pattern=ERASURE_TOKEN)
    erasures, more = call.services.lifecycle.erasures(call.principal, query.limit, after)
    return json_response(
        ErasureList(
            data=[ErasureObject.model_validate(erasure) for erasure in erasures],
            next_token=encode_next_token(more),
        ).wire()
    )


@lifecycle_api.route("/erasures/{target_id}", methods=["GET"], content_types=ANY_CONTENT)
@endpoint
def get_erasure(target_id: str) -> Response:
    """An erasure in the person's workspace: its status and counts, then its tombstone."""
    call = call_context(_request())
    return json_response(call.services.lifecycle.erasure(call.principal, target_id))


@lifecycle_api.route("/exports", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
@idempotent(lifecycle_api)
def start_export() -> Response:
    """A person exports an agent (``agentId``) or the workspace: 202 with the export;
    ``GET /exports/{id}`` gives its file's link once it is done. While another export of
    the workspace is queued or running, 200 with that one (nothing new is queued); past
    the workspace's exports of the day, 429 ``rate_limited``."""
    call = call_context(_request())
    refuse_agents(call.principal, EXPORT_IS_FOR_PERSONS)
    body = parse_body(_request().raw_body, ExportRequest)
    export, new = call.services.lifecycle.start_export(call.principal, body.agent_id)
    location = {"Location": f"/api/v1/exports/{export['id']}"}
    return json_response(export, 202 if new else 200, headers=location)


@lifecycle_api.route("/exports/{export_id}", methods=["GET"], content_types=ANY_CONTENT)
@endpoint
def get_export(export_id: str) -> Response:
    """An export of the person's workspace; once done, ``url`` fetches the file for 15
    minutes (read it again for a new link)."""
    call = call_context(_request())
    return json_response(call.services.lifecycle.export(call.principal, export_id))


reject_other_methods(
    lifecycle_api,
    {
        "/agents/{agent_id}/erase": ["POST"],
        "/erasures": ["GET"],
        "/erasures/{target_id}": ["GET"],
        "/exports": ["POST"],
        "/exports/{export_id}": ["GET"],
    },
)
