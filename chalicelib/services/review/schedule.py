"""When the daily review runs (docs/reference.md#9-review): each run covers the UTC day before it
(``review_date_for``), the 04:00 UTC schedule enqueues one message per agent with an
active routine (``fan_out``), and a claim of ``agent + date`` still running after
``CLAIM_LEASE`` is taken over by a retry. ``service.ReviewService`` runs what the
messages ask for. Choices: docs/DECISIONS.md#routines-and-the-daily-review-issue-4.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta

from chalicelib.services.review.routines import RoutineService
from chalicelib.storage.protocols import ReviewQueue

logger = logging.getLogger(__name__)

CLAIM_LEASE = timedelta(minutes=15)
"""A scheduled review still "running" after this long is taken over by a retry."""
_PAGE = 500


def review_date_for(moment: datetime) -> str:
    """The date a review run at ``moment`` covers: the UTC day before
    (docs/reference.md#9-review)."""
    return (moment.astimezone(UTC).date() - timedelta(days=1)).isoformat()


def fan_out(routines: RoutineService, queue: ReviewQueue, event_time: datetime) -> int:
    """Enqueue one review per agent with an active routine (the 04:00 UTC schedule).

    Pages through every workspace's active routines; each message is
    ``{"workspaceId", "agentId", "date"}`` with ``date`` the UTC day before
    ``event_time`` (the event's time, never the machine clock; docs/conventions.md#pitfalls).

    Returns:
        How many messages were sent.
    """
    day = review_date_for(event_time)
    sent = 0
    batch: list[str] = []
    for routine in routines.iter_active():
        batch.append(
            json.dumps(
                {"workspaceId": routine.workspace_id, "agentId": routine.agent_id, "date": day},
                separators=(",", ":"),
            )
        )
        if len(batch) >= _PAGE:
            sent += queue.send(batch)
            batch = []
    if batch:
        sent += queue.send(batch)
    logger.info("review fan-out for %s: %d agents", day, sent)
    return sent
