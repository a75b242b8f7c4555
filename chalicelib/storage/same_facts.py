"""The shared-facts index (docs/reference.md#learnings-and-the-review, docs/issues.md#issue-41
item 3): an entry per live fact under its workspace and the digest of its normalized text
(``SAMEFACT#<wsp>#<digest>`` / ``<agt>#<mem>``; ids only, no text), so an agent's review
finds the other agents holding one of its facts with one Query per fact, whatever the
number of agents in the workspace.

Every memory write keeps it in step inside the write's own transaction
(``same_fact_writes``, called by ``recall_index.index_writes``, which every memory
transaction carries: save, supersede, archive, veto, unarchive, the review's changes):
an active fact has its entry, any other memory none. Facts saved before the index
existed are filed by their agent's first review (``DynamoDBSameFacts.file_agent``, the
``SAMEFACTS#<agt>`` marker). An entry is a candidate only: the review confirms each one
against the stored memory (live, unexpired, same workspace, same text).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice
from typing import Any

from chalicelib.models.memory import Memory, MemoryKind, MemoryStatus
from chalicelib.normalized import content_digest
from chalicelib.storage.dynamodb import DynamoDBTable, to_attributes
from chalicelib.storage.keys import (
    same_fact_key,
    same_fact_partition,
    same_facts_marker_key,
)

COPIES_READ = 25
"""Entries one look reads at most per fact (the agent's own included): the review cites
that many copies at most, however many agents hold a fact."""
_FILE_BATCH = 25
"""Entries one transaction files (the backfill of an agent's earlier facts)."""


def _filed(memory: Memory | None) -> bool:
    return (
        memory is not None
        and memory.kind is MemoryKind.FACT
        and memory.status is MemoryStatus.ACTIVE
    )


def same_fact_entry(memory: Memory) -> dict[str, Any]:
    """The index item of a live fact (ids only)."""
    return {
        **same_fact_key(
            memory.workspace_id, content_digest(memory.text), memory.agent_id, memory.id
        ),
        "agentId": memory.agent_id,
        "memoryId": memory.id,
        "workspaceId": memory.workspace_id,
    }


def same_fact_writes(before: Memory | None, after: Memory) -> list[dict[str, Any]]:
    """The transaction actions keeping the index in step with a memory going from
    ``before`` (``None``: new) to ``after``: a Put of the entry when it becomes a live
    fact (or its text changes), a Delete when it stops being one. Unconditional: the
    memory's own write in the transaction carries the condition."""
    was, now = _filed(before), _filed(after)
    operations: list[dict[str, Any]] = []
    same_text = before is not None and content_digest(before.text) == content_digest(after.text)
    if was and before is not None and (not now or not same_text):
        key = same_fact_key(
            before.workspace_id, content_digest(before.text), before.agent_id, before.id
        )
        operations.append({"Delete": {"Key": to_attributes(key)}})
    if now and (not was or not same_text):
        operations.append({"Put": {"Item": to_attributes(same_fact_entry(after))}})
    return operations


class DynamoDBSameFacts:
    """Reads of the shared-facts index, and the one-time filing of an agent's facts.

    Args:
        table: the table wrapper.
    """

    def __init__(self, table: DynamoDBTable) -> None:
        self._table = table

    def holders(
        self, workspace_id: str, texts: Sequence[str], *, except_agent: str
    ) -> dict[str, list[tuple[str, str]]]:
        """For each distinct normalized text of ``texts`` (by ``content_digest``), the
        ``(agent id, memory id)`` entries of other agents (at most ``COPIES_READ`` read
        per text); texts nobody else holds are left out. One Query per distinct text
        (eventually consistent)."""
        found: dict[str, list[tuple[str, str]]] = {}
        for digest in sorted({content_digest(text) for text in texts}):
            rows = self._table.query(
                KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues=to_attributes(
                    {":pk": same_fact_partition(workspace_id, digest)}
                ),
                ConsistentRead=False,
                Limit=COPIES_READ,
            )
            entries = [
                (str(row["agentId"]), str(row["memoryId"]))
                for row in islice(rows, COPIES_READ)
                if row["agentId"] != except_agent
            ]
            if entries:
                found[digest] = entries
        return found

    def file_agent(self, agent_id: str, live: Sequence[Memory]) -> None:
        """File the agent's live facts (as its review read them) once, for facts saved
        before the index existed; idempotent (an entry is its key)."""
        if self._table.get(same_facts_marker_key(agent_id)) is not None:
            return
        entries = [same_fact_entry(memory) for memory in live if _filed(memory)]
        for start in range(0, len(entries), _FILE_BATCH):
            self._table.transact(
                [
                    {"Put": {"Item": to_attributes(entry)}}
                    for entry in entries[start : start + _FILE_BATCH]
                ]
            )
        marker = {**same_facts_marker_key(agent_id), "agentId": agent_id}
        self._table.transact([{"Put": {"Item": to_attributes(marker)}}])
