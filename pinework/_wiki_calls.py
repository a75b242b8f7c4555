"""The wiki's operations of the Python clients (docs/reference.md#17-wiki-pages): each
function builds the ``Request`` of one route; ``pinework._core`` makes each a method of
``Client`` and ``AsyncClient``. A page is named by its ``pag_…`` id or its slug."""

from __future__ import annotations

from collections.abc import Sequence

from pinework._calls import Request, _change, _given
from pinework._wire import path_segment
from pinework.wiki_models import WikiPage, WikiPageList, WikiPageRevisionList


def page_path(page: str, action: str | None = None) -> str:
    """``/pages/{id or slug}[/{action}]`` with the reference escaped as one path segment.

    Raises:
        ValueError: the reference is empty or a dot segment.
    """
    path = f"/pages/{path_segment(page, 'a page id or slug')}"
    return f"{path}/{action}" if action else path


def list_pages(
    *, state: str | None = None, limit: int | None = None, next_token: str | None = None
) -> Request[WikiPageList]:
    """The workspace's pages, newest first, without their text (``GET /pages``; an agent
    lists the published ones).

    Args:
        state: ``draft``, ``published`` or ``archived`` (persons; all three without).
        limit: page size (50 by default, 200 at most).
        next_token: the ``next_token`` of the previous page.

    Raises:
        PineworkAPIError: e.g. ``invalid_request``.
    """
    params = _given(state=state, limit=None if limit is None else str(limit), nextToken=next_token)
    return Request("GET", "/pages", WikiPageList, params=params)


def get_page(page: str) -> Request[WikiPage]:
    """One page with its text, by id or slug (``GET /pages/{ref}``); its ``etag`` is
    what a change's ``if_match`` takes.

    Raises:
        PineworkAPIError: ``page_not_found`` (an agent: also a draft or archived page).
        ValueError: an empty reference.
    """
    return Request("GET", page_path(page), WikiPage)


def create_page(
    title: str,
    text: str,
    *,
    slug: str | None = None,
    tags: Sequence[str] | None = None,
    idempotency_key: str | None = None,
) -> Request[WikiPage]:
    """Create a draft page (``POST /pages``; persons).

    Args:
        title: one line, at most 200 characters.
        text: the Markdown, at most 40,000 characters, no secrets.
        slug: its unique slug (made from the title when absent).
        tags: its tags.
        idempotency_key: see :class:`Client`.

    Raises:
        PineworkAPIError: e.g. ``page_slug_taken``, ``memory_text_too_long``,
            ``secret_in_memory``, ``forbidden`` (an agent).
    """
    body = _given(title=title, text=text, slug=slug, tags=None if tags is None else list(tags))
    return _change("POST", "/pages", WikiPage, body, idempotency_key)


def edit_page(
    page: str,
    *,
    title: str | None = None,
    text: str | None = None,
    slug: str | None = None,
    tags: Sequence[str] | None = None,
    if_match: str | None = None,
    idempotency_key: str | None = None,
) -> Request[WikiPage]:
    """Edit a draft or published page (``PATCH /pages/{ref}``; persons): the fields given.

    Args:
        page: its id or slug.
        if_match: the ``etag`` of the page as you read it: refused
            (``precondition_failed``) if it changed since.

    Raises:
        PineworkAPIError: e.g. ``precondition_failed``, ``page_not_found``,
            ``page_slug_taken``, ``invalid_request`` (nothing to change).
    """
    body = _given(title=title, text=text, slug=slug, tags=None if tags is None else list(tags))
    return _change("PATCH", page_path(page), WikiPage, body, idempotency_key, if_match)


def publish_page(
    page: str, *, if_match: str | None = None, idempotency_key: str | None = None
) -> Request[WikiPage]:
    """Publish a draft or archived page (``POST /pages/{ref}/publish``; persons): agents
    read it and recall matches its sections (docs/reference.md#wiki-in-recall).

    Raises:
        PineworkAPIError: e.g. ``page_not_found``, ``precondition_failed``, ``conflict``
            (already published).
    """
    return _change("POST", page_path(page, "publish"), WikiPage, {}, idempotency_key, if_match)


def archive_page(
    page: str, *, if_match: str | None = None, idempotency_key: str | None = None
) -> Request[WikiPage]:
    """Archive a draft or published page (``POST /pages/{ref}/archive``; persons).

    Raises:
        PineworkAPIError: e.g. ``page_not_found``, ``precondition_failed``, ``conflict``.
    """
    return _change("POST", page_path(page, "archive"), WikiPage, {}, idempotency_key, if_match)


def page_history(page: str) -> Request[WikiPageRevisionList]:
    """A page's history records, oldest first, each with a unified diff of the text
    (``GET /pages/{ref}/history``; persons).

    Raises:
        PineworkAPIError: e.g. ``page_not_found``, ``forbidden`` (an agent).
    """
    return Request("GET", page_path(page, "history"), WikiPageRevisionList)
