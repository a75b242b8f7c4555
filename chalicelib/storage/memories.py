"""The DynamoDB adapter of ``MemoryRepository``: memories, their audit records, the
day-row pointers and the recall counters (docs/reference.md#3-the-memory-object to
docs/reference.md#5-limits, docs/reference.md#8-recall) on the single table (keys in ``keys.py``).
Every state change is a conditional write or a transaction; each condition says why it exists."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from itertools import islice
from typing import Any

from chalicelib.ids import to_rfc3339
from chalicelib.models.memory import AuditRecord, Memory, MemoryKind, MemoryStatus
from chalicelib.models.metadata_filter import MetaCondition, holds_metadata
from chalicelib.storage import items as convert
from chalicelib.storage.dynamodb import (
    DynamoDBTable,
    TransactionCancelled,
    key_range_after,
    page_after,
    put_new,
    to_attributes,
)
from chalicelib.storage.erasure_list import memory_erasure_put
from chalicelib.storage.events import appended, audited
from chalicelib.storage.keys import (
    AUDIT_PREFIX,
    day_pointer_key,
    memory_key,
    recall_counter_key,
    recall_counter_page,
)
from chalicelib.storage.memory_index import agent_list_ids, ids_by_agent, page_of
from chalicelib.storage.memory_metadata import filtered_ids
from chalicelib.storage.memory_tags import holds_tags
from chalicelib.storage.protocols import (
    DayLogFull,
    DayPointerChange,
    DayPointerTaken,
    DayRowNotLive,
    MemoryPage,
    WriteConflict,
)
from chalicelib.storage.recall_index import index_writes
from chalicelib.storage.vetoes import veto_entry
from chalicelib.storage.workspace_index import ids_by_workspace


def memory_update(before: Memory, after: Memory) -> dict[str, Any]:
    """An Update that writes ``after``'s mutable attributes if ``before`` is still current."""
    item = convert.memory_to_item(after)
    names: dict[str, str] = {"#version": "version"}
    values: dict[str, Any] = {":expected": before.version}
    sets: list[str] = []
    removes: list[str] = []
    for position, attribute in enumerate(convert.MUTABLE_MEMORY_ATTRIBUTES):
        alias = f"#a{position}"
        names[alias] = attribute
        if attribute in item:
            sets.append(f"{alias} = :v{position}")
            values[f":v{position}"] = item[attribute]
        else:
            removes.append(alias)
    expression = "SET " + ", ".join(sets)
    if removes:
        expression += " REMOVE " + ", ".join(removes)
    return {
        "Update": {
            "Key": to_attributes(memory_key(after.id)),
            "UpdateExpression": expression,
            # Optimistic concurrency: nothing changed the memory since it was read,
            # so the rules the service checked still hold.
            "ConditionExpression": "#version = :expected",
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": to_attributes(values),
        }
    }


def _claim_day_pointer(memory: Memory) -> dict[str, Any]:
    assert memory.date is not None
    item = {**day_pointer_key(memory.agent_id, memory.date), "memoryId": memory.id}
    # attribute_not_exists: exactly one live day row per agent and UTC date
    # (docs/reference.md#4-states).
    return put_new(item)


def _release_day_pointer(memory: Memory) -> dict[str, Any]:
    assert memory.date is not None
    return {
        "Delete": {
            "Key": to_attributes(day_pointer_key(memory.agent_id, memory.date)),
            # Only the row that holds the pointer may release it.
            "ConditionExpression": "memoryId = :id",
            "ExpressionAttributeValues": to_attributes({":id": memory.id}),
        }
    }


class DynamoDBMemoryRepository:
    """``MemoryRepository`` on the single table (see ``keys.py`` for the layout).

    Args:
        table: the wrapped table.
    """

    def __init__(self, table: DynamoDBTable) -> None:
        self._table = table

    def get(self, memory_id: str) -> Memory | None:
        """Return the memory (strongly consistent read) or None, recall counts included."""
        found = self._table.get(memory_key(memory_id))
        if found is None:
            return None
        memory = convert.memory_from_item(found)
        page = self._table.get(recall_counter_key(memory.agent_id, recall_counter_page(memory.id)))
        return convert.add_recall_counts(memory, page)

    def get_many(self, memory_ids: Sequence[str]) -> list[Memory]:
        """The memories of ``memory_ids`` that exist (strongly consistent BatchGetItem,
        100 a request), without recall counts, in ``memory_ids`` order."""
        found = {
            str(item["id"]): convert.memory_from_item(item)
            for item in self._table.batch_get([memory_key(memory_id) for memory_id in memory_ids])
        }
        return [found[memory_id] for memory_id in memory_ids if memory_id in found]

    def stored_embeddings(self, memory_ids: Sequence[str]) -> dict[str, bytes | None]:
        """The stored recall embedding of each of ``memory_ids`` that exists (eventually
        consistent BatchGetItem of ``id`` and ``embedding``: recall's second stage,
        docs/issues.md#issue-23-item-1)."""
        items = self._table.batch_get(
            [memory_key(memory_id) for memory_id in memory_ids],
            consistent=False,
            attributes=("id", "embedding"),
        )
        return {str(item["id"]): convert.binary_or_none(item.get("embedding")) for item in items}

    def with_recall_counts(self, memories: list[Memory]) -> list[Memory]:
        """``memories`` with their counter pages' counts (one BatchGetItem per 100 pages)."""
        wanted = {(m.agent_id, recall_counter_page(m.id)) for m in memories}
        pages = {
            (str(item["pk"]), str(item["sk"])): item
            for item in self._table.batch_get(
                [recall_counter_key(agent, page) for agent, page in sorted(wanted)]
            )
        }
        result = []
        for memory in memories:
            key = recall_counter_key(memory.agent_id, recall_counter_page(memory.id))
            result.append(convert.add_recall_counts(memory, pages.get((key["pk"], key["sk"]))))
        return result

    def create(
        self, memory: Memory, audit: AuditRecord, *, claim_day_pointer: bool = False
    ) -> None:
        """Write a new memory with its audit record (and day pointer) atomically.

        Raises:
            DayPointerTaken: the date already has a live day row.
        """
        operations = [put_new(convert.memory_to_item(memory)), *audited(audit, memory)]
        pointer_at = len(operations)
        if claim_day_pointer:
            operations.append(_claim_day_pointer(memory))
        operations.extend(index_writes(None, memory))
        try:
            self._table.transact(operations)
        except TransactionCancelled as cancelled:
            if claim_day_pointer and _failed(cancelled, pointer_at):
                raise DayPointerTaken(memory.date) from cancelled
            raise WriteConflict(memory.id) from cancelled

    def supersede(
        self, new: Memory, old_before: Memory, old_after: Memory, audits: Sequence[AuditRecord]
    ) -> None:
        """Write ``new`` and archive the old memory in one transaction (docs/reference.md#4-states).

        Raises:
            WriteConflict: the old memory changed since it was read.
        """
        operations = [
            put_new(convert.memory_to_item(new)),
            memory_update(old_before, old_after),
            *(
                put
                for audit in audits
                for put in audited(audit, new if audit.memory_id == new.id else old_after)
            ),
            *index_writes(None, new),
            *index_writes(old_before, old_after),
        ]
        try:
            self._table.transact(operations)
        except TransactionCancelled as cancelled:
            raise WriteConflict(old_before.id) from cancelled

    def transition(
        self,
        before: Memory,
        after: Memory,
        audit: AuditRecord,
        *,
        day_pointer: DayPointerChange = DayPointerChange.NONE,
        veto_keys: Sequence[str] = (),
    ) -> None:
        """Write a state change and its audit record atomically (with ``veto_keys``:
        and file the memory in the agent's vetoed-text index, ``vetoes.py``).

        Raises:
            WriteConflict: the memory changed since it was read.
            DayPointerTaken: another live day row holds the date.
        """
        operations = [memory_update(before, after), *audited(audit, after)]
        pointer_at = len(operations)
        if day_pointer is DayPointerChange.CLAIM:
            operations.append(_claim_day_pointer(after))
        elif day_pointer is DayPointerChange.RELEASE:
            operations.append(_release_day_pointer(before))
        operations.extend(veto_entry(after.agent_id, after.id, key) for key in veto_keys)
        operations.extend(index_writes(before, after))
        if after.is_erased and not before.is_erased:
            # listed with its tombstone: the workspace's past erasures (erasure_list.py)
            at = to_rfc3339(after.erased_at or after.updated_at)
            by = after.erased_by or ""
            reason = after.erase_reason or ""
            operations.append(
                memory_erasure_put(after.workspace_id, after.id, after.agent_id, by, at, reason)
            )
        try:
            self._table.transact(operations)
        except TransactionCancelled as cancelled:
            # Only the pointer failed: the row is as read, but its date is taken.
            pointer_only = _failed(cancelled, pointer_at) and not _failed(cancelled, 0)
            if day_pointer is DayPointerChange.CLAIM and pointer_only:
                raise DayPointerTaken(after.date) from cancelled
            raise WriteConflict(before.id) from cancelled

    def set_embedding(self, memory: Memory, embedding: bytes) -> bool:
        """Store a recomputed embedding if the memory is still at ``memory.version``
        (the version is not bumped: derived data), with the fact's recall index entry
        in the same transaction (``recall_index.index_writes``).

        Returns:
            ``False`` when the condition failed (the memory changed since it was read).
        """
        update = {
            "Update": {
                "Key": to_attributes(memory_key(memory.id)),
                "UpdateExpression": "SET #embedding = :embedding",
                "ConditionExpression": "#version = :version",
                "ExpressionAttributeNames": {"#embedding": "embedding", "#version": "version"},
                "ExpressionAttributeValues": to_attributes(
                    {":embedding": embedding, ":version": memory.version}
                ),
            }
        }
        refreshed = memory.model_copy(update={"embedding": embedding})
        try:
            self._table.transact([update, *index_writes(memory, refreshed)])
        except TransactionCancelled:
            return False
        return True

    def live_day_row_id(self, agent_id: str, date: str) -> str | None:
        """Return the id the date's day pointer names, if any."""
        found = self._table.get(day_pointer_key(agent_id, date))
        return None if found is None else str(found["memoryId"])

    def append_to_day_row(
        self,
        memory_id: str,
        line: str,
        *,
        audit: AuditRecord,
        max_chars_before: int,
        now: datetime,
    ) -> Memory:
        """Append a line to a live day row and write its audit record, in one transaction
        (docs/reference.md#5-limits: 8,000 cap; docs/reference.md#day-line-history).

        The stored text grows by the line plus one newline. The row after the append is
        read back strongly consistently (a transaction returns no item).

        Raises:
            DayRowNotLive: the row is no longer active.
            DayLogFull: the stored text has no room for the line.
        """
        update = {
            "Update": {
                "TableName": self._table.name,
                "Key": to_attributes(memory_key(memory_id)),
                "UpdateExpression": (
                    "SET #lines = list_append(#lines, :line), #chars = #chars + :added, "
                    "#version = #version + :one, #updated = :now"
                ),
                # DynamoDB conditions cannot add, so the client computes the largest
                # stored length that leaves room; status guards an archived row.
                "ConditionExpression": "#status = :active AND #chars <= :max_before",
                "ExpressionAttributeNames": {
                    "#lines": "lines",
                    "#chars": "charCount",
                    "#version": "version",
                    "#updated": "updatedAt",
                    "#status": "status",
                },
                "ExpressionAttributeValues": to_attributes(
                    {
                        ":line": [line],
                        ":added": len(line) + 1,
                        ":one": 1,
                        ":now": to_rfc3339(now),
                        ":active": MemoryStatus.ACTIVE.value,
                        ":max_before": max_chars_before,
                    }
                ),
            }
        }
        try:
            self._table.transact(
                [
                    update,
                    # only agents append: the record's actor is the row's agent
                    *appended(audit, audit.actor_id or ""),
                ]
            )
        except TransactionCancelled as cancelled:
            if not _failed(cancelled, 0):
                raise WriteConflict(memory_id) from cancelled
            old = self._table.get(memory_key(memory_id))
            if old is None or old.get("status") != MemoryStatus.ACTIVE.value:
                raise DayRowNotLive(memory_id) from cancelled
            raise DayLogFull(memory_id) from cancelled
        row = self._table.get(memory_key(memory_id))
        if row is None:  # erased between the append and the read
            raise DayRowNotLive(memory_id)
        return convert.memory_from_item(row)

    def list_memories(
        self,
        *,
        workspace_id: str,
        agent_id: str | None,
        status: str | None,
        kind: str | None,
        limit: int,
        after_id: str | None,
        consistent: bool = False,
        all_tags: Sequence[str] = (),
        any_tags: Sequence[str] = (),
        meta: Sequence[MetaCondition] = (),
    ) -> MemoryPage:
        """List newest first: ids from the agent's tag and metadata indexes when
        ``all_tags`` or ``any_tags`` name a tag or ``meta`` a condition
        (``memory_metadata.filtered_ids``: every one of ``all_tags``, one of ``any_tags``,
        every condition of ``meta``; ``agent_id`` required), else from the narrow index of the agent
        (``memory_index.agent_list_ids``) or of the workspace's shards
        (``workspace_index.ids_by_workspace``), then the memories themselves (an eventually
        consistent BatchGetItem, as the index read is, or a strongly consistent one with
        ``consistent``; docs/issues.md#issue-23-item-2).

        The indexes filter by status and kind, so a page holds ``limit`` memories when
        that many exist (docs/conventions.md#limit-before-filter), one fewer for each
        that changed status between the two reads.
        """
        filtered = bool(all_tags or any_tags or meta)
        if filtered:
            assert agent_id is not None, "a filter reads one agent's tag and metadata indexes"
            ids = filtered_ids(
                self._table,
                agent_id,
                all_of=all_tags,
                any_of=any_tags,
                meta=meta,
                status=status,
                kind=kind,
                limit=limit + 1,
                after_id=after_id,
            )
        else:
            ids = self._list_ids(workspace_id, agent_id, status, kind, limit + 1, after_id)
        page, continue_after = page_of(
            self._table,
            ids,
            limit,
            workspace_id=workspace_id,
            status=status,
            kind=kind,
            consistent=consistent,
        )
        if filtered:
            # the indexes may lag a release without them (rolled back to) until the
            # upgrade files them again: a page never shows a fact the filter refuses
            page = [
                memory
                for memory in page
                if holds_tags(memory, all_tags, any_tags) and holds_metadata(memory.metadata, meta)
            ]
        return MemoryPage(self.with_recall_counts(page), continue_after)

    def tagged_fact_ids(
        self,
        agent_id: str,
        all_tags: Sequence[str],
        any_tags: Sequence[str],
        meta: Sequence[MetaCondition] = (),
    ) -> set[str]:
        """The ids of every active fact of the agent holding every tag of ``all_tags``
        and one of ``any_tags`` and meeting every condition of ``meta``
        (``memory_metadata.filtered_ids``: the tag and metadata indexes only, by key; a
        filtered recall's candidates, docs/reference.md#tags,
        docs/reference.md#metadata-filters)."""
        return set(
            filtered_ids(
                self._table,
                agent_id,
                all_of=all_tags,
                any_of=any_tags,
                meta=meta,
                status=MemoryStatus.ACTIVE.value,
                kind=MemoryKind.FACT.value,
                limit=None,
                after_id=None,
            )
        )

    def _list_ids(
        self,
        workspace_id: str,
        agent_id: str | None,
        status: str | None,
        kind: str | None,
        limit: int,
        after_id: str | None,
    ) -> list[str]:
        if agent_id is not None:
            return agent_list_ids(self._table, agent_id, status, kind, limit, after_id)
        return ids_by_workspace(self._table, workspace_id, status, kind, limit, after_id)

    def live_facts(self, agent_id: str, *, recall_counts: bool = True) -> list[Memory]:
        """Every active fact of the agent, newest first: the ids from ``byAgentKind``, then
        the items (eventually consistent BatchGetItem, as the index read is); with
        ``recall_counts=False`` the counters are left out (what the item holds)."""
        fact, active = MemoryKind.FACT.value, MemoryStatus.ACTIVE.value
        ids = ids_by_agent(self._table, agent_id, [fact], [active], None, None)
        facts, _ = page_of(
            self._table,
            ids,
            len(ids),
            workspace_id=None,
            status=active,
            kind=fact,
            consistent=False,
        )
        return self.with_recall_counts(facts) if recall_counts else facts

    def history(
        self, memory_id: str, limit: int, after_audit_id: str | None = None
    ) -> tuple[list[AuditRecord], str | None]:
        """A page of the memory's audit records, oldest first (they share its partition):
        at most ``limit`` after ``after_audit_id``, read with one key range
        (``key_range_after``), and the audit id to continue after (None at the end)."""
        items = self._table.query(
            KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
            ExpressionAttributeValues=to_attributes(
                {
                    ":pk": memory_key(memory_id)["pk"],
                    **key_range_after(AUDIT_PREFIX, after_audit_id),
                }
            ),
            ConsistentRead=True,
            Limit=limit + 2,
        )
        records = (convert.audit_from_item(item) for item in islice(items, limit + 2))
        return page_after(records, limit, after_audit_id, key=lambda record: record.id)


def _failed(cancelled: TransactionCancelled, position: int) -> bool:
    reasons = cancelled.reasons
    return position < len(reasons) and reasons[position] == "ConditionalCheckFailed"
