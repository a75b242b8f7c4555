"""The ``ReviewRepository`` contract (chalicelib/storage/protocols.py): the review's own
conditional writes (supersede by a kept fact, lift once), the per-date claim, report
summaries, and persons' decisions in approval mode.

Runs against every implementation in the ``reviews`` fixture (today the DynamoDB
adapter on moto); memories are read back through the same table's memory adapter."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from chalicelib.ids import FixedClock, IdFactory
from chalicelib.models.memory import Memory, MemoryStatus
from chalicelib.models.review import ActionDecision, ReviewSummary
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.memories import DynamoDBMemoryRepository
from chalicelib.storage.protocols import (
    DecisionTaken,
    LiftClaimed,
    ReviewDateTaken,
    ReviewRepository,
    WriteConflict,
)
from chalicelib.storage.reviews import DynamoDBReviewRepository
from tests.helpers import START, audit_of, new_fact

IMPLEMENTATIONS: dict[str, Callable[[DynamoDBTable, FixedClock], ReviewRepository]] = {
    "dynamodb": DynamoDBReviewRepository,
}
AGENT = "agt_01KAAAAAAAAAAAAAAAAAAAAAAA"
LEASE = timedelta(minutes=15)


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def reviews(
    request: pytest.FixtureRequest, table: DynamoDBTable, clock: FixedClock
) -> ReviewRepository:
    return IMPLEMENTATIONS[request.param](table, clock)


@pytest.fixture
def memories(table: DynamoDBTable) -> DynamoDBMemoryRepository:
    return DynamoDBMemoryRepository(table)


def stored_fact(
    memories: DynamoDBMemoryRepository, ids: IdFactory, clock: FixedClock, text: str
) -> Memory:
    fact = new_fact(ids, clock, AGENT, text)
    memories.create(fact, audit_of(ids, clock, "create", None, fact))
    return fact


def summary(review_id: str, clock: FixedClock, pending: int = 2) -> ReviewSummary:
    return ReviewSummary(
        id=review_id,
        workspace_id="wsp_1",
        agent_id=AGENT,
        date="2026-11-29",
        trigger="schedule",
        reviewer="rules-v1",
        started_at=clock.now(),
        finished_at=clock.now(),
        planned=pending,
        applied=0,
        skipped=0,
        report_key=f"reviews/wsp_1/{AGENT}/2026-11-29/{review_id}.json",
        approval="required",
        pending=pending,
    )


def decision(action_id: str, state: str, clock: FixedClock) -> ActionDecision:
    return ActionDecision.model_validate(
        {"actionId": action_id, "state": state, "decidedBy": "usr_1", "decidedAt": clock.now()}
    )


def test_supersede_by_existing_needs_both_facts_unchanged(
    reviews: ReviewRepository,
    memories: DynamoDBMemoryRepository,
    ids: IdFactory,
    clock: FixedClock,
) -> None:
    keeper = stored_fact(memories, ids, clock, "Deploys need the VPN")
    old = stored_fact(memories, ids, clock, "deploys need the VPN")
    twin = stored_fact(memories, ids, clock, "Deploys need the VPN!")
    archived = keeper.model_copy(
        update={"status": MemoryStatus.ARCHIVED, "archive_reason": "done", "version": 2}
    )
    memories.transition(keeper, archived, audit_of(ids, clock, "archive", keeper, archived))
    twin_after = twin.superseded(keeper.id, clock.now())
    with pytest.raises(WriteConflict):  # the keeper changed since it was read
        reviews.supersede_by_existing(
            twin, twin_after, keeper, audit_of(ids, clock, "supersede", twin, twin_after)
        )
    assert memories.get(twin.id) == twin
    old_after = old.superseded(twin.id, clock.now())
    reviews.supersede_by_existing(
        old, old_after, twin, audit_of(ids, clock, "supersede", old, old_after)
    )
    found = memories.get(old.id)
    assert found is not None and (found.superseded_by, found.version) == (twin.id, 2)
    with pytest.raises(WriteConflict):  # the old fact changed: superseded already
        reviews.supersede_by_existing(
            old, old_after, twin, audit_of(ids, clock, "supersede", old, old_after)
        )


def test_a_text_is_lifted_once_and_a_replaced_fact_must_be_unchanged(
    reviews: ReviewRepository,
    memories: DynamoDBMemoryRepository,
    ids: IdFactory,
    clock: FixedClock,
) -> None:
    lifted = new_fact(ids, clock, AGENT, "The staging database is db-stg-2")
    reviews.create_lifted(lifted, [audit_of(ids, clock, "create", None, lifted)], "d1")
    again = new_fact(ids, clock, AGENT, "The staging database is db-stg-2")
    with pytest.raises(LiftClaimed):
        reviews.create_lifted(again, [audit_of(ids, clock, "create", None, again)], "d1")
    assert memories.get(lifted.id) is not None and memories.get(again.id) is None
    old = stored_fact(memories, ids, clock, "The staging database is db-stg-1")
    update = new_fact(ids, clock, AGENT, "The staging database is db-stg-3")
    stale = old.model_copy(update={"version": 5})
    with pytest.raises(WriteConflict):
        reviews.create_lifted(
            update, [], "d2", replaced=(stale, stale.superseded(update.id, clock.now()))
        )
    assert memories.get(update.id) is None
    reviews.create_lifted(update, [], "d2", replaced=(old, old.superseded(update.id, clock.now())))
    found = memories.get(old.id)
    assert found is not None and found.superseded_by == update.id


def test_a_date_claim_is_held_until_it_is_stale_and_a_finished_one_forever(
    reviews: ReviewRepository,
) -> None:
    reviews.claim_date(AGENT, "2026-11-29", "rvw_1", START, START - LEASE)
    with pytest.raises(ReviewDateTaken):  # running and fresh
        reviews.claim_date(AGENT, "2026-11-29", "rvw_2", START, START - LEASE)
    reviews.claim_date(AGENT, "2026-11-30", "rvw_2", START, START - LEASE)  # another date
    later = START + timedelta(minutes=16)
    reviews.claim_date(AGENT, "2026-11-29", "rvw_3", later, later - LEASE)  # a stale claim
    reviews.finish_date(AGENT, "2026-11-29", "rvw_3", later)
    much_later = later + timedelta(days=1)
    with pytest.raises(ReviewDateTaken):  # done: never again
        reviews.claim_date(AGENT, "2026-11-29", "rvw_4", much_later, much_later)


def test_summaries_are_found_by_id_and_listed_newest_first(
    reviews: ReviewRepository, ids: IdFactory, clock: FixedClock
) -> None:
    made = []
    for _ in range(3):
        clock.set(clock.now() + timedelta(minutes=1))
        made.append(summary(ids.new("rvw"), clock))
        reviews.save_summary(made[-1])
    assert reviews.get_summary(made[1].id) == made[1]
    assert reviews.get_summary(ids.new("rvw")) is None
    first, after = reviews.list_summaries(AGENT, 2, None)
    second, end = reviews.list_summaries(AGENT, 2, after)
    assert [s.id for s in first + second] == [s.id for s in reversed(made)]
    assert end is None


def test_a_review_past_its_retention_is_neither_read_nor_listed(
    reviews: ReviewRepository, ids: IdFactory, clock: FixedClock
) -> None:
    made = []
    for day in range(4):
        clock.set(START + timedelta(days=day))
        made.append(summary(ids.new("rvw"), clock))
        reviews.save_summary(made[-1])
    clock.set(START + timedelta(days=366, hours=1))  # the first two started > 365 days ago
    assert reviews.get_summary(made[1].id) is None
    assert reviews.get_summary(made[2].id) == made[2]
    first, after = reviews.list_summaries(AGENT, 1, None)
    rest, end = reviews.list_summaries(AGENT, 1, after)  # reads past the two skipped
    assert [s.id for s in first + rest] == [made[3].id, made[2].id]
    assert after == made[3].id and end is None


def test_an_approval_claim_is_held_until_it_is_stale(
    reviews: ReviewRepository, clock: FixedClock
) -> None:
    applying = decision("a1", "applying", clock)
    review = summary("rvw_1", clock)
    reviews.claim_approval(review, applying, "clm_1", START - LEASE)
    with pytest.raises(DecisionTaken) as taken:
        reviews.claim_approval(review, applying, "clm_2", START - LEASE)
    assert taken.value.existing is not None and taken.value.existing.state == "applying"
    reviews.claim_approval(review, applying, "clm_3", START + timedelta(minutes=1))


def test_decisions_settle_once_and_move_the_summary_counts(
    reviews: ReviewRepository, ids: IdFactory, clock: FixedClock
) -> None:
    review = summary(ids.new("rvw"), clock, pending=2)
    reviews.save_summary(review)
    reviews.claim_approval(review, decision("a1", "applying", clock), "clm_1", START - LEASE)
    with pytest.raises(DecisionTaken):  # not this claim's to settle
        reviews.record_outcome(review, decision("a1", "applied", clock), "clm_other")
    reviews.record_outcome(review, decision("a1", "applied", clock), "clm_1")
    with pytest.raises(DecisionTaken):  # an applied action is never rejected
        reviews.record_rejection(review, decision("a1", "rejected", clock), ["sig-a1"])
    reviews.record_rejection(review, decision("a2", "rejected", clock), ["sig-a2", "sig-b"])
    with pytest.raises(DecisionTaken):
        reviews.record_rejection(review, decision("a2", "rejected", clock), ["sig-a2"])
    states = {d.action_id: d.state for d in reviews.list_decisions(review.id)}
    assert states == {"a1": "applied", "a2": "rejected"}
    counted = reviews.get_summary(review.id)
    assert counted is not None
    assert (counted.pending, counted.applied, counted.rejected) == (0, 1, 1)
    listed = reviews.list_summaries(AGENT, 10, None)[0]
    assert [(s.pending, s.applied, s.rejected) for s in listed] == [(0, 1, 1)]
    remembered = reviews.rejections(AGENT)
    assert set(remembered) == {"sig-a2", "sig-b"}
    assert remembered["sig-a2"].startswith(f"{review.id} a2 by usr_1")
    with pytest.raises(WriteConflict):  # nothing is pending any more
        reviews.record_rejection(review, decision("a3", "rejected", clock), ["sig-a3"])
    assert "sig-a3" not in reviews.rejections(AGENT)
