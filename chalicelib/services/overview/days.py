"""An agent's day logs by date (docs/reference.md#13-dashboard, docs/issues.md#issue-13): every day
row, live and archived, with its fill, from the light ``byAgentKind`` index (the lines
themselves are read only for the date a person opens)."""

from __future__ import annotations

from chalicelib.models.memory import MemoryKind, MemoryStatus
from chalicelib.models.overview import MemoryIndexEntry
from chalicelib.models.principal import Principal
from chalicelib.services.access.who import resolve_agent
from chalicelib.storage.dashboard_protocols import MemoryIndexRepository
from chalicelib.storage.protocols import DirectoryRepository


class DayLogIndex:
    """Lists an agent's day rows.

    Args:
        directory: agents, to check the named agent's workspace.
        index: the agent's memories without text.
    """

    def __init__(self, directory: DirectoryRepository, index: MemoryIndexRepository) -> None:
        self._directory = directory
        self._index = index

    def day_rows(self, principal: Principal, agent_id: str) -> list[MemoryIndexEntry]:
        """Every day row of the agent, newest date first; on one date the live row
        before archived ones (newest first).

        Raises:
            MemoryAgentRequired, MemoryNotOwn, Forbidden: see ``resolve_agent``.
        """
        agent = resolve_agent(self._directory, principal, agent_id)
        rows = [
            *self._index.entries(agent, MemoryKind.DAY, MemoryStatus.ACTIVE),
            *self._index.entries(agent, MemoryKind.DAY, MemoryStatus.ARCHIVED),
        ]
        return sorted(
            rows,
            key=lambda row: (row.date or "", row.status is MemoryStatus.ACTIVE, row.id),
            reverse=True,
        )
