"""DynamoDB adapter of the review's storage (docs/reference.md#9-review): system supersedes and
lifted facts (each one transaction, version-checked, the lift claimed once), the per-date
claim (one review per agent and date; a stale one taken over) and the report
summaries, which expire with the review (``review_expiry``, docs/reference.md#retention).
The persons' decisions on approval-mode actions are ``review_decisions``;
the JSON reports in S3 are ``reports``. Choices:
docs/DECISIONS.md#routines-and-the-daily-review-issue-4."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from chalicelib.ids import from_rfc3339, to_rfc3339
from chalicelib.models.memory import AuditRecord, Memory
from chalicelib.models.review import ReviewSummary
from chalicelib.models.totals import ListTotal
from chalicelib.storage import items as convert
from chalicelib.storage.counting import Condition, count_newest_first
from chalicelib.storage.dynamodb import (
    TransactionCancelled,
    put_new,
    to_attributes,
)
from chalicelib.storage.events import audited
from chalicelib.storage.keys import (
    lift_claim_key,
    review_date_key,
    review_key,
    review_lookup_key,
    review_partition,
)
from chalicelib.storage.memories import memory_update
from chalicelib.storage.memory_checks import still_live
from chalicelib.storage.owner_marks import owner_mark_put, put_owner_mark
from chalicelib.storage.protocols import LiftClaimed, ReviewDateTaken, WriteConflict
from chalicelib.storage.recall_index import index_writes
from chalicelib.storage.review_decisions import DynamoDBReviewDecisions
from chalicelib.storage.review_expiry import (
    REVIEW_RETENTION,
    oldest_listed_id,
    review_expiry,
    review_kept,
)

_RUNNING = "running"
_DONE = "done"


def summary_to_item(
    summary: ReviewSummary, retention: timedelta = REVIEW_RETENTION
) -> dict[str, Any]:
    """Return the stored item of a review summary (without its key), with the table's
    TTL attribute ``retention`` after the review started (docs/reference.md#retention)."""
    return {
        **review_expiry(summary.started_at, retention),
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


class DynamoDBReviewRepository(DynamoDBReviewDecisions):
    """``ReviewRepository`` on the single table; the decisions on approval-mode
    actions are ``review_decisions.DynamoDBReviewDecisions``'.

    Args:
        table: the wrapped table.
        clock: the current time (what the retention is counted back from).
        retention: how long a review is kept after its start (docs/reference.md#retention):
            its summary and decision items carry the TTL attribute, and reads skip a
            review older than this (DynamoDB deletes expired items up to days late).
    """

    def supersede_by_existing(
        self,
        old_before: Memory,
        old_after: Memory,
        keeper: Memory,
        audit: AuditRecord,
        keeper_audit: AuditRecord | None = None,
    ) -> None:
        """One transaction: the old fact archived (version-checked), the keeper
        checked live and unchanged, the audit record written, and ``keeper_audit`` (the
        keeper's ``absorb`` record, docs/reference.md#audit-record) beside it.

        Raises:
            WriteConflict: either memory changed since it was read.
        """
        kept = [] if keeper_audit is None else audited(keeper_audit, keeper)
        try:
            self._table.transact(
                [
                    memory_update(old_before, old_after),
                    still_live(keeper),  # the fact that stays: the live one the plan saw
                    *audited(audit, old_after),
                    *kept,
                    *index_writes(old_before, old_after),
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
            *(put for audit in audits for put in audited(audit, _changed(audit, fact, replaced))),
            # its owner mark: an erasure finds the claim by its agent (owner_marks.py)
            owner_mark_put(fact.agent_id, lift_claim_key(fact.agent_id, text_digest)),
        ]
        operations.extend(index_writes(None, fact))
        if replaced is not None:
            operations.append(memory_update(*replaced))
            operations.extend(index_writes(*replaced))
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
        put_owner_mark(self._table, agent_id, review_date_key(agent_id, date))
        # One review per agent and date; a crashed one (running, stale) may be
        # taken over by the retry.
        if not self._put_claim(claim, "startedAt", stale_before):
            raise ReviewDateTaken(f"{agent_id} {date}")

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
        """Write the listing item and the by-id lookup item in one transaction (both
        expire ``retention`` after the review's start)."""
        item = summary_to_item(summary, self._retention)
        self._table.transact(
            [
                put_new({**review_key(summary.agent_id, summary.id), **item}),
                put_new({**review_lookup_key(summary.id), **item}),
            ]
        )

    def get_summary(self, review_id: str) -> ReviewSummary | None:
        """The summary by review id (strongly consistent), or None when there is none
        or the review started longer than ``retention`` ago."""
        found = self._table.get(review_lookup_key(review_id))
        summary = None if found is None else summary_from_item(found)
        if summary is None or not review_kept(summary.started_at, self._clock, self._retention):
            return None
        return summary

    def count_summaries(self, agent_id: str, after_id: str | None, cap: int) -> ListTotal:
        """How many summaries ``list_summaries`` lists (inside the retention) and how
        many are newer than the page after ``after_id``: ``Select=COUNT`` of the agent's
        ``REVIEWS#`` partition, at most ``cap`` read (docs/reference.md#list-totals)."""
        keep = Condition(
            "startedAt >= :kept", {":kept": to_rfc3339(self._clock.now() - self._retention)}
        )
        oldest = oldest_listed_id(self._clock, self._retention)
        return count_newest_first(
            self._table, review_partition(agent_id), oldest, after_id, cap=cap, keep=keep
        )

    def list_summaries(
        self, agent_id: str, limit: int, after_id: str | None
    ) -> tuple[list[ReviewSummary], str | None]:
        """Newest first, without reviews past their retention; ``limit`` + 1 kept ones
        read to know whether a next page exists.

        Reads follow DynamoDB's pages past skipped summaries, so a page is short only at
        the end; the id to continue after is the last one returned (a review skipped
        now stays skipped). Only ids newer than ``review_expiry.oldest_listed_id`` are
        read (one key range: ids are ULIDs)."""
        oldest = oldest_listed_id(self._clock, self._retention)
        if after_id is not None and after_id < oldest:
            # Everything after it is older still (and DynamoDB refuses a start key
            # outside the key range).
            return [], None
        request: dict[str, Any] = {
            "KeyConditionExpression": "pk = :pk AND sk >= :oldest",
            "ExpressionAttributeValues": to_attributes(
                {":pk": review_partition(agent_id), ":oldest": oldest}
            ),
            "ScanIndexForward": False,
            "Limit": limit + 1,
        }
        if after_id is not None:
            request["ExclusiveStartKey"] = to_attributes(review_key(agent_id, after_id))
        found: list[ReviewSummary] = []
        for item in self._table.query(**request):
            summary = summary_from_item(item)
            if not review_kept(summary.started_at, self._clock, self._retention):
                continue
            found.append(summary)
            if len(found) > limit:
                return found[:limit], found[limit - 1].id
        return found, None


def _changed(audit: AuditRecord, fact: Memory, replaced: tuple[Memory, Memory] | None) -> Memory:
    """The memory ``audit`` reports, as the transaction leaves it: the lifted fact or the
    fact it replaces."""
    if replaced is not None and audit.memory_id == replaced[1].id:
        return replaced[1]
    return fact
