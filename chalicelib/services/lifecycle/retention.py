"""Audit texts of archived memories expire (docs/reference.md#retention): once a memory
has been archived longer than the retention period, its history keeps who did what and
when, and loses every text (before and after texts, day lines, evidence, reasons).

Reads stop showing the texts at once (``hide_expired_texts``); the nightly review
worker removes them from the table for each agent it reviews (``ArchivedTextRetention.sweep``),
and ``pinework admin sweep-retention`` does it for every agent. The memory's own text
stays on the archived item: unarchiving brings it back.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from chalicelib.ids import Clock
from chalicelib.models.memory import (
    SNAPSHOT_TEXTS,
    AuditRecord,
    Memory,
    MemoryKind,
    MemoryStatus,
)
from chalicelib.models.overview import MemoryIndexEntry
from chalicelib.models.principal import Agent

ARCHIVED_TEXT_RETENTION = timedelta(days=365)
"""Default retention of archived memories' audit texts
(``PINEWORK_ARCHIVED_TEXT_RETENTION_DAYS``)."""
EXPIRED_KEEP_ACTION = "\x00none"
"""No audit action is kept whole by the sweep (the erasure keeps its own ``erase``)."""


class ArchivedEntries(Protocol):
    """The memory index's listing by agent, kind and status."""

    def entries(
        self, agent_id: str, kind: MemoryKind, status: MemoryStatus, *, newest: int | None = None
    ) -> list[MemoryIndexEntry]:
        """The agent's memories of this kind and status, newest first."""
        ...


class AuditTextScrub(Protocol):
    """Removes the texts of a memory's audit records."""

    def redact_audit(self, memory_id: str, keep_action: str) -> int:
        """Null every text of the memory's audit records; returns how many changed."""
        ...


class RetentionMarks(Protocol):
    """How far each agent was swept."""

    def swept_through(self, agent_id: str) -> datetime | None:
        """Every memory archived at or before this time was swept; None: never."""
        ...

    def mark_swept(self, agent_id: str, through: datetime) -> None:
        """Record a sweep up to ``through`` (never backwards)."""
        ...


class AllAgents(Protocol):
    """Every agent id of the table (an operator's whole sweep)."""

    def all_agents(self) -> Iterator[Agent]:
        """Every agent of the table."""
        ...


@dataclass
class SweepReport:
    """One sweep: ``agents`` swept, ``memories`` whose texts went, ``records`` rewritten."""

    agents: int = 0
    memories: int = 0
    records: int = 0

    def to_wire(self) -> dict[str, int]:
        """``{agents, memories, records}``."""
        return {"agents": self.agents, "memories": self.memories, "records": self.records}


def texts_expired(memory: Memory, now: datetime, retention: timedelta) -> bool:
    """Whether ``memory``'s audit texts are past retention: archived, and archived
    longer than ``retention`` before ``now``."""
    return (
        memory.status == MemoryStatus.ARCHIVED
        and memory.archived_at is not None
        and memory.archived_at + retention <= now
    )


def hide_expired_texts(records: list[AuditRecord]) -> list[AuditRecord]:
    """``records`` without their texts (what the sweep leaves), for a memory whose
    texts expired but were not swept yet."""
    return [
        record.model_copy(
            update={
                "before": _without_texts(record.before),
                "after": _without_texts(record.after),
                "evidence": None,
                "reason": None,
            }
        )
        for record in records
    ]


def _without_texts(shot: dict[str, object] | None) -> dict[str, object] | None:
    if shot is None:
        return None
    return {name: (None if name in SNAPSHOT_TEXTS else value) for name, value in shot.items()}


class ArchivedTextRetention:
    """Sweeps the audit texts of memories archived longer than ``retention``.

    Args:
        index: the memory index (archived memories of an agent, with ``archivedAt``).
        scrub: rewrites a memory's audit records without their texts.
        marks: how far each agent was swept, so a sweep rewrites only what was archived
            since the last one.
        clock: the current time.
        retention: how long after its archiving a memory's audit texts are kept.
    """

    def __init__(
        self,
        index: ArchivedEntries,
        scrub: AuditTextScrub,
        marks: RetentionMarks,
        clock: Clock,
        retention: timedelta = ARCHIVED_TEXT_RETENTION,
    ) -> None:
        self._index = index
        self._scrub = scrub
        self._marks = marks
        self._clock = clock
        self.retention = retention

    def sweep(self, agent_id: str, report: SweepReport | None = None) -> SweepReport:
        """Remove the audit texts of the agent's memories archived more than
        ``retention`` ago and not swept before; idempotent.

        Returns:
            The report (``report`` when given, with this agent added).
        """
        report = report or SweepReport()
        cutoff = self._clock.now() - self.retention
        since = self._marks.swept_through(agent_id)
        for kind in MemoryKind:
            for entry in self._index.entries(agent_id, kind, MemoryStatus.ARCHIVED):
                archived = entry.archived_at
                if archived is None or archived > cutoff or (since and archived <= since):
                    continue
                report.records += self._scrub.redact_audit(entry.id, EXPIRED_KEEP_ACTION)
                report.memories += 1
        self._marks.mark_swept(agent_id, cutoff)
        report.agents += 1
        return report

    def sweep_all(self, agents: AllAgents) -> SweepReport:
        """``sweep`` every agent of the table (``pinework admin sweep-retention``)."""
        report = SweepReport()
        for agent in agents.all_agents():
            self.sweep(agent.id, report)
        return report
