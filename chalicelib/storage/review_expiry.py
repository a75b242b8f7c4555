"""When a review's stored items expire (docs/reference.md#retention,
docs/issues.md#issue-24-item-4): a review's summary, its decisions, undos and pending
actions carry the table's TTL attribute at the review's start plus the retention; a
queued run's record at its request plus the retention. Reads compare those times with
the clock, so an expired review is gone at once, whatever DynamoDB's TTL lag, and
reviews stored before the TTL existed are hidden too. Choices:
docs/DECISIONS.md#review-report-retention."""

from __future__ import annotations

from datetime import datetime, timedelta

from chalicelib.ids import Clock, SystemClock, ulid_floor
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.keys import KV_TTL_ATTRIBUTE
from chalicelib.storage.recalls import epoch_seconds

REVIEW_RETENTION = timedelta(days=365)
"""How long a review is kept by default (``PINEWORK_REVIEW_RETENTION_DAYS``)."""
QUEUE_WAIT_BOUND = timedelta(days=30)
"""The most a queued review's start can follow the request that made its id: SQS keeps
a message 14 days at most. Listing reads only ids newer than the retention plus this
(ids are ULIDs of the request), so summaries stored before the TTL existed are never
read again."""


def review_expiry(started_at: datetime, retention: timedelta) -> dict[str, int]:
    """The TTL attribute of an item of a review that started at ``started_at``:
    ``{"expiresAtEpoch": epoch seconds of started_at + retention}`` (rounded up)."""
    return {KV_TTL_ATTRIBUTE: epoch_seconds(started_at + retention)}


def review_kept(started_at: datetime, clock: Clock, retention: timedelta) -> bool:
    """Whether a review that started at ``started_at`` is inside its retention now
    (kept while ``started_at >= now - retention``)."""
    return started_at >= clock.now() - retention


def oldest_listed_id(clock: Clock, retention: timedelta) -> str:
    """The smallest review id a listing reads: ``rvw_`` + the ULID floor of now minus
    the retention and ``QUEUE_WAIT_BOUND``."""
    return f"rvw_{ulid_floor(clock.now() - retention - QUEUE_WAIT_BOUND)}"


class ReviewRetention:
    """The constructor the review repositories share: the table, the clock the retention
    is counted back from (the system clock when None) and the retention.

    Args:
        table: the single table.
        clock: the current time.
        retention: how long a review is kept after its start (docs/reference.md#retention).
    """

    def __init__(
        self,
        table: DynamoDBTable,
        clock: Clock | None = None,
        retention: timedelta = REVIEW_RETENTION,
    ) -> None:
        self._table = table
        self._clock = clock or SystemClock()
        self._retention = retention
