"""DynamoDB adapter of the learnings (docs/reference.md#15-learnings): a workspace's learnings in
its own partition (``LEARNINGS#<wsp>``, so a read never crosses workspaces), with the
count of live ones, each agent's proposals per UTC date, and the rejected texts' index;
history records under ``LEARNING#<lrn>``.

Every change is one transaction: the learning (conditional on its version, or new),
its history record, the live count (conditional on the limit when it grows), the
proposal counter (conditional on the daily limit) and, for a rejection, the index
entries of its text.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from chalicelib.errors import LearningLimitReached, RateLimited
from chalicelib.ids import from_rfc3339
from chalicelib.models.learning import Learning, LearningAudit, LearningState
from chalicelib.storage.dynamodb import (
    DynamoDBTable,
    TransactionCancelled,
    put_new,
    to_attributes,
)
from chalicelib.storage.keys import (
    KV_TTL_ATTRIBUTE,
    learning_audit_key,
    learning_count_key,
    learning_key,
    learning_rate_key,
    learning_rejected_key,
    learnings_partition,
)
from chalicelib.storage.recalls import epoch_seconds

_TIMES = ("proposedAt", "decidedAt", "updatedAt")


class LearningVersionChanged(Exception):
    """The learning changed since it was read (its version moved on)."""


def learning_to_item(learning: Learning) -> dict[str, Any]:
    """The stored item of a learning, key included."""
    item = {
        **learning_key(learning.workspace_id, learning.id),
        **learning.model_dump(mode="json", by_alias=True, exclude_none=True),
        "version": learning.version,
    }
    if learning.embedding is not None:
        item["embedding"] = learning.embedding
    return item


def learning_from_item(item: dict[str, Any]) -> Learning:
    """Rebuild a learning from its item."""
    fields = {k: v for k, v in item.items() if k not in ("pk", "sk")}
    for name in _TIMES:
        if fields.get(name):
            fields[name] = from_rfc3339(str(fields[name]))
    if "embedding" in fields:
        fields["embedding"] = bytes(fields["embedding"])
    fields["version"] = int(fields.get("version", 1))
    return Learning.model_validate(fields)


def _audit_item(audit: LearningAudit) -> dict[str, Any]:
    return {
        **learning_audit_key(audit.learning_id, audit.id),
        **audit.model_dump(mode="json", by_alias=True, exclude_none=True),
        "workspaceId": audit.workspace_id,
    }


class DynamoDBLearningRepository:
    """Learnings on the single table.

    Args:
        table: the table wrapper.
    """

    def __init__(self, table: DynamoDBTable) -> None:
        self._table = table

    def create(
        self,
        learning: Learning,
        audit: LearningAudit,
        *,
        max_live: int,
        proposals_per_day: int | None,
        now: datetime,
    ) -> None:
        """Store a new learning with its ``propose`` record; count it live, and (an
        agent's proposal, ``proposals_per_day``) count the agent's proposal of the day.

        Raises:
            LearningLimitReached: the workspace holds ``max_live`` live learnings.
            RateLimited: the agent made ``proposals_per_day`` proposals today.
        """
        operations = [
            put_new(learning_to_item(learning)),
            put_new(_audit_item(audit)),
            self._count_op(learning.workspace_id, 1, max_live),
        ]
        if proposals_per_day is not None:
            day = now.date().isoformat()
            operations.append(
                {
                    "Update": {
                        "Key": to_attributes(
                            learning_rate_key(learning.workspace_id, learning.proposed_by, day)
                        ),
                        "UpdateExpression": "ADD n :one SET #ttl = :ttl",
                        "ConditionExpression": "attribute_not_exists(n) OR n < :max",
                        "ExpressionAttributeNames": {"#ttl": KV_TTL_ATTRIBUTE},
                        "ExpressionAttributeValues": to_attributes(
                            {
                                ":one": 1,
                                ":max": proposals_per_day,
                                ":ttl": epoch_seconds(now + timedelta(days=2)),
                            }
                        ),
                    }
                }
            )
        try:
            self._table.transact(operations)
        except TransactionCancelled as cancelled:
            reasons = cancelled.reasons
            if len(reasons) > 2 and reasons[2] == "ConditionalCheckFailed":
                raise LearningLimitReached(
                    f"The workspace holds {max_live} proposed and active learnings, the "
                    "most it may: retire or reject some first."
                ) from cancelled
            if len(reasons) > 3 and reasons[3] == "ConditionalCheckFailed":
                raise RateLimited(
                    f"An agent may propose {proposals_per_day} learnings a day (UTC); "
                    "propose again tomorrow, or ask a person."
                ) from cancelled
            raise

    def change(
        self,
        before: Learning,
        after: Learning,
        audit: LearningAudit,
        *,
        rejected_keys: Sequence[str] = (),
    ) -> None:
        """Replace ``before`` with ``after`` (same id; ``after.version`` is one more) and
        add its history record; a learning that leaves the live states is counted out;
        ``rejected_keys`` file its text in the rejected index.

        Raises:
            LearningVersionChanged: it changed since ``before`` was read.
        """
        live = (LearningState.PROPOSED, LearningState.ACTIVE)
        operations: list[dict[str, Any]] = [
            {
                "Put": {
                    "Item": to_attributes(learning_to_item(after)),
                    "ConditionExpression": "version = :v",
                    "ExpressionAttributeValues": to_attributes({":v": before.version}),
                }
            },
            put_new(_audit_item(audit)),
        ]
        if before.state in live and after.state not in live:
            operations.append(self._count_op(after.workspace_id, -1, None))
        for key in rejected_keys:
            entry = {
                **learning_rejected_key(after.workspace_id, key),
                "learningId": after.id,
                "workspaceId": after.workspace_id,
            }
            operations.append({"Put": {"Item": to_attributes(entry)}})
        try:
            self._table.transact(operations)
        except TransactionCancelled as cancelled:
            if cancelled.reasons and cancelled.reasons[0] == "ConditionalCheckFailed":
                raise LearningVersionChanged(after.id) from cancelled
            raise

    def get(self, workspace_id: str, learning_id: str) -> Learning | None:
        """The learning of the workspace (strongly consistent), or None."""
        found = self._table.get(learning_key(workspace_id, learning_id))
        return None if found is None else learning_from_item(found)

    def list_learnings(self, workspace_id: str, *, consistent: bool = True) -> list[Learning]:
        """Every learning of the workspace, newest first."""
        rows = self._table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :learning)",
            ExpressionAttributeValues=to_attributes(
                {":pk": learnings_partition(workspace_id), ":learning": "LEARNING#"}
            ),
            ConsistentRead=consistent,
            ScanIndexForward=False,
        )
        return [learning_from_item(row) for row in rows]

    def rejected(self, workspace_id: str, keys: list[str]) -> set[str]:
        """The ids of rejected learnings filed under any of ``keys``."""
        found = self._table.batch_get([learning_rejected_key(workspace_id, key) for key in keys])
        return {str(item["learningId"]) for item in found}

    def history(self, learning_id: str) -> list[LearningAudit]:
        """The learning's records, oldest first."""
        rows = self._table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :audit)",
            ExpressionAttributeValues=to_attributes(
                {":pk": f"LEARNING#{learning_id}", ":audit": "AUDIT#"}
            ),
            ConsistentRead=True,
        )
        records = []
        for row in rows:
            fields = {k: v for k, v in row.items() if k not in ("pk", "sk")}
            fields["at"] = from_rfc3339(str(fields["at"]))
            records.append(LearningAudit.model_validate(fields))
        return records

    def _count_op(self, workspace_id: str, delta: int, max_live: int | None) -> dict[str, Any]:
        update: dict[str, Any] = {
            "Key": to_attributes(learning_count_key(workspace_id)),
            "UpdateExpression": "ADD live :delta SET workspaceId = :wsp",
            "ExpressionAttributeValues": {":delta": delta, ":wsp": workspace_id},
        }
        if max_live is not None:
            update["ConditionExpression"] = "attribute_not_exists(live) OR live < :max"
            update["ExpressionAttributeValues"][":max"] = max_live
        update["ExpressionAttributeValues"] = to_attributes(update["ExpressionAttributeValues"])
        return {"Update": update}
