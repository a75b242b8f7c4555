"""The nightly review's Lambdas (SPEC §9): the 04:00 UTC fan-out and the SQS worker.

The worker reviews one agent per message (the fan-out's, or a person's queued
review: ``chalicelib/services/review/manual.py``) and reports partial batch failures
(``batchItemFailures``), so a failing agent is retried alone and a poison
message never blocks the others (after ``maxReceiveCount`` it goes to the
dead-letter queue, see ``infra/template.py``).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chalicelib.ids import from_rfc3339
from chalicelib.wiring import Services

logger = logging.getLogger(__name__)


class ReviewMessage(BaseModel):
    """One message: review ``agentId`` of ``workspaceId`` for ``date`` (UTC). The
    fan-out's have no ``reviewId``; a person's queued review (``POST /reviews``
    answered 202) has its ``reviewId``."""

    model_config = ConfigDict(defer_build=True, extra="forbid", strict=True)

    workspace_id: str = Field(alias="workspaceId", pattern=r"^wsp_[0-9A-Z]{26}$")
    agent_id: str = Field(alias="agentId", pattern=r"^agt_[0-9A-Z]{26}$")
    date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    review_id: str | None = Field(default=None, alias="reviewId", pattern=r"^rvw_[0-9A-Z]{26}$")


def fan_out(wired: Services, event_time: str) -> dict[str, Any]:
    """The scheduled event's body: enqueue one review per agent with an active routine.

    Args:
        wired: the services.
        event_time: the EventBridge event's ``time`` (RFC 3339 UTC); "yesterday"
            is computed from it, never from the machine clock.

    Returns:
        ``{"enqueued": n}``.
    """
    return {"enqueued": wired.reviews.fan_out(from_rfc3339(event_time))}


def review_batch(wired: Services, event: dict[str, Any]) -> dict[str, Any]:
    """The SQS worker's body: review one agent per record.

    Args:
        wired: the services.
        event: the SQS event (``{"Records": [{"messageId", "body", …}]}``).

    Returns:
        ``{"batchItemFailures": [{"itemIdentifier": messageId}, …]}`` for the
        records that failed (malformed or raised); the others are done.
    """
    failures = []
    for record in event.get("Records", []):
        message_id = record.get("messageId", "")
        try:
            message = ReviewMessage.model_validate(json.loads(record.get("body", "")))
        except (ValueError, ValidationError):
            logger.error("malformed review message %s: %.200r", message_id, record.get("body"))
            failures.append({"itemIdentifier": message_id})
            continue
        try:
            if message.review_id is None:
                wired.reviews.run_scheduled(message.workspace_id, message.agent_id, message.date)
            else:
                wired.review_runs.run_queued(message.review_id)
        except Exception:
            logger.exception("review of %s for %s failed", message.agent_id, message.date)
            failures.append({"itemIdentifier": message_id})
    return {"batchItemFailures": failures}
