"""A workspace's memories as the sharded workspace indexes keep them (ids and kind), for
the lists that span every agent of a workspace (docs/issues.md#issue-23-item-2;
``keys.WORKSPACE_INDEXES``).

Each workspace is spread over ``keys.WORKSPACE_SHARDS`` partitions by agent, so the
write rate a workspace can take grows with its agents instead of stopping at one
partition's. A list merges the shards newest first: every shard is read in small
pages, and a shard is read further only while its ids are among the newest, so a page
of ``limit`` memories reads about ``limit`` ids plus one small page per shard.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from itertools import islice
from typing import Any

from chalicelib.storage.dynamodb import DynamoDBTable, to_attributes
from chalicelib.storage.keys import (
    SORT_ATTRIBUTE,
    WORKSPACE_INDEXES,
    WORKSPACE_SHARDS,
    workspace_index_partitions,
)
from chalicelib.storage.memory_index import newer_than


def _shard_ids(
    table: DynamoDBTable,
    index: str,
    partition: str,
    kind: str | None,
    page: int,
    after_id: str | None,
) -> Iterator[str]:
    """The ids of one shard, newest first, older than ``after_id``, ``page`` keys a
    request (pages follow only as the merge asks)."""
    request: dict[str, Any] = {
        "IndexName": index,
        **newer_than(WORKSPACE_INDEXES[index], partition, after_id),
        "ProjectionExpression": "#sort",
        "ScanIndexForward": False,
        "Limit": page,
    }
    if kind is not None:
        request["FilterExpression"] = "#kind = :kind"
        request["ExpressionAttributeNames"]["#kind"] = "kind"
        request["ExpressionAttributeValues"].update(to_attributes({":kind": kind}))
    for item in table.query(**request):
        yield str(item[SORT_ATTRIBUTE])


def ids_by_workspace(
    table: DynamoDBTable,
    workspace_id: str,
    status: str | None,
    kind: str | None,
    limit: int,
    after_id: str | None,
) -> list[str]:
    """The newest ``limit`` ids of the workspace's memories (of one status and one kind
    when given) older than ``after_id``, merged from every shard.

    Args:
        limit: at most this many ids (a list asks for one more than its page to know
            whether more follow).
        after_id: continue after this memory id (exclusive); ``None``: from the newest.
    """
    index, partitions = workspace_index_partitions(workspace_id, status)
    # Enough per shard that an even spread takes one request each, at least a few.
    page = max(4, 2 * -(-limit // WORKSPACE_SHARDS))
    shards = [_shard_ids(table, index, partition, kind, page, after_id) for partition in partitions]
    # Memory ids are ULIDs of one length: newest first is descending text order.
    merged = heapq.merge(*shards, reverse=True)
    return list(islice(merged, limit))
