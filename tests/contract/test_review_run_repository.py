"""The ``ReviewRunRepository`` contract (chalicelib/storage/protocols.py): queued
manual reviews (docs/issues.md#issue-12): created once, claimed by one attempt at a time until the
claim is stale, settled only by the claim that holds them, final once done.

Runs against every implementation in the ``runs`` fixture (today the DynamoDB adapter
on moto)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from botocore.exceptions import ClientError

from chalicelib.ids import FixedClock
from chalicelib.models.review_run import ReviewRun
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.protocols import ReviewRunRepository, ReviewRunTaken
from chalicelib.storage.review_runs import DynamoDBReviewRunRepository
from tests.helpers import START

IMPLEMENTATIONS: dict[str, Callable[[DynamoDBTable, FixedClock], ReviewRunRepository]] = {
    "dynamodb": DynamoDBReviewRunRepository,
}
LEASE = timedelta(minutes=15)
RUN = ReviewRun(
    id="rvw_01KAAAAAAAAAAAAAAAAAAAAAAA",
    workspace_id="wsp_1",
    agent_id="agt_01KAAAAAAAAAAAAAAAAAAAAAAA",
    date="2026-11-29",
    dry_run=True,
    status="queued",
    requested_by="usr_1",
    requested_at=START,
)


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def runs(
    request: pytest.FixtureRequest, table: DynamoDBTable, clock: FixedClock
) -> ReviewRunRepository:
    return IMPLEMENTATIONS[request.param](table, clock)


def test_a_run_is_stored_once_and_read_back(runs: ReviewRunRepository) -> None:
    assert runs.get(RUN.id) is None
    runs.create(RUN)
    assert runs.get(RUN.id) == RUN
    with pytest.raises(ClientError):  # a new id never overwrites
        runs.create(RUN.model_copy(update={"agent_id": "agt_other"}))
    assert runs.get(RUN.id) == RUN


def test_a_run_requested_longer_than_the_retention_ago_reads_as_none(
    runs: ReviewRunRepository, clock: FixedClock
) -> None:
    runs.create(RUN)
    clock.set(START + timedelta(days=365))
    assert runs.get(RUN.id) == RUN
    clock.set(START + timedelta(days=365, seconds=1))
    assert runs.get(RUN.id) is None


def test_one_attempt_holds_a_run_until_its_claim_is_stale(runs: ReviewRunRepository) -> None:
    runs.create(RUN)
    claimed = runs.claim(RUN.id, "c1", START, START - LEASE)
    assert (claimed.status, claimed.attempts, claimed.claim_id) == ("running", 1, "c1")
    with pytest.raises(ReviewRunTaken):  # a second worker while the first runs
        runs.claim(RUN.id, "c2", START, START - LEASE)
    later = START + LEASE + timedelta(minutes=1)
    taken_over = runs.claim(RUN.id, "c3", later, later - LEASE)
    assert (taken_over.attempts, taken_over.claim_id) == (2, "c3")
    with pytest.raises(ReviewRunTaken):  # the crashed holder cannot settle it any more
        runs.finish(RUN.id, "c1", later, None)
    runs.finish(RUN.id, "c3", later, "reviews/wsp_1/x/2026-11-29/r.json")
    done = runs.get(RUN.id)
    assert done is not None and done.status == "done"
    assert (done.finished_at, done.report_key) == (later, "reviews/wsp_1/x/2026-11-29/r.json")
    with pytest.raises(ReviewRunTaken):  # done is final
        runs.claim(RUN.id, "c4", later + timedelta(days=1), later + timedelta(days=1))


def test_a_failed_run_says_why_and_may_be_claimed_again(runs: ReviewRunRepository) -> None:
    runs.create(RUN)
    runs.claim(RUN.id, "c1", START, START - LEASE)
    with pytest.raises(ReviewRunTaken):  # only the holder fails it
        runs.fail(RUN.id, "c9", START, "RuntimeError")
    runs.fail(RUN.id, "c1", START, "RuntimeError")
    failed = runs.get(RUN.id)
    assert failed is not None and (failed.status, failed.error) == ("failed", "RuntimeError")
    retried = runs.claim(RUN.id, "c2", START, START - LEASE)  # at once: it is not running
    assert (retried.status, retried.attempts) == ("running", 2)
    runs.finish(RUN.id, "c2", START, None)
    finished = runs.get(RUN.id)
    assert finished is not None and finished.error is None and finished.report_key is None


def test_an_unknown_run_cannot_be_claimed(runs: ReviewRunRepository) -> None:
    with pytest.raises(ReviewRunTaken):
        runs.claim("rvw_01KZZZZZZZZZZZZZZZZZZZZZZZ", "c1", START, START - LEASE)
    assert runs.get("rvw_01KZZZZZZZZZZZZZZZZZZZZZZZ") is None
