"""DynamoDB adapter of the learnings (docs/reference.md#15-learnings): a workspace's learnings in
its own partition (``LEARNINGS#<wsp>``, so a read never crosses workspaces), with the
count of live ones, each agent's proposals per UTC date, the refused texts' index
(rejected and retired), and a copy of each learning filed by its state
(``LEARNINGS#<wsp>#<state>`` / ``<lrn>``, a partition per state), so a recall reads the
active learnings only and a list pages one state (docs/issues.md#issue-41-item-4);
history records under ``LEARNING#<lrn>``.

Every change is one transaction: the learning (conditional on its version, or new),
its history record, the live count (conditional on the limit when it grows), the
proposal counter (conditional on the daily limit), its state copy (the old state's
deleted, the new one's put) and, for a rejection or a retirement, the index entries of
its text. Learnings stored before the state copies existed are filed the first time
the workspace's learnings are read by state (``file_by_state``; the ``STATES`` marker).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from chalicelib.errors import Conflict, LearningLimitReached, RateLimited
from chalicelib.ids import from_rfc3339
from chalicelib.models.learning import Learning, LearningAudit, LearningState
from chalicelib.storage.dynamodb import (
    DynamoDBTable,
    TransactionCancelled,
    put_new,
    to_attributes,
)
from chalicelib.storage.erasure import redacted
from chalicelib.storage.events import event_puts, learning_event
from chalicelib.storage.keys import (
    KV_TTL_ATTRIBUTE,
    LEARNING_STATE_PREFIX,
    learning_audit_key,
    learning_count_key,
    learning_history_partition,
    learning_key,
    learning_rate_key,
    learning_rejected_key,
    learning_state_key,
    learning_state_partition,
    learning_states_marker_key,
    learnings_partition,
)
from chalicelib.storage.recalls import epoch_seconds

_TIMES = ("proposedAt", "decidedAt", "updatedAt")
_FILTERED_PAGE = 100
"""Items one Query reads at a time when a list filters what it reads (a text search)."""


class LearningVersionChanged(Exception):
    """The learning changed since it was read (its version moved on)."""


def learning_to_item(learning: Learning) -> dict[str, Any]:
    """The stored item of a learning, key included."""
    item = {
        **learning_key(learning.workspace_id, learning.id),
        **learning.model_dump(mode="json", by_alias=True, exclude_none=True),
        "version": learning.version,
    }
    if learning.embedding is not None:
        item["embedding"] = learning.embedding
    return item


def _state_copy(learning: Learning) -> dict[str, Any]:
    """The learning's copy filed under its state."""
    return {
        **learning_to_item(learning),
        **learning_state_key(learning.workspace_id, learning.state.value, learning.id),
    }


def learning_from_item(item: dict[str, Any]) -> Learning:
    """Rebuild a learning from its item."""
    fields = {k: v for k, v in item.items() if k not in ("pk", "sk")}
    for name in _TIMES:
        if fields.get(name):
            fields[name] = from_rfc3339(str(fields[name]))
    if "embedding" in fields:
        fields["embedding"] = bytes(fields["embedding"])
    fields["version"] = int(fields.get("version", 1))
    return Learning.model_validate(fields)


def _audit_item(audit: LearningAudit) -> dict[str, Any]:
    return {
        **learning_audit_key(audit.learning_id, audit.id),
        **audit.model_dump(mode="json", by_alias=True, exclude_none=True),
        "workspaceId": audit.workspace_id,
    }


class DynamoDBLearningRepository:
    """Learnings on the single table.

    Args:
        table: the table wrapper.
    """

    def __init__(self, table: DynamoDBTable) -> None:
        self._table = table
        self._filed: set[str] = set()

    def create(
        self,
        learning: Learning,
        audit: LearningAudit,
        *,
        max_live: int,
        proposals_per_day: int | None,
        now: datetime,
    ) -> None:
        """Store a new learning with its ``propose`` record; count it live, and (an
        agent's proposal, ``proposals_per_day``) count the agent's proposal of the day.

        Raises:
            LearningLimitReached: the workspace holds ``max_live`` live learnings.
            RateLimited: the agent made ``proposals_per_day`` proposals today.
        """
        operations = [
            put_new(learning_to_item(learning)),
            put_new(_audit_item(audit)),
            self._count_op(learning.workspace_id, 1, max_live),
        ]
        if proposals_per_day is not None:
            day = now.date().isoformat()
            operations.append(
                {
                    "Update": {
                        "Key": to_attributes(
                            learning_rate_key(learning.workspace_id, learning.proposed_by, day)
                        ),
                        "UpdateExpression": "ADD n :one SET #ttl = :ttl",
                        "ConditionExpression": "attribute_not_exists(n) OR n < :max",
                        "ExpressionAttributeNames": {"#ttl": KV_TTL_ATTRIBUTE},
                        "ExpressionAttributeValues": to_attributes(
                            {
                                ":one": 1,
                                ":max": proposals_per_day,
                                ":ttl": epoch_seconds(now + timedelta(days=2)),
                            }
                        ),
                    }
                }
            )
        operations.append({"Put": {"Item": to_attributes(_state_copy(learning))}})
        operations.extend(event_puts(learning_event(audit, learning)))
        try:
            self._table.transact(operations)
        except TransactionCancelled as cancelled:
            reasons = cancelled.reasons
            if len(reasons) > 2 and reasons[2] == "ConditionalCheckFailed":
                raise LearningLimitReached(
                    f"The workspace holds {max_live} proposed and active learnings, the "
                    "most it may: retire or reject some first."
                ) from cancelled
            if len(reasons) > 3 and reasons[3] == "ConditionalCheckFailed":
                raise RateLimited(
                    f"An agent may propose {proposals_per_day} learnings a day (UTC); "
                    "propose again tomorrow, or ask a person."
                ) from cancelled
            raise

    def change(
        self,
        before: Learning,
        after: Learning,
        audit: LearningAudit,
        *,
        rejected_keys: Sequence[str] = (),
    ) -> None:
        """Replace ``before`` with ``after`` (same id; ``after.version`` is one more) and
        add its history record and its state copy (the old state's removed); a learning
        that leaves the live states is counted out; ``rejected_keys`` file its text in the
        refused index (a rejection or a retirement).

        Raises:
            LearningVersionChanged: it changed since ``before`` was read.
        """
        live = (LearningState.PROPOSED, LearningState.ACTIVE)
        operations: list[dict[str, Any]] = [
            {
                "Put": {
                    "Item": to_attributes(learning_to_item(after)),
                    "ConditionExpression": "version = :v",
                    "ExpressionAttributeValues": to_attributes({":v": before.version}),
                }
            },
            put_new(_audit_item(audit)),
        ]
        if before.state in live and after.state not in live:
            operations.append(self._count_op(after.workspace_id, -1, None))
        operations.extend(self._refused_entry(after, key) for key in rejected_keys)
        if before.state is not after.state:
            key = learning_state_key(before.workspace_id, before.state.value, before.id)
            operations.append({"Delete": {"Key": to_attributes(key)}})
        operations.append({"Put": {"Item": to_attributes(_state_copy(after))}})
        operations.extend(event_puts(learning_event(audit, after)))
        try:
            self._table.transact(operations)
        except TransactionCancelled as cancelled:
            if cancelled.reasons and cancelled.reasons[0] == "ConditionalCheckFailed":
                raise LearningVersionChanged(after.id) from cancelled
            raise

    def get(self, workspace_id: str, learning_id: str) -> Learning | None:
        """The learning of the workspace (strongly consistent), or None."""
        found = self._table.get(learning_key(workspace_id, learning_id))
        return None if found is None else learning_from_item(found)

    def list_learnings(self, workspace_id: str, *, consistent: bool = True) -> list[Learning]:
        """Every learning of the workspace, newest first."""
        rows = self._table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :learning)",
            ExpressionAttributeValues=to_attributes(
                {":pk": learnings_partition(workspace_id), ":learning": "LEARNING#"}
            ),
            ConsistentRead=consistent,
            ScanIndexForward=False,
        )
        return [learning_from_item(row) for row in rows]

    def in_state(
        self,
        workspace_id: str,
        state: LearningState,
        *,
        consistent: bool = True,
        limit: int | None = None,
    ) -> list[Learning]:
        """The workspace's learnings in ``state``, newest first, at most ``limit`` (reads
        those only: their copies filed by state)."""
        found, _ = self.page(
            workspace_id, state=state, limit=limit, after=None, consistent=consistent
        )
        return found

    def page(
        self,
        workspace_id: str,
        *,
        state: LearningState | None,
        limit: int | None,
        after: str | None,
        keep: Callable[[Learning], bool] | None = None,
        consistent: bool = True,
    ) -> tuple[list[Learning], str | None]:
        """One page of the workspace's learnings newest first: those in ``state`` (its
        copies; ``None``: every learning), older than ``after`` (a learning id), that
        ``keep`` accepts; at most ``limit`` (``None``: all), and the id to continue after
        (None: the list ends). Reads DynamoDB pages of ``limit + 2`` items (more when
        ``keep`` filters) and stops as soon as the page is full."""
        prefix = "LEARNING#" if state is None else LEARNING_STATE_PREFIX
        partition = (
            learnings_partition(workspace_id)
            if state is None
            else learning_state_partition(workspace_id, state.value)
        )
        request: dict[str, Any] = {
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :low AND :high",
            "ExpressionAttributeValues": to_attributes(
                {
                    ":pk": partition,
                    ":low": prefix,
                    # a state copy's sort key is the id itself (``lrn_…``)
                    ":high": prefix + "\U0010ffff"
                    if after is None
                    else (after if state is not None else prefix + after),
                }
            ),
            "ConsistentRead": consistent,
            "ScanIndexForward": False,
        }
        if limit is not None:
            request["Limit"] = limit + 2 if keep is None else max(limit + 2, _FILTERED_PAGE)
        found: list[Learning] = []
        for row in self._table.query(**request):
            learning = learning_from_item(row)
            if learning.id == after or (keep is not None and not keep(learning)):
                continue
            found.append(learning)
            if limit is not None and len(found) > limit:
                break
        if limit is None or len(found) <= limit:
            return found, None
        return found[:limit], found[limit - 1].id

    def file_by_state(
        self, workspace_id: str, refused_keys: Callable[[str], Sequence[str]]
    ) -> None:
        """File the workspace's learnings stored before the state copies existed (once:
        the ``STATES`` marker; remembered by this process): each one's copy under its
        state, conditional on its version (a learning changed meanwhile was filed by its
        change), and a retired one's text in the refused index (``refused_keys``)."""
        if workspace_id in self._filed:
            return
        if self._table.get(learning_states_marker_key(workspace_id)) is None:
            for learning in self.list_learnings(workspace_id):
                operations: list[dict[str, Any]] = [
                    {
                        "ConditionCheck": {
                            "Key": to_attributes(learning_key(workspace_id, learning.id)),
                            "ConditionExpression": "version = :v",
                            "ExpressionAttributeValues": to_attributes({":v": learning.version}),
                        }
                    },
                    {"Put": {"Item": to_attributes(_state_copy(learning))}},
                ]
                if learning.state is LearningState.RETIRED:
                    operations.extend(
                        self._refused_entry(learning, key) for key in refused_keys(learning.text)
                    )
                try:
                    self._table.transact(operations)
                except (TransactionCancelled, Conflict):
                    continue  # changed since read (its change filed it), or filed beside us
            marker = {**learning_states_marker_key(workspace_id), "workspaceId": workspace_id}
            # concurrent first reads all file the same copies; the marker that lands first
            # is enough, and this read goes on (the copies are in place)
            with contextlib.suppress(Conflict):
                self._table.transact([{"Put": {"Item": to_attributes(marker)}}])
        self._filed.add(workspace_id)

    def rejected(self, workspace_id: str, keys: list[str]) -> set[str]:
        """The ids of rejected (or retired) learnings filed under any of ``keys``."""
        found = self._table.batch_get([learning_rejected_key(workspace_id, key) for key in keys])
        return {str(item["learningId"]) for item in found}

    def history(self, learning_id: str) -> list[LearningAudit]:
        """The learning's records, oldest first."""
        rows = self._table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :audit)",
            ExpressionAttributeValues=to_attributes(
                {":pk": f"LEARNING#{learning_id}", ":audit": "AUDIT#"}
            ),
            ConsistentRead=True,
        )
        records = []
        for row in rows:
            fields = {k: v for k, v in row.items() if k not in ("pk", "sk")}
            fields["at"] = from_rfc3339(str(fields["at"]))
            records.append(LearningAudit.model_validate(fields))
        return records

    def blank_history(self, learning_id: str, texts: Sequence[str]) -> int:
        """Remove the texts of the learning's history records (its sources were erased,
        docs/reference.md#erasing-a-memory): each record's ``before``/``after`` text set
        to null, and each of ``texts`` replaced in its ``reason`` (a person's reason may
        quote it). Idempotent; returns how many records were rewritten."""
        quoted = tuple(sorted({text for text in texts if text}, key=len, reverse=True))
        changed = 0
        for row in self._table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :audit)",
            ExpressionAttributeValues=to_attributes(
                {":pk": learning_history_partition(learning_id), ":audit": "AUDIT#"}
            ),
            ConsistentRead=True,
        ):
            update: dict[str, Any] = {}
            for name in ("before", "after"):
                shot = row.get(name)
                if isinstance(shot, dict) and shot.get("text"):
                    update[name] = {**shot, "text": None}
            reason = row.get("reason")
            if isinstance(reason, str) and quoted:
                new = redacted(reason, quoted)
                if new is not reason:
                    update["reason"] = new
            if not update:
                continue
            names = {f"#a{n}": name for n, name in enumerate(update)}
            values = {f":v{n}": value for n, value in enumerate(update.values())}
            self._table.client.update_item(
                TableName=self._table.name,
                Key=to_attributes({"pk": row["pk"], "sk": row["sk"]}),
                UpdateExpression="SET " + ", ".join(f"#a{n} = :v{n}" for n in range(len(update))),
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=to_attributes(values),
            )
            changed += 1
        return changed

    @staticmethod
    def _refused_entry(learning: Learning, key: str) -> dict[str, Any]:
        entry = {
            **learning_rejected_key(learning.workspace_id, key),
            "learningId": learning.id,
            "workspaceId": learning.workspace_id,
        }
        return {"Put": {"Item": to_attributes(entry)}}

    def _count_op(self, workspace_id: str, delta: int, max_live: int | None) -> dict[str, Any]:
        update: dict[str, Any] = {
            "Key": to_attributes(learning_count_key(workspace_id)),
            "UpdateExpression": "ADD live :delta SET workspaceId = :wsp",
            "ExpressionAttributeValues": {":delta": delta, ":wsp": workspace_id},
        }
        if max_live is not None:
            update["ConditionExpression"] = "attribute_not_exists(live) OR live < :max"
            update["ExpressionAttributeValues"][":max"] = max_live
        update["ExpressionAttributeValues"] = to_attributes(update["ExpressionAttributeValues"])
        return {"Update": update}
