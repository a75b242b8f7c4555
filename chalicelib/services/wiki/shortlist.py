"""The wiki's first stage (docs/reference.md#wiki-in-recall, docs/issues.md#issue-45-item-3):
of every indexed section of a workspace, the ``SHORTLIST_SECTIONS`` whose stored sentence
vectors are nearest the query's, which alone the recall scorer then reads.

The vectors are the sentence part of each section's stored embedding (int8, unit after
decoding), stacked once per set of page records a process has read (``SectionVectors``),
so a recall costs one matrix product over the workspace's sections and a partial sort.
A section without an embedding of ours has a zero vector: it is shortlisted only when
the workspace has no more than ``SHORTLIST_SECTIONS`` sections. Imports numpy: loaded on
the first recall of a workspace with a wiki, never at cold start.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from chalicelib.models.page import IndexedPage, IndexedSection
from chalicelib.services.recall.embedding import DIMENSIONS, FloatArray, decode, is_ours

SHORTLIST_SECTIONS = 100
"""Sections the first stage keeps for the scorer: its cost is the cross-encoder's
(bounded whatever the count) and a few milliseconds a hundred sections for the rest
(docs/DECISIONS.md#wiki-section-index-at-scale-issue-45-item-3 for the figures)."""

WORKSPACES_KEPT = 4
"""Stacked vector matrices a process keeps, one a workspace, least recent dropped."""


def page_vectors(page: IndexedPage) -> FloatArray:
    """Unit sentence vectors of a page's sections, shape ``(len(sections), DIMENSIONS)``;
    a zero row for a section without an embedding of ours."""
    rows = np.zeros((len(page.sections), DIMENSIONS), dtype=np.float32)
    ours = [at for at, s in enumerate(page.sections) if s.embedding and is_ours(s.embedding)]
    if ours:
        rows[ours] = decode([page.sections[at].embedding or b"" for at in ours])
    return rows


class SectionVectors:
    """A process's stacked section vectors, one matrix a workspace, rebuilt only when
    the workspace's set of page records (their immutable keys) changed."""

    def __init__(self) -> None:
        self._stacks: OrderedDict[str, tuple[tuple[str, ...], FloatArray, list[IndexedSection]]] = (
            OrderedDict()
        )
        self._pages: dict[str, FloatArray] = {}
        self._lock = threading.Lock()

    def stacked(
        self, workspace_id: str, pages: Sequence[IndexedPage]
    ) -> tuple[FloatArray, list[IndexedSection]]:
        """The sections of ``pages`` in order and their vectors as one matrix."""
        keys = tuple(page.key for page in pages)
        with self._lock:
            found = self._stacks.get(workspace_id)
            if found is not None and found[0] == keys:
                self._stacks.move_to_end(workspace_id)
                return found[1], found[2]
        parts = []
        for page in pages:
            vectors = self._pages.get(page.key)
            parts.append(page_vectors(page) if vectors is None else vectors)
        matrix = (
            np.vstack(parts) if parts else np.zeros((0, DIMENSIONS), dtype=np.float32)
        ).astype(np.float32, copy=False)
        sections = [section for page in pages for section in page.sections]
        with self._lock:
            self._stacks[workspace_id] = (keys, matrix, sections)
            self._stacks.move_to_end(workspace_id)
            while len(self._stacks) > WORKSPACES_KEPT:
                self._stacks.popitem(last=False)
            # per-page vectors are kept only for the pages of the kept stacks
            live = {key for kept, _, _ in self._stacks.values() for key in kept}
            offsets = np.cumsum([0, *(len(page.sections) for page in pages)])
            for at, page in enumerate(pages):
                self._pages[page.key] = matrix[offsets[at] : offsets[at + 1]]
            self._pages = {key: rows for key, rows in self._pages.items() if key in live}
        return matrix, sections


def shortlist(
    matrix: FloatArray, sections: list[IndexedSection], query_vector: FloatArray, count: int
) -> list[IndexedSection]:
    """The ``count`` sections whose vectors are nearest ``query_vector`` (cosine), best
    first, ties in index order; all of them, in index order, when there are no more."""
    if len(sections) <= count:
        return list(sections)
    similarity = matrix @ query_vector.astype(np.float32, copy=False)
    top = np.argpartition(-similarity, count - 1)[:count]
    order = top[np.lexsort((top, -similarity[top]))]
    return [sections[int(at)] for at in order]
