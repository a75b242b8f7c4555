"""The agents overview of the dashboard (docs/reference.md#13-dashboard, docs/issues.md#issue-13):
for each agent of a person's workspace, its live, expired and archived facts, today's day-log fill,
its last recall, its routine and the review actions waiting for a person.

Counts come from the light ``byAgentKind`` index (no text is read); each agent
takes five small requests, and agents are read concurrently (boto3 clients are
thread-safe), so a page of 25 agents answers in about the time of a few.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from chalicelib.errors import Forbidden
from chalicelib.ids import Clock
from chalicelib.models.memory import MemoryKind, MemoryStatus
from chalicelib.models.overview import AgentCounts, AgentOverviewRow
from chalicelib.models.principal import Agent, Principal
from chalicelib.models.routine import Routine, RoutineStatus
from chalicelib.services.access.who import refuse_agents
from chalicelib.storage.dashboard_protocols import MemoryIndexRepository
from chalicelib.storage.protocols import RecallRepository, ReviewRepository, RoutineRepository

RECENT_REVIEWS = 30
"""Pending review actions are counted over an agent's newest 30 reviews (a month of
nightly ones); older pending ones still show on the agent's reviews page."""
OVERVIEW_IS_FOR_PERSONS = "Only a person can see the agents overview."


class AgentOverview:
    """Per-agent figures for the overview.

    Args:
        index: the agents' memories without text.
        recalls: the recall log.
        reviews: review summaries.
        routines: routines.
        clock: the current time.
        workers: agents read at the same time.
    """

    def __init__(
        self,
        index: MemoryIndexRepository,
        recalls: RecallRepository,
        reviews: ReviewRepository,
        routines: RoutineRepository,
        clock: Clock,
        workers: int = 8,
    ) -> None:
        self._index = index
        self._recalls = recalls
        self._reviews = reviews
        self._routines = routines
        self._clock = clock
        self._workers = workers

    def rows(self, principal: Principal, agents: Sequence[Agent]) -> list[AgentOverviewRow]:
        """One row per agent, in the order given.

        Args:
            agents: agents of the caller's workspace (``WorkspaceService.agents``).

        Raises:
            Forbidden: an agent asked, or an agent of another workspace was passed.
        """
        refuse_agents(principal, OVERVIEW_IS_FOR_PERSONS)
        if any(agent.workspace_id != principal.workspace_id for agent in agents):
            raise Forbidden("The overview shows only your workspace's agents.")
        now = self._clock.now()
        if len(agents) <= 1:
            return [self._row(agent, now) for agent in agents]
        with ThreadPoolExecutor(max_workers=self._workers) as pool:
            return list(pool.map(lambda agent: self._row(agent, now), agents))

    def counts(self, agent_id: str, now: datetime) -> AgentCounts:
        """The agent's fact counts and today's (UTC) day-log fill at ``now``."""
        live = self._index.entries(agent_id, MemoryKind.FACT, MemoryStatus.ACTIVE)
        archived = self._index.count(agent_id, MemoryKind.FACT, MemoryStatus.ARCHIVED)
        newest_day = self._index.entries(agent_id, MemoryKind.DAY, MemoryStatus.ACTIVE, newest=1)
        today = now.astimezone(UTC).date().isoformat()
        fill = next((row.char_count for row in newest_day if row.date == today), 0)
        return AgentCounts(
            live_facts=len(live),
            expired_facts=sum(entry.expires_at <= now for entry in live),
            archived_facts=archived,
            today_fill=fill,
        )

    def _row(self, agent: Agent, now: datetime) -> AgentOverviewRow:
        last, _ = self._recalls.list_log(agent.id, 1, None)
        routine = self._routines.get(agent.id)
        summaries, _ = self._reviews.list_summaries(agent.id, RECENT_REVIEWS, None)
        return AgentOverviewRow(
            agent=agent,
            counts=self.counts(agent.id, now),
            last_recall_at=last[0].at if last else None,
            routine=_live_routine(routine),
            pending_actions=sum(summary.pending for summary in summaries),
        )


def _live_routine(routine: Routine | None) -> Routine | None:
    return None if routine is None or routine.status is RoutineStatus.DELETED else routine
