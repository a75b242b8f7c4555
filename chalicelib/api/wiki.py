"""Wiki page routes (docs/reference.md#17-wiki-pages, docs/issues.md#issue-45), under
``/api/v1``: a person creates, edits, publishes and archives pages and reads their
history; agents and persons list and read them (an agent the published ones only).
A page is named in a path by its ``pag_`` id or its slug. Every answer that is one page
carries its ``ETag``; changes honour ``If-Match``."""

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
from chalicelib.models.page import (
    CreatePageRequest,
    EditPageRequest,
    Page,
    PageList,
    PageListQuery,
    PageRevisionList,
    PageRevisionObject,
    PageState,
    PageSummaryObject,
)
from chalicelib.models.requests import EmptyRequest
from chalicelib.services.access.who import refuse_agents
from chalicelib.services.paging import decode_next_token, encode_next_token
from chalicelib.services.wiki.pages import PAGES_ARE_WRITTEN_BY_PERSONS, ExpectedVersions

wiki_api = Blueprint(__name__)


def _request() -> Any:
    return wiki_api.current_request


def _page_response(page: Page, status: int = 200) -> Response:
    return json_response(page.to_wire(), status, etag_header(page))


def _if_match() -> ExpectedVersions:
    """The request's ``If-Match`` as the service takes it (the page's id is known once
    it is read: a path may name it by slug). A malformed header is refused here, before
    anything is read (400 ``invalid_request``)."""
    request = _request()
    if request.headers.get("if-match") is None:
        return None
    expected_versions(request, "pag_")
    return lambda page_id: expected_versions(request, page_id)


@wiki_api.route("/pages", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
@idempotent(wiki_api)
def create_page() -> Response:
    """A person creates a draft page: 201 with it."""
    call = call_context(_request())
    refuse_agents(call.principal, PAGES_ARE_WRITTEN_BY_PERSONS)
    body = parse_body(_request().raw_body, CreatePageRequest)
    page = call.services.pages.create(
        call.principal, title=body.title, text=body.text, slug=body.slug, tags=body.tags
    )
    return _page_response(page, 201)


@wiki_api.route("/pages", methods=["GET"], content_types=ANY_CONTENT)
@endpoint
def list_pages() -> Response:
    """The workspace's pages newest first, without their text (``state``, ``limit``,
    ``nextToken``)."""
    call = call_context(_request(), takes_query=True)
    query = validate(dict(query_params(_request())), PageListQuery)
    found, after = call.services.pages.list_pages(
        call.principal,
        state=None if query.state is None else PageState(query.state),
        limit=query.limit,
        after=decode_next_token(query.next_token, prefix="pag"),
    )
    return json_response(
        PageList(
            data=[PageSummaryObject.model_validate(page.summary()) for page in found],
            next_token=encode_next_token(after),
        ).wire()
    )


@wiki_api.route("/pages/{page_ref}", methods=["GET"], content_types=ANY_CONTENT)
@endpoint
def get_page(page_ref: str) -> Response:
    """One page by id or slug, with its ``ETag``."""
    call = call_context(_request())
    return _page_response(call.services.pages.get(call.principal, page_ref))


@wiki_api.route("/pages/{page_ref}", methods=["PATCH"], content_types=ANY_CONTENT)
@endpoint
@idempotent(wiki_api)
def edit_page(page_ref: str) -> Response:
    """A person edits a draft or published page (title, slug, text, tags)."""
    call = call_context(_request())
    refuse_agents(call.principal, PAGES_ARE_WRITTEN_BY_PERSONS)
    body = parse_body(_request().raw_body, EditPageRequest)
    page = call.services.pages.edit(
        call.principal,
        page_ref,
        title=body.title,
        slug=body.slug,
        text=body.text,
        tags=body.tags,
        expected_versions=_if_match(),
    )
    return _page_response(page)


@wiki_api.route("/pages/{page_ref}/publish", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
@idempotent(wiki_api)
def publish_page(page_ref: str) -> Response:
    """A person publishes a draft or archived page."""
    call = call_context(_request())
    refuse_agents(call.principal, PAGES_ARE_WRITTEN_BY_PERSONS)
    parse_body(_request().raw_body, EmptyRequest)
    return _page_response(call.services.pages.publish(call.principal, page_ref, _if_match()))


@wiki_api.route("/pages/{page_ref}/archive", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
@idempotent(wiki_api)
def archive_page(page_ref: str) -> Response:
    """A person archives a draft or published page."""
    call = call_context(_request())
    refuse_agents(call.principal, PAGES_ARE_WRITTEN_BY_PERSONS)
    parse_body(_request().raw_body, EmptyRequest)
    return _page_response(call.services.pages.archive(call.principal, page_ref, _if_match()))


@wiki_api.route("/pages/{page_ref}/history", methods=["GET"], content_types=ANY_CONTENT)
@endpoint
def page_history(page_ref: str) -> Response:
    """A page's history records, oldest first, each with a unified diff of the text."""
    call = call_context(_request())
    records = call.services.pages.history(call.principal, page_ref)
    return json_response(
        PageRevisionList(
            data=[PageRevisionObject.model_validate(record.to_wire()) for record in records],
            next_token=None,
        ).wire()
    )


reject_other_methods(
    wiki_api,
    {
        "/pages": ["GET", "POST"],
        "/pages/{page_ref}": ["GET", "PATCH"],
        "/pages/{page_ref}/publish": ["POST"],
        "/pages/{page_ref}/archive": ["POST"],
        "/pages/{page_ref}/history": ["GET"],
    },
)
