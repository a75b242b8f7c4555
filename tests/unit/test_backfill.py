"""The review-TTL backfill an upgrade promises (``infra/backfill.py``, CHANGELOG.md
"Upgrading from 0.1.0 to 0.2.0"): review items stored without ``expiresAtEpoch`` get
their review's expiry, never an earlier one; other items and items that have it are
left alone; a second run changes nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from chalicelib.ids import to_rfc3339, ulid_floor
from chalicelib.storage.recalls import epoch_seconds
from chalicelib.storage.review_expiry import QUEUE_WAIT_BOUND
from infra.backfill import backfill_review_ttl, main, ulid_time
from tests.helpers import TABLE

STARTED = datetime(2025, 1, 10, 4, 0, tzinfo=UTC)
REVIEW = f"rvw_{ulid_floor(STARTED)[:10]}ABCDEFGHJKMNPQRS"
YEAR = timedelta(days=365)


def put(dynamodb: Any, **item: str) -> None:
    dynamodb.put_item(TableName=TABLE, Item={name: {"S": value} for name, value in item.items()})


def expiry(dynamodb: Any, pk: str, sk: str) -> int | None:
    item = dynamodb.get_item(TableName=TABLE, Key={"pk": {"S": pk}, "sk": {"S": sk}})["Item"]
    return int(item["expiresAtEpoch"]["N"]) if "expiresAtEpoch" in item else None


def test_the_ulid_time_reads_back_what_the_id_encodes() -> None:
    for moment in (STARTED, datetime(2026, 11, 30, 12, 0, 0, 123000, tzinfo=UTC)):
        assert ulid_time(ulid_floor(moment)) == moment


def test_old_review_items_get_their_reviews_expiry_and_nothing_else_changes(
    dynamodb: Any, capsys: Any
) -> None:
    put(dynamodb, pk="REVIEWS#agt_1", sk=REVIEW, startedAt=to_rfc3339(STARTED))
    put(dynamodb, pk=f"REVIEW#{REVIEW}", sk="REVIEW", startedAt=to_rfc3339(STARTED))
    put(dynamodb, pk=f"REVIEW#{REVIEW}", sk="ACTION#a1")
    put(dynamodb, pk="PENDING#wsp_1", sk=f"agt_1#{REVIEW}#a2")
    put(dynamodb, pk="MEMORY#agt_1", sk="mem_1")  # not a review item
    dynamodb.put_item(
        TableName=TABLE,
        Item={"pk": {"S": f"REVIEW#{REVIEW}"}, "sk": {"S": "RUN"}, "expiresAtEpoch": {"N": "7"}},
    )
    assert backfill_review_ttl(dynamodb, TABLE, dry_run=True)["backfilled"] == 4
    assert expiry(dynamodb, "REVIEWS#agt_1", REVIEW) is None  # a dry run writes nothing
    counts = backfill_review_ttl(dynamodb, TABLE)
    assert counts["backfilled"] == 4 and counts["skipped"] == 0
    started = epoch_seconds(STARTED + YEAR)
    assert expiry(dynamodb, "REVIEWS#agt_1", REVIEW) == started
    assert expiry(dynamodb, f"REVIEW#{REVIEW}", "REVIEW") == started
    bound = epoch_seconds(STARTED + YEAR + QUEUE_WAIT_BOUND)
    assert expiry(dynamodb, f"REVIEW#{REVIEW}", "ACTION#a1") == bound  # never before
    assert expiry(dynamodb, "PENDING#wsp_1", f"agt_1#{REVIEW}#a2") == bound
    assert expiry(dynamodb, f"REVIEW#{REVIEW}", "RUN") == 7  # had it: untouched
    assert expiry(dynamodb, "MEMORY#agt_1", "mem_1") is None  # memories never expire
    main(["review-ttl", "--table", TABLE, "--region", "us-east-1"])
    assert "0 review items got expiresAtEpoch" in capsys.readouterr().out  # nothing left
