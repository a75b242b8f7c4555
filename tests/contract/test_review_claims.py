"""The review claims on the real table (moto): one holder at a time, and a crashed
holder's claim is taken over only once it is stale (issue 4: idempotent reviews,
approval mode)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from chalicelib.models.review import ActionDecision
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.protocols import DecisionTaken, ReviewDateTaken
from chalicelib.storage.reviews import DynamoDBReviewRepository
from tests.helpers import START, TABLE


@pytest.fixture
def reviews(dynamodb: Any) -> DynamoDBReviewRepository:
    return DynamoDBReviewRepository(DynamoDBTable(dynamodb, TABLE))


def test_a_date_claim_is_held_until_it_is_stale(reviews: DynamoDBReviewRepository) -> None:
    reviews.claim_date("agt_1", "2026-11-29", "rvw_1", START, START - timedelta(minutes=15))
    with pytest.raises(ReviewDateTaken):  # running and fresh
        reviews.claim_date("agt_1", "2026-11-29", "rvw_2", START, START - timedelta(minutes=15))
    later = START + timedelta(minutes=16)
    reviews.claim_date("agt_1", "2026-11-29", "rvw_3", later, later - timedelta(minutes=15))
    reviews.finish_date("agt_1", "2026-11-29", "rvw_3", later)
    much_later = later + timedelta(days=1)
    with pytest.raises(ReviewDateTaken):  # done: never again
        reviews.claim_date("agt_1", "2026-11-29", "rvw_4", much_later, much_later)


def test_an_approval_claim_is_held_until_it_is_stale(reviews: DynamoDBReviewRepository) -> None:
    applying = ActionDecision(
        action_id="a1", state="applying", decided_by="usr_1", decided_at=START
    )
    reviews.claim_approval("rvw_1", applying, "clm_1", START - timedelta(minutes=15))
    with pytest.raises(DecisionTaken) as taken:
        reviews.claim_approval("rvw_1", applying, "clm_2", START - timedelta(minutes=15))
    assert taken.value.existing is not None and taken.value.existing.state == "applying"
    reviews.claim_approval("rvw_1", applying, "clm_3", START + timedelta(minutes=1))
