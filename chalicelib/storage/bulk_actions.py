"""Bulk actions' records (docs/reference.md#bulk-actions): one item per action in the
workspace's ``BULK#<wsp_id>`` partition, keyed by its ``blk_`` id, kept
``BULK_UNDO_DAYS`` (the table's TTL attribute). Written new (never over another), and
marked undone by a write conditional on its not being undone yet, so two undos of one
action cannot both run. Holds memory ids, versions and the tags the action named, never
a memory's text; the workspace's erasure deletes the partition
(``keys.owner_partitions``)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from chalicelib.ids import from_rfc3339, to_rfc3339
from chalicelib.models.bulk import BULK_UNDO_DAYS, BulkAction, BulkChange, BulkRecord
from chalicelib.storage.aws_errors import error_code
from chalicelib.storage.dynamodb import DynamoDBTable, to_attributes
from chalicelib.storage.keys import KV_TTL_ATTRIBUTE, bulk_partition


def bulk_key(workspace_id: str, bulk_id: str) -> dict[str, str]:
    """Primary key of a bulk action's record (its workspace in the key)."""
    return {"pk": bulk_partition(workspace_id), "sk": bulk_id}


def bulk_to_item(record: BulkRecord) -> dict[str, Any]:
    """The stored item of ``record``, key and TTL included."""
    expires = record.at + timedelta(days=BULK_UNDO_DAYS)
    item: dict[str, Any] = {
        **bulk_key(record.workspace_id, record.id),
        "entity": "bulk",
        "id": record.id,
        "workspaceId": record.workspace_id,
        "action": record.action.value,
        "by": record.by,
        "at": to_rfc3339(record.at),
        "changes": [
            {"memoryId": change.memory_id, "version": change.version, "tags": list(change.tags)}
            for change in record.changes
        ],
        KV_TTL_ATTRIBUTE: int(expires.timestamp()),
    }
    if record.undone_at is not None:
        item["undoneAt"] = to_rfc3339(record.undone_at)
    return item


def bulk_from_item(item: dict[str, Any]) -> BulkRecord:
    """Rebuild a record from its item."""
    undone = item.get("undoneAt")
    return BulkRecord(
        id=str(item["id"]),
        workspace_id=str(item["workspaceId"]),
        action=BulkAction(str(item["action"])),
        by=str(item["by"]),
        at=from_rfc3339(str(item["at"])),
        changes=tuple(
            BulkChange(
                memory_id=str(change["memoryId"]),
                version=int(change["version"]),
                tags=tuple(str(tag) for tag in change.get("tags", ())),
            )
            for change in item.get("changes", ())
        ),
        undone_at=None if undone is None else from_rfc3339(str(undone)),
    )


class DynamoDBBulkRepository:
    """Bulk actions' records in the one table.

    Args:
        table: the wrapped table.
    """

    def __init__(self, table: DynamoDBTable) -> None:
        self._table = table

    def add(self, record: BulkRecord) -> None:
        """Store a new record (conditional on no item at its key: ids are new)."""
        self._table.client.put_item(
            TableName=self._table.name,
            Item=to_attributes(bulk_to_item(record)),
            ConditionExpression="attribute_not_exists(pk)",
        )

    def get(self, workspace_id: str, bulk_id: str) -> BulkRecord | None:
        """The record of ``bulk_id`` in the workspace, or None (another workspace's id,
        an expired one, or none)."""
        item = self._table.get(bulk_key(workspace_id, bulk_id))
        return None if item is None else bulk_from_item(item)

    def mark_undone(self, record: BulkRecord, now: datetime) -> bool:
        """Mark ``record`` undone at ``now`` unless it is already (or is gone). Returns
        False when another undo marked it first, or the record expired."""
        try:
            self._table.client.update_item(
                TableName=self._table.name,
                Key=to_attributes(bulk_key(record.workspace_id, record.id)),
                UpdateExpression="SET undoneAt = :now",
                ConditionExpression="attribute_exists(pk) AND attribute_not_exists(undoneAt)",
                ExpressionAttributeValues=to_attributes({":now": to_rfc3339(now)}),
            )
        except ClientError as error:
            if error_code(error) != "ConditionalCheckFailedException":
                raise
            return False
        return True
