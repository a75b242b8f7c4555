"""The wiki page: a Markdown document a workspace shares with its agents
(docs/reference.md#17-wiki-pages, docs/issues.md#issue-45), its history record, the
bodies of its routes and their wire shapes."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field, field_validator

from chalicelib.ids import ULID_PATTERN
from chalicelib.limits import MAX_PAGE_LIST
from chalicelib.models.common import RequestModel, Timestamp, WireModel
from chalicelib.models.requests import Limit, Paging
from chalicelib.models.responses import ListPage, ResponseModel, WireTime


class PageState(StrEnum):
    """Where a wiki page stands (docs/reference.md#page-states)."""

    DRAFT = "draft"
    PUBLISHED = "published"
    ARCHIVED = "archived"


PageStateName = Literal["draft", "published", "archived"]
"""A page's states as the wire schemas name them."""
PageAction = Literal["create", "edit", "publish", "archive"]
"""What a history record of a page records."""

PAGE_ID_PATTERN = rf"^pag_{ULID_PATTERN}$"
SLUG_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
"""A slug: lowercase ASCII letters and digits in runs joined by single hyphens."""
TAG_PATTERN = r"^[a-z0-9][a-z0-9_-]*$"
"""A page tag: lowercase ASCII letters, digits, ``-`` and ``_``, not starting with a sign."""


class Page(WireModel):
    """A wiki page as stored and (``to_wire``) as returned. ``version`` (the
    optimistic-concurrency counter behind ``ETag``) is stored, never sent. Times are
    aware UTC datetimes."""

    id: str
    workspace_id: str
    title: str
    slug: str
    text: str
    tags: list[str] = Field(default_factory=list)
    state: PageState
    created_by: str
    created_at: Timestamp
    updated_by: str
    updated_at: Timestamp
    published_at: Timestamp | None = None
    """When it was last published."""
    archived_at: Timestamp | None = None
    version: int = Field(default=1, exclude=True)
    characters: int | None = Field(default=None, exclude=True)
    """A summary read from a list (its ``text`` empty): the length of the text."""

    def to_wire(self) -> dict[str, Any]:
        """The JSON object (camelCase, ``object: "page"``, ``version`` included)."""
        body = self.model_dump(mode="json", by_alias=True)
        return {"id": body.pop("id"), "object": "page", **body, "version": self.version}

    def summary(self) -> dict[str, Any]:
        """The page in a list: everything but its text, with its length
        (``object: "page_summary"``)."""
        body = self.to_wire()
        text = body.pop("text")
        length = len(text) if self.characters is None else self.characters
        return {**body, "object": "page_summary", "characters": length}


class PageRevision(WireModel):
    """One entry of a page's history: who did what and when, the page's version after
    it, its title, slug, tags and state before and after, and a unified diff of its text
    (empty when the text did not change)."""

    id: str
    page_id: str
    workspace_id: str = Field(exclude=True)
    action: PageAction
    actor_type: Literal["agent", "person"]
    actor_id: str
    at: Timestamp
    version: int
    before: dict[str, Any] | None = None
    after: dict[str, Any]
    diff: str = ""

    def to_wire(self) -> dict[str, Any]:
        """The JSON object (``object: "page_revision"``)."""
        body = self.model_dump(mode="json", by_alias=True)
        return {"id": body.pop("id"), "object": "page_revision", **body}


class CreatePageRequest(RequestModel):
    """``POST /pages``: a title, an optional slug (made from the title when absent), the
    Markdown text and optional tags. Lengths and characters are checked by the service
    with the codes of facts (``memory_text_too_long``, ``invalid_request``,
    ``secret_in_memory``)."""

    title: str = Field(min_length=1, max_length=1_000)
    slug: str | None = Field(default=None, min_length=1, max_length=200)
    text: str = Field(min_length=1, max_length=200_000)
    tags: list[str] = Field(default_factory=list, max_length=50)


class EditPageRequest(RequestModel):
    """``PATCH /pages/{id}``: any of title, slug, text, tags (at least one)."""

    title: str | None = Field(default=None, min_length=1, max_length=1_000)
    slug: str | None = Field(default=None, min_length=1, max_length=200)
    text: str | None = Field(default=None, min_length=1, max_length=200_000)
    tags: list[str] | None = Field(default=None, max_length=50)


class PageListQuery(Paging):
    """``GET /pages``: ``state`` filters (an agent's list is the published pages only),
    ``limit`` from 1, default 50, over 200 read as 200, ``nextToken``."""

    state: PageStateName | None = None
    limit: Limit = 50
    next_token: str | None = Field(default=None, max_length=200)

    @field_validator("limit", mode="after")
    @classmethod
    def _clamp(cls, value: int) -> int:
        return min(value, MAX_PAGE_LIST)


class _PageFields(ResponseModel):
    """What a page and its summary share on the wire."""

    id: str = Field(description="`pag_` + a ULID.")
    workspace_id: str
    title: str
    slug: str
    tags: list[str]
    state: PageStateName
    created_by: str
    created_at: WireTime
    updated_by: str
    updated_at: WireTime
    published_at: WireTime | None
    archived_at: WireTime | None
    version: int = Field(description="The stored version; the `ETag` names it.")


class PageObject(_PageFields):
    """A wiki page (docs/reference.md#17-wiki-pages), sent with its ``ETag``."""

    object: Literal["page"]
    text: str = Field(description="Markdown, at most 40,000 characters.")


class PageSummaryObject(_PageFields):
    """A wiki page in a list: without its text."""

    object: Literal["page_summary"]
    characters: int = Field(description="The length of its text, in characters.")


class PageRevisionObject(ResponseModel):
    """A wiki page's history record on the wire."""

    id: str
    object: Literal["page_revision"]
    page_id: str
    action: PageAction
    actor_type: Literal["agent", "person"]
    actor_id: str
    at: WireTime
    version: int
    before: dict[str, Any] | None = Field(
        description="Title, slug, tags and state before (null on create)."
    )
    after: dict[str, Any] = Field(description="Title, slug, tags and state after.")
    diff: str = Field(description="A unified diff of the text (empty: the text is the same).")


class PageList(ListPage[PageSummaryObject]):
    """``GET /pages``: pages newest first."""


class PageRevisionList(ListPage[PageRevisionObject]):
    """``GET /pages/{id}/history``: records oldest first."""


PATH_SEPARATOR = "\u203a"
"""What separates the parts of a section's heading path (U+203A, a single right-pointing
angle quotation mark)."""


@dataclass(frozen=True)
class IndexedSection:
    """One section of a published page as the workspace's section index holds it
    (docs/reference.md#page-sections): what recall scores and shows.

    Attributes:
        workspace_id, page_id: whose page.
        version: the page's version it was cut from (a recall shows it only while the
            page is published at that version).
        index: its position among the page's sections, from 0.
        anchor: its heading's anchor (``""`` before the first heading).
        heading_path: the page title, then each enclosing heading.
        slug: the page's slug.
        text: the section's Markdown (no heading line).
        embedding: the stored recall embedding of ``scored_text`` (``Embedder.embed``),
            or None when none was computed (the scorer embeds it at recall).
    """

    workspace_id: str
    page_id: str
    version: int
    index: int
    anchor: str
    heading_path: tuple[str, ...]
    slug: str
    text: str
    embedding: bytes | None = None

    @property
    def title(self) -> str:
        """The page's title (the heading path's first element)."""
        return self.heading_path[0]

    @property
    def scored_text(self) -> str:
        """What recall scores: the heading path (``PATH_SEPARATOR`` between its parts), a line
        break, the text."""
        return f" {PATH_SEPARATOR} ".join(self.heading_path) + "\n" + self.text


@dataclass(frozen=True)
class IndexedPage:
    """A published page's sections as the workspace's section index holds them: one
    packed record a page (docs/issues.md#issue-45-item-3).

    Attributes:
        key: the record's immutable name (its S3 object key): equal keys, equal
            sections, so a reader may keep what it decoded under it.
        page_id, version: the page and the version its sections were cut from.
        sections: the page's sections, in page order.
    """

    key: str
    page_id: str
    version: int
    sections: tuple[IndexedSection, ...]
