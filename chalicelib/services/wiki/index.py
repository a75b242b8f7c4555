"""The workspace's section index (docs/reference.md#page-sections, docs/issues.md#issue-45
item 2): the sections of its published pages (``sections.split_sections``), each with the
recall embedding of its heading path and text computed here, when the page is published
or a published page is edited, so recall never embeds a page. Archiving a page removes
its sections. Only the changed page is re-indexed (one packed record a page,
docs/issues.md#issue-45-item-3), and a recall's scorer reads only the first stage's
shortlist of them (``candidates``, ``shortlist.py``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from chalicelib.limits import MAX_PAGE_SECTIONS, SECTION_MAX_TOKENS
from chalicelib.models.page import IndexedPage, IndexedSection, Page, PageState
from chalicelib.services.recall.tokens import TokenCounter
from chalicelib.services.wiki.sections import split_sections

if TYPE_CHECKING:
    from chalicelib.services.recall.embedding import Embedder
    from chalicelib.services.wiki.shortlist import SectionVectors

logger = logging.getLogger(__name__)


class SectionStore(Protocol):
    """The section index's persistence (``storage/wiki_sections.py``)."""

    def replace(
        self, workspace_id: str, page_id: str, version: int, sections: list[IndexedSection]
    ) -> None:
        """Make ``sections`` the page's sections unless a newer version's are stored."""
        ...

    def remove(self, workspace_id: str, page_id: str, version: int) -> None:
        """Delete the page's sections older than ``version``."""
        ...

    def sections(self, workspace_id: str) -> list[IndexedSection]:
        """Every section of the workspace's index."""
        ...

    def pages(self, workspace_id: str) -> list[IndexedPage]:
        """Every page record of the workspace's index."""
        ...


class SectionIndexer:
    """Keeps a workspace's section index in step with its published pages.

    Args:
        store: the section index's persistence.
        tokens: the token counter of the bound (``SECTION_MAX_TOKENS``, cl100k).
        embedder: computes each section's stored recall embedding; None: none stored
            (the scorer embeds the text at recall, as for a fact without one).
        pages: a page of a workspace read by key (strongly consistent), or None.
    """

    def __init__(
        self,
        store: SectionStore,
        tokens: TokenCounter,
        embedder: Embedder | None,
        pages: Callable[[str, str], Page | None],
    ) -> None:
        self._pages = pages
        self._store = store
        self._tokens = tokens
        self._embedder = embedder
        self._vectors: SectionVectors | None = None

    def sections_of(self, page: Page) -> list[IndexedSection]:
        """The page's sections as the index stores them (its first
        ``MAX_PAGE_SECTIONS``), with their embeddings."""
        cut = split_sections(
            page.title, page.text, max_tokens=SECTION_MAX_TOKENS, count=self._tokens.count
        )[:MAX_PAGE_SECTIONS]
        sections = [
            IndexedSection(
                workspace_id=page.workspace_id,
                page_id=page.id,
                version=page.version,
                index=section.index,
                anchor=section.anchor,
                heading_path=section.heading_path,
                slug=page.slug,
                text=section.text,
            )
            for section in cut
        ]
        if self._embedder is None or not sections:
            return sections
        vectors = self._embedder.embed([section.scored_text for section in sections])
        return [
            replace(section, embedding=vector)
            for section, vector in zip(sections, vectors, strict=True)
        ]

    def changed(self, before: Page | None, after: Page) -> None:
        """Index ``after`` when it is published (published now, or edited while
        published); remove its sections when it left the published state. Nothing for
        a draft's or an archived page's change."""
        if after.state is PageState.PUBLISHED:
            self._store.replace(
                after.workspace_id, after.id, after.version, self.sections_of(after)
            )
        elif before is not None and before.state is PageState.PUBLISHED:
            self._store.remove(after.workspace_id, after.id, after.version)

    def published_version(self, workspace_id: str, page_id: str) -> int | None:
        """The page's version if it is published now (one read by key), else None: a
        recall shows a section only when this is the section's version."""
        page = self._pages(workspace_id, page_id)
        return page.version if page is not None and page.state is PageState.PUBLISHED else None

    def sections(self, workspace_id: str) -> list[IndexedSection]:
        """Every indexed section of the workspace (its published pages', and any left by
        a change still being indexed: recall checks each shown one against its page)."""
        return self._store.sections(workspace_id)

    def candidates(self, workspace_id: str, query: str) -> tuple[list[IndexedSection], int]:
        """The sections a recall scores for ``query`` and how many are indexed: all of
        them when there are at most ``SHORTLIST_SECTIONS`` (or no embedder), else the
        ``SHORTLIST_SECTIONS`` whose stored sentence vectors are nearest the query's
        (``shortlist.shortlist``), best first."""
        pages = self._store.pages(workspace_id)
        count = sum(len(page.sections) for page in pages)
        from chalicelib.services.wiki.shortlist import (
            SHORTLIST_SECTIONS,
            SectionVectors,
            shortlist,
        )

        if count <= SHORTLIST_SECTIONS or self._embedder is None:
            return [section for page in pages for section in page.sections], count
        if self._vectors is None:
            self._vectors = SectionVectors()
        matrix, sections = self._vectors.stacked(workspace_id, pages)
        query_vector, _ = self._embedder.embed_query(query)
        return shortlist(matrix, sections, query_vector, SHORTLIST_SECTIONS), count
