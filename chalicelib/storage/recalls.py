"""DynamoDB adapter of ``RecallRepository``: the recall log and run-start session state,
written in one transaction, then the recall counters, one plain ``UpdateItem`` per counter
page (``keys.RECALL_COUNTER_PAGES``), so that concurrent recalls of one agent never
conflict on them. Choices:
docs/DECISIONS.md#recall-counters-off-the-transaction-issue-23-item-2."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from chalicelib.errors import Conflict, RateLimited
from chalicelib.ids import Clock, SystemClock, from_rfc3339, to_rfc3339, ulid_floor
from chalicelib.models.recall import RecallLogEntry
from chalicelib.models.totals import ListTotal
from chalicelib.storage import items as convert
from chalicelib.storage.aws_errors import error_code
from chalicelib.storage.counting import count_newest_first
from chalicelib.storage.dynamodb import DynamoDBTable, TransactionCancelled, to_attributes
from chalicelib.storage.keys import (
    KV_TTL_ATTRIBUTE,
    epoch_microseconds,
    recall_counter_key,
    recall_counter_page,
    recall_log_key,
    recall_log_partition,
    session_key,
)
from chalicelib.storage.owner_marks import owner_mark_put
from chalicelib.storage.protocols import SessionAlreadyRecalled, SessionClaim

logger = logging.getLogger(__name__)

_SESSION_POSITION = 1
"""Where the session claim sits in the recall's transaction (after the log entry)."""


RECALL_LOG_RETENTION = timedelta(days=90)
"""How long a recall log entry is kept by default (docs/reference.md#retention;
``PINEWORK_RECALL_LOG_RETENTION_DAYS``)."""
SESSION_RETENTION = timedelta(days=2)
"""How long a run-start session's state is kept: it only answers whether the session had
a run-start recall in the last 24 hours (docs/reference.md#8-recall)."""


def epoch_seconds(moment: datetime) -> int:
    """Whole epoch seconds of an aware datetime, rounded up (a TTL never ends early)."""
    return -(-epoch_microseconds(moment) // 1_000_000)


def log_entry_to_item(
    entry: RecallLogEntry, retention: timedelta = RECALL_LOG_RETENTION
) -> dict[str, Any]:
    """Return the stored item of a recall log entry (memories as a JSON string), with the
    table's TTL attribute ``retention`` after the recall (docs/reference.md#retention)."""
    item: dict[str, Any] = {
        **recall_log_key(entry.agent_id, entry.id),
        KV_TTL_ATTRIBUTE: epoch_seconds(entry.at + retention),
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
    if entry.learnings:
        item["learnings"] = json.dumps(
            [[m.learning_id, m.score] for m in entry.learnings], separators=(",", ":")
        )
    if entry.sections:
        item["sections"] = json.dumps(
            [[m.page_id, m.index, m.anchor, m.score] for m in entry.sections],
            separators=(",", ":"),
        )
    if entry.wiki_failed:
        item["wikiFailed"] = True
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
            "learnings": [
                {"learningId": learning_id, "score": score}
                for learning_id, score in json.loads(item.get("learnings", "[]"))
            ],
            "sections": [
                {"pageId": page_id, "index": index, "anchor": anchor, "score": score}
                for page_id, index, anchor, score in json.loads(item.get("sections", "[]"))
            ],
            "wikiFailed": bool(item.get("wikiFailed", False)),
        }
    )


def _session_put(claim: SessionClaim, now: datetime) -> dict[str, Any]:
    put: dict[str, Any] = {
        "Item": to_attributes(
            {
                **session_key(claim.agent_id, claim.session_id),
                "entity": "session",
                "lastStartRecallAt": to_rfc3339(now),
                KV_TTL_ATTRIBUTE: epoch_seconds(now + SESSION_RETENTION),
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
        clock: the current time (what the log's retention window is counted from).
        retention: how long log entries are kept (docs/reference.md#retention): they
            carry the TTL attribute, and reads skip older ones (DynamoDB deletes expired
            items up to days late).
    """

    def __init__(
        self,
        table: DynamoDBTable,
        clock: Clock | None = None,
        retention: timedelta = RECALL_LOG_RETENTION,
    ) -> None:
        self._table = table
        self._clock = clock or SystemClock()
        self._retention = retention

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
        """Log the recall and record the session atomically, then count it once on each
        memory (docs/reference.md#counting).

        The log entry and the session claim are one TransactWriteItems (two items: the
        claim's condition makes "check and record" one step). The counters follow, one
        plain ``UpdateItem`` per counter page the memories fall on (``count_recall_update``),
        outside any transaction: atomic ``ADD``s of concurrent recalls do not conflict.

        The log entry is the record of the recall. A counter page whose update fails
        after it (throttled past botocore's retries, an error, the process gone) is left
        uncounted, never sent again: counters may under-count a recall, never count it
        twice; a failure there is logged, and the recall still succeeds.

        Args:
            memory_ids: the memories the recall returned (a repeated id counts once).
            entry: the log entry (its ``id`` guards each page against a second apply).
            now: the recall's time (``lastRecalledAt``).
            session: the run-start session claim, or None for an on-demand recall.

        Raises:
            SessionAlreadyRecalled: the resumed session had a run-start recall
                within 24 hours (another run won the race); nothing was written or counted.
            RateLimited: the log transaction was throttled (429); nothing was counted.
            Conflict: the log transaction kept conflicting (409); nothing was counted.
        """
        operations: list[dict[str, Any]] = [
            {
                "Put": {
                    "Item": to_attributes(log_entry_to_item(entry, self._retention)),
                    # A new log id never overwrites an entry.
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            }
        ]
        if session is not None:
            operations.append(_session_put(session, now))
            # Its owner mark: an erasure finds the session by its agent (owner_marks.py).
            operations.append(
                owner_mark_put(
                    session.agent_id,
                    session_key(session.agent_id, session.session_id),
                    epoch_seconds(now + SESSION_RETENTION),
                )
            )
        try:
            self._table.transact(operations)
        except TransactionCancelled as cancelled:
            claim = cancelled.reasons[_SESSION_POSITION : _SESSION_POSITION + 1]
            if session is not None and claim == ["ConditionalCheckFailed"]:
                raise SessionAlreadyRecalled() from cancelled
            raise
        pages: dict[int, list[str]] = {}
        for memory_id in dict.fromkeys(memory_ids):
            pages.setdefault(recall_counter_page(memory_id), []).append(memory_id)
        for page, ids in sorted(pages.items()):
            self._count_page(count_recall_update(entry.agent_id, page, ids, now, entry.id))

    def _count_page(self, update: dict[str, Any]) -> None:
        try:
            self._table.client.update_item(TableName=self._table.name, **update["Update"])
        except ClientError as error:
            # ConditionalCheckFailed: the guard found this recall already applied (botocore
            # sent the request again after its first attempt was applied): counted once.
            if error_code(error) != "ConditionalCheckFailedException":
                _uncounted(update, error)
        except (RateLimited, Conflict, BotoCoreError) as error:
            _uncounted(update, error)

    def list_log(
        self, agent_id: str, limit: int, after_id: str | None
    ) -> tuple[list[RecallLogEntry], str | None]:
        """An agent's recall log, newest first, without entries past their retention
        (one key range: ids are ULIDs); returns the id to continue after."""
        oldest = f"rcl_{ulid_floor(self._clock.now() - self._retention)}"
        request: dict[str, Any] = {
            "KeyConditionExpression": "pk = :pk AND sk >= :oldest",
            "ExpressionAttributeValues": to_attributes(
                {":pk": recall_log_partition(agent_id), ":oldest": oldest}
            ),
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

    def log_entry(self, agent_id: str, recall_id: str) -> RecallLogEntry | None:
        """One entry of the agent's recall log by id (one GetItem), or None when there is
        none or it is past its retention (TTL deletion lags)."""
        item = self._table.get(recall_log_key(agent_id, recall_id))
        if item is None:
            return None
        entry = log_entry_from_item(item)
        return None if entry.at < self._clock.now() - self._retention else entry

    def count_log(self, agent_id: str, after_id: str | None, cap: int) -> ListTotal:
        """How many entries ``list_log`` lists (those inside the retention) and how many
        are newer than the page after ``after_id``: ``Select=COUNT`` of the agent's
        ``RECALLS#`` partition, at most ``cap`` entries read
        (docs/reference.md#list-totals)."""
        oldest = f"rcl_{ulid_floor(self._clock.now() - self._retention)}"
        return count_newest_first(
            self._table, recall_log_partition(agent_id), oldest, after_id, cap=cap
        )

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


def count_recall_update(
    agent_id: str, page: int, memory_ids: Sequence[str], now: datetime, recall_id: str
) -> dict[str, Any]:
    """The update that counts one recall on the memories of one counter page
    (docs/reference.md#counting: ``recallCount + 1``, ``lastRecalledAt = now``;
    ``keys.RECALL_COUNTER_PAGES``), as a transaction ``Update`` action; its body is
    the ``UpdateItem`` request (without ``TableName``) that ``commit_recall`` sends.

    Counters are not a state change: no version bump, no audit record. ``ADD`` creates
    the page (and each memory's counter) on first use. The page keeps the id of the
    last recall applied to it (``items.RECALL_GUARD_ATTRIBUTE``) and the condition
    refuses that same recall again, so a request botocore sends again after a lost
    answer does not count twice (unless another recall's update of the page came
    between the two attempts). Never put it in a transaction: a transaction writing a
    page conflicts with concurrent recalls' updates of it
    (docs/DECISIONS.md#recall-counters-off-the-transaction-issue-23-item-2).

    Args:
        agent_id: the agent whose counters they are.
        page: the counter page (0-189) every one of ``memory_ids`` falls on.
        memory_ids: distinct memory ids (one ``ADD`` and one ``SET`` each).
        now: the recall's time.
        recall_id: the recall's log id (``rcl_…``).

    Returns:
        ``{"Update": {"Key", "UpdateExpression", "ConditionExpression",
        "ExpressionAttributeNames", "ExpressionAttributeValues"}}``.
    """
    names = {"#entity": "entity", "#last": convert.RECALL_GUARD_ATTRIBUTE}
    adds, sets = [], ["#entity = :entity", "#last = :recall"]
    for position, memory_id in enumerate(memory_ids):
        names[f"#n{position}"] = f"{convert.RECALL_COUNT_PREFIX}{memory_id}"
        names[f"#t{position}"] = f"{convert.RECALLED_AT_PREFIX}{memory_id}"
        adds.append(f"#n{position} :one")
        sets.append(f"#t{position} = :now")
    values = {
        ":one": 1,
        ":now": to_rfc3339(now),
        ":entity": "recall_counters",
        ":recall": recall_id,
    }
    return {
        "Update": {
            "Key": to_attributes(recall_counter_key(agent_id, page)),
            "UpdateExpression": f"ADD {', '.join(adds)} SET {', '.join(sets)}",
            # Not this recall again: botocore may send a request twice (count once).
            "ConditionExpression": "attribute_not_exists(#last) OR #last <> :recall",
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": to_attributes(values),
        }
    }


def _uncounted(update: dict[str, Any], error: Exception) -> None:
    # The log entry stands and the recall succeeds; sending the page again could count twice.
    key = update["Update"]["Key"]
    logger.warning(
        "recall counters of %s %s not written (%s): under-counted by one recall",
        key["pk"]["S"],
        key["sk"]["S"],
        error_code(error) if isinstance(error, ClientError) else type(error).__name__,
    )
