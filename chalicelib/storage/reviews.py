"""DynamoDB and S3 adapters of the review's storage (SPEC §9): system supersedes,
lifted facts with their once-only claim, the per-date claim, report summaries,
persons' decisions on the actions of approval-mode reviews (issue 4 item 6),
and the JSON reports in S3."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from chalicelib.ids import from_rfc3339, to_rfc3339
from chalicelib.models.memory import AuditRecord, Memory, MemoryStatus
from chalicelib.models.review import ActionDecision, ReviewSummary
from chalicelib.storage import items as convert
from chalicelib.storage.aws_errors import S3_THROTTLING, translate_errors
from chalicelib.storage.dynamodb import (
    DynamoDBTable,
    TransactionCancelled,
    put_new,
    to_attributes,
)
from chalicelib.storage.keys import (
    DECISION_PREFIX,
    lift_claim_key,
    memory_key,
    rejection_key,
    rejection_partition,
    review_date_key,
    review_decision_key,
    review_key,
    review_lookup_key,
    review_lookup_partition,
    review_partition,
)
from chalicelib.storage.memories import memory_update
from chalicelib.storage.protocols import DecisionTaken, LiftClaimed, ReviewDateTaken, WriteConflict
from chalicelib.storage.review_actions import pending_delete

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

_RUNNING = "running"
_DONE = "done"
_APPLYING = "applying"
_COUNTER_BY_STATE = {"applied": "applied", "skipped": "skipped", "rejected": "rejected"}
_MAX_REJECTION_ITEMS = 96
"""Signatures remembered per rejection: a transaction holds 100 items, 4 are taken
(the decision, two summary counts, the pending list's item)."""


def _keeper_check(keeper: Memory) -> dict[str, Any]:
    return {
        "ConditionCheck": {
            "Key": to_attributes(memory_key(keeper.id)),
            # The fact that stays must still be the live one the plan saw.
            "ConditionExpression": "#version = :version AND #status = :active",
            "ExpressionAttributeNames": {"#version": "version", "#status": "status"},
            "ExpressionAttributeValues": to_attributes(
                {":version": keeper.version, ":active": MemoryStatus.ACTIVE.value}
            ),
        }
    }


def summary_to_item(summary: ReviewSummary) -> dict[str, Any]:
    """Return the stored item of a review summary (without its key)."""
    return {
        "entity": "review",
        "id": summary.id,
        "workspaceId": summary.workspace_id,
        "agentId": summary.agent_id,
        "date": summary.date,
        "trigger": summary.trigger,
        "reviewer": summary.reviewer,
        "startedAt": to_rfc3339(summary.started_at),
        "finishedAt": to_rfc3339(summary.finished_at),
        "planned": summary.planned,
        "applied": summary.applied,
        "skipped": summary.skipped,
        "reportKey": summary.report_key,
        "approval": summary.approval,
        "pending": summary.pending,
        "rejected": summary.rejected,
        "undone": summary.undone,
    }


def summary_from_item(item: dict[str, Any]) -> ReviewSummary:
    """Rebuild a review summary from its stored item."""
    return ReviewSummary(
        id=item["id"],
        workspace_id=item["workspaceId"],
        agent_id=item["agentId"],
        date=item["date"],
        trigger=item["trigger"],
        reviewer=item["reviewer"],
        started_at=from_rfc3339(item["startedAt"]),
        finished_at=from_rfc3339(item["finishedAt"]),
        planned=int(item["planned"]),
        applied=int(item["applied"]),
        skipped=int(item["skipped"]),
        report_key=item["reportKey"],
        approval=item.get("approval", "none"),
        pending=int(item.get("pending", 0)),
        rejected=int(item.get("rejected", 0)),
        undone=int(item.get("undone", 0)),
    )


def decision_to_item(review_id: str, decision: ActionDecision) -> dict[str, Any]:
    """Return the stored item of a decision on one review action, key included."""
    item: dict[str, Any] = {
        **review_decision_key(review_id, decision.action_id),
        "entity": "review_decision",
        "reviewId": review_id,
        "actionId": decision.action_id,
        "state": decision.state,
    }
    optional = {
        "decidedBy": decision.decided_by,
        "decidedAt": None if decision.decided_at is None else to_rfc3339(decision.decided_at),
        "detail": decision.detail,
        "createdId": decision.created_id,
        "keepId": decision.keep_id,
    }
    item.update({name: value for name, value in optional.items() if value is not None})
    return item


def decision_from_item(item: dict[str, Any]) -> ActionDecision:
    """Rebuild a decision from its stored item (the claim id stays in storage)."""
    decided_at = item.get("decidedAt")
    return ActionDecision(
        action_id=item["actionId"],
        state=item["state"],
        decided_by=item.get("decidedBy"),
        decided_at=None if decided_at is None else from_rfc3339(decided_at),
        detail=item.get("detail"),
        created_id=item.get("createdId"),
        keep_id=item.get("keepId"),
    )


def _count_decision(key: dict[str, str], state: str) -> dict[str, Any]:
    """An Update moving one summary item's counts: one pending less, one ``state`` more."""
    return {
        "Update": {
            "Key": to_attributes(key),
            "UpdateExpression": "ADD #pending :minus, #counter :one",
            # The summary exists and still counts an undecided action: a decision
            # is counted once, and the counts never go below zero.
            "ConditionExpression": "attribute_exists(pk) AND #pending > :zero",
            "ExpressionAttributeNames": {
                "#pending": "pending",
                "#counter": _COUNTER_BY_STATE[state],
            },
            "ExpressionAttributeValues": to_attributes({":minus": -1, ":one": 1, ":zero": 0}),
        }
    }


class DynamoDBReviewRepository:
    """``ReviewRepository`` on the single table.

    Args:
        table: the wrapped table.
    """

    def __init__(self, table: DynamoDBTable) -> None:
        self._table = table

    def supersede_by_existing(
        self, old_before: Memory, old_after: Memory, keeper: Memory, audit: AuditRecord
    ) -> None:
        """One transaction: the old fact archived (version-checked), the keeper
        checked live and unchanged, the audit record written.

        Raises:
            WriteConflict: either memory changed since it was read.
        """
        try:
            self._table.transact(
                [
                    memory_update(old_before, old_after),
                    _keeper_check(keeper),
                    put_new(convert.audit_to_item(audit)),
                ]
            )
        except TransactionCancelled as cancelled:
            raise WriteConflict(old_before.id) from cancelled

    def create_lifted(
        self,
        fact: Memory,
        audits: Sequence[AuditRecord],
        text_digest: str,
        replaced: tuple[Memory, Memory] | None = None,
    ) -> None:
        """One transaction: the fact, its audits, the lift claim (and the replaced fact).

        Raises:
            LiftClaimed: the claim exists (lifted before, even if since vetoed).
            WriteConflict: the replaced fact changed since it was read.
        """
        claim = {**lift_claim_key(fact.agent_id, text_digest), "memoryId": fact.id}
        operations = [
            put_new(convert.memory_to_item(fact)),
            # attribute_not_exists: a text is lifted once per agent, ever (a retried
            # review never lifts twice; a vetoed lift never comes back).
            put_new(claim),
            *(put_new(convert.audit_to_item(audit)) for audit in audits),
        ]
        if replaced is not None:
            operations.append(memory_update(*replaced))
        try:
            self._table.transact(operations)
        except TransactionCancelled as cancelled:
            reasons = cancelled.reasons
            if len(reasons) > 1 and reasons[1] == "ConditionalCheckFailed":
                raise LiftClaimed(text_digest) from cancelled
            raise WriteConflict(fact.id) from cancelled

    def claim_date(
        self, agent_id: str, date: str, review_id: str, now: datetime, stale_before: datetime
    ) -> None:
        """Conditional put of the date's claim.

        Raises:
            ReviewDateTaken: a review of the date finished, or runs and is not stale.
        """
        claim = {
            **review_date_key(agent_id, date),
            "entity": "review_date",
            "reviewId": review_id,
            "state": _RUNNING,
            "startedAt": to_rfc3339(now),
        }
        # One review per agent and date; a crashed one (running, stale) may be
        # taken over by the retry.
        if not self._put_claim(claim, "startedAt", stale_before):
            raise ReviewDateTaken(f"{agent_id} {date}")

    def _put_claim(self, item: dict[str, Any], started: str, stale_before: datetime) -> bool:
        """Put ``item`` (a claim in ``item["state"]``) unless its key holds a live one.

        The put succeeds when nothing is stored, or when what is stored is in the same
        state and its ``started`` time is before ``stale_before`` (a crashed holder).

        Returns:
            False when another claim or a final state holds the key.
        """
        try:
            self._table.client.put_item(
                TableName=self._table.name,
                Item=to_attributes(item),
                ConditionExpression=(
                    "attribute_not_exists(pk) OR (#state = :state AND #started < :stale)"
                ),
                ExpressionAttributeNames={"#state": "state", "#started": started},
                ExpressionAttributeValues=to_attributes(
                    {":state": item["state"], ":stale": to_rfc3339(stale_before)}
                ),
            )
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def finish_date(self, agent_id: str, date: str, review_id: str, now: datetime) -> None:
        """Mark the date's claim done (only the claiming review may)."""
        self._table.client.update_item(
            TableName=self._table.name,
            Key=to_attributes(review_date_key(agent_id, date)),
            UpdateExpression="SET #state = :done, #finished = :now",
            # Only the review holding the claim finishes it.
            ConditionExpression="#review = :review",
            ExpressionAttributeNames={
                "#state": "state",
                "#finished": "finishedAt",
                "#review": "reviewId",
            },
            ExpressionAttributeValues=to_attributes(
                {":done": _DONE, ":now": to_rfc3339(now), ":review": review_id}
            ),
        )

    def save_summary(self, summary: ReviewSummary) -> None:
        """Write the listing item and the by-id lookup item in one transaction."""
        item = summary_to_item(summary)
        self._table.transact(
            [
                put_new({**review_key(summary.agent_id, summary.id), **item}),
                put_new({**review_lookup_key(summary.id), **item}),
            ]
        )

    def get_summary(self, review_id: str) -> ReviewSummary | None:
        """The summary by review id (strongly consistent)."""
        found = self._table.get(review_lookup_key(review_id))
        return None if found is None else summary_from_item(found)

    def list_summaries(
        self, agent_id: str, limit: int, after_id: str | None
    ) -> tuple[list[ReviewSummary], str | None]:
        """Newest first; ``limit`` + 1 read to know whether a next page exists."""
        request: dict[str, Any] = {
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": to_attributes({":pk": review_partition(agent_id)}),
            "ScanIndexForward": False,
            "Limit": limit + 1,
        }
        if after_id is not None:
            request["ExclusiveStartKey"] = to_attributes(review_key(agent_id, after_id))
        found: list[ReviewSummary] = []
        for item in self._table.query(**request):
            found.append(summary_from_item(item))
            if len(found) > limit:
                return found[:limit], found[limit - 1].id
        return found, None

    def claim_approval(
        self, review_id: str, decision: ActionDecision, claim_id: str, stale_before: datetime
    ) -> None:
        """Conditional put of the ``applying`` decision, tagged with ``claim_id``.

        Raises:
            DecisionTaken: the action has a decision, or a fresh ``applying`` one.
        """
        claim = {**decision_to_item(review_id, decision), "claimId": claim_id}
        # One decision per action: of two approvals (or an approval and a rejection)
        # exactly one wins. An approval that crashed while applying (still "applying"
        # after the lease) may be taken over.
        if not self._put_claim(claim, "decidedAt", stale_before):
            raise self._taken(review_id, decision.action_id)

    def record_outcome(
        self, summary: ReviewSummary, decision: ActionDecision, claim_id: str
    ) -> None:
        """One transaction: the claimed decision made final, both summary items counted.

        Raises:
            DecisionTaken: the claim is no longer ``claim_id``'s.
            WriteConflict: a summary item has no pending action left.
        """
        item = decision_to_item(summary.id, decision)
        names = {"#state": "state", "#claim": "claimId"}
        values: dict[str, Any] = {":applying": _APPLYING, ":claim": claim_id}
        sets = []
        for position, attribute in enumerate(("state", "decidedBy", "decidedAt", "detail")):
            if attribute in item:
                names[f"#f{position}"] = attribute
                values[f":f{position}"] = item[attribute]
                sets.append(f"#f{position} = :f{position}")
        for alias, attribute in (("#created", "createdId"), ("#kept", "keepId")):
            if attribute in item:
                names[alias] = attribute
                values[f":{alias[1:]}"] = item[attribute]
                sets.append(f"{alias} = :{alias[1:]}")
        finish = {
            "Update": {
                "Key": to_attributes(review_decision_key(summary.id, decision.action_id)),
                "UpdateExpression": "SET " + ", ".join(sets) + " REMOVE #claim",
                # Only the approval holding the claim settles it (not one whose
                # stale claim another approval took over).
                "ConditionExpression": "#state = :applying AND #claim = :claim",
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": to_attributes(values),
            }
        }
        self._settle(summary, decision, finish)

    def record_rejection(
        self, summary: ReviewSummary, decision: ActionDecision, signatures: Sequence[str]
    ) -> None:
        """One transaction: the ``rejected`` decision put new, both summary items counted,
        and the rejection remembered under the agent (``rejection_key``).

        Raises:
            DecisionTaken: the action has a decision (or one being applied).
            WriteConflict: a summary item has no pending action left.
        """
        remembered: dict[str, Any] = {
            "entity": "review_rejection",
            "reviewId": summary.id,
            "actionId": decision.action_id,
        }
        if decision.decided_by is not None:
            remembered["decidedBy"] = decision.decided_by
        if decision.decided_at is not None:
            remembered["decidedAt"] = to_rfc3339(decision.decided_at)
        # One item per signature (the same change again: overwritten); a transaction
        # holds 100 items, 3 go to the decision and the counts.
        memos = [
            {"Put": {"Item": to_attributes({**rejection_key(summary.agent_id, key), **remembered})}}
            for key in list(dict.fromkeys(signatures))[:_MAX_REJECTION_ITEMS]
        ]
        # attribute_not_exists: a decided or applying action is never rejected.
        self._settle(summary, decision, put_new(decision_to_item(summary.id, decision)), *memos)

    def rejections(self, agent_id: str) -> dict[str, str]:
        """Every action rejected for ``agent_id``: signature -> "rvw_… a2 by usr_… on date"."""
        items = self._table.query(
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues=to_attributes({":pk": rejection_partition(agent_id)}),
        )
        return {
            str(item["sk"]): (
                f"{item['reviewId']} {item['actionId']} by {item.get('decidedBy', '?')} "
                f"on {str(item.get('decidedAt', ''))[:10]}"
            )
            for item in items
        }

    def list_decisions(self, review_id: str) -> list[ActionDecision]:
        """Query the review's partition for its ``ACTION#`` items (strongly consistent)."""
        items = self._table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues=to_attributes(
                {":pk": review_lookup_partition(review_id), ":prefix": DECISION_PREFIX}
            ),
            ConsistentRead=True,
        )
        return [decision_from_item(item) for item in items]

    def _settle(
        self,
        summary: ReviewSummary,
        decision: ActionDecision,
        write: dict[str, Any],
        *more: dict[str, Any],
    ) -> None:
        try:
            self._table.transact(
                [
                    write,
                    _count_decision(review_key(summary.agent_id, summary.id), decision.state),
                    _count_decision(review_lookup_key(summary.id), decision.state),
                    pending_delete(summary, decision.action_id),
                    *more,
                ]
            )
        except TransactionCancelled as cancelled:
            if cancelled.reasons and cancelled.reasons[0] == "ConditionalCheckFailed":
                raise self._taken(summary.id, decision.action_id) from cancelled
            raise WriteConflict(summary.id) from cancelled

    def _taken(self, review_id: str, action_id: str) -> DecisionTaken:
        found = self._table.get(review_decision_key(review_id, action_id))
        existing = None if found is None else decision_from_item(found)
        return DecisionTaken(f"{review_id} {action_id}", existing)


class S3ReportStore:
    """``ReportStore`` on S3; the client is built on first use (STYLE.md rule 6).

    Args:
        client_factory: returns a boto3 S3 client.
        bucket: the bucket (``settings.bucket_name``).
    """

    def __init__(self, client_factory: Callable[[], S3Client], bucket: str) -> None:
        self._factory = client_factory
        self._client: S3Client | None = None
        self._bucket = bucket

    def _s3(self) -> S3Client:
        if self._client is None:
            self._client = translate_errors(self._factory(), S3_THROTTLING)
        return self._client

    def put(self, key: str, body: bytes) -> None:
        """Write a JSON report."""
        self._s3().put_object(
            Bucket=self._bucket, Key=key, Body=body, ContentType="application/json"
        )

    def get(self, key: str) -> bytes | None:
        """Read a report, or None when it is missing."""
        try:
            response = self._s3().get_object(Bucket=self._bucket, Key=key)
        except ClientError as error:
            if error.response["Error"]["Code"] in ("NoSuchKey", "404"):
                return None
            raise
        return bytes(response["Body"].read())
