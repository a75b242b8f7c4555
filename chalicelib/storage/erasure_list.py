"""A workspace's past erasures (docs/reference.md#past-erasures,
docs/issues.md#issue-48-item-4): one listing entry ``ERASURE#<wsp_id>`` /
``LIST#<time>#<id>`` per erasure of a memory, an agent or a person, written in the same
write as the erasure's first record (the memory's tombstone, the erasure's record),
read by key, newest first, then the records of the agents' and persons' erasures by
key (BatchGetItem): never a Scan, and never another workspace's items.

An entry of an agent's or a person's erasure holds ids and a time only (who asked,
what, when): the reason and the state are read from the erasure's record. A memory's
erasure is done in one transaction, so its entry is its whole record: who, when, the
memory and its agent, and the reason (as the tombstone keeps it). None holds erased
text. A workspace's own erasure is not listed (nothing of the workspace is left to read
it) and deletes the entries.
"""

from __future__ import annotations

import json
from typing import Any

from chalicelib.storage.dynamodb import DynamoDBTable, from_attributes, to_attributes
from chalicelib.storage.keys import (
    ERASURE_LIST_PREFIX,
    ERASURE_PREFIX,
    erasure_list_key,
    erasure_partition,
    erasure_record_key,
)


def erasure_list_item(record: dict[str, Any]) -> dict[str, Any] | None:
    """The listing entry of an erasure record (``kind``, ``targetId``, ``workspaceId``,
    ``by``, ``requestedAt`` or ``startedAt``), or None for a workspace's own erasure or
    a record without a workspace."""
    workspace = str(record.get("workspaceId") or "")
    at = str(record.get("requestedAt") or record.get("startedAt") or "")
    if not workspace or not at or record.get("kind") == "workspace":
        return None
    return {
        **erasure_list_key(workspace, at, str(record["targetId"])),
        "entity": "erasure_listing",
        "kind": record["kind"],
        "targetId": record["targetId"],
        "by": record.get("by", ""),
        "at": at,
    }


def memory_erasure_put(
    workspace_id: str, memory_id: str, agent_id: str, by: str, at: str, reason: str
) -> dict[str, Any]:
    """The listing entry of a memory's erasure as a transaction's ``Put`` (in the
    erasure's own transaction: unconditional, its key is new). It is the erasure's whole
    record (who, why, when, the memory and its agent): a memory's erasure is done when
    its transaction is, and the entry outlives the tombstone when the memory's agent is
    erased later."""
    item = erasure_list_item(
        {
            "kind": "memory",
            "targetId": memory_id,
            "workspaceId": workspace_id,
            "by": by,
            "requestedAt": at,
        }
    )
    assert item is not None
    return {"Put": {"Item": to_attributes({**item, "agentId": agent_id, "reason": reason})}}


def erasure_entry(item: dict[str, Any]) -> dict[str, Any] | None:
    """The listing entry an existing item stands for (the table upgrade lists the
    erasures made before the listing existed): an erasure's record, or an erased
    memory's tombstone; None for any other item."""
    pk, sk = str(item["pk"]), str(item.get("sk", ""))
    if pk.startswith(ERASURE_PREFIX) and sk == "RECORD":
        return erasure_list_item({**item, "targetId": pk.removeprefix(ERASURE_PREFIX)})
    if item.get("entity") == "memory" and item.get("status") == "erased":
        put = memory_erasure_put(
            str(item["workspaceId"]),
            str(item["id"]),
            str(item["agentId"]),
            str(item.get("erasedBy") or ""),
            str(item.get("erasedAt") or item["updatedAt"]),
            str(item.get("eraseReason") or ""),
        )
        return from_attributes(put["Put"]["Item"])
    return None


class DynamoDBErasureList:
    """A workspace's erasures on the single table.

    Args:
        table: the wrapped table.
    """

    def __init__(self, table: DynamoDBTable) -> None:
        self._table = table

    def erasures(
        self, workspace_id: str, limit: int, after: str | None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """A page of the workspace's erasures, newest first: each the erasure's record
        (``kind``, ``targetId``, ``workspaceId``, ``by``, ``reason``, ``requestedAt``,
        ``startedAt``, ``finishedAt``, ``status``, ``progress``); a memory's is its
        entry, ``status: done``.

        Args:
            limit: entries at most (1-500).
            after: the sort key to continue after, or None.

        Returns:
            The records and the sort key to continue after (None at the end).
        """
        request: dict[str, Any] = {
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :list)",
            "ExpressionAttributeValues": to_attributes(
                {":pk": erasure_partition(workspace_id), ":list": ERASURE_LIST_PREFIX}
            ),
            "ScanIndexForward": False,
            "ConsistentRead": True,
            "Limit": limit + 1,
        }
        if after is not None:
            request["ExclusiveStartKey"] = to_attributes(
                {"pk": erasure_partition(workspace_id), "sk": after}
            )
        entries: list[dict[str, Any]] = []
        for item in self._table.query(**request):
            entries.append(item)
            if len(entries) > limit:
                break
        more = str(entries[limit - 1]["sk"]) if len(entries) > limit else None
        entries = entries[:limit]
        return [self._record(entry, found) for entry, found in self._records(entries)], more

    def _records(
        self, entries: list[dict[str, Any]]
    ) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        """Each entry with its record (or memory tombstone), read by key."""
        keys = [
            erasure_record_key(str(entry["targetId"]))
            for entry in entries
            if entry["kind"] != "memory"
        ]
        found = {str(item["pk"]): item for item in self._table.batch_get(keys)} if keys else {}
        return [
            (entry, found.get(erasure_record_key(str(entry["targetId"]))["pk"]))
            for entry in entries
        ]

    @staticmethod
    def _record(entry: dict[str, Any], found: dict[str, Any] | None) -> dict[str, Any]:
        if entry["kind"] == "memory":
            return {**_from_entry(entry, "done"), "reason": entry.get("reason")}
        if found is None:
            return _from_entry(entry, "running")
        return {**found, "progress": json.loads(str(found.get("progress", "{}")))}

    def drop(self, workspace_id: str) -> int:
        """Delete the workspace's listing entries (its own erasure). Returns how many."""
        rows = self._table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :list)",
            ExpressionAttributeValues=to_attributes(
                {":pk": erasure_partition(workspace_id), ":list": ERASURE_LIST_PREFIX}
            ),
            ConsistentRead=True,
        )
        gone = 0
        for row in rows:
            self._table.client.delete_item(
                TableName=self._table.name, Key=to_attributes({"pk": row["pk"], "sk": row["sk"]})
            )
            gone += 1
        return gone


def _from_entry(entry: dict[str, Any], status: str) -> dict[str, Any]:
    """A record made of the listing entry alone."""
    return {
        "kind": entry["kind"],
        "targetId": entry["targetId"],
        "workspaceId": str(entry["pk"]).split("#", 1)[1],
        "by": entry.get("by", ""),
        "reason": None,
        "requestedAt": entry["at"],
        "startedAt": entry["at"] if status == "done" else None,
        "finishedAt": entry["at"] if status == "done" else None,
        "status": status,
        "progress": {"phase": "done" if status == "done" else "collect"},
    }
