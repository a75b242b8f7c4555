"""The DynamoDB reader behind the as-of views (docs/reference.md#as-of-a-moment): a
memory's audit records up to a moment, newest first, and the ids of an agent's memories
created up to a moment, newest first; both by key, never a Scan.

Ids are ULIDs whose first 10 characters are the creation time in milliseconds
(``chalicelib.ids``), so "created by T" is a sort-key bound: on the ``byAgentKind``
index for memories, on the memory's own partition for its audit records.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta

from chalicelib.ids import ulid_floor
from chalicelib.models.memory import AuditRecord, MemoryKind, MemoryStatus
from chalicelib.storage import items as convert
from chalicelib.storage.dynamodb import DynamoDBTable, to_attributes
from chalicelib.storage.keys import AUDIT_PREFIX, memory_key
from chalicelib.storage.memory_index import ids_by_agent


def ulid_time_bound(prefix: str, moment: datetime) -> str:
    """The smallest ``{prefix}_{ULID}`` id made after ``moment``'s millisecond: every id
    made at or before it sorts below."""
    return f"{prefix}_{ulid_floor(moment + timedelta(milliseconds=1))}"


class DynamoDBAsOfReader:
    """``AsOfReader`` (``chalicelib.services.memory.as_of``) on the single table.

    Args:
        table: the wrapped table.
    """

    def __init__(self, table: DynamoDBTable) -> None:
        self._table = table

    def records_until(self, memory_id: str, moment: datetime) -> Iterator[AuditRecord]:
        """The memory's audit records made up to ``moment`` (by their ULID's
        millisecond), newest first: one strongly consistent Query on the memory's
        partition, read only as far as the caller iterates (pages of 16 records)."""
        items = self._table.query(
            KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
            ExpressionAttributeValues=to_attributes(
                {
                    ":pk": memory_key(memory_id)["pk"],
                    ":low": AUDIT_PREFIX,
                    ":high": AUDIT_PREFIX + ulid_time_bound("aud", moment),
                }
            ),
            ScanIndexForward=False,
            ConsistentRead=True,
            Limit=16,
        )
        return (convert.audit_from_item(item) for item in items)

    def ids_created_until(
        self,
        agent_id: str,
        kinds: Sequence[MemoryKind],
        moment: datetime,
        limit: int,
        after_id: str | None,
    ) -> list[str]:
        """The newest ``limit`` ids of the agent's memories of ``kinds`` (any status,
        erased ones included) created up to ``moment`` and older than ``after_id``: one
        keys-only Query per kind and status on ``byAgentKind`` (``ids_by_agent``)."""
        bound = ulid_time_bound("mem", moment)
        below = bound if after_id is None else min(bound, after_id)
        return ids_by_agent(
            self._table,
            agent_id,
            [kind.value for kind in kinds],
            [status.value for status in MemoryStatus],
            limit,
            below,
        )
