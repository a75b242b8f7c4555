"""The DynamoDB adapter of ``MemoryIndexRepository``: an agent's memories as the
``byAgentKind`` index keeps them (no text, no embedding), for the dashboard's
counts and pictures (docs/issues.md#issue-13; ``keys.BY_AGENT_KIND``).

Reads are eventually consistent, as every GSI read is: a count may lag a write
by a moment, which an overview can afford (the pages that act on a memory read
it from the base table).
"""

from __future__ import annotations

from typing import Any

from chalicelib.ids import from_rfc3339
from chalicelib.models.memory import Memory, MemoryKind, MemoryStatus
from chalicelib.models.overview import MemoryIndexEntry
from chalicelib.storage import items as convert
from chalicelib.storage.dynamodb import DynamoDBTable, to_attributes
from chalicelib.storage.keys import (
    AGENT_KIND_INDEX_PARTITION,
    AGENT_KIND_PROJECTION,
    BY_AGENT_KIND,
    SORT_ATTRIBUTE,
    memory_key,
)


def _partition(agent_id: str, kind: MemoryKind, status: MemoryStatus) -> dict[str, Any]:
    return {
        "IndexName": BY_AGENT_KIND,
        "KeyConditionExpression": "#partition = :partition",
        "ExpressionAttributeNames": {"#partition": AGENT_KIND_INDEX_PARTITION},
        "ExpressionAttributeValues": to_attributes(
            {":partition": f"{agent_id}#{kind.value}#{status.value}"}
        ),
    }


class DynamoDBMemoryIndexRepository:
    """``MemoryIndexRepository`` on the single table's ``byAgentKind`` index.

    Args:
        table: the wrapped table.
    """

    def __init__(self, table: DynamoDBTable) -> None:
        self._table = table

    def count(self, agent_id: str, kind: MemoryKind, status: MemoryStatus) -> int:
        """How many of the agent's memories have this kind and status (``Select=COUNT``,
        every page followed)."""
        request = {
            "TableName": self._table.name,
            "Select": "COUNT",
            **_partition(agent_id, kind, status),
        }
        total = 0
        while True:
            response = self._table.client.query(**request)
            total += int(response.get("Count", 0))
            last = response.get("LastEvaluatedKey")
            if not last:
                return total
            request["ExclusiveStartKey"] = last

    def entries(
        self, agent_id: str, kind: MemoryKind, status: MemoryStatus, *, newest: int | None = None
    ) -> list[MemoryIndexEntry]:
        """The agent's memories of this kind and status, newest first, as index entries.

        Args:
            newest: at most this many (the newest); ``None``: all of them.
        """
        request = _partition(agent_id, kind, status)
        names = dict(request["ExpressionAttributeNames"])
        projected = [SORT_ATTRIBUTE, *AGENT_KIND_PROJECTION]
        for position, attribute in enumerate(projected):
            names[f"#p{position}"] = attribute
        request["ExpressionAttributeNames"] = names
        request["ProjectionExpression"] = ", ".join(f"#p{i}" for i in range(len(projected)))
        request["ScanIndexForward"] = False
        if newest is not None:
            request["Limit"] = newest
        found: list[MemoryIndexEntry] = []
        for item in self._table.query(**request):
            found.append(_entry(item, kind, status))
            if newest is not None and len(found) >= newest:
                break
        return found


def _entry(item: dict[str, Any], kind: MemoryKind, status: MemoryStatus) -> MemoryIndexEntry:
    archived_at = item.get("archivedAt")
    return MemoryIndexEntry(
        id=str(item[SORT_ATTRIBUTE]),
        kind=kind,
        status=status,
        created_at=from_rfc3339(item["createdAt"]),
        expires_at=from_rfc3339(item["expiresAt"]),
        archived_at=None if archived_at is None else from_rfc3339(archived_at),
        archive_reason=item.get("archiveReason"),
        date=item.get("date"),
        char_count=int(item.get("charCount", 0)),
    )


def ids_by_kind(
    table: DynamoDBTable,
    agent_id: str,
    kind: str,
    statuses: list[str],
    limit: int,
    after_id: str | None,
) -> list[str]:
    """The newest ``limit`` ids of the agent's memories of ``kind`` in any of
    ``statuses``, older than ``after_id``: one small Query per status on
    ``byAgentKind`` (keys only), merged by id.

    A list filtered by kind reads these instead of filtering the full items of
    every memory (docs/conventions.md#limit-before-filter): a page of day rows among
    thousands of facts costs two small queries and one BatchGetItem.
    """
    found: list[str] = []
    for status in statuses:
        condition = "#partition = :partition"
        values: dict[str, Any] = {":partition": f"{agent_id}#{kind}#{status}"}
        if after_id is not None:
            condition += " AND #sort < :after"
            values[":after"] = after_id
        items = table.query(
            IndexName=BY_AGENT_KIND,
            KeyConditionExpression=condition,
            ExpressionAttributeNames={
                "#partition": AGENT_KIND_INDEX_PARTITION,
                "#sort": SORT_ATTRIBUTE,
            },
            ExpressionAttributeValues=to_attributes(values),
            ProjectionExpression="#sort",
            ScanIndexForward=False,
            Limit=limit,
        )
        for position, item in enumerate(items, start=1):
            found.append(str(item[SORT_ATTRIBUTE]))
            if position >= limit:
                break
    return sorted(found, reverse=True)[:limit]


def list_by_kind(
    table: DynamoDBTable,
    workspace_id: str,
    agent_id: str,
    status: str | None,
    kind: str,
    limit: int,
    after_id: str | None,
) -> tuple[list[Memory], str | None]:
    """A page of one agent's memories of one kind, newest first: ids from
    ``ids_by_kind``, then the items (one strongly consistent BatchGetItem).

    A memory whose status changed between the two reads is left out when a status
    was asked for (the page is one short then).

    Returns:
        The memories (without recall counts) and the id to continue after.
    """
    statuses = [status] if status else [MemoryStatus.ACTIVE.value, MemoryStatus.ARCHIVED.value]
    ids = ids_by_kind(table, agent_id, kind, statuses, limit + 1, after_id)
    wanted = ids[:limit]
    items = table.batch_get([memory_key(memory_id) for memory_id in wanted])
    found = sorted(
        (
            convert.memory_from_item(item)
            for item in items
            if item["workspaceId"] == workspace_id and status in (None, item["status"])
        ),
        key=lambda memory: memory.id,
        reverse=True,
    )
    return found, (wanted[-1] if len(ids) > limit else None)
