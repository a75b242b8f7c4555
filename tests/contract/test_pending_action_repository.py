"""The ``PendingActionRepository`` contract (chalicelib/storage/protocols.py): the
review actions waiting for a person, per workspace (docs/issues.md#issue-14-item-2).

Runs against every implementation in the ``pending`` fixture (today the DynamoDB
adapter on moto)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from chalicelib.ids import FixedClock
from chalicelib.models.review import PendingAction, ReviewAction
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.protocols import PendingActionRepository
from chalicelib.storage.review_actions import DynamoDBPendingRepository
from tests.helpers import START

IMPLEMENTATIONS: dict[str, Callable[[DynamoDBTable, FixedClock], PendingActionRepository]] = {
    "dynamodb": DynamoDBPendingRepository,
}
AGENT = "agt_01KAAAAAAAAAAAAAAAAAAAAAAA"
OTHER = "agt_01KBBBBBBBBBBBBBBBBBBBBBBB"


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def pending(
    request: pytest.FixtureRequest, table: DynamoDBTable, clock: FixedClock
) -> PendingActionRepository:
    return IMPLEMENTATIONS[request.param](table, clock)


def waiting(agent: str, review: str, number: int) -> PendingAction:
    return PendingAction(
        review_id=review,
        agent_id=agent,
        date="2026-11-29",
        approval="none",
        waiting_since=START,
        action=ReviewAction(
            id=f"a{number}",
            action="resolve_conflict",
            memory_ids=[f"mem_01KAAAAAAAAAAAAAAAAAAAAA{number:02d}"],
            keep_id="mem_01KAAAAAAAAAAAAAAAAAAAAA99",
            reason="port 5432 ≠ 6432",
            waits_for_person=True,
        ),
    )


def test_listed_by_agent_then_oldest_review_and_paged(pending: PendingActionRepository) -> None:
    first = "rvw_01KAAAAAAAAAAAAAAAAAAAAAAA"
    later = "rvw_01KCCCCCCCCCCCCCCCCCCCCCCC"
    entries = [waiting(AGENT, later, 1), waiting(AGENT, first, 1), waiting(OTHER, first, 2)]
    entries += [waiting(AGENT, first, n) for n in range(2, 30)]
    pending.put_pending("wsp_1", entries, {"a1": ["sig-1"]})
    every, after = pending.list_pending("wsp_1", None, 500, None)
    assert after is None and len(every) == len(entries)
    assert [e.agent_id for e in every[:30]] == [AGENT] * 30 and every[-1].agent_id == OTHER
    assert every[29].review_id == later
    assert every[0].action == entries[1].action
    own, _ = pending.list_pending("wsp_1", OTHER, 10, None)
    assert [(e.review_id, e.action.id) for e in own] == [(first, "a2")]
    page, after = pending.list_pending("wsp_1", AGENT, 10, None)
    rest, end = pending.list_pending("wsp_1", AGENT, 100, after)
    assert len(page) == 10 and end is None
    assert [(e.review_id, e.action.id) for e in page + rest] == [
        (e.review_id, e.action.id) for e in every[:30]
    ]
    assert pending.list_pending("wsp_2", None, 10, None) == ([], None)


def test_signatures_name_the_review_and_action_that_wait(pending: PendingActionRepository) -> None:
    review = "rvw_01KAAAAAAAAAAAAAAAAAAAAAAA"
    pending.put_pending(
        "wsp_1", [waiting(AGENT, review, 1), waiting(AGENT, review, 2)], {"a1": ["s1", "s2"]}
    )
    assert pending.pending_signatures("wsp_1", AGENT) == {
        "s1": f"{review} a1",
        "s2": f"{review} a1",
    }
    assert pending.pending_signatures("wsp_1", OTHER) == {}


def test_actions_of_a_review_past_its_retention_wait_no_more(
    pending: PendingActionRepository, clock: FixedClock
) -> None:
    old, new = "rvw_01KAAAAAAAAAAAAAAAAAAAAAAA", "rvw_01KCCCCCCCCCCCCCCCCCCCCCCC"
    later = waiting(AGENT, new, 4).model_copy(update={"waiting_since": START + timedelta(days=9)})
    entries = [*(waiting(AGENT, old, n) for n in range(1, 4)), later]
    pending.put_pending("wsp_1", entries, {"a1": ["s1"], "a4": ["s4"]})
    assert len(pending.list_pending("wsp_1", AGENT, 10, None)[0]) == 4
    clock.set(START + timedelta(days=365, seconds=1))  # the old review is past 365 days
    page, end = pending.list_pending("wsp_1", AGENT, 1, None)  # three skipped on the way
    assert [(e.review_id, e.action.id) for e in page] == [(new, "a4")] and end is None
    assert pending.pending_signatures("wsp_1", AGENT) == {"s4": f"{new} a4"}
