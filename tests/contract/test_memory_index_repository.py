"""The ``MemoryIndexRepository`` contract (chalicelib/storage/dashboard_protocols.py):
an agent's memories by kind and status without their text, following every state
change the memory storage writes.

Runs against every implementation in the ``index`` fixture (today the DynamoDB
adapter on moto, over memories written by ``DynamoDBMemoryRepository``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from chalicelib.ids import FixedClock, IdFactory
from chalicelib.models.memory import AuditRecord, Memory, MemoryKind, MemoryStatus
from chalicelib.storage.dashboard_protocols import MemoryIndexRepository
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.memories import DynamoDBMemoryRepository
from chalicelib.storage.memory_index import DynamoDBMemoryIndexRepository

IMPLEMENTATIONS: dict[str, Callable[[DynamoDBTable], MemoryIndexRepository]] = {
    "dynamodb": DynamoDBMemoryIndexRepository,
}
AGENT = "agt_01JABCDEF0000000000000000"


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def index(request: pytest.FixtureRequest, table: DynamoDBTable) -> MemoryIndexRepository:
    return IMPLEMENTATIONS[request.param](table)


def fact(
    ids: IdFactory, clock: FixedClock, text: str, kind: MemoryKind = MemoryKind.FACT
) -> Memory:
    clock.set(clock.now() + timedelta(seconds=1))
    now = clock.now()
    return Memory(
        id=ids.new("mem"),
        workspace_id="wsp_01",
        agent_id=AGENT,
        kind=kind,
        date=now.date().isoformat() if kind is MemoryKind.DAY else None,
        text=text,
        expires_at=now + timedelta(days=90),
        created_at=now,
        updated_at=now,
    )


def created(memory: Memory, ids: IdFactory, clock: FixedClock) -> AuditRecord:
    return AuditRecord(
        id=ids.new("aud"),
        memory_id=memory.id,
        workspace_id=memory.workspace_id,
        action="create",
        actor_type="agent",
        actor_id=AGENT,
        at=clock.now(),
    )


def test_counts_and_entries_follow_state_changes(
    index: MemoryIndexRepository, table: DynamoDBTable, ids: IdFactory, clock: FixedClock
) -> None:
    memories = DynamoDBMemoryRepository(table)
    first, second = fact(ids, clock, "one"), fact(ids, clock, "two")
    row = fact(ids, clock, "12:00 a line", MemoryKind.DAY)
    for memory in (first, second, row):
        memories.create(memory, created(memory, ids, clock))
    assert index.count(AGENT, MemoryKind.FACT, MemoryStatus.ACTIVE) == 2
    assert index.count(AGENT, MemoryKind.DAY, MemoryStatus.ACTIVE) == 1
    archived = first.model_copy(
        update={
            "status": MemoryStatus.ARCHIVED,
            "archive_reason": "old",
            "archived_at": clock.now(),
            "version": 2,
        }
    )
    memories.transition(first, archived, created(first, ids, clock))
    assert index.count(AGENT, MemoryKind.FACT, MemoryStatus.ACTIVE) == 1
    assert index.count(AGENT, MemoryKind.FACT, MemoryStatus.ARCHIVED) == 1
    [gone] = index.entries(AGENT, MemoryKind.FACT, MemoryStatus.ARCHIVED)
    assert (gone.id, gone.archive_reason, gone.archived_at) == (first.id, "old", clock.now())
    [day] = index.entries(AGENT, MemoryKind.DAY, MemoryStatus.ACTIVE)
    assert (day.date, day.char_count) == (row.date, len(row.text))
    assert index.count("agt_01JABCDEF0000000000000001", MemoryKind.FACT, MemoryStatus.ACTIVE) == 0


def test_entries_are_newest_first_and_can_be_cut(
    index: MemoryIndexRepository, table: DynamoDBTable, ids: IdFactory, clock: FixedClock
) -> None:
    memories = DynamoDBMemoryRepository(table)
    saved = [fact(ids, clock, f"fact {number}") for number in range(5)]
    for memory in saved:
        memories.create(memory, created(memory, ids, clock))
    entries = index.entries(AGENT, MemoryKind.FACT, MemoryStatus.ACTIVE)
    assert [entry.id for entry in entries] == [memory.id for memory in reversed(saved)]
    assert [e.created_at for e in entries] == [m.created_at for m in reversed(saved)]
    newest = index.entries(AGENT, MemoryKind.FACT, MemoryStatus.ACTIVE, newest=2)
    assert [entry.id for entry in newest] == [saved[4].id, saved[3].id]
