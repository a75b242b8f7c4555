"""The DynamoDB adapter of ``MemoryIndexRepository``: an agent's memories as the
``byAgentKind`` index keeps them (no text, no embedding), for the dashboard's
counts and pictures (docs/issues.md#issue-13; ``keys.BY_AGENT_KIND``), and the id
readers every list of an agent's memories starts from (docs/issues.md#issue-23-item-2).

Reads are eventually consistent, as every GSI read is: a count may lag a write
by a moment, which an overview can afford (the pages that act on a memory read
it from the base table).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from itertools import islice
from typing import Any

from chalicelib.ids import from_rfc3339, to_rfc3339
from chalicelib.models.memory import Memory, MemoryKind, MemoryStatus
from chalicelib.models.overview import MemoryIndexEntry
from chalicelib.models.totals import ListTotal
from chalicelib.storage import items as convert
from chalicelib.storage.counting import count_list
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

    def count_page(
        self,
        agent_id: str,
        kinds: Sequence[MemoryKind],
        statuses: Sequence[MemoryStatus],
        after_id: str | None,
        *,
        expired: bool | None,
        now: datetime,
        cap: int,
    ) -> ListTotal:
        """How many of the agent's memories of ``kinds`` in ``statuses`` (and, with
        ``expired``, past ``expiresAt`` at ``now`` or not) there are, and how many are
        newer than the page after ``after_id``: ``Select=COUNT`` Queries of the
        partitions the list reads (``agent_list_ids``), at most ``cap`` index items
        read in all (``counting.count_list``; docs/reference.md#list-totals)."""
        partitions = [f"{agent_id}#{k.value}#{s.value}" for k in kinds for s in statuses]
        expiry: dict[str, Any] = {}
        if expired is not None:
            expiry = {
                "FilterExpression": f"#expires {'<=' if expired else '>'} :now",
                "names": {"#expires": "expiresAt"},
                "values": {":now": to_rfc3339(now)},
            }

        def part(comparison: str | None) -> list[dict[str, Any]]:
            return [_counted(partition, after_id, comparison, expiry) for partition in partitions]

        ahead = part(">=") if after_id is not None else []
        return count_list(self._table, ahead, part("<" if after_id else None), cap)

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


def _counted(
    partition: str, after_id: str | None, comparison: str | None, expiry: dict[str, Any]
) -> dict[str, Any]:
    """A count Query of one ``byAgentKind`` partition: every item, or those whose
    memory id compares so with ``after_id`` (``>=``: ahead of the page, the cursor's own
    item included, as it ended the page before; ``<``: the page and after), filtered by
    ``expiry`` (a ``FilterExpression`` with its names and values) when given."""
    condition = "#partition = :partition"
    names = {"#partition": AGENT_KIND_INDEX_PARTITION, **expiry.get("names", {})}
    values: dict[str, Any] = {":partition": partition, **expiry.get("values", {})}
    if comparison is not None:
        condition += f" AND #sort {comparison} :after"
        names["#sort"] = SORT_ATTRIBUTE
        values[":after"] = after_id
    request: dict[str, Any] = {
        "IndexName": BY_AGENT_KIND,
        "KeyConditionExpression": condition,
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": to_attributes(values),
    }
    if "FilterExpression" in expiry:
        request["FilterExpression"] = expiry["FilterExpression"]
    return request


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


def newer_than(partition_attribute: str, partition: str, after_id: str | None) -> dict[str, Any]:
    """The key condition of a newest-first list index read: one partition, sort keys
    (memory ids) older than ``after_id`` when given; ``KeyConditionExpression`` and its
    names and values (``#partition``, ``#sort``)."""
    condition = "#partition = :partition"
    values: dict[str, Any] = {":partition": partition}
    if after_id is not None:
        condition += " AND #sort < :after"
        values[":after"] = after_id
    return {
        "KeyConditionExpression": condition,
        "ExpressionAttributeNames": {"#partition": partition_attribute, "#sort": SORT_ATTRIBUTE},
        "ExpressionAttributeValues": to_attributes(values),
    }


def ids_by_agent(
    table: DynamoDBTable,
    agent_id: str,
    kinds: Sequence[str],
    statuses: Sequence[str],
    limit: int | None,
    after_id: str | None,
) -> list[str]:
    """The newest ``limit`` ids (``None``: all) of the agent's memories of any of
    ``kinds`` in any of ``statuses``, older than ``after_id``: one small Query per kind
    and status on ``byAgentKind`` (keys only), merged by id.

    A list reads these instead of the full items of every memory
    (docs/conventions.md#limit-before-filter, docs/issues.md#issue-23-item-2): a page of
    day rows among thousands of facts costs two small queries and one BatchGetItem.
    """
    found: list[str] = []
    for kind in kinds:
        for status in statuses:
            request: dict[str, Any] = {
                "IndexName": BY_AGENT_KIND,
                **newer_than(AGENT_KIND_INDEX_PARTITION, f"{agent_id}#{kind}#{status}", after_id),
                "ProjectionExpression": "#sort",
                "ScanIndexForward": False,
            }
            if limit is not None:
                request["Limit"] = limit
            items = table.query(**request)
            found.extend(str(item[SORT_ATTRIBUTE]) for item in islice(items, limit))
    return sorted(found, reverse=True)[:limit]


def page_of(
    table: DynamoDBTable,
    ids: Sequence[str],
    limit: int,
    *,
    workspace_id: str | None,
    status: str | None = None,
    kind: str | None = None,
    consistent: bool = True,
) -> tuple[list[Memory], str | None]:
    """The memories of the first ``limit`` of ``ids`` (newest first, as an index listed
    them; ``limit + 1`` ids mean there are more), read with BatchGetItem.

    A memory of another workspace, or whose status or kind is not the one asked for
    (it changed between the index read and this one), is left out: the page is one short
    then.

    Args:
        workspace_id: the workspace the memories must be of (``None``: the caller asked
            by agent and needs no such check).
        consistent: strongly consistent reads (what a page shows a person); ``False``
            halves the read units where the index read already lagged.

    Returns:
        The memories (without recall counts) and the id to continue after (None at the
        end).
    """
    wanted = list(ids[:limit])
    items = table.batch_get([memory_key(memory_id) for memory_id in wanted], consistent=consistent)
    found = sorted(
        (
            convert.memory_from_item(item)
            for item in items
            if workspace_id in (None, item["workspaceId"])
            and status in (None, item["status"])
            and kind in (None, item["kind"])
        ),
        key=lambda memory: memory.id,
        reverse=True,
    )
    return found, (wanted[-1] if len(ids) > limit else None)


def agent_list_ids(
    table: DynamoDBTable,
    agent_id: str,
    status: str | None,
    kind: str | None,
    limit: int,
    after_id: str | None,
) -> list[str]:
    """The ids of a page of one agent's memories, newest first, optionally of one status
    and one kind (``ids_by_agent`` over every kind and status asked), ``limit`` at most."""
    kinds = [kind] if kind else [member.value for member in MemoryKind]
    statuses = [status] if status else [member.value for member in MemoryStatus]
    return ids_by_agent(table, agent_id, kinds, statuses, limit, after_id)
