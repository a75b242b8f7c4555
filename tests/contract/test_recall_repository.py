"""The ``RecallRepository`` contract (chalicelib/storage/protocols.py): recall counters,
the recall log and run-start session claims.

Runs against every implementation in the ``recalls`` fixture (today the DynamoDB
adapter on moto); counts are read back through the same table's memory adapter."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from chalicelib.ids import FixedClock, IdFactory
from chalicelib.models.recall import RecalledMemory, RecallLogEntry
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.keys import recall_counter_page
from chalicelib.storage.memories import DynamoDBMemoryRepository
from chalicelib.storage.protocols import RecallRepository, SessionAlreadyRecalled, SessionClaim
from chalicelib.storage.recalls import DynamoDBRecallRepository
from tests.helpers import Faults, audit_of, new_fact

IMPLEMENTATIONS: dict[str, Callable[[DynamoDBTable, FixedClock], RecallRepository]] = {
    # on the test clock: the log's retention is counted from it, not from today's date
    "dynamodb": DynamoDBRecallRepository,
}
AGENT = "agt_01KAAAAAAAAAAAAAAAAAAAAAAA"


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def recalls(
    request: pytest.FixtureRequest, table: DynamoDBTable, clock: FixedClock
) -> RecallRepository:
    return IMPLEMENTATIONS[request.param](table, clock)


def entry(
    ids: IdFactory, at: datetime, memory_ids: list[str], session: str | None
) -> RecallLogEntry:
    return RecallLogEntry(
        id=ids.new("rcl"),
        workspace_id="wsp_1",
        agent_id=AGENT,
        kind="start" if session else "on_demand",
        session_id=session,
        query="deploy staging",
        at=at,
        memories=[RecalledMemory(memory_id=memory_id, score=0.9) for memory_id in memory_ids],
    )


def test_a_recall_counts_once_on_each_memory_even_past_one_transaction(
    recalls: RecallRepository, table: DynamoDBTable, ids: IdFactory, clock: FixedClock
) -> None:
    memories = DynamoDBMemoryRepository(table)
    facts = [new_fact(ids, clock, AGENT, f"fact {number}") for number in range(150)]
    for fact in facts:
        memories.create(fact, audit_of(ids, clock, "create", None, fact))
    now = clock.now()
    picked = [fact.id for fact in facts[:120]]
    recalls.commit_recall([*picked, picked[0]], entry(ids, now, picked, None), now)
    counted = {m.id: (m.recall_count, m.last_recalled_at) for m in memories.live_facts(AGENT)}
    assert {counted[memory_id] for memory_id in picked} == {(1, now)}
    assert {counted[fact.id] for fact in facts[120:]} == {(0, None)}
    later = now + timedelta(minutes=1)
    recalls.commit_recall(picked[:1], entry(ids, later, picked[:1], None), later)
    found = memories.get(picked[0])
    assert found is not None and (found.recall_count, found.last_recalled_at) == (2, later)


def test_a_resumed_session_is_claimed_once_within_its_window(
    recalls: RecallRepository, ids: IdFactory, clock: FixedClock
) -> None:
    now = clock.now()
    assert recalls.session_recalled_at(AGENT, "chat-1") is None
    claim = SessionClaim(AGENT, "chat-1", resumed=True, cutoff=now - timedelta(hours=24))
    recalls.commit_recall([], entry(ids, now, [], "chat-1"), now, claim)
    assert recalls.session_recalled_at(AGENT, "chat-1") == now
    soon = now + timedelta(hours=1)
    again = SessionClaim(AGENT, "chat-1", resumed=True, cutoff=soon - timedelta(hours=24))
    refused = entry(ids, soon, [], "chat-1")
    with pytest.raises(SessionAlreadyRecalled):
        recalls.commit_recall([], refused, soon, again)
    assert recalls.session_recalled_at(AGENT, "chat-1") == now
    logged = [e.id for e in recalls.list_log(AGENT, 10, None)[0]]
    assert refused.id not in logged and len(logged) == 1  # the refused recall wrote nothing
    fresh = SessionClaim(AGENT, "chat-1", resumed=False, cutoff=soon - timedelta(hours=24))
    recalls.commit_recall([], entry(ids, soon, [], "chat-1"), soon, fresh)  # not resumed: allowed
    assert recalls.session_recalled_at(AGENT, "chat-1") == soon
    day_later = soon + timedelta(hours=25)
    stale = SessionClaim(AGENT, "chat-1", resumed=True, cutoff=day_later - timedelta(hours=24))
    recalls.commit_recall([], entry(ids, day_later, [], "chat-1"), day_later, stale)
    assert recalls.session_recalled_at(AGENT, "chat-1") == day_later


def test_a_refused_resumed_session_counts_nothing(
    recalls: RecallRepository, table: DynamoDBTable, ids: IdFactory, clock: FixedClock
) -> None:
    memories = DynamoDBMemoryRepository(table)
    fact = new_fact(ids, clock, AGENT, "Deploys need the VPN")
    memories.create(fact, audit_of(ids, clock, "create", None, fact))
    now = clock.now()
    claim = SessionClaim(AGENT, "chat-1", resumed=True, cutoff=now - timedelta(hours=24))
    recalls.commit_recall([fact.id], entry(ids, now, [fact.id], "chat-1"), now, claim)
    soon = now + timedelta(hours=1)
    again = SessionClaim(AGENT, "chat-1", resumed=True, cutoff=soon - timedelta(hours=24))
    with pytest.raises(SessionAlreadyRecalled):
        recalls.commit_recall([fact.id], entry(ids, soon, [fact.id], "chat-1"), soon, again)
    found = memories.get(fact.id)
    assert found is not None and (found.recall_count, found.last_recalled_at) == (1, now)
    assert len(recalls.list_log(AGENT, 10, None)[0]) == 1


def test_a_counter_update_botocore_sends_again_counts_once(
    recalls: RecallRepository, table: DynamoDBTable, ids: IdFactory, clock: FixedClock
) -> None:
    """botocore sends a request again when its answer is lost (a reset connection, a
    500): the page's ``lastRecallId`` guard turns the second apply into a no-op."""
    memories = DynamoDBMemoryRepository(table)
    fact = new_fact(ids, clock, AGENT, "Deploys need the VPN")
    memories.create(fact, audit_of(ids, clock, "create", None, fact))
    attempts: list[str] = []
    events = table.client.meta.events

    def sent(**_: Any) -> None:
        attempts.append("sent")

    def resend_the_first(attempts: int, **_: Any) -> float | None:
        return 0.0 if attempts == 1 else None  # as after a lost answer: send it again

    events.register("request-created.dynamodb.UpdateItem", sent)
    events.register_first("needs-retry.dynamodb.UpdateItem", resend_the_first)
    now = clock.now()
    try:
        recalls.commit_recall([fact.id], entry(ids, now, [fact.id], None), now)
    finally:
        events.unregister("needs-retry.dynamodb.UpdateItem", resend_the_first)
        events.unregister("request-created.dynamodb.UpdateItem", sent)
    assert len(attempts) == 2  # both attempts reached the table
    found = memories.get(fact.id)
    assert found is not None and found.recall_count == 1
    later = now + timedelta(minutes=1)
    recalls.commit_recall([fact.id], entry(ids, later, [fact.id], None), later)
    found = memories.get(fact.id)
    assert found is not None and (found.recall_count, found.last_recalled_at) == (2, later)


def test_a_counter_update_that_fails_after_the_log_leaves_the_recall_logged(
    recalls: RecallRepository,
    table: DynamoDBTable,
    ids: IdFactory,
    clock: FixedClock,
    faults: Faults,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The log entry is the record: a throttled page is under-counted and logged, the
    other pages are counted, and nothing is sent twice."""
    memories = DynamoDBMemoryRepository(table)
    facts = [new_fact(ids, clock, AGENT, f"fact {number}") for number in range(6)]
    for fact in facts:
        memories.create(fact, audit_of(ids, clock, "create", None, fact))
    picked = [fact.id for fact in facts]
    logged = entry(ids, clock.now(), picked, None)
    faults.fail("ThrottlingException", operation="UpdateItem")
    recalls.commit_recall(picked, logged, clock.now())
    assert [e.id for e in recalls.list_log(AGENT, 10, None)[0]] == [logged.id]
    pages = sorted({recall_counter_page(memory_id) for memory_id in picked})
    assert len(pages) > 1
    assert faults.calls.count("UpdateItem") == len(pages)  # the refused page is not sent again
    counted = {m.id: m.recall_count for m in memories.with_recall_counts(facts)}
    refused = pages[0]  # pages are counted in order
    assert counted == {
        memory_id: 0 if recall_counter_page(memory_id) == refused else 1 for memory_id in picked
    }
    assert "under-counted by one recall" in caplog.text


def test_the_log_pages_newest_first(
    recalls: RecallRepository, ids: IdFactory, clock: FixedClock
) -> None:
    written = []
    for _ in range(5):
        clock.set(clock.now() + timedelta(minutes=1))
        logged = entry(ids, clock.now(), [], None)
        recalls.commit_recall([], logged, clock.now())
        written.append(logged.id)
    first, after = recalls.list_log(AGENT, 2, None)
    second, after_second = recalls.list_log(AGENT, 2, after)
    third, end = recalls.list_log(AGENT, 2, after_second)
    assert [e.id for e in first + second + third] == written[::-1]
    assert end is None and after is not None
    assert first[0].memories == [] and first[0].query == "deploy staging"
    assert recalls.list_log("agt_01KBBBBBBBBBBBBBBBBBBBBBBB", 10, None) == ([], None)
