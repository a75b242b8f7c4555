"""Typed wiki pages of the Pinework HTTP API, as the Python client decodes them
(docs/reference.md#17-wiki-pages): snake_case attributes, either spelling accepted,
unknown fields ignored (``pinework.models.WireModel``)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import Field

from pinework.models import WireModel

__all__ = [
    "WikiPage",
    "WikiPageList",
    "WikiPageRevision",
    "WikiPageRevisionList",
    "WikiPageSummary",
]


class _WikiPageFields(WireModel):
    """What a wiki page and its summary share.

    Attributes:
        id: ``pag_`` + ULID.
        object_type: ``"page_summary"`` (``"page"`` for a whole page).
        workspace_id: the workspace, ``wsp_…``.
        title, slug, tags: its title (one line, at most 200 characters), its slug (unique
            in the workspace) and tags.
        state: ``draft``, ``published`` or ``archived`` (docs/reference.md#page-states).
        created_by, created_at, updated_by, updated_at: who made and last changed it, when.
        published_at, archived_at: when it was last published and archived.
        version: its stored version (the ``ETag`` names it).
    """

    id: str
    workspace_id: str
    title: str
    slug: str
    tags: list[str] = Field(default_factory=list)
    state: str
    created_by: str
    created_at: dt.datetime
    updated_by: str
    updated_at: dt.datetime
    published_at: dt.datetime | None = None
    archived_at: dt.datetime | None = None
    version: int


class WikiPageSummary(_WikiPageFields):
    """A wiki page in a list (``GET /pages``): everything but its text, and
    ``characters``, the length of its text."""

    object_type: str = Field(default="page_summary", alias="object")
    characters: int


class WikiPage(_WikiPageFields):
    """A whole wiki page (``GET /pages/{id or slug}``): ``text`` is its Markdown (at most
    40,000 characters). Its ``etag`` (the answer's ``ETag``) is what changes'
    ``If-Match`` takes."""

    object_type: str = Field(default="page", alias="object")
    text: str


class WikiPageList(WireModel):
    """A page of ``GET /pages``, newest first; ``next_token`` continues it."""

    object_type: str = Field(default="list", alias="object")
    data: list[WikiPageSummary]
    next_token: str | None = None


class WikiPageRevision(WireModel):
    """One history record of a wiki page (``GET /pages/{id}/history``).

    Attributes:
        action: ``create``, ``edit``, ``publish`` or ``archive``.
        actor_type, actor_id: who did it.
        at: when (UTC); version: the page's version after it.
        before, after: title, slug, tags and state before (``None`` on create) and after.
        diff: a unified diff of the text (empty: the text is the same).
    """

    id: str
    object_type: str = Field(default="page_revision", alias="object")
    page_id: str
    action: str
    actor_type: str
    actor_id: str
    at: dt.datetime
    version: int
    before: dict[str, Any] | None = None
    after: dict[str, Any]
    diff: str = ""


class WikiPageRevisionList(WireModel):
    """A wiki page's history records, oldest first, in one page."""

    object_type: str = Field(default="list", alias="object")
    data: list[WikiPageRevision]
    next_token: str | None = None
