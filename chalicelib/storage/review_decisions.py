"""DynamoDB adapter of the persons' decisions on the actions of approval-mode reviews
(docs/reference.md#9-review, docs/issues.md#issue-4-item-6;
docs/DECISIONS.md#review-approval-mode-issue-4-item-6): one decision per action, claimed by a
conditional put (an approval that crashed while applying may be taken over after its lease), settled
in one transaction with both summary items' counts and the pending list; a rejection is also
remembered under the agent by the change's signatures, so the review does not propose it again. A
decision expires with its review (``review_expiry``); a rejection's memory of signatures does not
(it holds digests, no text, and keeps the change from coming back). The
part of ``reviews.DynamoDBReviewRepository`` that ``ReviewRepository``'s decision
methods name, with the claim put it shares with the per-date claim.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from chalicelib.ids import from_rfc3339, to_rfc3339
from chalicelib.models.review import ActionDecision, ReviewSummary
from chalicelib.storage.dynamodb import (
    TransactionCancelled,
    put_new,
    to_attributes,
)
from chalicelib.storage.keys import (
    DECISION_PREFIX,
    rejection_key,
    rejection_partition,
    review_decision_key,
    review_key,
    review_lookup_key,
    review_lookup_partition,
)
from chalicelib.storage.protocols import DecisionTaken, WriteConflict
from chalicelib.storage.review_actions import pending_delete
from chalicelib.storage.review_expiry import ReviewRetention, review_expiry

_APPLYING = "applying"
_COUNTER_BY_STATE = {"applied": "applied", "skipped": "skipped", "rejected": "rejected"}
_MAX_REJECTION_ITEMS = 96
"""Signatures remembered per rejection: a transaction holds 100 items, 4 are taken
(the decision, two summary counts, the pending list's item)."""


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


class DynamoDBReviewDecisions(ReviewRetention):
    """The decision methods of ``ReviewRepository`` on the single table (the base of
    ``reviews.DynamoDBReviewRepository``).

    Args:
        table: the wrapped table.
        clock: the current time (the retention is counted back from it).
        retention: how long a review is kept after its start; its decisions carry the
            TTL attribute of their review (docs/reference.md#retention).
    """

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

    def claim_approval(
        self,
        summary: ReviewSummary,
        decision: ActionDecision,
        claim_id: str,
        stale_before: datetime,
    ) -> None:
        """Conditional put of the ``applying`` decision, tagged with ``claim_id`` (it
        expires with ``summary``'s review).

        Raises:
            DecisionTaken: the action has a decision, or a fresh ``applying`` one.
        """
        claim = {
            **decision_to_item(summary.id, decision),
            **review_expiry(summary.started_at, self._retention),
            "claimId": claim_id,
        }
        # One decision per action: of two approvals (or an approval and a rejection)
        # exactly one wins. An approval that crashed while applying (still "applying"
        # after the lease) may be taken over.
        if not self._put_claim(claim, "decidedAt", stale_before):
            raise self._taken(summary.id, decision.action_id)

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
        """One transaction: the ``rejected`` decision put new (expiring with the review),
        both summary items counted, and the rejection remembered under the agent
        (``rejection_key``).

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
        rejected = {
            **decision_to_item(summary.id, decision),
            **review_expiry(summary.started_at, self._retention),
        }
        self._settle(summary, decision, put_new(rejected), *memos)

    def rejections(self, agent_id: str) -> dict[str, str]:
        """Every action rejected for ``agent_id``: signature -> "rvw_… a2 by usr_… on date"."""
        items = self._table.query(
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues=to_attributes({":pk": rejection_partition(agent_id)}),
        )
        return {
            str(item["sk"]): (
                f"{item['reviewId']} {item['actionId']}"
                f"{' undone' if item.get('undone') else ''} by {item.get('decidedBy', '?')} "
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
