"""The wiki's first stage (docs/reference.md#wiki-in-recall, docs/issues.md#issue-45-item-3):
past ``SHORTLIST_SECTIONS`` sections only the nearest by stored sentence vector reach the
scorer; the packed record round-trips; stacked vectors follow the page records' keys."""

from __future__ import annotations

from typing import Any

import numpy as np

from chalicelib.models.page import IndexedPage, IndexedSection
from chalicelib.services.recall.embedding_format import DIMENSIONS, SENTENCE_FORMAT
from chalicelib.services.recall.tokens import Cl100kTokenCounter
from chalicelib.services.wiki.index import SectionIndexer
from chalicelib.services.wiki.shortlist import SHORTLIST_SECTIONS, SectionVectors
from chalicelib.storage.wiki_sections import pack_sections, unpack_sections


def vector(seed: int) -> np.ndarray[Any, np.dtype[np.float32]]:
    """A unit random direction, the same for the same seed."""
    raw = np.random.default_rng(seed).standard_normal(DIMENSIONS).astype(np.float32)
    return raw / np.linalg.norm(raw)


def stored(direction: np.ndarray[Any, np.dtype[np.float32]]) -> bytes:
    """A sentence-only stored embedding (format 1) of ``direction``."""
    return bytes([SENTENCE_FORMAT]) + np.round(direction * 127).astype(np.int8).tobytes()


def page(number: int, count: int, version: int = 1) -> IndexedPage:
    sections = tuple(
        IndexedSection(
            "wsp_1",
            f"pag_{number}",
            version,
            at,
            f"part-{at}",
            (f"Page {number}", f"Part {at}"),
            f"page-{number}",
            f"text {number}.{at}",
            stored(vector(number * 1000 + at)),
        )
        for at in range(count)
    )
    return IndexedPage(f"wiki/{number}/{version}", f"pag_{number}", version, sections)


class Store:
    def __init__(self, pages: list[IndexedPage]) -> None:
        self.records = pages

    def pages(self, workspace_id: str) -> list[IndexedPage]:
        return self.records

    def sections(self, workspace_id: str) -> list[IndexedSection]:
        return [s for p in self.records for s in p.sections]

    def replace(self, *_: Any) -> None:
        raise AssertionError("not written")

    def remove(self, *_: Any) -> None:
        raise AssertionError("not written")


class QueryEmbedder:
    """Embeds every query as one fixed direction."""

    def __init__(self, direction: np.ndarray[Any, np.dtype[np.float32]]) -> None:
        self.direction = direction
        self.queries: list[str] = []

    def embed_query(self, text: str) -> tuple[Any, Any]:
        self.queries.append(text)
        return self.direction, np.zeros((0, DIMENSIONS), dtype=np.float32)

    def embed(self, texts: list[str]) -> list[bytes]:
        raise AssertionError("sections are not embedded at recall")


def indexer(pages: list[IndexedPage], embedder: Any) -> SectionIndexer:
    return SectionIndexer(Store(pages), Cl100kTokenCounter(), embedder, lambda *_: None)


def test_a_small_wiki_is_scored_whole_without_embedding_the_query() -> None:
    embedder = QueryEmbedder(vector(1))
    pages = [page(1, 60), page(2, SHORTLIST_SECTIONS - 60)]
    read, count = indexer(pages, embedder).candidates("wsp_1", "anything")
    assert count == SHORTLIST_SECTIONS
    assert read == [s for p in pages for s in p.sections]
    assert embedder.queries == []


def test_past_the_bound_the_nearest_sections_are_read_best_first() -> None:
    pages = [page(number, 50) for number in range(6)]  # 300 sections
    wanted = pages[4].sections[17]
    # a query near one section, a little less near another
    direction = vector(4017) + 0.6 * vector(2005)
    embedder = QueryEmbedder(direction / np.linalg.norm(direction))
    read, count = indexer(pages, embedder).candidates("wsp_1", "the query")
    assert count == 300 and len(read) == SHORTLIST_SECTIONS
    assert read[0] == wanted and read[1] == pages[2].sections[5]
    assert len({(s.page_id, s.index) for s in read}) == SHORTLIST_SECTIONS
    assert embedder.queries == ["the query"]


def test_stacked_vectors_are_kept_until_a_page_record_changes() -> None:
    vectors = SectionVectors()
    pages = [page(1, 3), page(2, 4)]
    matrix, sections = vectors.stacked("wsp_1", pages)
    assert matrix.shape == (7, DIMENSIONS) and len(sections) == 7
    assert vectors.stacked("wsp_1", list(pages))[0] is matrix  # same keys: not rebuilt
    edited = [pages[0], page(2, 2, version=2)]
    again, sections = vectors.stacked("wsp_1", edited)
    assert again is not matrix and again.shape == (5, DIMENSIONS)
    assert [s.version for s in sections] == [1, 1, 1, 2, 2]
    np.testing.assert_allclose(again[:3], matrix[:3])


def test_a_packed_record_holds_every_field_and_a_missing_embedding() -> None:
    sections = list(page(3, 3).sections)
    sections[1] = IndexedSection(
        "wsp_1", "pag_3", 1, 1, "", ("Page 3", "Ünïcode \u203a path"), "page-3", "text\n> two", None
    )
    back = unpack_sections(pack_sections(sections), "wsp_1", "pag_3", 1, "page-3")
    assert back == sections
