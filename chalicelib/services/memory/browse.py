"""Browsing an agent's memories in the dashboard (docs/reference.md#13-dashboard,
docs/issues.md#issue-13): the list API's filters (kind, status) plus two it has not, ``expired`` and
a text search.

A tag filter (``tags``) is the list's own ``tag``, read through the tag index.

DynamoDB has no text search. Without those two filters a page is one list call
(``MemoryService.list``, the same rules as ``GET /memories``). With either, the
agent's memories are read newest first, 500 at a time through the same call,
and filtered here; one request reads at most ``SEARCH_SCAN_MAX`` (2,000) memories
and says where it stopped, so the person continues with the next ones (the
figures are in docs/DECISIONS.md "Dashboard").

Each page also says how many memories the kind, status and expiry filters keep and
where the page stands among them: a bounded count of the agent's index partitions
(``MEMORY_LIST_COUNT_MAX`` items read at most; docs/reference.md#list-totals).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, replace
from typing import Literal

from chalicelib.ids import Clock
from chalicelib.limits import MAX_LIST_LIMIT, MEMORY_LIST_COUNT_MAX, SEARCH_SCAN_MAX
from chalicelib.models.memory import Memory, MemoryKind, MemoryStatus
from chalicelib.models.principal import Principal
from chalicelib.models.requests import ListQuery
from chalicelib.models.totals import ListTotal
from chalicelib.services.memory.service import MemoryService
from chalicelib.services.paging import encode_next_token
from chalicelib.storage.dashboard_protocols import MemoryIndexRepository


@dataclass(frozen=True)
class BrowseFilters:
    """What a person narrows an agent's memories to.

    Attributes:
        kind: ``fact``, ``day`` or None (both).
        status: ``active``, ``archived`` or None (both).
        expired: True (past ``expiresAt`` only), False (not past), None (either).
        text: words that must all appear (any case, NFKC) in the memory's text, id,
            task key or archive reason.
        tags: tags a fact must hold every one of, comma-separated (the list's ``tag``,
            read through the tag index: docs/reference.md#tags); "" for any.
    """

    kind: Literal["fact", "day"] | None = None
    status: Literal["active", "archived"] | None = None
    expired: bool | None = None
    text: str = ""
    tags: str = ""

    @property
    def scans(self) -> bool:
        """True when the page must be filtered here (a bounded scan)."""
        return self.expired is not None or bool(self.text.strip())


@dataclass(frozen=True)
class BrowsePage:
    """One page of memories, newest first.

    Attributes:
        memories: the page.
        continue_after: the memory id to continue after (None: nothing further).
        scanned: memories read to make the page.
        stopped_early: a scan reached ``SEARCH_SCAN_MAX`` before filling the page;
            older memories were not searched yet (``continue_after`` resumes).
        total: how many memories the kind, status and expiry filters keep, and how many
            of them are newer than the page; with a text search, how many of the kind and
            status there are and how many are newer than those it searched. None until
            counted.
    """

    memories: list[Memory]
    continue_after: str | None
    scanned: int
    stopped_early: bool = False
    total: ListTotal | None = None


def normalize(text: str) -> str:
    """Text as the search compares it: NFKC, case-folded."""
    return unicodedata.normalize("NFKC", text).casefold()


def matches(memory: Memory, words: list[str]) -> bool:
    """True when every (normalized) word appears in the memory's searchable fields."""
    haystack = normalize(
        " ".join(
            part
            for part in (memory.text, memory.id, memory.task_key, memory.archive_reason)
            if part
        )
    )
    return all(word in haystack for word in words)


class MemoryBrowser:
    """Pages through one agent's memories with the dashboard's filters.

    Args:
        memories: the memory service (its ``list`` applies who-may-see-what).
        index: the agent's memories without text (the page's total is counted there).
        clock: the current time (``expired`` is computed at read time,
            docs/reference.md#3-the-memory-object).
        scan_max: memories one filtered request reads at most (``SEARCH_SCAN_MAX``).
        count_max: index items one page's total reads at most (``MEMORY_LIST_COUNT_MAX``).
    """

    def __init__(
        self,
        memories: MemoryService,
        index: MemoryIndexRepository,
        clock: Clock,
        scan_max: int = SEARCH_SCAN_MAX,
        count_max: int = MEMORY_LIST_COUNT_MAX,
    ) -> None:
        self._memories = memories
        self._index = index
        self._clock = clock
        self._scan_max = scan_max
        self._count_max = count_max

    def page(
        self,
        principal: Principal,
        agent_id: str,
        filters: BrowseFilters,
        *,
        limit: int,
        after_id: str | None = None,
    ) -> BrowsePage:
        """One page of the agent's memories, newest first, with its ``total``.

        Args:
            limit: memories on the page (1 to 500).
            after_id: continue after this memory id.

        Raises:
            MemoryNotOwn, MemoryAgentRequired, Forbidden: see ``resolve_agent``.
            InvalidRequest: a bad cursor.
        """
        found = self._page(principal, agent_id, filters, limit=limit, after_id=after_id)
        if filters.tags.strip():
            # The count reads the agent's whole index, not the tag's entries: a total
            # of every memory would mislead under a tag filter, so none is shown.
            return found
        searching = bool(filters.text.strip())
        # After the list call: it checked the caller may read the agent's memories. A
        # text search counts what it reads (every memory of the kind and status: the
        # expiry is checked on each as it is read), so "searched 1–312 of 1,234".
        total = self._index.count_page(
            agent_id,
            [MemoryKind(filters.kind)] if filters.kind else list(MemoryKind),
            [MemoryStatus(filters.status)] if filters.status else list(MemoryStatus),
            after_id,
            expired=None if searching else filters.expired,
            now=self._clock.now(),
            cap=self._count_max,
        )
        return replace(found, total=total)

    def _page(
        self,
        principal: Principal,
        agent_id: str,
        filters: BrowseFilters,
        *,
        limit: int,
        after_id: str | None,
    ) -> BrowsePage:
        if not filters.scans:
            page = self._memories.list(principal, self._query(agent_id, filters, limit, after_id))
            return BrowsePage(page.memories, page.continue_after, len(page.memories))
        words = normalize(filters.text).split()
        now = self._clock.now()
        found: list[Memory] = []
        scanned = 0
        cursor = after_id
        while scanned < self._scan_max:
            batch = min(MAX_LIST_LIMIT, self._scan_max - scanned)
            page = self._memories.list(principal, self._query(agent_id, filters, batch, cursor))
            for memory in page.memories:
                scanned += 1
                cursor = memory.id
                if (filters.expired is None or memory.is_expired(now) == filters.expired) and (
                    matches(memory, words)
                ):
                    found.append(memory)
                    if len(found) == limit:
                        # More may match further on: the next page starts here.
                        return BrowsePage(found, memory.id, scanned)
            if page.continue_after is None:
                return BrowsePage(found, None, scanned)
        return BrowsePage(found, cursor, scanned, stopped_early=True)

    @staticmethod
    def _query(
        agent_id: str, filters: BrowseFilters, limit: int, after_id: str | None
    ) -> ListQuery:
        return ListQuery.model_validate(
            {
                "agentId": agent_id,
                "kind": filters.kind,
                "status": filters.status,
                "tag": filters.tags.strip() or None,
                "all": "true",
                "limit": str(limit),
                "nextToken": encode_next_token(after_id),
            }
        )
