"""The ``RecallIndexRepository`` contract (chalicelib/storage/protocols.py,
docs/issues.md#issue-23-item-1): the live facts of an agent as every change the memory storage
writes leaves them, through packing and rewriting, expiry, and a compaction that meets
a concurrent change.

Runs against every implementation in the ``index`` fixture (today the DynamoDB adapter
on moto, over memories written by ``DynamoDBMemoryRepository``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from chalicelib.ids import FixedClock, IdFactory
from chalicelib.models.memory import Memory, MemoryStatus
from chalicelib.storage import recall_index
from chalicelib.storage.dynamodb import DynamoDBTable, to_attributes
from chalicelib.storage.keys import (
    RECALL_INDEX_OBJECT_PREFIX,
    SEGMENT_PREFIX,
    recall_index_partition,
)
from chalicelib.storage.kv import S3ObjectStore
from chalicelib.storage.memories import DynamoDBMemoryRepository
from chalicelib.storage.protocols import RecallIndexRepository
from chalicelib.storage.recall_index import LOOSE_LIMIT, DynamoDBRecallIndex, resolve
from tests.helpers import BUCKET, audit_of, new_fact

AGENT = "agt_01JABCDEF0000000000000000"


def with_volumes(request: pytest.FixtureRequest, table: DynamoDBTable, ids: IdFactory) -> Any:
    """The adapter with a bucket for volumes and limits small enough that a few dozen
    facts are merged into several volumes (``INLINE_SEGMENT_LIMIT`` 1, ~4 entries a
    segment, ~14 a volume)."""
    s3 = request.getfixturevalue("s3")
    patch = request.getfixturevalue("monkeypatch")
    patch.setattr(recall_index, "INLINE_SEGMENT_LIMIT", 1)
    patch.setattr(recall_index, "SEGMENT_BYTES", 2_000)
    patch.setattr(recall_index, "VOLUME_BYTES", 7_000)
    return DynamoDBRecallIndex(table, ids, S3ObjectStore(lambda: s3, BUCKET))


IMPLEMENTATIONS: dict[
    str, Callable[[pytest.FixtureRequest, DynamoDBTable, IdFactory], RecallIndexRepository]
] = {
    "dynamodb": lambda _, table, ids: DynamoDBRecallIndex(table, ids),
    "dynamodb-volumes": with_volumes,
}


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def index(
    request: pytest.FixtureRequest, table: DynamoDBTable, ids: IdFactory
) -> RecallIndexRepository:
    return IMPLEMENTATIONS[request.param](request, table, ids)


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
    # Refused: nothing written.
    assert not index._compact(AGENT, stale, resolve(stale, clock.now()), clock.now())
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


def volume_pointers(table: DynamoDBTable) -> dict[str, str]:
    """The agent's volume pointers: sort key -> object key."""
    return {
        str(item["sk"]): str(item["o"])
        for item in table.query(
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues=to_attributes({":pk": recall_index_partition(AGENT)}),
        )
        if "o" in item
    }


def stored_objects(s3: Any) -> set[str]:
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=RECALL_INDEX_OBJECT_PREFIX)
    return {str(found["Key"]) for found in listed.get("Contents", [])}


def inline_segments(table: DynamoDBTable) -> int:
    return sum(
        1
        for item in table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :segment)",
            ExpressionAttributeValues=to_attributes(
                {":pk": recall_index_partition(AGENT), ":segment": SEGMENT_PREFIX}
            ),
        )
        if "o" not in item
    )


@pytest.fixture
def volumes(request: pytest.FixtureRequest, table: DynamoDBTable, ids: IdFactory) -> Any:
    return with_volumes(request, table, ids)


def test_segments_merge_into_volumes_that_hold_every_fact_as_stored(
    volumes: DynamoDBRecallIndex,
    memories: DynamoDBMemoryRepository,
    table: DynamoDBTable,
    s3: Any,
    ids: IdFactory,
    clock: FixedClock,
) -> None:
    """docs/issues.md#issue-23-item-2: what the table holds of an index stays bounded (at
    most ``INLINE_SEGMENT_LIMIT`` segments once reads have compacted) while volumes in the
    bucket hold the rest; every read resolves each fact as its memory item is, through
    merges, rewrites of half-dead volumes and the deletion of what they replace."""
    volumes.mark_built(AGENT, clock.now())
    facts = {}
    for number in range(120):
        fact = saved(memories, ids, clock, f"fact {number}")
        facts[fact.id] = fact
        if number % 10 == 9:
            assert held(volumes, clock) == {f.id: f.text for f in facts.values()}
    for _ in range(6):  # reads settle the compactions a burst left
        held(volumes, clock)
    assert inline_segments(table) <= recall_index.INLINE_SEGMENT_LIMIT
    pointers = volume_pointers(table)
    assert len(pointers) >= 3
    assert stored_objects(s3) == set(pointers.values())  # none orphaned, none missing
    # Archive most facts of the oldest volumes, edit others: rewrites follow.
    for fact in list(facts.values())[:70]:
        if int(fact.text.split()[1]) % 5:
            del facts[fact.id]
            changed(
                memories,
                ids,
                clock,
                fact,
                status=MemoryStatus.ARCHIVED,
                archive_reason="x",
                archived_at=clock.now(),
            )
    for fact in list(facts.values())[::4]:
        facts[fact.id] = changed(memories, ids, clock, fact, text=f"{fact.text}, edited")
    for _ in range(8):
        assert held(volumes, clock) == {f.id: f.text for f in facts.values()}
    after = volume_pointers(table)
    assert set(after.values()) != set(pointers.values())  # half-dead volumes were rewritten
    assert stored_objects(s3) == set(after.values())
    assert volumes.clear(AGENT) > 0
    assert stored_objects(s3) == set()


def test_a_volume_replaced_while_it_was_read_is_read_again(
    volumes: DynamoDBRecallIndex,
    memories: DynamoDBMemoryRepository,
    table: DynamoDBTable,
    s3: Any,
    ids: IdFactory,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A merge deletes the objects it replaced after its commit: a read that took the old
    pointer finds no object and reads the index again; an object that stays missing
    makes the index unreadable (``None``: recall reads the facts), never a wrong set."""
    volumes.mark_built(AGENT, clock.now())
    facts = [saved(memories, ids, clock, f"fact {n}") for n in range(60)]
    for _ in range(6):
        held(volumes, clock)
    assert volume_pointers(table)
    real_fetch = volumes._fetch
    calls = []

    def gone_once(found: Any) -> list[bytes | None]:
        calls.append(found)
        fetched = real_fetch(found)
        return [None, *fetched[1:]] if len(calls) == 1 else fetched

    monkeypatch.setattr(volumes, "_fetch", gone_once)
    assert held(volumes, clock) == {f.id: f.text for f in facts}
    assert len(calls) >= 2
    for object_key in stored_objects(s3):
        s3.delete_object(Bucket=BUCKET, Key=object_key)
    assert volumes.entries(AGENT, clock.now()) is None


def test_a_volume_whose_facts_all_expired_is_deleted_with_its_object(
    volumes: DynamoDBRecallIndex,
    memories: DynamoDBMemoryRepository,
    table: DynamoDBTable,
    s3: Any,
    ids: IdFactory,
    clock: FixedClock,
) -> None:
    volumes.mark_built(AGENT, clock.now())
    short = []
    for number in range(LOOSE_LIMIT + 5):
        fact = saved(memories, ids, clock, f"short {number}")
        short.append(
            changed(memories, ids, clock, fact, expires_at=clock.now() + timedelta(days=1))
        )
    for _ in range(6):
        held(volumes, clock)
    expiring = volume_pointers(table)
    assert expiring
    clock.set(clock.now() + timedelta(days=2))
    assert held(volumes, clock) == {}
    lasting = [saved(memories, ids, clock, f"lasting {n}") for n in range(LOOSE_LIMIT + 5)]
    for _ in range(6):  # the merges of these delete the expired volumes
        assert held(volumes, clock) == {f.id: f.text for f in lasting}
    remaining = volume_pointers(table)
    assert not set(expiring) & set(remaining)
    assert stored_objects(s3) == set(remaining.values())


def test_settle_merges_what_a_backfill_wrote_before_any_recall(
    volumes: DynamoDBRecallIndex,
    memories: DynamoDBMemoryRepository,
    table: DynamoDBTable,
    s3: Any,
    ids: IdFactory,
    clock: FixedClock,
) -> None:
    """docs/issues.md#issue-23-item-4: the backfill writes segments of 49 facts, then
    settles the index, so a large store's first recalls merge nothing."""
    facts = [saved(memories, ids, clock, f"fact {n}") for n in range(150)]
    volumes.clear(AGENT)
    assert volumes.put_entries(facts) == []
    volumes.mark_built(AGENT, clock.now())
    assert inline_segments(table) > recall_index.INLINE_SEGMENT_LIMIT
    assert volumes.settle(AGENT, clock.now()) > 0
    assert inline_segments(table) <= recall_index.INLINE_SEGMENT_LIMIT
    assert stored_objects(s3) == set(volume_pointers(table).values()) != set()
    assert volumes.settle(AGENT, clock.now()) == 0
    assert held(volumes, clock) == {f.id: f.text for f in facts}
