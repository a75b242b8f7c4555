"""The metadata index (docs/reference.md#metadata-filters): one entry per (agent, key,
status, value, fact) in the agent's ``MEMORYMETA#<agt_id>`` partition
(``keys.memory_meta_key``), a sibling of the tag index (``storage/memory_tags.py``), so
a metadata filter reads the ids of the matching facts by key: equality and ``in`` by
key prefix (newest first, lazily), a range by key range; never the agent's facts.

The sort key holds the value's index text (``models/metadata_filter.index_text``:
numbers and dates order as values), and the entry its ``memoryId`` and ``value`` (the
index text again), which a read compares exactly (a string may hold the key's ``#``).

Every memory write keeps it in step inside the write's own transaction
(``metadata_writes``, called by ``recall_index.index_writes`` next to the tag index):
a fact's entries are its metadata values under its current status; an erased memory, a
day row and a fact without metadata have none. A release without the index (rolled
back to) changes memories without it; the table upgrade files it again
(``refile_metadata``, ``drop_stale_metadata``) and a filtered page keeps only the facts
that meet the filter (``models/metadata_filter.holds_metadata``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import groupby, islice
from typing import Any

from chalicelib.models.memory import Memory, MemoryKind
from chalicelib.models.metadata_filter import MetaCondition, index_text, text_top
from chalicelib.storage import items as convert
from chalicelib.storage.dynamodb import DynamoDBTable, to_attributes
from chalicelib.storage.keys import (
    MEMORY_META_PREFIX,
    memory_key,
    memory_meta_key,
    memory_meta_partition,
    memory_meta_prefix,
)
from chalicelib.storage.memory_tags import (
    delete_checked,
    entry_writes,
    filter_statuses,
    intersection,
    put_checked,
    tag_streams,
    union,
)

_PAGE_ITEMS = 200
"""Entries one Query page reads (ids and index texts: under a hundred bytes each)."""

Entries = dict[tuple[str, str], dict[str, Any]]


def _entries(memory: Memory | None) -> Entries:
    """The index entries a memory has, by (pk, sk)."""
    if memory is None or memory.kind is not MemoryKind.FACT or memory.is_erased:
        return {}
    found: Entries = {}
    for key, value in memory.metadata.items():
        text = index_text(value)
        item = memory_meta_key(memory.agent_id, key, memory.status.value, text, memory.id)
        found[(item["pk"], item["sk"])] = {**item, "memoryId": memory.id, "value": text}
    return found


def metadata_writes(before: Memory | None, after: Memory) -> list[dict[str, Any]]:
    """The transaction actions keeping the metadata index in step with a memory going
    from ``before`` (``None``: new) to ``after`` (``memory_tags.entry_writes``): a value
    changed or removed, or the status changed, deletes an entry. At most twice
    ``limits.MAX_METADATA_KEYS`` actions."""
    return entry_writes(_entries(before), _entries(after))


def _read(
    table: DynamoDBTable,
    condition: str,
    values: dict[str, str],
    group: Sequence[MetaCondition],
    after_id: str | None,
    newest_first: bool,
) -> Iterator[str]:
    """The ids of one Query's entries meeting every condition of ``group`` and older
    than ``after_id``, in key order (reversed with ``newest_first``), read lazily."""
    entries = table.query(
        KeyConditionExpression=condition,
        ExpressionAttributeValues=to_attributes(values),
        ExpressionAttributeNames={"#value": "value"},
        ProjectionExpression="memoryId, #value",
        ScanIndexForward=not newest_first,
        ConsistentRead=True,
        Limit=_PAGE_ITEMS,
    )
    for entry in entries:
        memory_id, text = str(entry["memoryId"]), str(entry["value"])
        if (after_id is None or memory_id < after_id) and all(one.matches(text) for one in group):
            yield memory_id


def _equal_ids(
    table: DynamoDBTable,
    partition: str,
    prefix: str,
    group: Sequence[MetaCondition],
    after_id: str | None,
) -> Iterator[str]:
    """The ids of the entries under ``prefix`` (one key, status and value), newest first."""
    if after_id is None:
        condition = "pk = :pk AND begins_with(sk, :low)"
        values = {":pk": partition, ":low": prefix}
    else:
        condition = "pk = :pk AND sk BETWEEN :low AND :high"
        values = {":pk": partition, ":low": prefix, ":high": f"{prefix}{after_id}"}
    return _read(table, condition, values, group, after_id, newest_first=True)


def _range_ids(
    table: DynamoDBTable,
    partition: str,
    prefix: str,
    group: Sequence[MetaCondition],
    after_id: str | None,
) -> list[str]:
    """The ids of every entry of one key and status within the tightest bounds of the
    ranges of ``group``, newest first (a range is read whole: its entries are in value
    order). Empty when the ranges name different types (no value is of two)."""
    kinds = {one.kind for one in group}
    if len(kinds) != 1:
        return []
    kind = kinds.pop()
    lows = [one.low for one in group if one.low is not None]
    highs = [one.high for one in group if one.high is not None]
    low = max(lows) if lows else f"{kind}:"
    high = text_top(min(highs)) if highs else f"{kind};"
    values = {":pk": partition, ":low": f"{prefix}{low}", ":high": f"{prefix}{high}"}
    condition = "pk = :pk AND sk BETWEEN :low AND :high"
    found = _read(table, condition, values, group, after_id, newest_first=False)
    return sorted(found, reverse=True)


def metadata_streams(
    table: DynamoDBTable,
    agent_id: str,
    conditions: Sequence[MetaCondition],
    *,
    status: str | None,
    after_id: str | None,
) -> list[Iterable[str]]:
    """One stream of ids (newest first, older than ``after_id``) per metadata key the
    ``conditions`` name, of ``status`` (``memory_tags.filter_statuses``): for a key with
    an equality or ``in`` condition, one lazy key-prefix Query per value (of the one
    naming fewest) and status, merged; else one key-range Query per status within the
    tightest bounds. Every entry read is checked against all of the key's conditions."""
    partition = memory_meta_partition(agent_id)
    statuses = filter_statuses(status)
    streams: list[Iterable[str]] = []
    ordered = sorted(conditions, key=lambda one: one.key)
    for key, grouped in groupby(ordered, key=lambda one: one.key):
        group = list(grouped)
        equal = [one for one in group if not one.is_range]
        if equal:
            fewest = min(equal, key=lambda one: len(one.values))
            streams.append(
                union(
                    [
                        _equal_ids(
                            table,
                            partition,
                            f"{memory_meta_prefix(key, state)}{text}#",
                            group,
                            after_id,
                        )
                        for state in statuses
                        for text in fewest.values
                    ]
                )
            )
        else:
            streams.append(
                union(
                    [
                        _range_ids(
                            table, partition, memory_meta_prefix(key, state), group, after_id
                        )
                        for state in statuses
                    ]
                )
            )
    return streams


def filtered_ids(
    table: DynamoDBTable,
    agent_id: str,
    *,
    all_of: Sequence[str],
    any_of: Sequence[str],
    meta: Sequence[MetaCondition],
    status: str | None,
    kind: str | None,
    limit: int | None,
    after_id: str | None,
) -> list[str]:
    """The ids of a page of the agent's facts holding every tag of ``all_of``, one of
    ``any_of`` and meeting every condition of ``meta`` (at least one named), of
    ``status`` (``None``: active and archived), newest first, older than ``after_id``,
    ``limit`` at most (``None``: every match): the tag index's streams
    (``memory_tags.tag_streams``) and the metadata index's (``metadata_streams``)
    intersected by id, so the page holds ``limit`` matches when that many exist. A
    ``kind`` of ``day`` matches nothing (day rows carry neither)."""
    if kind == MemoryKind.DAY.value:
        return []
    streams = [
        *tag_streams(
            table, agent_id, all_of=all_of, any_of=any_of, status=status, after_id=after_id
        ),
        *metadata_streams(table, agent_id, meta, status=status, after_id=after_id),
    ]
    return list(islice(intersection(streams), limit))


def refile_metadata(table: DynamoDBTable, memory: Memory) -> bool:
    """Put every metadata index entry ``memory`` should have
    (``memory_tags.put_checked``: only while the memory is at ``memory.version``).
    Returns True when entries were written."""
    return put_checked(table, memory, list(_entries(memory).values()))


def drop_stale_metadata(table: DynamoDBTable, entry: dict[str, Any]) -> bool:
    """Delete the metadata index ``entry`` when its memory is gone or no longer has that
    entry (erased, another value or status), in one transaction with a check that the
    memory is still as read (gone, or at the version read). Returns True when deleted;
    False for an entry that is right, or an item that is not a metadata entry."""
    pk, sk = str(entry.get("pk", "")), str(entry.get("sk", ""))
    memory_id = str(entry.get("memoryId", ""))
    if not pk.startswith(MEMORY_META_PREFIX) or not memory_id:
        return False
    item = table.get(memory_key(memory_id))
    if item is not None:
        if (pk, sk) in _entries(convert.memory_from_item(item)):
            return False
        condition = {
            "ConditionExpression": "#version = :version",
            "ExpressionAttributeNames": {"#version": "version"},
            "ExpressionAttributeValues": to_attributes({":version": item["version"]}),
        }
    else:
        condition = {"ConditionExpression": "attribute_not_exists(pk)"}
    check = {"ConditionCheck": {"Key": to_attributes(memory_key(memory_id)), **condition}}
    return delete_checked(table, check, pk, sk)
