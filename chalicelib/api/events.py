"""The change events' pull feed (docs/reference.md#change-events, docs/issues.md#issue-47),
under ``/api/v1``: ``GET /events?after=<cursor>&limit=<n>``."""

from __future__ import annotations

from typing import Any

from chalice.app import Blueprint, Response

from chalicelib.api.context import call_context, query_params
from chalicelib.api.http import ANY_CONTENT, endpoint, json_response, validate
from chalicelib.models.event import EventList, EventObject, EventQuery

events_api = Blueprint(__name__)


def _request() -> Any:
    return events_api.current_request


@events_api.route("/events", methods=["GET"], content_types=ANY_CONTENT)
@endpoint
def list_events() -> Response:
    """The caller's events after ``after``, oldest first: a person's workspace's, an
    agent's own (``limit``, default 100, at most 200)."""
    call = call_context(_request(), takes_query=True)
    query = validate(dict(query_params(_request())), EventQuery)
    page = call.services.events.page(call.principal, query.after, query.limit)
    return json_response(
        EventList(
            data=[EventObject.model_validate(event) for event in page.events],
            next_cursor=page.next_cursor,
            has_more=page.has_more,
        ).wire()
    )
