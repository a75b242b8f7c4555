"""How far each agent's archived memories' audit texts have been swept
(docs/reference.md#retention): one small item per agent, so a nightly sweep only
rewrites memories archived since the previous one."""

from __future__ import annotations

import contextlib
from datetime import datetime

from chalicelib.ids import from_rfc3339, to_rfc3339
from chalicelib.storage.dynamodb import DynamoDBTable, to_attributes
from chalicelib.storage.keys import archived_texts_mark_key


class DynamoDBRetentionMarks:
    """The ``RETENTION#<agt_id>`` items.

    Args:
        table: the single table.
    """

    def __init__(self, table: DynamoDBTable) -> None:
        self._table = table

    def swept_through(self, agent_id: str) -> datetime | None:
        """Every memory of the agent archived at or before this time was swept; None:
        none was yet."""
        found = self._table.get(archived_texts_mark_key(agent_id))
        return None if found is None else from_rfc3339(str(found["sweptThrough"]))

    def mark_swept(self, agent_id: str, through: datetime) -> None:
        """Record a sweep up to ``through``; never moves the mark back (a conditional
        update: a late, older sweep changes nothing)."""
        moment = to_rfc3339(through)
        # a newer sweep got there first: nothing to do
        with contextlib.suppress(self._table.client.exceptions.ConditionalCheckFailedException):
            self._table.client.update_item(
                TableName=self._table.name,
                Key=to_attributes(archived_texts_mark_key(agent_id)),
                UpdateExpression="SET #through = :through",
                ConditionExpression="attribute_not_exists(#through) OR #through < :through",
                ExpressionAttributeNames={"#through": "sweptThrough"},
                ExpressionAttributeValues=to_attributes({":through": moment}),
            )
