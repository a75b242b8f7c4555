"""The ``MemoryRepository`` contract (chalicelib/storage/protocols.py): memories and
their audit records, the day-row pointer, conditional appends, pages and history.

Runs against every implementation in the ``memories`` fixture (today the DynamoDB
adapter on moto)."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from chalicelib.ids import FixedClock, IdFactory
from chalicelib.models.memory import Memory, MemoryStatus
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.keys import WORKSPACE_SHARDS, workspace_shard
from chalicelib.storage.memories import DynamoDBMemoryRepository
from chalicelib.storage.protocols import (
    DayLogFull,
    DayPointerChange,
    DayPointerTaken,
    DayRowNotLive,
    MemoryRepository,
    WriteConflict,
)
from tests.helpers import audit_of, new_day_row, new_fact

IMPLEMENTATIONS: dict[str, Callable[[DynamoDBTable], MemoryRepository]] = {
    "dynamodb": DynamoDBMemoryRepository,
}
AGENT = "agt_01KAAAAAAAAAAAAAAAAAAAAAAA"
DATE = "2026-11-30"


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def memories(request: pytest.FixtureRequest, table: DynamoDBTable) -> MemoryRepository:
    return IMPLEMENTATIONS[request.param](table)


def saved(memories: MemoryRepository, ids: IdFactory, clock: FixedClock, text: str) -> Memory:
    fact = new_fact(ids, clock, AGENT, text)
    memories.create(fact, audit_of(ids, clock, "create", None, fact))
    return fact


def archived(memory: Memory, clock: FixedClock, reason: str = "done") -> Memory:
    return memory.model_copy(
        update={
            "status": MemoryStatus.ARCHIVED,
            "archive_reason": reason,
            "archived_at": clock.now(),
            "version": memory.version + 1,
        }
    )


def test_a_created_memory_reads_back_with_its_audit_record(
    memories: MemoryRepository, ids: IdFactory, clock: FixedClock
) -> None:
    fact = saved(memories, ids, clock, "Deploys need the VPN")
    found = memories.get(fact.id)
    assert found is not None
    assert (found.text, found.version, found.workspace_id) == (fact.text, 1, "wsp_1")
    records, after = memories.history(fact.id, 10)
    assert [record.action for record in records] == ["create"] and after is None
    assert memories.get(ids.new("mem")) is None


def test_a_second_live_day_row_for_a_date_is_refused(
    memories: MemoryRepository, ids: IdFactory, clock: FixedClock
) -> None:
    first = new_day_row(ids, clock, AGENT, DATE, "09:00 one")
    memories.create(first, audit_of(ids, clock, "create", None, first), claim_day_pointer=True)
    second = new_day_row(ids, clock, AGENT, DATE, "09:01 two")
    with pytest.raises(DayPointerTaken):
        memories.create(
            second, audit_of(ids, clock, "create", None, second), claim_day_pointer=True
        )
    assert memories.live_day_row_id(AGENT, DATE) == first.id
    assert memories.get(second.id) is None  # nothing of the refused row was written
    assert memories.live_day_row_id(AGENT, "2026-11-29") is None


def test_appends_grow_the_row_until_the_cap_and_stop_when_it_is_archived(
    memories: MemoryRepository, ids: IdFactory, clock: FixedClock
) -> None:
    row = new_day_row(ids, clock, AGENT, DATE, "09:00 one")
    memories.create(row, audit_of(ids, clock, "create", None, row), claim_day_pointer=True)
    appended = audit_of(ids, clock, "append", None, row)
    after = memories.append_to_day_row(
        row.id, "09:05 two", audit=appended, max_chars_before=20, now=clock.now()
    )
    assert after.text == "09:00 one\n09:05 two" and after.version == 2
    with pytest.raises(DayLogFull):  # 19 stored characters, no room beyond 18
        memories.append_to_day_row(
            row.id,
            "09:06 x",
            audit=audit_of(ids, clock, "append", None, row),
            max_chars_before=18,
            now=clock.now(),
        )
    assert memories.get(row.id) == after.model_copy(update={"recall_count": 0})
    memories.transition(
        after,
        archived(after, clock),
        audit_of(ids, clock, "archive", after, archived(after, clock)),
        day_pointer=DayPointerChange.RELEASE,
    )
    with pytest.raises(DayRowNotLive):
        memories.append_to_day_row(
            row.id,
            "09:07 y",
            audit=audit_of(ids, clock, "append", None, row),
            max_chars_before=8000,
            now=clock.now(),
        )
    assert memories.live_day_row_id(AGENT, DATE) is None
    # only the append that happened left a record: a refused one writes nothing
    records, _ = memories.history(row.id, 10, None)
    assert [record.action for record in records] == ["create", "append", "archive"]
    assert records[1].id == appended.id


def test_a_transition_writes_only_over_the_version_it_read(
    memories: MemoryRepository, ids: IdFactory, clock: FixedClock
) -> None:
    fact = saved(memories, ids, clock, "Ports are 8080")
    changed = archived(fact, clock)
    memories.transition(fact, changed, audit_of(ids, clock, "archive", fact, changed))
    stale = archived(fact, clock, "again")
    with pytest.raises(WriteConflict):
        memories.transition(fact, stale, audit_of(ids, clock, "archive", fact, stale))
    found = memories.get(fact.id)
    assert found is not None and (found.archive_reason, found.version) == ("done", 2)
    records, _ = memories.history(fact.id, 10)
    assert [record.action for record in records] == ["create", "archive"]


def test_claiming_a_taken_date_is_refused_and_changes_nothing(
    memories: MemoryRepository, ids: IdFactory, clock: FixedClock
) -> None:
    old = new_day_row(ids, clock, AGENT, DATE, "09:00 old")
    memories.create(old, audit_of(ids, clock, "create", None, old), claim_day_pointer=True)
    old_archived = archived(old, clock)
    memories.transition(
        old,
        old_archived,
        audit_of(ids, clock, "archive", old, old_archived),
        day_pointer=DayPointerChange.RELEASE,
    )
    new = new_day_row(ids, clock, AGENT, DATE, "10:00 new")
    memories.create(new, audit_of(ids, clock, "create", None, new), claim_day_pointer=True)
    back = old_archived.model_copy(
        update={"status": MemoryStatus.ACTIVE, "archive_reason": None, "version": 3}
    )
    with pytest.raises(DayPointerTaken):
        memories.transition(
            old_archived,
            back,
            audit_of(ids, clock, "unarchive", old_archived, back),
            day_pointer=DayPointerChange.CLAIM,
        )
    found = memories.get(old.id)
    assert found is not None and found.status is MemoryStatus.ARCHIVED
    assert memories.live_day_row_id(AGENT, DATE) == new.id


def test_supersede_writes_the_new_fact_only_if_the_old_is_unchanged(
    memories: MemoryRepository, ids: IdFactory, clock: FixedClock
) -> None:
    old = saved(memories, ids, clock, "v1")
    new = new_fact(ids, clock, AGENT, "v2").model_copy(update={"supersedes": old.id})
    old_after = old.superseded(new.id, clock.now())
    memories.supersede(new, old, old_after, [audit_of(ids, clock, "create", None, new)])
    found = memories.get(old.id)
    assert found is not None and found.superseded_by == new.id
    late = new_fact(ids, clock, AGENT, "v3")
    with pytest.raises(WriteConflict):
        memories.supersede(late, old, old.superseded(late.id, clock.now()), [])
    assert memories.get(late.id) is None


def test_set_embedding_writes_only_over_the_version_it_read(
    memories: MemoryRepository, ids: IdFactory, clock: FixedClock
) -> None:
    fact = saved(memories, ids, clock, "Tests run on arm64")
    assert memories.set_embedding(fact, b"\x02vector") is True
    found = memories.get(fact.id)
    assert found is not None and found.embedding == b"\x02vector" and found.version == 1
    changed = archived(fact, clock)
    memories.transition(fact, changed, audit_of(ids, clock, "archive", fact, changed))
    assert memories.set_embedding(fact, b"\x02other") is False
    found = memories.get(fact.id)
    assert found is not None and found.embedding is None  # what the transition wrote


def test_pages_hold_exactly_limit_newest_first_and_filter(
    memories: MemoryRepository, ids: IdFactory, clock: FixedClock
) -> None:
    facts = []
    for number in range(7):
        clock.set(clock.now() + timedelta(seconds=1))
        facts.append(saved(memories, ids, clock, f"fact {number}"))
    row = new_day_row(ids, clock, AGENT, DATE, "09:00 line")
    memories.create(row, audit_of(ids, clock, "create", None, row), claim_day_pointer=True)
    gone = archived(facts[2], clock)
    memories.transition(facts[2], gone, audit_of(ids, clock, "archive", facts[2], gone))

    def page(after: str | None, **filters: Any) -> tuple[list[str], str | None]:
        found = memories.list_memories(
            workspace_id="wsp_1",
            agent_id=filters.get("agent_id", AGENT),
            status=filters.get("status"),
            kind=filters.get("kind"),
            limit=3,
            after_id=after,
        )
        return [memory.text for memory in found.memories], found.continue_after

    first, after = page(None, status="active", kind="fact")
    assert first == ["fact 6", "fact 5", "fact 4"]
    # The last page is full, and says it is the last (no empty page after it).
    assert page(after, status="active", kind="fact") == (["fact 3", "fact 1", "fact 0"], None)
    assert page(None, status="archived")[0] == ["fact 2"]
    assert page(None, kind="day")[0] == ["09:00 line"]
    assert page(None, agent_id=None)[0][0] == "09:00 line"  # the workspace, every agent
    other = memories.list_memories(
        workspace_id="wsp_2", agent_id=None, status=None, kind=None, limit=3, after_id=None
    )
    assert other.memories == [] and other.continue_after is None


def test_a_workspace_of_many_agents_pages_newest_first_across_its_shards(
    memories: MemoryRepository, ids: IdFactory, clock: FixedClock
) -> None:
    """docs/issues.md#issue-23-item-2: a workspace's memories are spread over shards by
    agent; its pages merge them newest first, each memory exactly once, filters held."""
    agents = [f"agt_{number:026d}" for number in range(40)]
    assert len({workspace_shard(agent) for agent in agents}) > WORKSPACE_SHARDS // 2
    rng = random.Random(17)
    saved_in_order = []
    for number in range(150):
        # Bursts from one agent, then others: some shards hold long runs of the newest.
        agent = agents[0] if number % 50 < 20 else rng.choice(agents)
        clock.set(clock.now() + timedelta(seconds=1))
        fact = new_fact(ids, clock, agent, f"fact {number}")
        memories.create(fact, audit_of(ids, clock, "create", None, fact))
        saved_in_order.append(fact)
    for fact in saved_in_order[::7]:
        gone = archived(fact, clock)
        memories.transition(fact, gone, audit_of(ids, clock, "archive", fact, gone))
    gone_ids = {fact.id for fact in saved_in_order[::7]}
    outsider = new_fact(ids, clock, agents[3], "elsewhere", workspace_id="wsp_2")
    memories.create(outsider, audit_of(ids, clock, "create", None, outsider))

    def every_page(limit: int, **filters: Any) -> list[str]:
        found: list[str] = []
        after = None
        while True:
            page = memories.list_memories(
                workspace_id="wsp_1", agent_id=None, limit=limit, after_id=after, **filters
            )
            assert len(page.memories) == limit or page.continue_after is None
            found += [memory.id for memory in page.memories]
            if page.continue_after is None:
                return found
            after = page.continue_after

    newest_first = [fact.id for fact in reversed(saved_in_order)]
    for limit in (1, 7, 50, 200):
        assert every_page(limit, status=None, kind=None) == newest_first
    assert every_page(9, status="archived", kind=None) == [
        memory_id for memory_id in newest_first if memory_id in gone_ids
    ]
    assert every_page(9, status="active", kind="fact") == [
        memory_id for memory_id in newest_first if memory_id not in gone_ids
    ]
    assert every_page(9, status=None, kind="day") == []


def test_live_facts_are_the_active_facts_expired_included_newest_first(
    memories: MemoryRepository, ids: IdFactory, clock: FixedClock
) -> None:
    old = saved(memories, ids, clock, "old")
    clock.set(clock.now() + timedelta(seconds=1))
    expired = new_fact(ids, clock, AGENT, "expired").model_copy(
        update={"expires_at": clock.now() + timedelta(seconds=1)}
    )
    memories.create(expired, audit_of(ids, clock, "create", None, expired))
    clock.set(clock.now() + timedelta(days=1))
    gone = saved(memories, ids, clock, "gone")
    memories.transition(gone, archived(gone, clock), audit_of(ids, clock, "archive", gone, gone))
    row = new_day_row(ids, clock, AGENT, DATE, "09:00 line")
    memories.create(row, audit_of(ids, clock, "create", None, row), claim_day_pointer=True)
    assert [fact.id for fact in memories.live_facts(AGENT)] == [expired.id, old.id]
    assert [f.id for f in memories.live_facts(AGENT, recall_counts=False)] == [expired.id, old.id]


def test_history_pages_oldest_first(
    memories: MemoryRepository, ids: IdFactory, clock: FixedClock
) -> None:
    fact = saved(memories, ids, clock, "v1")
    current = fact
    for number in range(4):
        clock.set(clock.now() + timedelta(seconds=1))
        edited = current.model_copy(update={"text": f"v{number + 2}", "version": number + 2})
        memories.transition(current, edited, audit_of(ids, clock, "edit", current, edited))
        current = edited
    first, after = memories.history(fact.id, 2)
    second, after_second = memories.history(fact.id, 2, after)
    third, end = memories.history(fact.id, 2, after_second)
    actions = [(r.action, (r.after or {}).get("text")) for r in first + second + third]
    assert actions == [("create", "v1"), *((("edit", f"v{n}")) for n in range(2, 6))]
    assert after is not None and after_second is not None and end is None


def test_with_recall_counts_reads_what_is_stored(
    memories: MemoryRepository, ids: IdFactory, clock: FixedClock
) -> None:
    fact = saved(memories, ids, clock, "counted")
    (read,) = memories.with_recall_counts([fact])
    assert (read.id, read.recall_count, read.last_recalled_at) == (fact.id, 0, None)
