"""Bulk action routes (docs/reference.md#bulk-actions, docs/issues.md#issue-46-item-3),
under ``/api/v1``: a person acts on many memories in one request, reads the action
back, and undoes it."""

from __future__ import annotations

from typing import Any

from chalice.app import Blueprint, Response

from chalicelib.api.context import call_context
from chalicelib.api.http import (
    ANY_CONTENT,
    endpoint,
    json_response,
    parse_body,
    reject_other_methods,
)
from chalicelib.api.idempotency import idempotent
from chalicelib.models.bulk import BulkRecordObject, BulkRequest, BulkResultObject, BulkUndoObject
from chalicelib.models.requests import EmptyRequest
from chalicelib.services.access.who import refuse_agents
from chalicelib.services.memory.bulk import BULK_IS_FOR_PERSONS

bulk_api = Blueprint(__name__)


def _request() -> Any:
    return bulk_api.current_request


@bulk_api.route("/memories/bulk", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
@idempotent(bulk_api)
def apply_bulk() -> Response:
    """A person archives, vetoes, tags or untags up to 100 memories: 200 with what
    changed and what did not."""
    call = call_context(_request())
    refuse_agents(call.principal, BULK_IS_FOR_PERSONS)
    body = parse_body(_request().raw_body, BulkRequest)
    result = call.services.bulk.apply(call.principal, body)
    return json_response(BulkResultObject.model_validate(result.to_wire()).wire())


@bulk_api.route("/memories/bulk/{bulk_id}", methods=["GET"], content_types=ANY_CONTENT)
@endpoint
def get_bulk(bulk_id: str) -> Response:
    """A bulk action of the workspace as stored."""
    call = call_context(_request())
    record = call.services.bulk.get(call.principal, bulk_id)
    return json_response(BulkRecordObject.model_validate(record.to_wire()).wire())


@bulk_api.route("/memories/bulk/{bulk_id}/undo", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
@idempotent(bulk_api)
def undo_bulk(bulk_id: str) -> Response:
    """A person undoes a bulk action (once): what was put back and what was not."""
    call = call_context(_request())
    refuse_agents(call.principal, BULK_IS_FOR_PERSONS)
    parse_body(_request().raw_body, EmptyRequest)
    record, outcome = call.services.bulk.undo(call.principal, bulk_id)
    answer = {"id": record.id, "restored": outcome.changed_wire(), "skipped": outcome.skipped}
    return json_response(BulkUndoObject.model_validate(answer).wire())


reject_other_methods(
    bulk_api,
    {
        "/memories/bulk": ["POST"],
        "/memories/bulk/{bulk_id}": ["GET"],
        "/memories/bulk/{bulk_id}/undo": ["POST"],
    },
)
