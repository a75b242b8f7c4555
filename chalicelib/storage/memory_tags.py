"""The tag index (docs/reference.md#tags): one entry per (agent, tag, status, fact) in
the agent's ``MEMORYTAGS#<agt_id>`` partition (``keys.memory_tag_key``), so a tag
filter reads the ids of the matching facts by key prefix, newest first, whatever the
number of the agent's other facts, and never a page of them that holds no match.

Every memory write keeps it in step inside the write's own transaction
(``tag_writes``, called by ``recall_index.index_writes``, which every memory
transaction carries): a fact's entries are its tags under its current status; an
erased memory, a day row and a fact without tags have none. So the index never
disagrees with the memory items. Entries hold ids only, never a fact's text.

A release without tags (0.2.0, rolled back to) writes memories without touching the
index; the table upgrade of the next release files it again (``refile_memory``,
``drop_stale_entry``; docs/operations.md#rollback), and a filtered list keeps only the
memories that hold the filter's tags (``holds_tags``).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from typing import Any

from chalicelib.models.memory import Memory, MemoryKind, MemoryStatus
from chalicelib.storage.dynamodb import DynamoDBTable, TransactionCancelled, to_attributes
from chalicelib.storage.keys import (
    MEMORY_TAGS_PREFIX,
    memory_key,
    memory_tag_key,
    memory_tag_prefix,
    memory_tags_partition,
)

_PAGE_ITEMS = 200
"""Entries one Query page of one tag reads (keys only: a few dozen bytes each)."""


def _entries(memory: Memory | None) -> dict[tuple[str, str], dict[str, str]]:
    """The index keys a memory has, by (pk, sk)."""
    if memory is None or memory.kind is not MemoryKind.FACT or memory.is_erased:
        return {}
    keys = (
        memory_tag_key(memory.agent_id, tag, memory.status.value, memory.id) for tag in memory.tags
    )
    return {(key["pk"], key["sk"]): key for key in keys}


def tag_writes(before: Memory | None, after: Memory) -> list[dict[str, Any]]:
    """The transaction actions keeping the tag index in step with a memory going from
    ``before`` (``None``: new) to ``after`` (``entry_writes``): a tag removed, or its
    status changed, deletes an entry. At most twice ``limits.MAX_TAGS`` actions."""
    had, has = _entries(before), _entries(after)
    return entry_writes(
        dict(had),
        {pair: {**key, "memoryId": after.id} for pair, key in has.items()},
    )


def entry_writes(
    had: dict[tuple[str, str], dict[str, Any]], has: dict[tuple[str, str], dict[str, Any]]
) -> list[dict[str, Any]]:
    """The actions taking an index from the entries ``had`` to ``has`` (items by
    (pk, sk)): a Delete of each it no longer has, a Put of each it gains. Unconditional:
    the memory's own write in the transaction carries the condition."""
    operations: list[dict[str, Any]] = [
        {"Delete": {"Key": to_attributes({"pk": pair[0], "sk": pair[1]})}}
        for pair in had
        if pair not in has
    ]
    operations.extend(
        {"Put": {"Item": to_attributes(item)}} for pair, item in has.items() if pair not in had
    )
    return operations


def _tag_ids(
    table: DynamoDBTable, agent_id: str, tag: str, status: str, after_id: str | None
) -> Iterator[str]:
    """The ids of the agent's facts of ``status`` holding ``tag``, newest first, older
    than ``after_id`` when given (one Query, read lazily page by page)."""
    prefix = memory_tag_prefix(tag, status)
    if after_id is None:
        condition = "pk = :pk AND begins_with(sk, :low)"
        values = {":pk": memory_tags_partition(agent_id), ":low": prefix}
    else:
        condition = "pk = :pk AND sk BETWEEN :low AND :high"
        values = {
            ":pk": memory_tags_partition(agent_id),
            ":low": prefix,
            ":high": f"{prefix}{after_id}",
        }
    items = table.query(
        KeyConditionExpression=condition,
        ExpressionAttributeValues=to_attributes(values),
        ProjectionExpression="sk",
        ScanIndexForward=False,
        ConsistentRead=True,
        Limit=_PAGE_ITEMS,
    )
    for item in items:
        memory_id = str(item["sk"])[len(prefix) :]
        if after_id is None or memory_id < after_id:
            yield memory_id


def union(streams: Sequence[Iterable[str]]) -> Iterator[str]:
    """Ids in any of ``streams`` (each newest first), newest first, each once."""
    last = None
    for memory_id in heapq.merge(*streams, reverse=True):
        if memory_id != last:
            yield memory_id
            last = memory_id


def intersection(streams: Sequence[Iterable[str]]) -> Iterator[str]:
    """Ids in every one of ``streams`` (each newest first), newest first: each stream
    is read only as far as the oldest id any other has reached."""
    readers = [iter(stream) for stream in streams]
    heads = [next(reader, None) for reader in readers]
    while heads and all(head is not None for head in heads):
        oldest = min(head for head in heads if head is not None)
        if all(head == oldest for head in heads):
            yield oldest
            heads = [next(reader, None) for reader in readers]
            continue
        for position, reader in enumerate(readers):
            while (head := heads[position]) is not None and head > oldest:
                heads[position] = next(reader, None)


def filter_statuses(status: str | None) -> list[str]:
    """The statuses a filter reads: ``status``, or (``None``) active and archived."""
    return [status] if status else [MemoryStatus.ACTIVE.value, MemoryStatus.ARCHIVED.value]


def tag_streams(
    table: DynamoDBTable,
    agent_id: str,
    *,
    all_of: Sequence[str],
    any_of: Sequence[str],
    status: str | None,
    after_id: str | None,
) -> list[Iterable[str]]:
    """One lazy stream of ids (newest first, older than ``after_id``) per tag of
    ``all_of`` and one for ``any_of`` (merged), of ``status`` (``filter_statuses``): the
    streams a filter intersects (``intersection``)."""
    statuses = filter_statuses(status)

    def by_tag(tag: str) -> Iterator[str]:
        return union([_tag_ids(table, agent_id, tag, one, after_id) for one in statuses])

    streams: list[Iterable[str]] = [by_tag(tag) for tag in all_of]
    if any_of:
        streams.append(union([by_tag(tag) for tag in any_of]))
    return streams


def tagged_ids(
    table: DynamoDBTable,
    agent_id: str,
    *,
    all_of: Sequence[str],
    any_of: Sequence[str],
    status: str | None,
    kind: str | None,
    limit: int | None,
    after_id: str | None,
) -> list[str]:
    """The ids of a page of the agent's facts holding every tag of ``all_of`` and one
    of ``any_of`` (at least one of them named), of ``status`` (``None``: active and
    archived), newest first, older than ``after_id``, ``limit`` at most: one lazy Query
    per tag and status, merged (any of) and intersected (all of) by id, so the page
    holds ``limit`` matches when that many exist (``None``: every match). A ``kind`` of
    ``day`` matches nothing (day rows carry no tags)."""
    if kind == MemoryKind.DAY.value:
        return []
    streams = tag_streams(
        table, agent_id, all_of=all_of, any_of=any_of, status=status, after_id=after_id
    )
    return list(islice(intersection(streams), limit))


def holds_tags(memory: Memory, all_of: Sequence[str], any_of: Sequence[str]) -> bool:
    """True when ``memory`` holds every tag of ``all_of`` and one of ``any_of`` (an
    empty side asks nothing): what a tag filter's page keeps of what the index named."""
    tags = set(memory.tags)
    return tags.issuperset(all_of) and (not any_of or not tags.isdisjoint(any_of))


def refile_memory(table: DynamoDBTable, memory: Memory) -> bool:
    """Put every tag index entry ``memory`` should have (``put_checked``). Returns True
    when entries were written, False when the memory has none or changed meanwhile."""
    return put_checked(
        table,
        memory,
        [{**key, "memoryId": memory.id} for key in _entries(memory).values()],
    )


def put_checked(table: DynamoDBTable, memory: Memory, items: Sequence[dict[str, Any]]) -> bool:
    """Put ``items`` (index entries of ``memory``) in one transaction with a check that
    the memory is still at ``memory.version`` (a write since filed its own entries).
    Unconditional Puts: an entry there already is the same item. Returns True when
    written, False when ``items`` is empty or the memory changed meanwhile."""
    if not items:
        return False
    check = {
        "ConditionCheck": {
            "Key": to_attributes(memory_key(memory.id)),
            "ConditionExpression": "#version = :version",
            "ExpressionAttributeNames": {"#version": "version"},
            "ExpressionAttributeValues": to_attributes({":version": memory.version}),
        }
    }
    puts = [{"Put": {"Item": to_attributes(item)}} for item in items]
    try:
        table.transact([check, *puts])
    except TransactionCancelled:
        return False
    return True


def drop_stale_entry(table: DynamoDBTable, entry: dict[str, Any]) -> bool:
    """Delete the tag index ``entry`` when its memory is gone, erased, or no longer holds
    its tag under its status, in one transaction with that check on the memory item (no
    race with a write that makes the entry right again). Returns True when deleted;
    False for an entry that is right, or an item that is not a tag entry."""
    pk, sk = str(entry.get("pk", "")), str(entry.get("sk", ""))
    parts = sk.split("#")
    if not pk.startswith(MEMORY_TAGS_PREFIX) or len(parts) != 3:
        return False
    tag, status, memory_id = parts
    check = {
        "ConditionCheck": {
            "Key": to_attributes(memory_key(memory_id)),
            "ConditionExpression": (
                "attribute_not_exists(pk) OR #kind <> :fact OR #status <> :status"
                " OR NOT contains(#tags, :tag)"
            ),
            "ExpressionAttributeNames": {"#kind": "kind", "#status": "status", "#tags": "tags"},
            "ExpressionAttributeValues": to_attributes(
                {":fact": MemoryKind.FACT.value, ":status": status, ":tag": tag}
            ),
        }
    }
    return delete_checked(table, check, pk, sk)


def delete_checked(table: DynamoDBTable, check: dict[str, Any], pk: str, sk: str) -> bool:
    """Delete the index entry ``pk`` / ``sk`` in one transaction with ``check`` (a
    ConditionCheck on its memory saying the entry is stale). Returns True when deleted,
    False when the check failed (the entry is right, or was made right meanwhile)."""
    delete = {"Delete": {"Key": to_attributes({"pk": pk, "sk": sk})}}
    try:
        table.transact([check, delete])
    except TransactionCancelled:
        return False
    return True
