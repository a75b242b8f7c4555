"""The index of an agent's vetoed texts (docs/issues.md#issue-14-item-5): ``VETO#<agt>`` items
keyed by a digest of the normalized text (``TEXT#…``) and of its duplicate key
(``SAME#…``), each holding the set of vetoed memory ids, so an agent's save finds
the vetoes it would repeat with one BatchGetItem instead of reading its archive."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chalicelib.storage.dynamodb import DynamoDBTable, to_attributes
from chalicelib.storage.keys import veto_key, veto_marker_key


def veto_entry(agent_id: str, memory_id: str, index_key: str) -> dict[str, Any]:
    """A transaction Update filing ``memory_id`` under ``index_key`` (``ADD`` to a set:
    idempotent, creates the item on first use)."""
    return {
        "Update": {
            "Key": to_attributes(veto_key(agent_id, index_key)),
            "UpdateExpression": "ADD #ids :id SET #entity = :entity",
            "ExpressionAttributeNames": {"#ids": "memoryIds", "#entity": "entity"},
            "ExpressionAttributeValues": {
                ":id": {"SS": [memory_id]},
                ":entity": {"S": "veto_index"},
            },
        }
    }


class DynamoDBVetoIndex:
    """``VetoIndex`` on the single table.

    Args:
        table: the wrapped table.
    """

    def __init__(self, table: DynamoDBTable) -> None:
        self._table = table

    def candidates(self, agent_id: str, index_keys: Sequence[str]) -> tuple[set[str], bool]:
        """One strongly consistent BatchGetItem of the entries and the marker."""
        keys = [veto_key(agent_id, key) for key in index_keys] + [veto_marker_key(agent_id)]
        found = self._table.batch_get(keys)
        indexed = any(item["sk"] == veto_marker_key(agent_id)["sk"] for item in found)
        ids = {str(memory_id) for item in found for memory_id in item.get("memoryIds", ())}
        return ids, indexed

    def add(self, agent_id: str, memory_id: str, index_keys: Sequence[str]) -> None:
        """File one vetoed memory (one UpdateItem per entry)."""
        for key in index_keys:
            update = veto_entry(agent_id, memory_id, key)["Update"]
            self._table.client.update_item(TableName=self._table.name, **update)

    def mark_indexed(self, agent_id: str) -> None:
        """Put the marker (plain put: writing it twice is harmless)."""
        self._table.client.put_item(
            TableName=self._table.name,
            Item=to_attributes({**veto_marker_key(agent_id), "entity": "veto_index"}),
        )
