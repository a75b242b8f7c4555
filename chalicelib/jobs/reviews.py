"""The nightly review's Lambdas (docs/reference.md#9-review): the 04:00 UTC fan-out and the SQS
worker.

The worker reviews one agent per message (the fan-out's, or a person's queued
review: ``chalicelib/services/review/manual.py``), or runs a person's erasure or export
(a ``job`` message release 0.1.0 left on this queue; 0.2.0 sends them to the lifecycle
queue, ``chalicelib/jobs/lifecycle.py``), and reports partial batch failures
(``batchItemFailures``), so a failing agent is retried alone and a poison
message never blocks the others (after ``maxReceiveCount`` it goes to the
dead-letter queue, see ``infra/template.py``). A review the store throttles
(``rate_limited``) fails its own message the same way: SQS gives it to the
worker again after the queue's visibility timeout.

Each message gets one ``review`` log line (ids, date, outcome, counts, time;
never a fact's text) and the metrics ``Reviews`` by ``result`` and
``ReviewActions`` by ``action`` and ``outcome`` (``chalicelib.api.observe``).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from chalicelib.api.observe import current_job, review_metrics, review_outcomes
from chalicelib.api.telemetry import Metric, Telemetry, telemetry
from chalicelib.errors import PineworkError, RateLimited
from chalicelib.ids import from_rfc3339
from chalicelib.jobs.lifecycle import run_lifecycle_job
from chalicelib.models.lifecycle import LifecycleJob
from chalicelib.wiring import Services


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
    tel = telemetry(wired.settings)
    started = time.perf_counter()
    enqueued = wired.reviews.fan_out(from_rfc3339(event_time))
    tel.log(
        "review fan-out",
        {**_job_fields(), "enqueued": enqueued, "latency_ms": _since(started)},
    )
    tel.emit([Metric("ReviewsEnqueued", "Count", enqueued)], {})
    return {"enqueued": enqueued}


def review_batch(wired: Services, event: dict[str, Any]) -> dict[str, Any]:
    """The SQS worker's body: review one agent per record.

    Args:
        wired: the services.
        event: the SQS event (``{"Records": [{"messageId", "body", …}]}``).

    Returns:
        ``{"batchItemFailures": [{"itemIdentifier": messageId}, …]}`` for the
        records that failed (malformed, throttled or raised); the others are done.
    """
    tel = telemetry(wired.settings)
    failures = []
    for record in event.get("Records", []):
        message_id = record.get("messageId", "")
        if not _review_one(wired, tel, message_id, record.get("body", "")):
            failures.append({"itemIdentifier": message_id})
    return {"batchItemFailures": failures}


def _review_one(wired: Services, tel: Telemetry, message_id: str, body: Any) -> bool:
    """Review the agent one message names; log and measure it. False: retry it."""
    started = time.perf_counter()
    fields: dict[str, Any] = {**_job_fields(), "message_id": message_id}
    try:
        parsed = json.loads(body)
        if isinstance(parsed, dict) and "job" in parsed:  # a person's erasure or export
            job = LifecycleJob.model_validate(parsed)
            return run_lifecycle_job(wired, tel, fields, job)
        message = ReviewMessage.model_validate(parsed)
    except (ValueError, ValidationError, TypeError):
        # The body is not ours: its length only, never its content.
        size = len(body) if isinstance(body, str) else None
        _reviewed(tel, "malformed", {**fields, "body_chars": size}, logging.ERROR)
        return False
    fields.update(
        {
            "workspace_id": message.workspace_id,
            "agent_id": message.agent_id,
            "date": message.date,
            "queued_review_id": message.review_id,
        }
    )
    try:
        if message.review_id is None:
            report = wired.reviews.run_scheduled(
                message.workspace_id, message.agent_id, message.date
            )
        else:  # a person's queued manual review (POST /reviews answered 202)
            report = wired.review_runs.run_queued(message.review_id)
    except RateLimited as throttled:
        fields.update({"error_code": throttled.code, "latency_ms": _since(started)})
        _reviewed(tel, "throttled", fields, logging.WARNING)
        return False
    except Exception as error:
        code = error.code if isinstance(error, PineworkError) else None
        fields.update({"error_code": code, "latency_ms": _since(started)})
        _reviewed(tel, "failed", fields, logging.ERROR, error)
        return False
    if message.review_id is None:  # the nightly run: the agent's retention sweep too
        _sweep_archived_texts(wired, tel, message.agent_id)
    fields["latency_ms"] = _since(started)
    if report is None:  # routine not active, or the date (or queued run) is done or running
        _reviewed(tel, "skipped", fields, logging.INFO)
        return True
    actions = review_outcomes(report)
    fields.update(
        {
            "review_id": report.id,
            "review_actions": {f"{kind}:{outcome}": n for (kind, outcome), n in actions.items()},
        }
    )
    _reviewed(tel, "done", fields, logging.INFO)
    review_metrics(tel, actions, fields.get("function_request_id"))
    return True


def _sweep_archived_texts(wired: Services, tel: Telemetry, agent_id: str) -> None:
    """Remove the audit texts of the agent's memories archived longer than the retention
    (docs/reference.md#retention). A failure is logged, never fails the review: the
    next night's sweep covers what this one missed (reads hide the texts meanwhile)."""
    try:
        report = wired.retention.sweep(agent_id)
    except Exception as error:
        code = error.code if isinstance(error, PineworkError) else None
        tel.log(
            "retention",
            {"agent_id": agent_id, "error_code": code},
            level=logging.ERROR,
            error=error,
        )
        return
    if report.memories:
        tel.log("retention", {"agent_id": agent_id, **report.to_wire()}, level=logging.INFO)


def _reviewed(
    tel: Telemetry,
    result: str,
    fields: dict[str, Any],
    level: int,
    error: BaseException | None = None,
) -> None:
    shown = {key: value for key, value in {**fields, "result": result}.items() if value is not None}
    tel.log("review", shown, level=level, error=error)
    tel.emit([Metric("Reviews", "Count", 1)], {"result": result})


def _job_fields() -> dict[str, Any]:
    job = current_job()
    return {"function_request_id": job.function_request_id, "cold_start": job.cold_start}


def _since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
