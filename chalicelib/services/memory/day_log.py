"""The day log: one row per agent per UTC date, one line per append (docs/reference.md#4-states to
docs/reference.md#5-limits).

A line is stored as ``HH:MM`` (UTC) + ``[TASK]`` when the run named its task +
the line as sent. The 300-character limit is on the line as sent; the
8,000-character cap is on the stored text, prefixes and newlines included.
Appends are one conditional update each; the first line of a date creates the
row together with the date's live-row pointer in one transaction, so two
concurrent first lines end in one row holding both.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, time

from chalicelib.errors import Conflict, InvalidRequest, MemoryDayAgentOnly, MemoryDayFull
from chalicelib.ids import Clock, IdFactory
from chalicelib.limits import DAY_LINE_MAX_CHARS, DAY_LOG_MAX_CHARS, DEFAULT_FACT_LIFETIME
from chalicelib.models.memory import AuditRecord, Memory, MemoryKind
from chalicelib.models.principal import Principal
from chalicelib.services.access.who import refuse_persons
from chalicelib.services.memory.audit import audit_record
from chalicelib.services.retries import WRITE_ATTEMPTS
from chalicelib.services.run_context import RunContext
from chalicelib.services.text import SecretFinder, check_characters, check_text
from chalicelib.storage.protocols import (
    DayLogFull,
    DayPointerTaken,
    DayRowNotLive,
    MemoryRepository,
)

DAY_LOG_IS_FOR_AGENTS = "Only an agent keeps a day log; persons save facts."


@dataclass(frozen=True)
class DayAppend:
    """The result of an append: the day row after it, and whether it was created."""

    memory: Memory
    created: bool


def format_day_line(line: str, now: datetime, task_key: str | None) -> str:
    """Return the stored form of a line: ``HH:MM [TASK] line`` (UTC time)."""
    stamp = now.astimezone(UTC).strftime("%H:%M")
    return f"{stamp} [{task_key}] {line}" if task_key else f"{stamp} {line}"


APPEND_ACTION = "append"
"""The audit action of a day line appended to an existing day row
(docs/reference.md#day-line-history); a date's first line is the row's ``create``."""


def day_line_audit(
    ids: IdFactory,
    principal: Principal,
    row_id: str,
    stored_line: str,
    now: datetime,
    run: RunContext,
) -> AuditRecord:
    """The audit record of one appended line (docs/reference.md#day-line-history,
    docs/issues.md#issue-24-item-6): who (the agent), when, and in ``after`` the line as
    stored with the run and task it came from:
    ``{"object": "dayLine", "line", "runId", "taskKey"}``. ``before`` is null: the row's
    earlier text is the sum of its earlier records, so each append stores only its line."""
    return AuditRecord(
        id=ids.new("aud"),
        memory_id=row_id,
        workspace_id=principal.workspace_id,
        action=APPEND_ACTION,
        actor_type=principal.kind.value,
        actor_id=principal.id,
        at=now,
        after={
            "object": "dayLine",
            "line": stored_line,
            "runId": run.run_id,
            "taskKey": run.task_key,
        },
    )


class DayLogService:
    """Appends lines to an agent's day log.

    Args:
        memories: memory storage.
        secrets: the secret detector.
        clock: the current time (its UTC date picks the row).
        ids: the id factory.
    """

    def __init__(
        self, memories: MemoryRepository, secrets: SecretFinder, clock: Clock, ids: IdFactory
    ) -> None:
        self._memories = memories
        self._secrets = secrets
        self._clock = clock
        self._ids = ids

    def append_day_line(self, principal: Principal, line: str, run: RunContext) -> DayAppend:
        """Append one line to the caller's day log for today (UTC).

        Returns:
            The row after the append; ``created`` is True for a date's first line (201).

        Raises:
            MemoryDayAgentOnly: a person called the day route.
            InvalidRequest: an empty line, one with a line break, a control or tag
                character (named, docs/reference.md#stored-text).
            MemoryTextTooLong: the line is over 300 characters as sent.
            SecretInMemory: the line looks like a secret.
            MemoryDayFull: the stored day text would exceed 8,000 characters.
        """
        refuse_persons(principal, MemoryDayAgentOnly, DAY_LOG_IS_FOR_AGENTS)
        check_characters(line, "day line")
        if line.splitlines() not in ([line], []):
            raise InvalidRequest("A day line is one line: remove the line breaks.")
        check_text(
            line,
            limit=DAY_LINE_MAX_CHARS,
            what="day line",
            secrets=self._secrets,
            advice="Shorten it; save what matters with `memory save`.",
        )
        now = self._clock.now()
        date = now.astimezone(UTC).date().isoformat()
        stored = format_day_line(line, now, run.task_key)
        for _ in range(WRITE_ATTEMPTS):
            row_id = self._memories.live_day_row_id(principal.id, date)
            if row_id is None:
                created = self._create_row(principal, date, stored, now, run)
                if created is not None:
                    return DayAppend(created, True)
                continue
            try:
                row = self._memories.append_to_day_row(
                    row_id,
                    stored,
                    audit=day_line_audit(self._ids, principal, row_id, stored, now, run),
                    # Conditions cannot add: the largest stored length with room for
                    # the line and its newline is computed here.
                    max_chars_before=DAY_LOG_MAX_CHARS - len(stored) - 1,
                    now=now,
                )
            except DayRowNotLive:
                continue
            except DayLogFull as full:
                raise MemoryDayFull(
                    f"Today's day log would exceed {DAY_LOG_MAX_CHARS} characters. "
                    "Save what matters with `memory save`."
                ) from full
            return DayAppend(row, False)
        raise Conflict("The day log kept changing while this line was appended; try again.")

    def _create_row(
        self, principal: Principal, date: str, text: str, now: datetime, run: RunContext
    ) -> Memory | None:
        end_of_day = datetime.combine(
            datetime.fromisoformat(date).date(), time(23, 59, 59, 999000), tzinfo=UTC
        )
        row = Memory(
            id=self._ids.new("mem"),
            workspace_id=principal.workspace_id,
            agent_id=principal.id,
            kind=MemoryKind.DAY,
            date=date,
            text=text,
            expires_at=end_of_day + DEFAULT_FACT_LIFETIME,
            run_id=run.run_id,
            task_key=run.task_key,
            saved_by_agent_id=principal.id,
            created_at=now,
            updated_at=now,
        )
        audit = audit_record(self._ids, self._clock, principal, "create", None, row)
        try:
            self._memories.create(row, audit, claim_day_pointer=True)
        except DayPointerTaken:
            return None
        return row
