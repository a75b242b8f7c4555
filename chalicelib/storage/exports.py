"""A person's exports (docs/reference.md#exports-for-a-person): the record ``EXPORT#<exp_id>`` /
``EXPORT`` and the file ``exports/<wsp_id>/<exp_id>.json``.

Every change of a record is conditional: the worker claims a queued export (``queued``
or ``failed`` -> ``running``, or a ``running`` one whose holder stopped longer than the
lease ago) with a claim id, and only that claim finishes or fails it, so a duplicate
queue message never writes the file twice at once. A record carries the table's TTL
attribute at its file's expiry (7 days after the request, the bucket's ``exports/``
lifecycle rule); reads skip it from then on, before DynamoDB's TTL deletes it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, time, timedelta
from typing import IO, TYPE_CHECKING, Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

from chalicelib.errors import Conflict, RateLimited
from chalicelib.ids import Clock, from_rfc3339, to_rfc3339
from chalicelib.storage.aws_errors import S3_THROTTLING, translate_errors
from chalicelib.storage.dynamodb import (
    DynamoDBTable,
    TransactionCancelled,
    put_new,
    to_attributes,
)
from chalicelib.storage.keys import (
    KV_TTL_ATTRIBUTE,
    export_day_key,
    export_key,
    export_slot_key,
)
from chalicelib.storage.owner_marks import put_owner_mark
from chalicelib.storage.owner_store import read_erasure_epoch
from chalicelib.storage.recalls import epoch_seconds

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client


class ExportTaken(Exception):
    """The export is done, unknown, or another worker holds it."""


def _take_slot(
    workspace_id: str, export_id: str, now: datetime, held_until: datetime, gone: str
) -> dict[str, Any]:
    return {
        "Update": {
            "Key": to_attributes(export_slot_key(workspace_id)),
            "UpdateExpression": "SET exportId = :export, heldUntil = :until",
            # One export per workspace queued or running; a hold past its time is free,
            # and so is one whose export no longer exists (``gone``: erased or expired).
            "ConditionExpression": (
                "attribute_not_exists(exportId) OR heldUntil < :now OR exportId = :gone"
            ),
            "ExpressionAttributeValues": to_attributes(
                {
                    ":export": export_id,
                    ":until": to_rfc3339(held_until),
                    ":now": to_rfc3339(now),
                    ":gone": gone,
                }
            ),
        }
    }


def _count_day(workspace_id: str, now: datetime, per_day: int) -> dict[str, Any]:
    day = now.date().isoformat()
    return {
        "Update": {
            "Key": to_attributes(export_day_key(workspace_id, day)),
            "UpdateExpression": "ADD n :one SET #ttl = :ttl",
            # The daily cap: the count before this one is below it.
            "ConditionExpression": "attribute_not_exists(n) OR n < :cap",
            "ExpressionAttributeNames": {"#ttl": KV_TTL_ATTRIBUTE},
            "ExpressionAttributeValues": to_attributes(
                {":one": 1, ":cap": per_day, ":ttl": epoch_seconds(now) + 2 * 86_400}
            ),
        }
    }


class DynamoDBExportStore:
    """Export records on the single table and files in the stack's bucket.

    Args:
        table: the table wrapper.
        s3_factory: builds a boto3 S3 client (called at most once).
        bucket: the stack's bucket.
        clock: the current time (expired records are not read).
    """

    def __init__(
        self,
        table: DynamoDBTable,
        s3_factory: Callable[[], S3Client],
        bucket: str,
        clock: Clock,
    ) -> None:
        self._table = table
        self._s3_factory = s3_factory
        self._s3_client: S3Client | None = None
        self._signer: Any = None
        self._bucket = bucket
        self._clock = clock

    def _s3(self) -> S3Client:
        if self._s3_client is None:
            self._s3_client = translate_errors(self._s3_factory(), S3_THROTTLING)
        return self._s3_client

    def create(
        self, record: dict[str, Any], *, per_day: int, held_until: datetime
    ) -> dict[str, Any] | None:
        """Put a new export's record (``id``, ``workspaceId``, ``requestedAt``,
        ``expiresAt`` and the rest, camelCase) and take its workspace's one export slot
        and one of its exports of the UTC day, in one transaction
        (docs/reference.md#exports-for-a-person, docs/issues.md#issue-41-item-2).

        Args:
            per_day: the workspace's exports per UTC day.
            held_until: until when the new export holds the slot at most.

        Returns:
            None when the export was created; else the record of the queued or running
            export that holds the slot (nothing was written).

        Raises:
            RateLimited: the workspace requested ``per_day`` exports today (429, until
                midnight UTC).
            Conflict: other exports kept taking the slot first (409; send it again).
        """
        workspace_id = str(record["workspaceId"])
        now = from_rfc3339(str(record["requestedAt"]))
        expires = epoch_seconds(from_rfc3339(record["expiresAt"]))
        item = {**export_key(record["id"]), **record, KV_TTL_ATTRIBUTE: expires}
        # its owner mark: an erasure finds the workspace's exports by key
        put_owner_mark(self._table, workspace_id, export_key(record["id"]), expires)
        gone = ""  # a holder whose export record is gone frees the slot on a retry
        for _attempt in range(3):
            try:
                self._table.transact(
                    [
                        put_new(item),
                        _take_slot(workspace_id, str(record["id"]), now, held_until, gone),
                        _count_day(workspace_id, now, per_day),
                    ]
                )
                return None
            except TransactionCancelled as cancelled:
                reasons = cancelled.reasons
                if reasons[1:2] == ["ConditionalCheckFailed"]:
                    holder = self._table.get(export_slot_key(workspace_id)) or {}
                    gone = str(holder.get("exportId", ""))
                    found = self.get(gone) if gone else None
                    if found is not None:
                        return found
                if reasons[2:3] == ["ConditionalCheckFailed"]:
                    midnight = datetime.combine(now.date() + timedelta(days=1), time(), UTC)
                    raise RateLimited(
                        f"Your workspace requested {per_day} exports today, as many as one "
                        "workspace may a day: export again after midnight UTC, or fetch an "
                        "earlier export (GET /api/v1/exports/{id}).",
                        retry_after_seconds=max(1, int((midnight - now).total_seconds())),
                    ) from cancelled
                if reasons[1:2] != ["ConditionalCheckFailed"]:
                    raise
        raise Conflict(
            "Another export of your workspace was starting at the same moment; send the "
            "request again."
        )

    def release(self, workspace_id: str, export_id: str) -> None:
        """Free the workspace's export slot if ``export_id`` holds it (the export is
        done); another export's hold is left alone."""
        try:
            self._table.client.update_item(
                TableName=self._table.name,
                Key=to_attributes(export_slot_key(workspace_id)),
                UpdateExpression="REMOVE exportId, heldUntil",
                # Only the holder frees it: a later export may hold it already.
                ConditionExpression="exportId = :export",
                ExpressionAttributeValues=to_attributes({":export": export_id}),
            )
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise

    def get(self, export_id: str) -> dict[str, Any] | None:
        """The record (strongly consistent), or None (also once it expired)."""
        found = self._table.get(export_key(export_id))
        if found is None or from_rfc3339(str(found["expiresAt"])) <= self._clock.now():
            return None
        return {k: v for k, v in found.items() if k not in ("pk", "sk", KV_TTL_ATTRIBUTE)}

    def claim(self, export_id: str, claim_id: str, now: datetime, stale_before: datetime) -> None:
        """Take a queued or failed export (or a running one started before
        ``stale_before``) for one attempt.

        Raises:
            ExportTaken: done, unknown, or held by a live claim.
        """
        self._update(
            export_id,
            "SET #status = :running, claimId = :claim, startedAt = :now",
            "attribute_exists(pk) AND (#status IN (:queued, :failed) "
            "OR (#status = :running AND startedAt < :stale))",
            {
                ":running": "running",
                ":queued": "queued",
                ":failed": "failed",
                ":claim": claim_id,
                ":now": to_rfc3339(now),
                ":stale": to_rfc3339(stale_before),
            },
        )

    def settle(self, export_id: str, claim_id: str, changes: dict[str, Any]) -> None:
        """Write the attempt's outcome (``status`` ``done`` with counts, or ``failed``
        with ``error``), only while ``claim_id`` holds the export.

        Raises:
            ExportTaken: another claim holds it now.
        """
        names = sorted(changes)
        self._update(
            export_id,
            "SET " + ", ".join(f"#f{n} = :f{n}" for n in range(len(names))),
            "claimId = :claim",
            {":claim": claim_id, **{f":f{n}": changes[name] for n, name in enumerate(names)}},
            {f"#f{n}": name for n, name in enumerate(names)},
        )

    def _update(
        self,
        export_id: str,
        expression: str,
        condition: str,
        values: dict[str, Any],
        names: dict[str, str] | None = None,
    ) -> None:
        try:
            self._table.client.update_item(
                TableName=self._table.name,
                Key=to_attributes(export_key(export_id)),
                UpdateExpression=expression,
                ConditionExpression=condition,
                ExpressionAttributeNames=names or {"#status": "status"},
                ExpressionAttributeValues=to_attributes(values),
            )
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                raise ExportTaken(export_id) from error
            raise

    def erasure_epoch(self, workspace_id: str) -> str:
        """The workspace's erasure epoch ("" when none; ``keys.erasure_epoch_key``)."""
        return read_erasure_epoch(self._table, workspace_id)

    def discard(self, key: str) -> int:
        """Delete every version of the export file ``key`` (it may hold erased data).
        Returns how many versions went."""
        versions = self._s3().list_object_versions(Bucket=self._bucket, Prefix=key)
        gone = 0
        for entry in [*versions.get("Versions", []), *versions.get("DeleteMarkers", [])]:
            if entry["Key"] == key:
                self._s3().delete_object(
                    Bucket=self._bucket, Key=key, VersionId=str(entry["VersionId"])
                )
                gone += 1
        return gone

    def upload(self, key: str, body: IO[bytes]) -> None:
        """Write the export file from an open file (one streamed PUT, up to 5 GB)."""
        self._s3().put_object(Bucket=self._bucket, Key=key, Body=body)

    def file_exists(self, key: str) -> bool:
        """Whether the export file is still there (a HEAD)."""
        try:
            self._s3().head_object(Bucket=self._bucket, Key=key)
        except ClientError as error:
            if error.response["Error"]["Code"] in ("404", "NoSuchKey", "NotFound"):
                return False
            raise
        return True

    def link(self, key: str, seconds: int) -> str:
        """A presigned GET of the export file, valid ``seconds``: signed (SigV4, the one
        signature every region takes) with the function's credentials; no AWS call."""
        if self._signer is None:
            client: Any = self._s3_factory()
            self._signer = boto3.client(
                "s3",
                region_name=client.meta.region_name,
                endpoint_url=client.meta.endpoint_url,
                config=client.meta.config.merge(Config(signature_version="s3v4")),
            )
        return str(
            self._signer.generate_presigned_url(
                "get_object", Params={"Bucket": self._bucket, "Key": key}, ExpiresIn=seconds
            )
        )
