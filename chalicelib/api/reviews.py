"""Review routes (docs/reference.md#routes-reviews, docs/reference.md#9-review), under ``/api/v1``:
run an agent's review now or queue it (or dry-run it), list an agent's reports, read one report,
approve or reject one action that waits for a person (docs/issues.md#issue-4-item-6,
docs/issues.md#issue-14-item-2), list the actions waiting, and undo one applied action
(docs/issues.md#issue-14-item-3)."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

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
from chalicelib.api.observe import note_review
from chalicelib.models.requests import EmptyRequest
from chalicelib.models.responses import (
    PendingActionObject,
    PendingList,
    ReviewList,
    ReviewSummaryObject,
)
from chalicelib.models.review_requests import (
    ApproveRequest,
    PendingListQuery,
    ReviewListQuery,
    RunReviewRequest,
)
from chalicelib.models.review_run import ReviewRun
from chalicelib.services.access.who import refuse_agents
from chalicelib.services.paging import decode_next_token, encode_next_token
from chalicelib.services.review.decisions import DECISIONS_ARE_FOR_PERSONS, action_number
from chalicelib.services.review.service import PENDING_TOKEN, REVIEW_RUN_IS_FOR_PERSONS
from chalicelib.services.review.undo import UNDO_IS_FOR_PERSONS

reviews_api = Blueprint(__name__)


def _request() -> Any:
    return reviews_api.current_request


@reviews_api.route("/reviews", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
@idempotent(reviews_api)
def run_review() -> Response:
    """A person runs an agent's review now (200 with the report), or, when it may outlast
    API Gateway's 29 s, queues it (202 with its id; ``GET /reviews/{id}`` follows it);
    ``dryRun`` returns the plan and changes nothing."""
    call = call_context(_request())
    refuse_agents(call.principal, REVIEW_RUN_IS_FOR_PERSONS)
    body = parse_body(_request().raw_body, RunReviewRequest)
    outcome = call.services.review_runs.start(call.principal, body)
    if isinstance(outcome, ReviewRun):
        return json_response(
            outcome.to_wire(), 202, headers={"Location": f"/api/v1/reviews/{outcome.id}"}
        )
    note_review(outcome)
    return json_response(outcome.to_wire())


@reviews_api.route("/reviews", methods=["GET"], content_types=ANY_CONTENT)
@endpoint
def list_reviews() -> Response:
    """An agent's review reports (summaries), newest first."""
    call = call_context(_request(), takes_query=True)
    query = validate(dict(query_params(_request())), ReviewListQuery)
    summaries, after = call.services.reviews.list_reviews(
        call.principal,
        query.agent_id,
        query.limit,
        decode_next_token(query.next_token, prefix="rvw"),
    )
    return json_response(
        ReviewList(
            data=[ReviewSummaryObject.model_validate(summary.to_wire()) for summary in summaries],
            next_token=encode_next_token(after),
        ).wire()
    )


@reviews_api.route("/reviews/pending", methods=["GET"], content_types=ANY_CONTENT)
@endpoint
def list_pending_actions() -> Response:
    """Review actions waiting for a person (a workspace's, or one agent's), oldest first."""
    call = call_context(_request(), takes_query=True)
    query = validate(dict(query_params(_request())), PendingListQuery)
    pending, after = call.services.reviews.list_pending(
        call.principal,
        query.agent_id,
        query.limit,
        decode_next_token(query.next_token, pattern=PENDING_TOKEN),
    )
    return json_response(
        PendingList(
            data=[PendingActionObject.model_validate(entry.to_wire()) for entry in pending],
            next_token=encode_next_token(after),
        ).wire()
    )


@reviews_api.route("/reviews/{review_id}", methods=["GET"], content_types=ANY_CONTENT)
@endpoint
def get_review(review_id: str) -> Response:
    """One full report: the plan, what was applied, what was skipped and why; a queued
    review that is not done yet shows its ``status`` (queued, running, failed)."""
    call = call_context(_request())
    return json_response(call.services.review_runs.get(call.principal, review_id).to_wire())


@reviews_api.route(
    "/reviews/{review_id}/actions/{action_ref}/approve", methods=["POST"], content_types=ANY_CONTENT
)
@endpoint
@idempotent(reviews_api)
def approve_review_action(review_id: str, action_ref: str) -> Response:
    """A person approves one pending action (``2`` or ``a2``): it is applied now."""
    return _decide(review_id, action_ref, "approve")


@reviews_api.route(
    "/reviews/{review_id}/actions/{action_ref}/reject", methods=["POST"], content_types=ANY_CONTENT
)
@endpoint
@idempotent(reviews_api)
def reject_review_action(review_id: str, action_ref: str) -> Response:
    """A person rejects one pending action (``2`` or ``a2``): it is never applied."""
    return _decide(review_id, action_ref, "reject")


@reviews_api.route(
    "/reviews/{review_id}/actions/{action_ref}/undo", methods=["POST"], content_types=ANY_CONTENT
)
@endpoint
@idempotent(reviews_api)
def undo_review_action(review_id: str, action_ref: str) -> Response:
    """A person undoes one applied action (``2`` or ``a2``): what it changed is restored."""
    call = call_context(_request())
    refuse_agents(call.principal, UNDO_IS_FOR_PERSONS)
    parse_body(_request().raw_body, EmptyRequest)
    report = call.services.reviews.undo(call.principal, review_id, unquote(action_ref))
    return json_response(report.to_wire())


def _decide(review_id: str, action_ref: str, verb: str) -> Response:
    """Approve (``{keepId?}``) or reject (``{}``); the action segment arrives
    percent-encoded, decoded here."""
    call = call_context(_request())
    refuse_agents(call.principal, DECISIONS_ARE_FOR_PERSONS)
    reviews = call.services.reviews
    if verb == "approve":
        body = parse_body(_request().raw_body, ApproveRequest)
        report = reviews.approve(call.principal, review_id, unquote(action_ref), body.keep_id)
    else:
        parse_body(_request().raw_body, EmptyRequest)
        report = reviews.reject(call.principal, review_id, unquote(action_ref))
    note_review(report, decided=f"a{action_number(unquote(action_ref))}")
    return json_response(report.to_wire())


reject_other_methods(
    reviews_api,
    {
        "/reviews": ["GET", "POST"],
        "/reviews/{review_id}": ["GET"],
        "/reviews/{review_id}/actions/{action_ref}/approve": ["POST"],
        "/reviews/{review_id}/actions/{action_ref}/reject": ["POST"],
        "/reviews/{review_id}/actions/{action_ref}/undo": ["POST"],
        "/reviews/pending": ["GET"],
    },
)
