"""The ``RecallIndexRepository`` contract (chalicelib/storage/protocols.py,
docs/issues.md#issue-23-item-1): the live facts of an agent as every change the memory storage
writes leaves them, through packing and rewriting, expiry, and a compaction that meets
a concurrent change.

Runs against every implementation in the ``index`` fixture (today the DynamoDB adapter
on moto, over memories written by ``DynamoDBMemoryRepository``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from chalicelib.ids import FixedClock, IdFactory
from chalicelib.models.memory import Memory, MemoryStatus
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.memories import DynamoDBMemoryRepository
from chalicelib.storage.protocols import RecallIndexRepository
from chalicelib.storage.recall_index import LOOSE_LIMIT, DynamoDBRecallIndex, resolve
from tests.helpers import audit_of, new_fact

IMPLEMENTATIONS: dict[str, Callable[[DynamoDBTable, IdFactory], RecallIndexRepository]] = {
    "dynamodb": DynamoDBRecallIndex,
}
AGENT = "agt_01JABCDEF0000000000000000"


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def index(
    request: pytest.FixtureRequest, table: DynamoDBTable, ids: IdFactory
) -> RecallIndexRepository:
    return IMPLEMENTATIONS[request.param](table, ids)


@pytest.fixture
def memories(table: DynamoDBTable) -> DynamoDBMemoryRepository:
    return DynamoDBMemoryRepository(table)


def saved(
    memories: DynamoDBMemoryRepository, ids: IdFactory, clock: FixedClock, text: str
) -> Memory:
    clock.set(clock.now() + timedelta(seconds=1))
    memory = new_fact(ids, clock, AGENT, text).model_copy(update={"embedding": bytes([1]) * 385})
    memories.create(memory, audit_of(ids, clock, "create", None, memory))
    return memory


def changed(
    memories: DynamoDBMemoryRepository,
    ids: IdFactory,
    clock: FixedClock,
    memory: Memory,
    **update: object,
) -> Memory:
    after = memory.model_copy(update={**update, "version": memory.version + 1})
    memories.transition(memory, after, audit_of(ids, clock, "edit", memory, after))
    return after


def held(index: RecallIndexRepository, clock: FixedClock) -> dict[str, str]:
    entries = index.entries(AGENT, clock.now())
    assert entries is not None
    assert [e.memory_id for e in entries] == sorted((e.memory_id for e in entries), reverse=True)
    return {entry.memory_id: entry.text for entry in entries}


def test_an_index_without_its_marker_is_not_read_as_complete(
    index: RecallIndexRepository,
    memories: DynamoDBMemoryRepository,
    ids: IdFactory,
    clock: FixedClock,
) -> None:
    saved(memories, ids, clock, "The staging deploy needs the VPN")
    assert index.entries(AGENT, clock.now()) is None
    assert not index.is_built(AGENT)
    index.mark_built(AGENT, clock.now())
    assert index.is_built(AGENT)
    entry = index.entries(AGENT, clock.now())
    assert entry is not None and [e.text for e in entry] == ["The staging deploy needs the VPN"]
    assert entry[0].sentence == bytes([1]) * 385 and entry[0].embedding_size == 385
    assert index.clear(AGENT) >= 1
    assert index.entries(AGENT, clock.now()) is None


def test_packed_and_loose_copies_resolve_to_each_fact_as_stored(
    index: RecallIndexRepository,
    memories: DynamoDBMemoryRepository,
    ids: IdFactory,
    clock: FixedClock,
) -> None:
    index.mark_built(AGENT, clock.now())
    facts = [saved(memories, ids, clock, f"fact {n}") for n in range(LOOSE_LIMIT + 5)]
    assert held(index, clock) == {f.id: f.text for f in facts}  # this read packs them
    # Changes after the packing: an edit, archives of most of one segment, an unarchive.
    edited = changed(memories, ids, clock, facts[0], text="fact 0, edited")
    gone = facts[1:30]
    archived = [
        changed(
            memories,
            ids,
            clock,
            f,
            status=MemoryStatus.ARCHIVED,
            archive_reason="x",
            archived_at=clock.now(),
        )
        for f in gone
    ]
    back = changed(
        memories,
        ids,
        clock,
        archived[0],
        status=MemoryStatus.ACTIVE,
        archive_reason=None,
        archived_at=None,
    )
    expected = {f.id: f.text for f in facts[30:]} | {edited.id: edited.text, back.id: back.text}
    for _ in range(3):  # every read resolves the same, while compactions rewrite segments
        assert held(index, clock) == expected
    assert set(memories.get_many(list(expected))) and all(
        m.status is MemoryStatus.ACTIVE for m in memories.get_many(list(expected))
    )


def test_expired_facts_leave_what_a_read_returns(
    index: RecallIndexRepository,
    memories: DynamoDBMemoryRepository,
    ids: IdFactory,
    clock: FixedClock,
) -> None:
    index.mark_built(AGENT, clock.now())
    short = saved(memories, ids, clock, "expires soon")
    short = changed(memories, ids, clock, short, expires_at=clock.now() + timedelta(hours=1))
    lasting = saved(memories, ids, clock, "stays")
    assert set(held(index, clock)) == {short.id, lasting.id}
    clock.set(clock.now() + timedelta(hours=1))
    assert set(held(index, clock)) == {lasting.id}


def test_a_compaction_that_meets_a_change_leaves_the_index_right(
    table: DynamoDBTable, memories: DynamoDBMemoryRepository, ids: IdFactory, clock: FixedClock
) -> None:
    index = DynamoDBRecallIndex(table, ids)
    index.mark_built(AGENT, clock.now())
    facts = [saved(memories, ids, clock, f"fact {n}") for n in range(LOOSE_LIMIT + 1)]
    stale = index.read(AGENT, clock.now())
    # Another request archives a fact between this read and its compaction.
    changed(
        memories,
        ids,
        clock,
        facts[3],
        status=MemoryStatus.ARCHIVED,
        archive_reason="x",
        archived_at=clock.now(),
    )
    assert not index._compact(AGENT, stale, resolve(stale, clock.now()))  # refused: nothing written
    assert set(held(index, clock)) == {f.id for f in facts} - {facts[3].id}
    assert set(held(index, clock)) == {f.id for f in facts} - {facts[3].id}  # packed now


def test_put_entries_writes_only_facts_unchanged_since_read(
    index: RecallIndexRepository,
    memories: DynamoDBMemoryRepository,
    ids: IdFactory,
    clock: FixedClock,
) -> None:
    facts = [saved(memories, ids, clock, f"fact {n}") for n in range(3)]
    index.clear(AGENT)
    edited = changed(memories, ids, clock, facts[1], text="fact 1, edited")
    assert index.clear(AGENT) == 1  # the edit's own loose entry
    assert sorted(index.put_entries(facts)) == sorted(f.id for f in facts)  # one group, refused
    assert index.put_entries([facts[0], facts[2]]) == []
    assert index.put_entries([facts[1]]) == [facts[1].id]
    assert index.put_entries([edited]) == []
    index.mark_built(AGENT, clock.now())
    assert held(index, clock) == {
        facts[0].id: "fact 0",
        edited.id: edited.text,
        facts[2].id: "fact 2",
    }
