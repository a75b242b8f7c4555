"""A memory, and an agent's memories, as they were at a moment
(docs/reference.md#as-of-a-moment, docs/issues.md#issue-46): rebuilt from the audit
history every change writes (docs/reference.md#audit-records), read by key.

The state at ``T`` is the ``after`` of the memory's newest audit record made at or before
``T`` that holds a memory snapshot, plus, for a day row, the lines of the ``append``
records after it (docs/reference.md#day-line-history). Erased text stays erased: the
view of a memory erased since (at any moment) has an empty ``text`` and the tombstone's
``erasedAt``/``erasedBy``/``eraseReason``; texts removed by retention
(docs/reference.md#retention) are empty too. History records no recall counts: the
views give ``recallCount`` 0 and ``lastRecalledAt`` null.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from chalicelib.errors import (
    AsOfBeforeWorkspace,
    AsOfInFuture,
    AsOfInvalid,
    InvalidRequest,
    MemoryNotFound,
)
from chalicelib.ids import Clock, to_rfc3339
from chalicelib.limits import AS_OF_LIST_READ_MAX
from chalicelib.models.as_of import AsOfListQuery
from chalicelib.models.memory import AuditRecord, Memory, MemoryKind, MemoryStatus
from chalicelib.models.principal import Principal
from chalicelib.services.access.who import load_visible, resolve_agent
from chalicelib.services.lifecycle.retention import ARCHIVED_TEXT_RETENTION, texts_expired
from chalicelib.services.paging import decode_next_token
from chalicelib.storage.protocols import DirectoryRepository, MemoryRepository

_RFC3339 = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+\- ]\d{2}:\d{2})$"
)


class AsOfReader(Protocol):
    """What the as-of views read (``chalicelib.storage.as_of.DynamoDBAsOfReader``)."""

    def records_until(self, memory_id: str, moment: datetime) -> Iterator[AuditRecord]:
        """The memory's audit records made up to ``moment``, newest first."""
        ...

    def ids_created_until(
        self,
        agent_id: str,
        kinds: Sequence[MemoryKind],
        moment: datetime,
        limit: int,
        after_id: str | None,
    ) -> list[str]:
        """The newest ``limit`` ids of the agent's memories created up to ``moment``,
        older than ``after_id``."""
        ...


def parse_as_of(raw: str) -> datetime:
    """Read ``asOf``: an RFC 3339 time with a zone (``Z`` or ``±hh:mm``; a space where a
    query string's unescaped ``+`` became one is read as ``+``), as aware UTC.

    Raises:
        AsOfInvalid: anything else (a date alone, no zone, an impossible time).
    """
    text = raw.strip()
    if _RFC3339.match(text) is None:
        raise AsOfInvalid(
            f"asOf {raw[:64]!r} is not an RFC 3339 time with a zone. "
            "Send e.g. 2026-11-30T12:00:00Z (escape + as %2B)."
        )
    if text[-6] == " ":
        text = f"{text[:-6]}+{text[-5:]}"
    text = text[:10] + "T" + text[11:]
    try:
        moment = datetime.fromisoformat(text.upper().replace("Z", "+00:00"))
    except ValueError as error:
        raise AsOfInvalid(f"asOf {raw[:64]!r} is not a valid time: {error}.") from error
    return moment.astimezone(UTC)


@dataclass(frozen=True)
class AsOfPage:
    """One page of an as-of list.

    Attributes:
        memories: the memories in their state then, newest first.
        continue_after: the memory id to continue after (None: nothing further).
        read: memories rebuilt to make the page (at most ``AS_OF_LIST_READ_MAX``).
        moment: the time asked, aware UTC (``expired`` is computed against it).
    """

    memories: list[Memory]
    continue_after: str | None
    read: int
    moment: datetime


class MemoryAsOf:
    """The as-of views of docs/reference.md#as-of-a-moment.

    Args:
        memories: memory storage (the memories now: who may see them, erasure).
        reader: audit records and ids up to a moment (``AsOfReader``).
        directory: the workspace's creation time, the agent named in a list.
        clock: the current time.
        archived_text_retention: as ``MemoryService``'s (docs/reference.md#retention).
        read_max: memories one list request rebuilds at most.
    """

    def __init__(
        self,
        memories: MemoryRepository,
        reader: AsOfReader,
        directory: DirectoryRepository,
        clock: Clock,
        archived_text_retention: timedelta = ARCHIVED_TEXT_RETENTION,
        read_max: int = AS_OF_LIST_READ_MAX,
    ) -> None:
        self._memories = memories
        self._reader = reader
        self._directory = directory
        self._clock = clock
        self._retention = archived_text_retention
        self._read_max = read_max

    def moment(self, principal: Principal, raw: str) -> datetime:
        """Check ``asOf`` for the caller's workspace.

        Raises:
            AsOfInvalid: malformed. AsOfInFuture: later than now.
            AsOfBeforeWorkspace: before the workspace was created.
        """
        moment = parse_as_of(raw)
        now = self._clock.now()
        if moment > now:
            raise AsOfInFuture(
                f"asOf {to_rfc3339(moment)} is in the future (now is {to_rfc3339(now)}). "
                "Send a past time, or leave asOf out for the memories as they are now."
            )
        workspace = self._directory.get_workspace(principal.workspace_id)
        if workspace is not None and moment < workspace.created_at:
            raise AsOfBeforeWorkspace(
                f"asOf {to_rfc3339(moment)} is before your workspace was created "
                f"({to_rfc3339(workspace.created_at)}): nothing existed then."
            )
        return moment

    def get(self, principal: Principal, memory_id: str, raw_as_of: str) -> tuple[Memory, datetime]:
        """One memory the caller may see, as it was at ``asOf``, and that moment (aware
        UTC; ``expired`` is computed against it).

        Raises:
            AsOfInvalid, AsOfInFuture, AsOfBeforeWorkspace: see ``moment``.
            MemoryNotFound: no such memory in the caller's workspace, or it was not
                created yet at ``asOf``. MemoryNotOwn: another agent's memory.
        """
        moment = self.moment(principal, raw_as_of)
        current = load_visible(self._memories, principal, memory_id)
        then = self._rebuild(current, moment)
        if then is None:
            raise MemoryNotFound(
                f"{memory_id} did not exist yet at {to_rfc3339(moment)} (it was created "
                f"{to_rfc3339(current.created_at)})."
            )
        return then, moment

    def list(self, principal: Principal, query: AsOfListQuery) -> AsOfPage:
        """A page of one agent's memories as they were at ``query.as_of``, newest first,
        with the plain list's filters applied to the state then (``status``; ``all``;
        default ``active`` only; ``kind``).

        Reads ids created by then from the agent's index, then, for each, the memory now
        and its records up to then; at most ``read_max`` memories a request (a page may
        then be short, ``continue_after`` says where to go on).

        Raises:
            AsOfInvalid, AsOfInFuture, AsOfBeforeWorkspace: see ``moment``.
            MemoryNotOwn, Forbidden, MemoryAgentRequired: see ``resolve_agent``.
            InvalidRequest: a bad ``nextToken``; a tag or metadata filter (not applied
                as of a moment).
        """
        assert query.as_of is not None
        if query.tag or query.any_tag or query.meta:
            raise InvalidRequest(
                "tag, anyTag and meta do not apply with asOf: the list as of a moment holds "
                "every memory of the agent then (docs/reference.md#as-of-a-moment)."
            )
        moment = self.moment(principal, query.as_of)
        agent_id = resolve_agent(self._directory, principal, query.agent_id)
        statuses = _statuses(query)
        kinds = [MemoryKind(query.kind)] if query.kind else list(MemoryKind)
        cursor = decode_next_token(query.next_token)
        found: list[Memory] = []
        read = 0
        while read < self._read_max:
            batch = min(query.limit + 1, self._read_max - read)
            ids = self._reader.ids_created_until(agent_id, kinds, moment, batch, cursor)
            for current in self._memories.get_many(ids):
                read += 1
                cursor = current.id
                then = self._rebuild(current, moment)
                if then is not None and then.status in statuses:
                    found.append(then)
                    if len(found) == query.limit:
                        return AsOfPage(found, current.id, read, moment)
            if len(ids) < batch:
                return AsOfPage(found, None, read, moment)
        return AsOfPage(found, cursor, read, moment)

    def _rebuild(self, current: Memory, moment: datetime) -> Memory | None:
        if current.created_at > moment:
            return None
        state = _state_then(self._reader.records_until(current.id, moment), moment)
        if state is None:
            return None
        text_gone = current.is_erased or texts_expired(current, self._clock.now(), self._retention)
        snapshot, lines = state
        text = snapshot.get("text")
        if text is not None and lines:
            text = "\n".join([text, *lines]) if text else "\n".join(lines)
        fields: dict[str, Any] = {
            **{name: value for name, value in snapshot.items() if name != "object"},
            "workspaceId": current.workspace_id,
            "text": "" if text_gone or text is None else text,
            "recallCount": 0,
            "lastRecalledAt": None,
            # the stored embedding is of today's text: kept only where the text is the same
            "embedding": current.embedding if not text_gone and text == current.text else None,
        }
        if text_gone:
            fields["archiveReason"] = None
        if current.is_erased:
            fields.update(
                erasedAt=current.erased_at,
                erasedBy=current.erased_by,
                eraseReason=current.erase_reason,
            )
        return Memory.model_validate(fields)


def _statuses(query: AsOfListQuery) -> frozenset[MemoryStatus]:
    if query.status is not None:
        return frozenset({MemoryStatus(query.status)})
    if query.include_archived:
        return frozenset(MemoryStatus)
    return frozenset({MemoryStatus.ACTIVE})


def _state_then(
    records: Iterable[AuditRecord], moment: datetime
) -> tuple[dict[str, Any], list[str]] | None:
    """The newest memory snapshot among ``records`` (newest first) made at or before
    ``moment``, and the day lines appended after it (oldest first); None without one."""
    lines: list[str] = []
    for record in records:
        if record.at > moment:
            continue
        after = record.after or {}
        if after.get("object") == "memory":
            return after, list(reversed(lines))
        if record.action == "append":
            lines.append(str(after.get("line") or ""))
    return None


def every_page(pages: Callable[[str | None], AsOfPage]) -> list[Memory]:
    """Every memory of an as-of list, following ``continue_after`` to the end."""
    found: list[Memory] = []
    after: str | None = None
    while True:
        page = pages(after)
        found.extend(page.memories)
        if page.continue_after is None:
            return found
        after = page.continue_after
