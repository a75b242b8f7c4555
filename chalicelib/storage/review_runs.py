"""DynamoDB adapter of ``ReviewRunRepository``: one item per queued manual review,
``pk=REVIEW#<rvw>``, ``sk=RUN`` (beside the review's lookup summary and decisions).

Every change is conditional: the worker claims a run (``queued``/``failed`` ->
``running``, or a stale ``running``) with a claim id, and only that claim may finish
or fail it, so a duplicate SQS message or a late retry never runs a review twice at
the same time. A run expires the review retention after its request, and reads skip an
older one (``review_expiry``, docs/reference.md#retention).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from chalicelib.ids import from_rfc3339, to_rfc3339
from chalicelib.models.review_run import ReviewRun
from chalicelib.storage.dynamodb import from_attributes, to_attributes
from chalicelib.storage.keys import review_run_key
from chalicelib.storage.protocols import ReviewRunTaken
from chalicelib.storage.review_expiry import (
    REVIEW_RETENTION,
    ReviewRetention,
    review_expiry,
    review_kept,
)


def run_to_item(run: ReviewRun, retention: timedelta = REVIEW_RETENTION) -> dict[str, Any]:
    """The stored item of a run, key included, with the table's TTL attribute
    ``retention`` after the request (docs/reference.md#retention)."""
    item: dict[str, Any] = {
        **review_run_key(run.id),
        **review_expiry(run.requested_at, retention),
        "entity": "review_run",
        "id": run.id,
        "workspaceId": run.workspace_id,
        "agentId": run.agent_id,
        "date": run.date,
        "dryRun": run.dry_run,
        "state": run.status,
        "requestedBy": run.requested_by,
        "requestedAt": to_rfc3339(run.requested_at),
        "attempts": run.attempts,
    }
    return item


def run_from_item(item: dict[str, Any]) -> ReviewRun:
    """Rebuild a run from its stored item."""

    def moment(name: str) -> datetime | None:
        return from_rfc3339(item[name]) if item.get(name) else None

    return ReviewRun(
        id=item["id"],
        workspace_id=item["workspaceId"],
        agent_id=item["agentId"],
        date=item["date"],
        dry_run=bool(item["dryRun"]),
        status=item["state"],
        requested_by=item["requestedBy"],
        requested_at=from_rfc3339(item["requestedAt"]),
        started_at=moment("startedAt"),
        finished_at=moment("finishedAt"),
        attempts=int(item.get("attempts", 0)),
        error=item.get("error"),
        claim_id=item.get("claimId"),
        report_key=item.get("reportKey"),
    )


class DynamoDBReviewRunRepository(ReviewRetention):
    """``ReviewRunRepository`` on the single table.

    Args:
        table: the table wrapper.
        clock: the current time (the retention is counted back from it).
        retention: how long a run is kept after its request (the review retention,
            docs/reference.md#retention): runs carry the TTL attribute, and ``get``
            skips an older one.
    """

    def create(self, run: ReviewRun) -> None:
        """Put the new run; ``attribute_not_exists``: a new id never overwrites."""
        self._table.client.put_item(
            TableName=self._table.name,
            Item=to_attributes(run_to_item(run, self._retention)),
            ConditionExpression="attribute_not_exists(pk)",
        )

    def get(self, review_id: str) -> ReviewRun | None:
        """The run (strongly consistent GetItem), or None (also when it was requested
        longer than the retention ago)."""
        found = self._table.get(review_run_key(review_id))
        run = None if found is None else run_from_item(found)
        if run is None or not review_kept(run.requested_at, self._clock, self._retention):
            return None
        return run

    def claim(
        self, review_id: str, claim_id: str, now: datetime, stale_before: datetime
    ) -> ReviewRun:
        """Take the run for one attempt (see ``ReviewRunRepository.claim``).

        Raises:
            ReviewRunTaken: done, unknown, or held by a live claim.
        """
        try:
            response = self._table.client.update_item(
                TableName=self._table.name,
                Key=to_attributes(review_run_key(review_id)),
                UpdateExpression=(
                    "SET #state = :running, #claim = :claim, #started = :now ADD #attempts :one"
                ),
                # Queued or failed runs may start; a running one only when its holder
                # crashed (claim older than the lease); a done one never again.
                ConditionExpression=(
                    "attribute_exists(pk) AND (#state IN (:queued, :failed) "
                    "OR (#state = :running AND #started < :stale))"
                ),
                ExpressionAttributeNames={
                    "#state": "state",
                    "#claim": "claimId",
                    "#started": "startedAt",
                    "#attempts": "attempts",
                },
                ExpressionAttributeValues=to_attributes(
                    {
                        ":running": "running",
                        ":queued": "queued",
                        ":failed": "failed",
                        ":claim": claim_id,
                        ":now": to_rfc3339(now),
                        ":stale": to_rfc3339(stale_before),
                        ":one": 1,
                    }
                ),
                ReturnValues="ALL_NEW",
            )
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                raise ReviewRunTaken(review_id) from error
            raise
        return run_from_item(from_attributes(response["Attributes"]))

    def finish(self, review_id: str, claim_id: str, now: datetime, report_key: str | None) -> None:
        """Mark it ``done`` (and where a dry run's report is) while the claim holds."""
        values: dict[str, Any] = {":done": "done", ":now": to_rfc3339(now), ":claim": claim_id}
        update = "SET #state = :done, #finished = :now REMOVE #error"
        names = {
            "#state": "state",
            "#finished": "finishedAt",
            "#claim": "claimId",
            "#error": "error",
        }
        if report_key is not None:
            update = "SET #state = :done, #finished = :now, #report = :report REMOVE #error"
            names["#report"] = "reportKey"
            values[":report"] = report_key
        self._settle(review_id, update, names, values)

    def fail(self, review_id: str, claim_id: str, now: datetime, error: str) -> None:
        """Mark it ``failed`` with ``error`` while the claim holds."""
        self._settle(
            review_id,
            "SET #state = :failed, #finished = :now, #error = :error",
            {"#state": "state", "#finished": "finishedAt", "#claim": "claimId", "#error": "error"},
            {":failed": "failed", ":now": to_rfc3339(now), ":claim": claim_id, ":error": error},
        )

    def _settle(
        self, review_id: str, update: str, names: dict[str, str], values: dict[str, Any]
    ) -> None:
        try:
            self._table.client.update_item(
                TableName=self._table.name,
                Key=to_attributes(review_run_key(review_id)),
                UpdateExpression=update,
                # Only the attempt holding the claim settles the run.
                ConditionExpression="#claim = :claim",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=to_attributes(values),
            )
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                raise ReviewRunTaken(review_id) from error
            raise
