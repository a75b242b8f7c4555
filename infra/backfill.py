"""Backfills an upgrade promises (CHANGELOG.md, "Upgrading from 0.1.0 to 0.2.0"):
``review-ttl`` gives the table's TTL attribute to the review items stored before reviews
expired (docs/issues.md#issue-24-item-4: summaries, their lookups, runs, decisions, undos
and pending actions written without ``expiresAtEpoch``), so DynamoDB removes them as it
removes newer ones. Reads already hide such a review once its retention has passed
(docs/reference.md#retention): this only frees the storage.

Each item gets its review's start plus the retention when it carries ``startedAt`` (a
summary), else its review id's time plus the retention plus
``review_expiry.QUEUE_WAIT_BOUND`` (a review starts at most that long after the request
that made its id), so no item expires before its review does. One scan, one conditional
``UpdateItem`` per item (``attribute_not_exists``: an item that gained the attribute
meanwhile is left alone); run it again to resume. Usage: ``python -m infra.backfill
review-ttl --table NAME [--region R] [--retention-days 365] [--dry-run]``.
Choices: docs/DECISIONS.md#releases-an-operator-can-trust-issue-44.
"""

from __future__ import annotations

import argparse
import re
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
from botocore.exceptions import ClientError

from chalicelib.ids import from_rfc3339
from chalicelib.storage.keys import KV_TTL_ATTRIBUTE
from chalicelib.storage.recalls import epoch_seconds
from chalicelib.storage.review_expiry import QUEUE_WAIT_BOUND, REVIEW_RETENTION

REVIEW_ID = re.compile(r"rvw_([0-9A-HJKMNP-TV-Z]{26})")
"""A review id: ``rvw_`` and a ULID (Crockford base32)."""
REVIEW_PARTITIONS = ("REVIEWS#", "REVIEW#", "PENDING#")
"""The partitions of review items (``chalicelib/storage/keys.py``)."""
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def ulid_time(ulid: str) -> datetime:
    """The moment a ULID's first ten characters (48-bit milliseconds) name."""
    milliseconds = 0
    for character in ulid[:10]:
        milliseconds = milliseconds * 32 + _CROCKFORD.index(character)
    return datetime.fromtimestamp(milliseconds / 1000, tz=UTC)


def review_item_expiry(item: dict[str, Any], retention: timedelta) -> int | None:
    """The ``expiresAtEpoch`` a review item without one gets (see the module doc), or
    None when the item is not a review item or already has the attribute."""
    pk, sk = str(item.get("pk", "")), str(item.get("sk", ""))
    if KV_TTL_ATTRIBUTE in item or not pk.startswith(REVIEW_PARTITIONS):
        return None
    if "startedAt" in item:
        return epoch_seconds(from_rfc3339(str(item["startedAt"])) + retention)
    found = REVIEW_ID.search(f"{pk} {sk}")
    if found is None:
        return None
    return epoch_seconds(ulid_time(found.group(1)) + retention + QUEUE_WAIT_BOUND)


def backfill_review_ttl(
    client: Any, table: str, retention: timedelta = REVIEW_RETENTION, dry_run: bool = False
) -> dict[str, int]:
    """Give every review item without the TTL attribute its expiry.

    Args:
        client: a boto3 DynamoDB client.
        table: the table's name.
        retention: the stage's ``PINEWORK_REVIEW_RETENTION_DAYS``.
        dry_run: count only.

    Returns:
        ``{"scanned": n, "backfilled": n, "skipped": n}`` (skipped: gained it meanwhile).
    """
    counts = {"scanned": 0, "backfilled": 0, "skipped": 0}
    arguments: dict[str, Any] = {"TableName": table}
    while True:
        page = client.scan(**arguments)
        for raw in page.get("Items", []):
            counts["scanned"] += 1
            item = {name: next(iter(value.values())) for name, value in raw.items()}
            expiry = review_item_expiry(item, retention)
            if expiry is None:
                continue
            if dry_run:
                counts["backfilled"] += 1
                continue
            try:
                client.update_item(
                    TableName=table,
                    Key={"pk": raw["pk"], "sk": raw["sk"]},
                    UpdateExpression="SET #ttl = :expiry",
                    ConditionExpression="attribute_exists(pk) AND attribute_not_exists(#ttl)",
                    ExpressionAttributeNames={"#ttl": KV_TTL_ATTRIBUTE},
                    ExpressionAttributeValues={":expiry": {"N": str(expiry)}},
                )
                counts["backfilled"] += 1
            except ClientError as error:
                if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                    raise
                counts["skipped"] += 1
        if "LastEvaluatedKey" not in page:
            return counts
        arguments["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def main(arguments: list[str] | None = None) -> None:
    """``review-ttl --table NAME``: see ``backfill_review_ttl``; prints the counts."""
    parser = argparse.ArgumentParser(description="Backfills an upgrade promises.")
    parser.add_argument("backfill", choices=["review-ttl"])
    parser.add_argument("--table", required=True)
    parser.add_argument("--region")
    parser.add_argument("--retention-days", type=int, default=REVIEW_RETENTION.days)
    parser.add_argument("--dry-run", action="store_true")
    parsed = parser.parse_args(arguments)
    client = boto3.client("dynamodb", region_name=parsed.region)
    counts = backfill_review_ttl(
        client, parsed.table, timedelta(days=parsed.retention_days), parsed.dry_run
    )
    verb = "would get" if parsed.dry_run else "got"
    sys.stdout.write(
        f"{parsed.table}: {counts['scanned']} items scanned, {counts['backfilled']} review "
        f"items {verb} {KV_TTL_ATTRIBUTE}, {counts['skipped']} had it meanwhile\n"
    )


if __name__ == "__main__":
    main()
