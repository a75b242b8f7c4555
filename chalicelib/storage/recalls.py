"""DynamoDB adapter of ``RecallRepository``: recall counters, the recall log and
run-start session state, written together (docs/issues.md#issue-3: a recall makes at most two
write requests however many memories it returns; see ``keys.RECALL_COUNTER_PAGES``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from chalicelib.ids import from_rfc3339, to_rfc3339
from chalicelib.models.recall import RecallLogEntry
from chalicelib.storage.dynamodb import DynamoDBTable, TransactionCancelled, to_attributes
from chalicelib.storage.keys import (
    recall_counter_page,
    recall_log_key,
    recall_log_partition,
    session_key,
)
from chalicelib.storage.memories import count_recall_update
from chalicelib.storage.protocols import SessionAlreadyRecalled, SessionClaim

_TRANSACTION_ITEMS = 100
_RETRIES = 3


def log_entry_to_item(entry: RecallLogEntry) -> dict[str, Any]:
    """Return the stored item of a recall log entry (memories as a JSON string)."""
    item: dict[str, Any] = {
        **recall_log_key(entry.agent_id, entry.id),
        "entity": "recall",
        "id": entry.id,
        "workspaceId": entry.workspace_id,
        "agentId": entry.agent_id,
        "kind": entry.kind,
        "query": entry.query,
        "at": to_rfc3339(entry.at),
        "memories": json.dumps(
            [[m.memory_id, m.score] for m in entry.memories], separators=(",", ":")
        ),
    }
    for name, value in (
        ("sessionId", entry.session_id),
        ("runId", entry.run_id),
        ("taskKey", entry.task_key),
        ("fallback", entry.fallback),
    ):
        if value is not None:
            item[name] = value
    return item


def log_entry_from_item(item: dict[str, Any]) -> RecallLogEntry:
    """Rebuild a recall log entry from its stored item."""
    return RecallLogEntry.model_validate(
        {
            "id": item["id"],
            "workspaceId": item["workspaceId"],
            "agentId": item["agentId"],
            "kind": item["kind"],
            "sessionId": item.get("sessionId"),
            "runId": item.get("runId"),
            "taskKey": item.get("taskKey"),
            "query": item["query"],
            "fallback": item.get("fallback"),
            "at": from_rfc3339(item["at"]),
            "memories": [
                {"memoryId": memory_id, "score": score}
                for memory_id, score in json.loads(item["memories"])
            ],
        }
    )


def _session_put(claim: SessionClaim, now: datetime) -> dict[str, Any]:
    put: dict[str, Any] = {
        "Item": to_attributes(
            {
                **session_key(claim.agent_id, claim.session_id),
                "entity": "session",
                "lastStartRecallAt": to_rfc3339(now),
            }
        )
    }
    if claim.resumed:
        # A resumed session gets one run-start recall per 24 hours (docs/reference.md#8-recall):
        # the condition makes "check and record" one atomic step.
        put["ConditionExpression"] = "attribute_not_exists(pk) OR #last < :cutoff"
        put["ExpressionAttributeNames"] = {"#last": "lastStartRecallAt"}
        put["ExpressionAttributeValues"] = to_attributes({":cutoff": to_rfc3339(claim.cutoff)})
    return {"Put": put}


class DynamoDBRecallRepository:
    """``RecallRepository`` on the single table.

    Args:
        table: the wrapped table.
    """

    def __init__(self, table: DynamoDBTable) -> None:
        self._table = table

    def session_recalled_at(self, agent_id: str, session_id: str) -> datetime | None:
        """When the session last had a run-start recall, or None."""
        found = self._table.get(session_key(agent_id, session_id))
        return None if found is None else from_rfc3339(found["lastStartRecallAt"])

    def commit_recall(
        self,
        memory_ids: Sequence[str],
        entry: RecallLogEntry,
        now: datetime,
        session: SessionClaim | None = None,
    ) -> None:
        """Count the recall on each memory, log it, and record the session, atomically.

        The counters are grouped by counter page (``keys.RECALL_COUNTER_PAGES``, 190):
        one TransactWriteItems holds the log entry, the session and up to 98 pages, a
        second one the rest, so at most two write requests for any number of memories.

        Raises:
            SessionAlreadyRecalled: the resumed session had a run-start recall
                within 24 hours (another run won the race); nothing was written.
        """
        head: list[dict[str, Any]] = [
            {
                "Put": {
                    "Item": to_attributes(log_entry_to_item(entry)),
                    # A new log id never overwrites an entry.
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            }
        ]
        if session is not None:
            head.append(_session_put(session, now))
        pages: dict[int, list[str]] = {}
        for memory_id in dict.fromkeys(memory_ids):
            pages.setdefault(recall_counter_page(memory_id), []).append(memory_id)
        counters = [
            count_recall_update(entry.agent_id, page, ids, now)
            for page, ids in sorted(pages.items())
        ]
        room = _TRANSACTION_ITEMS - len(head)
        self._transact(head + counters[:room], session_position=1 if session is not None else None)
        for start in range(room, len(counters), _TRANSACTION_ITEMS):
            self._transact(counters[start : start + _TRANSACTION_ITEMS])

    def _transact(
        self, operations: list[dict[str, Any]], session_position: int | None = None
    ) -> None:
        for attempt in range(_RETRIES):
            try:
                self._table.transact(operations)
                return
            except TransactionCancelled as cancelled:
                reasons = cancelled.reasons
                if (
                    session_position is not None
                    and session_position < len(reasons)
                    and reasons[session_position] == "ConditionalCheckFailed"
                ):
                    raise SessionAlreadyRecalled() from cancelled
                if attempt == _RETRIES - 1:
                    raise

    def list_log(
        self, agent_id: str, limit: int, after_id: str | None
    ) -> tuple[list[RecallLogEntry], str | None]:
        """An agent's recall log, newest first; returns the id to continue after."""
        request: dict[str, Any] = {
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": to_attributes({":pk": recall_log_partition(agent_id)}),
            "ScanIndexForward": False,
            "Limit": limit + 1,
        }
        if after_id is not None:
            request["ExclusiveStartKey"] = to_attributes(recall_log_key(agent_id, after_id))
        entries: list[RecallLogEntry] = []
        for item in self._table.query(**request):
            entries.append(log_entry_from_item(item))
            if len(entries) > limit:
                break
        if len(entries) > limit:
            return entries[:limit], entries[limit - 1].id
        return entries, None

    def recall_times(self, agent_id: str, since: datetime) -> list[datetime]:
        """When each of the agent's recalls since ``since`` was made, oldest first
        (one key range of the log: ids are ULIDs, so ``rcl_`` + the time part of
        ``since`` bounds it; only ``at`` is read)."""
        items = self._table.query(
            KeyConditionExpression="pk = :pk AND sk >= :low",
            ExpressionAttributeValues=to_attributes(
                {":pk": recall_log_partition(agent_id), ":low": f"rcl_{ulid_floor(since)}"}
            ),
            ProjectionExpression="#at",
            ExpressionAttributeNames={"#at": "at"},
        )
        return [from_rfc3339(item["at"]) for item in items]


def ulid_floor(moment: datetime) -> str:
    """The smallest ULID of ``moment``'s millisecond (its time part, then zeros)."""
    from ulid import ULID  # on first use: its import costs every cold start (chalicelib/ids.py)

    return str(ULID.from_datetime(moment))[:10] + "0" * 16
