"""The series behind an agent's pictures (docs/reference.md#13-dashboard, docs/issues.md#issue-13):
live, expired and archived facts at the end of each UTC date, recalls per date, and each date's
day-log fill.

Facts over time are rebuilt from each fact's ``createdAt``, ``expiresAt`` and
``archivedAt`` as the light ``byAgentKind`` index keeps them (no history is
read): a fact counts as live from its creation until it was archived. A fact
that was archived and brought back counts as live all along (its earlier
archive is in its history, not in these figures).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from datetime import UTC, date, datetime, time, timedelta

from chalicelib.errors import InvalidRequest
from chalicelib.ids import Clock
from chalicelib.models.memory import MemoryKind, MemoryStatus
from chalicelib.models.overview import AgentPictures, DayPoint, MemoryIndexEntry
from chalicelib.models.principal import Principal
from chalicelib.services.access.who import resolve_agent
from chalicelib.storage.dashboard_protocols import MemoryIndexRepository
from chalicelib.storage.protocols import DirectoryRepository, RecallRepository

PICTURE_SPANS = (7, 30, 90)
"""The spans (days, ending today) a person may choose."""


class AgentPicturesService:
    """Builds an agent's picture series.

    Args:
        directory: agents, to check the named agent's workspace.
        index: the agent's memories without text.
        recalls: the recall log.
        clock: the current time.
    """

    def __init__(
        self,
        directory: DirectoryRepository,
        index: MemoryIndexRepository,
        recalls: RecallRepository,
        clock: Clock,
    ) -> None:
        self._directory = directory
        self._index = index
        self._recalls = recalls
        self._clock = clock

    def pictures(self, principal: Principal, agent_id: str, days: int = 30) -> AgentPictures:
        """The series for the ``days`` UTC dates ending today, oldest first.

        Raises:
            InvalidRequest: ``days`` is not one of ``PICTURE_SPANS``.
            MemoryAgentRequired, MemoryNotOwn, Forbidden: see ``resolve_agent``.
        """
        if days not in PICTURE_SPANS:
            raise InvalidRequest(f"Choose a span of {', '.join(map(str, PICTURE_SPANS))} days.")
        agent = resolve_agent(self._directory, principal, agent_id)
        today = self._clock.now().astimezone(UTC).date()
        dates = [today - timedelta(days=offset) for offset in range(days - 1, -1, -1)]
        active = self._index.entries(agent, MemoryKind.FACT, MemoryStatus.ACTIVE)
        archived = self._index.entries(agent, MemoryKind.FACT, MemoryStatus.ARCHIVED)
        live, expired, gone = fact_series(dates, active, archived)
        start = datetime.combine(dates[0], time(), tzinfo=UTC)
        per_day = Counter(
            moment.date().isoformat() for moment in self._recalls.recall_times(agent, start)
        )
        rows = [
            *self._index.entries(agent, MemoryKind.DAY, MemoryStatus.ACTIVE),
            *self._index.entries(agent, MemoryKind.DAY, MemoryStatus.ARCHIVED),
        ]
        return AgentPictures(
            live_facts=live,
            expired_facts=expired,
            archived_facts=gone,
            recalls=[DayPoint(d.isoformat(), per_day.get(d.isoformat(), 0)) for d in dates],
            day_fill=[DayPoint(d.isoformat(), value) for d, value in day_fill(dates, rows)],
        )


def fact_series(
    dates: list[date], active: list[MemoryIndexEntry], archived: list[MemoryIndexEntry]
) -> tuple[list[DayPoint], list[DayPoint], list[DayPoint]]:
    """Live, expired (live but past ``expiresAt``) and archived facts at the end of
    each date: sorted times and bisection, O((facts + dates) log facts).

    An expiry is always after its fact's creation (a past ``expiresAt`` is refused),
    so a fact past its expiry at a date's end was created by then.
    """
    created = sorted(entry.created_at for entry in [*active, *archived])
    archived_at = sorted(_archived_at(entry) for entry in archived)
    expires = sorted(entry.expires_at for entry in [*active, *archived])
    # An archived fact stops counting as expired once archived.
    expired_then_archived = sorted(max(entry.expires_at, _archived_at(entry)) for entry in archived)
    live, expired, gone = [], [], []
    for day in dates:
        end = datetime.combine(day + timedelta(days=1), time(), tzinfo=UTC)
        archived_by_then = bisect_left(archived_at, end)
        live.append(DayPoint(day.isoformat(), bisect_left(created, end) - archived_by_then))
        stale = bisect_right(expires, end) - bisect_right(expired_then_archived, end)
        expired.append(DayPoint(day.isoformat(), stale))
        gone.append(DayPoint(day.isoformat(), archived_by_then))
    return live, expired, gone


def _archived_at(entry: MemoryIndexEntry) -> datetime:
    return entry.archived_at or entry.created_at


def day_fill(dates: list[date], rows: list[MemoryIndexEntry]) -> list[tuple[date, int]]:
    """Each date's day-log fill: its live row's characters, else the newest archived one's."""
    by_date: dict[str, MemoryIndexEntry] = {}
    for row in rows:
        if row.date is None:
            continue
        held = by_date.get(row.date)
        if held is None or _rank(row) > _rank(held):
            by_date[row.date] = row
    return [
        (day, by_date[day.isoformat()].char_count if day.isoformat() in by_date else 0)
        for day in dates
    ]


def _rank(row: MemoryIndexEntry) -> tuple[bool, str]:
    return (row.status is MemoryStatus.ACTIVE, row.id)
