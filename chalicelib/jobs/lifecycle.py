"""A person's erasure or export, run from a job message
(docs/reference.md#erasing-an-agent-a-person-or-a-workspace,
docs/reference.md#exports-for-a-person): by the lifecycle worker, which reads the
lifecycle queue alone (``lifecycle_batch``; docs/reference.md#the-lifecycle-queue), so an
erasure never waits behind the nightly reviews and a flood of exports never delays them;
and by the review worker for a job message it finds on the review queue (the 0.1.0
release sent them there; docs/issues.md#issue-41-item-2).

One ``lifecycle`` log line per message: the job, its id, the outcome, counts and time,
never a text. A job that raises fails its message alone (``batchItemFailures``): SQS
gives it to the worker again after the visibility timeout, and the erasure resumes
from its saved position, the export starts again.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from pydantic import ValidationError

from chalicelib.api.observe import current_job
from chalicelib.api.telemetry import Metric, Telemetry, telemetry
from chalicelib.errors import PineworkError
from chalicelib.models.lifecycle import LifecycleJob
from chalicelib.wiring import Services


def lifecycle_batch(wired: Services, event: dict[str, Any]) -> dict[str, Any]:
    """The lifecycle worker's body: run one erasure or export per record.

    Args:
        wired: the services.
        event: the SQS event (``{"Records": [{"messageId", "body", …}]}``).

    Returns:
        ``{"batchItemFailures": [{"itemIdentifier": messageId}, …]}`` for the records that
        failed (not a job message, or the job raised); the others are done.
    """
    tel = telemetry(wired.settings)
    job_fields = current_job()
    failures = []
    for record in event.get("Records", []):
        message_id = record.get("messageId", "")
        fields: dict[str, Any] = {
            "function_request_id": job_fields.function_request_id,
            "cold_start": job_fields.cold_start,
            "message_id": message_id,
        }
        body = record.get("body", "")
        try:
            job = LifecycleJob.model_validate(json.loads(body))
        except (ValueError, ValidationError, TypeError):
            # The body is not ours: its length only, never its content.
            size = len(body) if isinstance(body, str) else None
            shown = {**fields, "job": "unknown", "body_chars": size}
            _logged(tel, "malformed", shown, logging.ERROR)
            failures.append({"itemIdentifier": message_id})
            continue
        if not run_lifecycle_job(wired, tel, fields, job):
            failures.append({"itemIdentifier": message_id})
    return {"batchItemFailures": failures}


def run_lifecycle_job(
    wired: Services, tel: Telemetry, fields: dict[str, Any], job: LifecycleJob
) -> bool:
    """Run one job; log and measure it.

    Args:
        fields: the log line's fields so far (message id, request id).

    Returns:
        False when it failed (retry the message).
    """
    started = time.perf_counter()
    fields = {**fields, "job": job.job, "target_id": job.id}
    try:
        if job.job == "erase":
            report = wired.lifecycle.run_erasure(job.id)
            counts = None if report is None else report.to_wire()["itemCount"]
        else:
            export = wired.lifecycle.run_export(job.id)
            counts = None if export is None else export["items"]
    except Exception as error:
        code = error.code if isinstance(error, PineworkError) else None
        fields.update({"error_code": code, "latency_ms": _since(started)})
        _logged(tel, "failed", fields, logging.ERROR, error)
        return False
    fields.update({"items": counts, "latency_ms": _since(started)})
    _logged(tel, "skipped" if counts is None else "done", fields, logging.INFO)
    return True


def _logged(
    tel: Telemetry,
    result: str,
    fields: dict[str, Any],
    level: int,
    error: BaseException | None = None,
) -> None:
    shown = {key: value for key, value in {**fields, "result": result}.items() if value is not None}
    tel.log("lifecycle", shown, level=level, error=error)
    tel.emit([Metric("LifecycleJobs", "Count", 1)], {"job": str(fields["job"]), "result": result})


def _since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
