"""The ``ReviewUndoRepository`` contract (chalicelib/storage/protocols.py): an undo is
recorded once, together with the version-checked restores of its memories and the
summary's count, or not at all (docs/issues.md#issue-14-item-3).

Runs against every implementation in the ``undos`` fixture (today the DynamoDB
adapter on moto)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from chalicelib.ids import FixedClock, IdFactory
from chalicelib.models.memory import MemoryStatus
from chalicelib.models.review import ActionUndo, ReviewSummary
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.memories import DynamoDBMemoryRepository
from chalicelib.storage.protocols import ReviewUndoRepository, UndoTaken, WriteConflict
from chalicelib.storage.recall_index import index_writes
from chalicelib.storage.review_actions import DynamoDBUndoRepository
from chalicelib.storage.reviews import DynamoDBReviewRepository
from tests.helpers import START, audit_of, new_fact

IMPLEMENTATIONS: dict[str, Callable[[DynamoDBTable], ReviewUndoRepository]] = {
    "dynamodb": DynamoDBUndoRepository,
}
AGENT = "agt_01KAAAAAAAAAAAAAAAAAAAAAAA"
REVIEW = "rvw_01KAAAAAAAAAAAAAAAAAAAAAAA"


def _summary() -> ReviewSummary:
    """A manual review of the agent with one applied action."""
    return ReviewSummary(
        id=REVIEW,
        workspace_id="wsp_1",
        agent_id=AGENT,
        date="2026-11-29",
        trigger="manual",
        reviewer="rules-v2",
        started_at=START,
        finished_at=START,
        planned=1,
        applied=1,
        skipped=0,
        report_key="reviews/x.json",
    )


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def undos(request: pytest.FixtureRequest, table: DynamoDBTable) -> ReviewUndoRepository:
    return IMPLEMENTATIONS[request.param](table)


def test_an_undo_restores_once_and_counts(
    undos: ReviewUndoRepository, table: DynamoDBTable, ids: IdFactory, clock: FixedClock
) -> None:
    memories = DynamoDBMemoryRepository(table)
    reviews = DynamoDBReviewRepository(table, clock)
    summary = _summary()
    reviews.save_summary(summary)
    fact = new_fact(ids, clock, AGENT, "Deploys need the VPN on")
    memories.create(fact, audit_of(ids, clock, "create", None, fact))
    archived = fact.model_copy(update={"status": MemoryStatus.ARCHIVED, "version": 2})
    memories.transition(fact, archived, audit_of(ids, clock, "archive", fact, archived))
    restored = archived.model_copy(update={"status": MemoryStatus.ACTIVE, "version": 3})
    undo = ActionUndo(action_id="a1", undone_by="usr_1", undone_at=START, detail="live again")
    # A stale read (the fact as it was before the archive) changes nothing.
    with pytest.raises(WriteConflict):
        undos.record_undo(
            summary, undo, [(fact, restored, audit_of(ids, clock, "undo", fact, restored))]
        )
    assert undos.list_undos(REVIEW) == []
    change = (archived, restored, audit_of(ids, clock, "undo", archived, restored))
    undos.record_undo(summary, undo, [change])
    assert undos.list_undos(REVIEW) == [undo]
    stored = memories.get(fact.id)
    assert stored is not None and stored.status is MemoryStatus.ACTIVE and stored.version == 3
    again = (restored, restored.model_copy(update={"version": 4}), change[2])
    with pytest.raises(UndoTaken):
        undos.record_undo(summary, undo, [again])
    assert reviews.get_summary(REVIEW).undone == 1  # type: ignore[union-attr]


def test_an_undo_past_one_transactions_writes_restores_every_tagged_fact(
    undos: ReviewUndoRepository, table: DynamoDBTable, ids: IdFactory, clock: FixedClock
) -> None:
    """Six facts of ten tags each: 20 tag-index writes a fact on top of its update, audit
    record and recall-index writes, well past 100 actions; every fact comes back live
    with its tag entries filed as live (docs/reference.md#review-undo)."""
    memories = DynamoDBMemoryRepository(table)
    reviews = DynamoDBReviewRepository(table, clock)
    summary = _summary()
    reviews.save_summary(summary)
    tags = tuple(f"t{number}" for number in range(10))
    changes = []
    for number in range(6):
        fact = new_fact(ids, clock, AGENT, f"Deploy step {number} needs the VPN on")
        fact = fact.model_copy(update={"tags": tags})
        memories.create(fact, audit_of(ids, clock, "create", None, fact))
        archived = fact.model_copy(update={"status": MemoryStatus.ARCHIVED, "version": 2})
        memories.transition(fact, archived, audit_of(ids, clock, "archive", fact, archived))
        restored = archived.model_copy(update={"status": MemoryStatus.ACTIVE, "version": 3})
        changes.append((archived, restored, audit_of(ids, clock, "undo", archived, restored)))
    assert sum(len(index_writes(before, after)) for before, after, _ in changes) > 100
    undo = ActionUndo(action_id="a1", undone_by="usr_1", undone_at=START, detail="live again")
    undos.record_undo(summary, undo, changes)
    assert undos.list_undos(REVIEW) == [undo]
    for _, restored, _ in changes:
        stored = memories.get(restored.id)
        assert stored is not None and stored.status is MemoryStatus.ACTIVE and stored.version == 3
    live = memories.tagged_fact_ids(AGENT, ["t9"], [])
    assert live == {after.id for _, after, _ in changes}
