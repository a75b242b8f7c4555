"""A person's erasure or export, run by the review worker from a job message
(docs/reference.md#erasing-an-agent-a-person-or-a-workspace,
docs/reference.md#exports-for-a-person).

One ``lifecycle`` log line per message: the job, its id, the outcome, counts and time,
never a text. A job that raises fails its message alone (``batchItemFailures``): SQS
gives it to the worker again after the visibility timeout, and the erasure resumes
from its saved position, the export starts again.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from chalicelib.api.telemetry import Metric, Telemetry
from chalicelib.errors import PineworkError
from chalicelib.models.lifecycle import LifecycleJob
from chalicelib.wiring import Services


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
