"""The recall index (docs/reference.md#8-recall, docs/issues.md#issue-23-item-1): one small item per
live fact under the agent's partition (``keys.recall_index_key``), holding only what
recall's scorer reads for every candidate: the text, the creation time and the stored
sentence vector (``items.recall_entry_to_item``). A recall reads a few hundred bytes a
fact instead of the whole memory item, then fetches only the memories it needs.

Kept exactly in step: every write of a memory item that can change whether the fact is
live, its text, expiry or embedding carries ``index_writes(before, after)`` in the same
transaction (``memories.py``, ``reviews.py``, ``review_actions.py``), so an entry exists
exactly when its memory is an active fact. The sort key starts with the expiry, so a
recall's key condition skips expired facts without reading them, and DynamoDB's TTL
deletes their entries later; the memory item stays active, as lists and the review see
it (docs/reference.md#4-states).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chalicelib.ids import to_rfc3339
from chalicelib.models.memory import Memory, MemoryKind, MemoryStatus
from chalicelib.models.recall import RecallEntry
from chalicelib.storage import items as convert
from chalicelib.storage.dynamodb import DynamoDBTable, TransactionCancelled, to_attributes
from chalicelib.storage.keys import (
    RECALL_INDEX_BUILT_SK,
    memory_key,
    recall_index_key,
    recall_index_marker_key,
    recall_index_partition,
    recall_index_sort_floor,
)


def marker_item(agent_id: str, now: datetime) -> dict[str, Any]:
    """The marker item that the agent's index is complete (``keys.recall_index_marker_key``)."""
    return {
        **recall_index_marker_key(agent_id),
        "entity": "recall_index",
        "builtAt": to_rfc3339(now),
    }


def is_indexed(memory: Memory) -> bool:
    """Whether the memory has an index entry: it is a fact and active (expired or not)."""
    return memory.kind is MemoryKind.FACT and memory.status is MemoryStatus.ACTIVE


def index_writes(before: Memory | None, after: Memory) -> list[dict[str, Any]]:
    """The transaction actions that bring the index in step with a memory going from
    ``before`` (``None``: a new memory) to ``after``.

    Returns:
        A Put of ``after``'s entry when it is an active fact, and a Delete of
        ``before``'s entry when it had one and ``after`` has none or one under another
        key (its expiry changed). Unconditional: the memory's own write in the same
        transaction carries the condition, so both happen or neither does.
    """
    operations: list[dict[str, Any]] = []
    old = (
        recall_index_key(before.agent_id, before.id, before.expires_at)
        if before is not None and is_indexed(before)
        else None
    )
    new = convert.recall_entry_to_item(after) if is_indexed(after) else None
    if old is not None and (new is None or new["sk"] != old["sk"]):
        operations.append({"Delete": {"Key": to_attributes(old)}})
    if new is not None:
        operations.append({"Put": {"Item": to_attributes(new)}})
    return operations


class DynamoDBRecallIndex:
    """``RecallIndexRepository`` on the single table.

    Args:
        table: the wrapped table.
    """

    def __init__(self, table: DynamoDBTable) -> None:
        self._table = table

    def entries(self, agent_id: str, now: datetime) -> list[RecallEntry] | None:
        """The agent's live facts that have not expired at ``now``, newest first, or
        ``None`` when the agent's index is not complete (no marker: an agent from before
        the index that the backfill has not reached; recall then reads the facts).

        One Query of the agent's index partition (every 1 MB page followed; eventually
        consistent, as the memory index it replaces was) with the key condition
        ``sk >= recall_index_sort_floor(now)``: the entry of a fact that expired at or
        before ``now`` is never read (docs/issues.md#issue-23-item-3); the marker sorts
        last and comes with the same Query.
        """
        items = self._table.query(
            KeyConditionExpression="pk = :pk AND sk >= :low",
            ExpressionAttributeValues=to_attributes(
                {":pk": recall_index_partition(agent_id), ":low": recall_index_sort_floor(now)}
            ),
        )
        found: list[RecallEntry] = []
        built = False
        for item in items:
            if item["sk"] == RECALL_INDEX_BUILT_SK:
                built = True
            else:
                found.append(convert.recall_entry_from_item(item))
        if not built:
            return None
        found.sort(key=lambda entry: entry.memory_id, reverse=True)
        return found

    def is_built(self, agent_id: str) -> bool:
        """Whether the agent's index is complete (its marker exists)."""
        return self._table.get(recall_index_marker_key(agent_id)) is not None

    def mark_built(self, agent_id: str, now: datetime) -> None:
        """Record that the agent's index holds every live fact (the backfill's last
        step for an agent; every later change keeps it so)."""
        self._table.client.put_item(
            TableName=self._table.name, Item=to_attributes(marker_item(agent_id, now))
        )

    def clear(self, agent_id: str) -> int:
        """Delete the agent's marker, then every entry (a rebuild's first step: recall
        reads the facts themselves until the marker is written again).

        Returns:
            How many entries were deleted.
        """
        self._table.client.delete_item(
            TableName=self._table.name, Key=to_attributes(recall_index_marker_key(agent_id))
        )
        keys = [
            {"pk": str(item["pk"]), "sk": str(item["sk"])}
            for item in self._table.query(
                KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues=to_attributes({":pk": recall_index_partition(agent_id)}),
                ProjectionExpression="pk, sk",
            )
        ]
        for start in range(0, len(keys), 25):
            pending: dict[str, Any] = {
                self._table.name: [
                    {"DeleteRequest": {"Key": to_attributes(key)}}
                    for key in keys[start : start + 25]
                ]
            }
            while pending:
                response = self._table.client.batch_write_item(RequestItems=pending)
                pending = response.get("UnprocessedItems") or {}
        return len(keys)

    def put_entries(self, memories: list[Memory]) -> list[str]:
        """Write the entries of those of ``memories`` that are active facts, each only if
        its memory is still at the version read (a transaction of a ConditionCheck on
        the memory and a Put of the entry, 50 facts to a transaction): the backfill's
        write (docs/issues.md#issue-23-item-4). A fact archived or edited since it was
        read never gets a stale entry; its own transaction wrote the right one.

        Returns:
            The ids of the groups that were not written because one of their memories
            changed since read (the caller reads them again); other groups are written.
        """
        facts = [memory for memory in memories if is_indexed(memory)]
        changed: list[str] = []
        for start in range(0, len(facts), _FACTS_PER_TRANSACTION):
            group = facts[start : start + _FACTS_PER_TRANSACTION]
            operations: list[dict[str, Any]] = []
            for memory in group:
                operations.append(_unchanged(memory))
                operations.append(
                    {"Put": {"Item": to_attributes(convert.recall_entry_to_item(memory))}}
                )
            try:
                self._table.transact(operations)
            except TransactionCancelled:
                # One fact changed and the transaction wrote none of the group:
                # the caller reads the whole group again.
                changed.extend(memory.id for memory in group)
        return changed


_FACTS_PER_TRANSACTION = 50
"""Two actions a fact, and a TransactWriteItems holds at most 100."""


def _unchanged(memory: Memory) -> dict[str, Any]:
    """A ConditionCheck that the memory is still at ``memory.version`` and active."""
    return {
        "ConditionCheck": {
            "Key": to_attributes(memory_key(memory.id)),
            "ConditionExpression": "#version = :version AND #status = :active",
            "ExpressionAttributeNames": {"#version": "version", "#status": "status"},
            "ExpressionAttributeValues": to_attributes(
                {":version": memory.version, ":active": MemoryStatus.ACTIVE.value}
            ),
        }
    }
