"""The pull feed of change events (docs/reference.md#change-events,
docs/issues.md#issue-47): a person reads the workspace's events, an agent only its own,
oldest first, paged with a cursor (the last event id a consumer holds)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from chalicelib.errors import InvalidRequest
from chalicelib.ids import Clock
from chalicelib.models.event import EVENT_ID_PATTERN
from chalicelib.models.principal import Principal

_EVENT_ID = re.compile(EVENT_ID_PATTERN)


class EventFeed(Protocol):
    """The feed's reads (``storage/events.py``)."""

    def page(
        self,
        *,
        workspace_id: str | None,
        agent_id: str | None,
        after: str | None,
        limit: int,
        now: datetime,
    ) -> tuple[list[dict[str, Any]], bool]:
        """Up to ``limit`` events after ``after``, oldest first, and whether more follow."""
        ...


@dataclass(frozen=True)
class EventPage:
    """One page of the feed: the events (CloudEvents JSON objects), the cursor to send
    next, and whether the next page is ready now."""

    events: list[dict[str, Any]]
    next_cursor: str | None
    has_more: bool


class EventService:
    """Reads the feed for a principal.

    Args:
        feed: the stored events.
        clock: the current time (the kept days and the settle time count from it).
    """

    def __init__(self, feed: EventFeed, clock: Clock) -> None:
        self._feed = feed
        self._clock = clock

    def page(self, principal: Principal, after: str | None, limit: int) -> EventPage:
        """The events after the cursor ``after``: the workspace's for a person, the
        agent's own for an agent (docs/reference.md#change-events).

        Raises:
            InvalidRequest: ``after`` is not an event id (``evt_`` and a ULID).
        """
        if after is not None and not _EVENT_ID.fullmatch(after):
            raise InvalidRequest(
                "`after` is not a cursor: send the `nextCursor` of the previous page "
                "(an event id, evt_…), or nothing to start from the oldest kept event."
            )
        events, more = self._feed.page(
            workspace_id=principal.workspace_id,
            agent_id=principal.id if principal.is_agent else None,
            after=after,
            limit=limit,
            now=self._clock.now(),
        )
        cursor = str(events[-1]["id"]) if events else after
        return EventPage(events, cursor, more)
