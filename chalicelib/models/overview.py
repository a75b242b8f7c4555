"""What the dashboard shows about agents (docs/reference.md#13-dashboard, docs/issues.md#issue-13):
the light index entries of an agent's memories, per-agent counts for the overview, and the
series behind the pictures."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from chalicelib.models.memory import MemoryKind, MemoryStatus
from chalicelib.models.principal import Agent
from chalicelib.models.routine import Routine


@dataclass(frozen=True)
class MemoryIndexEntry:
    """One memory as the ``byAgentKind`` index keeps it: no text, only what counts
    and pictures need (``keys.AGENT_KIND_PROJECTION``)."""

    id: str
    kind: MemoryKind
    status: MemoryStatus
    created_at: datetime
    expires_at: datetime
    archived_at: datetime | None = None
    archive_reason: str | None = None
    date: str | None = None
    char_count: int = 0


@dataclass(frozen=True)
class AgentCounts:
    """An agent's memory counts at one moment.

    Attributes:
        live_facts: active facts, expired ones included (docs/reference.md#4-states: still
            ``active``).
        expired_facts: of those, the ones past ``expiresAt``.
        archived_facts: archived facts, whatever the reason.
        today_fill: characters in today's (UTC) live day row, 0 without one.
    """

    live_facts: int
    expired_facts: int
    archived_facts: int
    today_fill: int


@dataclass(frozen=True)
class AgentOverviewRow:
    """One line of the agents overview.

    ``routine`` is None when the agent has none (never saved, or deleted);
    ``pending_actions`` counts review actions waiting for a person among the
    agent's most recent reviews.
    """

    agent: Agent
    counts: AgentCounts
    last_recall_at: datetime | None
    routine: Routine | None
    pending_actions: int


@dataclass(frozen=True)
class DayPoint:
    """One UTC date of a picture and its value."""

    date: str
    value: int


@dataclass(frozen=True)
class AgentPictures:
    """The series behind an agent's pictures, oldest date first (docs/issues.md#issue-13).

    Attributes:
        live_facts: active facts at the end of each date.
        expired_facts: of those, the ones past ``expiresAt`` by then.
        archived_facts: archived facts at the end of each date.
        recalls: recalls (run-start and on-demand) made on each date.
        day_fill: characters in each date's day log (live row, else the newest
            archived one).
    """

    live_facts: list[DayPoint] = field(default_factory=list)
    expired_facts: list[DayPoint] = field(default_factory=list)
    archived_facts: list[DayPoint] = field(default_factory=list)
    recalls: list[DayPoint] = field(default_factory=list)
    day_fill: list[DayPoint] = field(default_factory=list)
