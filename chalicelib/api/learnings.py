"""Learning routes (docs/reference.md#routes-learnings, docs/issues.md#issue-25), under ``/api/v1``:
an agent or a person proposes, a person approves (editing first, or not), edits, rejects
or retires; anyone of the workspace lists and reads them and their history. Every
answer that is one learning carries its ``ETag``; the person's changes honour
``If-Match``."""

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
from chalicelib.api.preconditions import etag_header, expected_versions
from chalicelib.models.learning import (
    ApproveLearningRequest,
    EditLearningRequest,
    Learning,
    LearningAuditList,
    LearningAuditObject,
    LearningList,
    LearningListQuery,
    LearningObject,
    LearningState,
    ProposeLearningRequest,
    RejectLearningRequest,
    RetireLearningRequest,
)
from chalicelib.services.access.who import refuse_agents
from chalicelib.services.learnings import DECISIONS_ARE_FOR_PERSONS
from chalicelib.services.paging import decode_next_token, encode_next_token

learnings_api = Blueprint(__name__)


def _request() -> Any:
    return learnings_api.current_request


def _learning_response(learning: Learning, status: int = 200) -> Response:
    return json_response(learning.to_wire(), status, etag_header(learning))


@learnings_api.route("/learnings", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
@idempotent(learnings_api)
def propose_learning() -> Response:
    """Propose a learning: 201 (an agent's ``proposed``, a person's ``active``), or 200
    with the live learning that already says the same."""
    call = call_context(_request())
    body = parse_body(_request().raw_body, ProposeLearningRequest)
    learning, created = call.services.learnings.propose(call.principal, body.text, call.run)
    return _learning_response(learning, 201 if created else 200)


@learnings_api.route("/learnings", methods=["GET"], content_types=ANY_CONTENT)
@endpoint
def list_learnings() -> Response:
    """The workspace's learnings, newest first (``state``, ``q``, ``unreviewed``,
    ``limit``, ``nextToken``)."""
    call = call_context(_request(), takes_query=True)
    query = validate(dict(query_params(_request())), LearningListQuery)
    found, after = call.services.learnings.list_learnings(
        call.principal,
        state=None if query.state is None else LearningState(query.state),
        query=query.q,
        unreviewed=query.only_unreviewed,
        limit=query.limit,
        after=decode_next_token(query.next_token, prefix="lrn"),
    )
    return json_response(
        LearningList(
            data=[LearningObject.model_validate(learning.to_wire()) for learning in found],
            next_token=encode_next_token(after),
        ).wire()
    )


@learnings_api.route("/learnings/{learning_id}", methods=["GET"], content_types=ANY_CONTENT)
@endpoint
def get_learning(learning_id: str) -> Response:
    """One learning of the workspace, with its ``ETag``."""
    call = call_context(_request())
    return _learning_response(call.services.learnings.get(call.principal, learning_id))


@learnings_api.route("/learnings/{learning_id}", methods=["PATCH"], content_types=ANY_CONTENT)
@endpoint
@idempotent(learnings_api)
def edit_learning(learning_id: str) -> Response:
    """A person edits a proposed or active learning's text."""
    call = call_context(_request())
    refuse_agents(call.principal, DECISIONS_ARE_FOR_PERSONS)
    body = parse_body(_request().raw_body, EditLearningRequest)
    versions = expected_versions(_request(), learning_id)
    learning = call.services.learnings.edit(call.principal, learning_id, body.text, versions)
    return _learning_response(learning)


@learnings_api.route(
    "/learnings/{learning_id}/approve", methods=["POST"], content_types=ANY_CONTENT
)
@endpoint
@idempotent(learnings_api)
def approve_learning(learning_id: str) -> Response:
    """A person approves a proposed learning (``text``: edited as it is approved;
    ``archiveCopies``: the facts a review cited are archived)."""
    return _decide(learning_id, "approve")


@learnings_api.route("/learnings/{learning_id}/reject", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
@idempotent(learnings_api)
def reject_learning(learning_id: str) -> Response:
    """A person rejects a proposed learning, with a reason."""
    return _decide(learning_id, "reject")


@learnings_api.route("/learnings/{learning_id}/retire", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
@idempotent(learnings_api)
def retire_learning(learning_id: str) -> Response:
    """A person retires an active learning."""
    return _decide(learning_id, "retire")


def _decide(learning_id: str, verb: str) -> Response:
    """A person's decision: refused to agents before the body is read, ``If-Match``
    honoured."""
    call = call_context(_request())
    refuse_agents(call.principal, DECISIONS_ARE_FOR_PERSONS)
    versions = expected_versions(_request(), learning_id)
    service = call.services.learnings
    if verb == "approve":
        approval = parse_body(_request().raw_body, ApproveLearningRequest)
        learning = service.approve(
            call.principal,
            learning_id,
            approval.text,
            versions,
            archive_copies=approval.archive_copies,
        )
    elif verb == "reject":
        rejection = parse_body(_request().raw_body, RejectLearningRequest)
        learning = service.reject(call.principal, learning_id, rejection.reason, versions)
    else:
        retirement = parse_body(_request().raw_body, RetireLearningRequest)
        learning = service.retire(call.principal, learning_id, retirement.reason, versions)
    return _learning_response(learning)


@learnings_api.route("/learnings/{learning_id}/history", methods=["GET"], content_types=ANY_CONTENT)
@endpoint
def learning_history(learning_id: str) -> Response:
    """A learning's history records, oldest first (one page: a learning has few)."""
    call = call_context(_request())
    records = call.services.learnings.history(call.principal, learning_id)
    return json_response(
        LearningAuditList(
            data=[LearningAuditObject.model_validate(record.to_wire()) for record in records],
            next_token=None,
        ).wire()
    )


reject_other_methods(
    learnings_api,
    {
        "/learnings": ["GET", "POST"],
        "/learnings/{learning_id}": ["GET", "PATCH"],
        "/learnings/{learning_id}/approve": ["POST"],
        "/learnings/{learning_id}/reject": ["POST"],
        "/learnings/{learning_id}/retire": ["POST"],
        "/learnings/{learning_id}/history": ["GET"],
    },
)
