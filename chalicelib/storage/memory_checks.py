"""Transaction conditions on a memory item that other writes depend on (docs/conventions.md#layers:
storage; every state change is conditional, docs/reference.md#4-states)."""

from __future__ import annotations

from typing import Any

from chalicelib.models.memory import Memory, MemoryStatus
from chalicelib.storage.dynamodb import to_attributes
from chalicelib.storage.keys import memory_key


def still_live(memory: Memory) -> dict[str, Any]:
    """A ``ConditionCheck`` that the memory is still active at ``memory.version``: the
    review's keeper of a merge, and a fact the recall index backfill writes an entry
    for, must be exactly the live fact that was read."""
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
