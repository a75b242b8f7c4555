"""DynamoDB adapters for what persons do with a review's actions after the review
(docs/issues.md#issue-14-item-2, docs/issues.md#issue-14-item-3): the list of actions
waiting for a person (``PENDING#<wsp>``) and the undo of an applied action
(``REVIEW#<rvw>`` / ``UNDO#<action>``), which restores the memories the action changed in
one transaction. Both expire with their review (``review_expiry``,
docs/reference.md#retention)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from chalicelib.ids import from_rfc3339, to_rfc3339
from chalicelib.models.memory import AuditRecord, Memory
from chalicelib.models.review import ActionUndo, PendingAction, ReviewAction, ReviewSummary
from chalicelib.models.totals import ListTotal
from chalicelib.storage.counting import Condition, count_keyed
from chalicelib.storage.dynamodb import DynamoDBTable, TransactionCancelled, put_new, to_attributes
from chalicelib.storage.events import audited
from chalicelib.storage.keys import (
    UNDO_PREFIX,
    pending_key,
    pending_partition,
    rejection_key,
    review_key,
    review_lookup_key,
    review_lookup_partition,
    review_undo_key,
)
from chalicelib.storage.memories import memory_update
from chalicelib.storage.protocols import UndoTaken, WriteConflict
from chalicelib.storage.recall_index import index_writes
from chalicelib.storage.review_expiry import (
    REVIEW_RETENTION,
    ReviewRetention,
    review_expiry,
    review_kept,
)

_MAX_TRANSACTION_ITEMS = 100
"""DynamoDB's limit on the items of one ``TransactWriteItems``."""

_BATCH_WRITE = 25


def pending_delete(summary: ReviewSummary, action_id: str) -> dict[str, Any]:
    """The transaction item that takes a decided action off the pending list (no
    condition: reviews stored before the list existed have no item)."""
    key = pending_key(summary.workspace_id, summary.agent_id, summary.id, action_id)
    return {"Delete": {"Key": to_attributes(key)}}


def _pending_item(
    pending: PendingAction, workspace_id: str, signatures: Sequence[str], retention: timedelta
) -> Any:
    item: dict[str, Any] = {
        **pending_key(workspace_id, pending.agent_id, pending.review_id, pending.action.id),
        # waitingSince is the review's start: the item expires with its review.
        **review_expiry(pending.waiting_since, retention),
        "entity": "review_pending",
        "reviewId": pending.review_id,
        "agentId": pending.agent_id,
        "date": pending.date,
        "approval": pending.approval,
        "waitingSince": to_rfc3339(pending.waiting_since),
        "action": json.dumps(
            pending.action.model_dump(mode="json", by_alias=True),
            ensure_ascii=False,
            separators=(",", ":"),
        ),
    }
    if signatures:
        item["signatures"] = list(signatures)
    return item


def _pending_from_item(item: dict[str, Any]) -> PendingAction:
    return PendingAction(
        review_id=item["reviewId"],
        agent_id=item["agentId"],
        date=item["date"],
        approval=item["approval"],
        waiting_since=from_rfc3339(item["waitingSince"]),
        action=ReviewAction.model_validate(json.loads(item["action"])),
    )


class DynamoDBPendingRepository(ReviewRetention):
    """``PendingActionRepository`` on the single table.

    Args:
        table: the wrapped table.
        clock: the current time (the retention is counted back from it).
        retention: how long a review is kept after its start: its waiting actions carry
            the TTL attribute, and reads skip those of an older review
            (docs/reference.md#retention).
    """

    def put_pending(
        self,
        workspace_id: str,
        pending: Sequence[PendingAction],
        signatures: dict[str, list[str]],
    ) -> None:
        """Write one list item per waiting action (BatchWriteItem, 25 a request,
        unprocessed items sent again), expiring with its review; ``signatures`` by
        action id."""
        requests = [
            {
                "PutRequest": {
                    "Item": to_attributes(
                        _pending_item(
                            entry,
                            workspace_id,
                            signatures.get(entry.action.id, []),
                            self._retention,
                        )
                    )
                }
            }
            for entry in pending
        ]
        for start in range(0, len(requests), _BATCH_WRITE):
            batch: dict[str, Any] = {self._table.name: requests[start : start + _BATCH_WRITE]}
            while batch:
                response = self._table.client.batch_write_item(RequestItems=batch)
                batch = response.get("UnprocessedItems") or {}

    def list_pending(
        self, workspace_id: str, agent_id: str | None, limit: int, after: str | None
    ) -> tuple[list[PendingAction], str | None]:
        """A page of the workspace's (or one agent's) waiting actions, by agent and
        oldest review first, after the sort key ``after``, without those of a review
        past its retention; and the sort key to continue after (None at the end).

        Reads follow DynamoDB's pages past skipped items, so a page is short only at
        the end; the key to continue after is the last one returned."""
        values: dict[str, Any] = {":pk": pending_partition(workspace_id)}
        condition = "pk = :pk"
        if agent_id is not None:
            condition += " AND begins_with(sk, :agent)"
            values[":agent"] = f"{agent_id}#"
        request: dict[str, Any] = {
            "KeyConditionExpression": condition,
            "ExpressionAttributeValues": to_attributes(values),
            "ConsistentRead": True,
            "Limit": limit + 1,
        }
        if after is not None:
            request["ExclusiveStartKey"] = to_attributes(
                {"pk": pending_partition(workspace_id), "sk": after}
            )
        found: list[tuple[str, PendingAction]] = []
        for item in self._table.query(**request):
            entry = _pending_from_item(item)
            if not review_kept(entry.waiting_since, self._clock, self._retention):
                continue
            found.append((str(item["sk"]), entry))
            if len(found) > limit:
                return [entry for _, entry in found[:limit]], found[limit - 1][0]
        return [entry for _, entry in found], None

    def count_pending(
        self, workspace_id: str, agent_id: str | None, after: str | None, cap: int
    ) -> ListTotal:
        """How many actions wait (the workspace's, or one agent's) and how many of them
        come before the page after the sort key ``after``, as ``list_pending`` lists them
        (without those of a review past its retention): ``Select=COUNT`` of the
        workspace's ``PENDING#`` partition, at most ``cap`` items read, strongly
        consistent as the list is (docs/reference.md#list-totals)."""
        partition = pending_partition(workspace_id)
        keep = Condition(
            "waitingSince >= :kept", {":kept": to_rfc3339(self._clock.now() - self._retention)}
        )
        if agent_id is None:
            listing = Condition("pk = :pk", {":pk": partition})
            ahead = Condition("pk = :pk AND sk <= :cursor", {":pk": partition, ":cursor": after})
        else:
            values = {":pk": partition, ":agent": f"{agent_id}#"}
            listing = Condition("pk = :pk AND begins_with(sk, :agent)", values)
            ahead = Condition(
                "pk = :pk AND sk BETWEEN :agent AND :cursor", {**values, ":cursor": after}
            )
        cursor_key = None if after is None else {"pk": partition, "sk": after}
        return count_keyed(
            self._table,
            listing,
            ahead,
            cursor_key,
            cap=cap,
            consistent=True,
            newest_first=False,
            keep=keep,
        )

    def pending_signatures(self, workspace_id: str, agent_id: str) -> dict[str, str]:
        """Every signature of the agent's waiting actions -> ``"rvw_… a3"`` (an action
        of a review past its retention waits no more: it cannot be decided)."""
        items = self._table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :agent)",
            ExpressionAttributeValues=to_attributes(
                {":pk": pending_partition(workspace_id), ":agent": f"{agent_id}#"}
            ),
            ProjectionExpression="reviewId, signatures, sk, waitingSince",
            ConsistentRead=True,
        )
        found: dict[str, str] = {}
        for item in items:
            waiting_since = from_rfc3339(item["waitingSince"])
            if not review_kept(waiting_since, self._clock, self._retention):
                continue
            action_id = str(item["sk"]).rsplit("#", 1)[-1]
            for signature in item.get("signatures", []):
                found.setdefault(str(signature), f"{item['reviewId']} {action_id}")
        return found


def _overflow(groups: list[list[dict[str, Any]]], room: int) -> list[list[dict[str, Any]]]:
    """Keep in ``groups`` the memories' restores that fit in ``room`` actions (each
    memory's update, audit record and index writes stay together); return the rest
    packed into transactions of at most 100 actions each (an undo of a merge of many
    tagged facts: docs/reference.md#review-undo)."""
    kept: list[list[dict[str, Any]]] = []
    rest: list[list[dict[str, Any]]] = []
    used = 0
    for group in groups:
        if not rest and used + len(group) <= room:
            kept.append(group)
            used += len(group)
        else:
            rest.append(group)
    groups[:] = kept
    transactions: list[list[dict[str, Any]]] = []
    for group in rest:
        if not transactions or len(transactions[-1]) + len(group) > _MAX_TRANSACTION_ITEMS:
            transactions.append([])
        transactions[-1].extend(group)
    return transactions


class DynamoDBUndoRepository:
    """``ReviewUndoRepository`` on the single table.

    Args:
        table: the wrapped table.
        retention: how long a review is kept after its start; its undo records carry
            the TTL attribute of their review (docs/reference.md#retention).
    """

    def __init__(self, table: DynamoDBTable, retention: timedelta = REVIEW_RETENTION) -> None:
        self._table = table
        self._retention = retention

    def record_undo(
        self,
        summary: ReviewSummary,
        undo: ActionUndo,
        changes: Sequence[tuple[Memory, Memory, AuditRecord]],
        signatures: Sequence[str] = (),
    ) -> None:
        """One transaction: the undo record (put new, expiring with the review), every
        memory restored (version-checked) with its audit record, both summary items
        counted, and the action remembered under the agent as undone (``rejection_key``,
        as a rejection is; at most what the transaction's 100 items leave room for).
        Restores past 100 actions (a merge of many tagged facts) follow in transactions
        of their own, each memory's with its audit record and index writes, after the
        record: a memory changed in between is a ``WriteConflict`` with the first ones
        restored (docs/reference.md#review-undo).

        Raises:
            UndoTaken: the action was undone already (the record exists).
            WriteConflict: a memory changed since it was read.
        """
        record = {
            **review_undo_key(summary.id, undo.action_id),
            **review_expiry(summary.started_at, self._retention),
            "entity": "review_undo",
            "reviewId": summary.id,
            "actionId": undo.action_id,
            "undoneBy": undo.undone_by,
            "undoneAt": to_rfc3339(undo.undone_at),
            "detail": undo.detail,
        }
        groups = [
            [
                memory_update(before, after),
                *audited(audit, after),
                *index_writes(before, after),
            ]
            for before, after, audit in changes
        ]
        later = _overflow(groups, _MAX_TRANSACTION_ITEMS - 3)  # the record, the two counts
        operations = [put_new(record), *(action for group in groups for action in group)]
        remembered = {
            "entity": "review_rejection",
            "reviewId": summary.id,
            "actionId": undo.action_id,
            "decidedBy": undo.undone_by,
            "decidedAt": to_rfc3339(undo.undone_at),
            "undone": True,
        }
        room = _MAX_TRANSACTION_ITEMS - len(operations) - 2  # the two summary counts
        for signature in list(dict.fromkeys(signatures))[: max(room, 0)]:
            key = rejection_key(summary.agent_id, signature)
            operations.append({"Put": {"Item": to_attributes({**key, **remembered})}})
        for key in (review_key(summary.agent_id, summary.id), review_lookup_key(summary.id)):
            operations.append(
                {
                    "Update": {
                        "Key": to_attributes(key),
                        "UpdateExpression": "ADD #undone :one",
                        "ExpressionAttributeNames": {"#undone": "undone"},
                        "ExpressionAttributeValues": to_attributes({":one": 1}),
                    }
                }
            )
        try:
            self._table.transact(operations)
        except TransactionCancelled as cancelled:
            if cancelled.reasons and cancelled.reasons[0] == "ConditionalCheckFailed":
                raise UndoTaken(f"{summary.id} {undo.action_id}") from cancelled
            raise WriteConflict(summary.id) from cancelled
        for transaction in later:
            try:
                self._table.transact(transaction)
            except TransactionCancelled as cancelled:
                raise WriteConflict(summary.id) from cancelled

    def list_undos(self, review_id: str) -> list[ActionUndo]:
        """Every undo record of a review (strongly consistent)."""
        items = self._table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues=to_attributes(
                {":pk": review_lookup_partition(review_id), ":prefix": UNDO_PREFIX}
            ),
            ConsistentRead=True,
        )
        return [
            ActionUndo(
                action_id=item["actionId"],
                undone_by=item["undoneBy"],
                undone_at=from_rfc3339(item["undoneAt"]),
                detail=item["detail"],
            )
            for item in items
        ]
