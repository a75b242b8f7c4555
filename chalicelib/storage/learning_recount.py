"""A workspace's count of live learnings recomputed from its learnings
(docs/reference.md#learning-limits, docs/issues.md#issue-42-item-1): after an erasure
deleted some, the count is what the learnings say, never the old count less a guess.

The count is set only if it did not change since it was read (a proposal or a decision
meanwhile moves it): then the learnings are counted again, up to ``RECOUNT_ATTEMPTS``
times.
"""

from __future__ import annotations

from botocore.exceptions import ClientError

from chalicelib.storage.dynamodb import DynamoDBTable, to_attributes
from chalicelib.storage.keys import learning_count_key, learnings_partition

LIVE_STATES = ("proposed", "active")
"""The states the count counts (``LearningState``)."""
RECOUNT_ATTEMPTS = 5


def recount_live_learnings(table: DynamoDBTable, workspace_id: str) -> int | None:
    """Set the workspace's ``live`` count to its proposed and active learnings.

    Returns:
        The count written, or None when the count kept changing meanwhile (every
        attempt's condition failed; the count is then left as the last writer set it).
    """
    key = learning_count_key(workspace_id)
    for _ in range(RECOUNT_ATTEMPTS):
        before = table.get(key)
        rows = table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :learning)",
            ExpressionAttributeValues=to_attributes(
                {":pk": learnings_partition(workspace_id), ":learning": "LEARNING#"}
            ),
            ConsistentRead=True,
        )
        live = sum(1 for row in rows if row.get("state") in LIVE_STATES)
        if before is None and live == 0:
            return 0
        condition = "attribute_not_exists(live)" if before is None else "live = :before"
        values = {":live": live, ":wsp": workspace_id}
        if before is not None:
            values[":before"] = before.get("live", 0)
            if "live" not in before:
                condition = "attribute_not_exists(live)"
                del values[":before"]
        try:
            table.client.update_item(
                TableName=table.name,
                Key=to_attributes(key),
                UpdateExpression="SET live = :live, workspaceId = :wsp",
                # Unchanged since read: a proposal or decision meanwhile counts again.
                ConditionExpression=condition,
                ExpressionAttributeValues=to_attributes(values),
            )
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            continue
        return live
    return None
