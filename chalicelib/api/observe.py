"""One log line and a few EMF metrics per event, written at the edge: ``observe`` is
the app's Chalice middleware for every event (``app.py``). While an HTTP view runs it
keeps a ``RequestRecord`` in a context variable that the views and the auth code fill
through the ``note_*`` functions (principal, error code, MCP tools, recall and review
figures); when the answer is ready it writes the ``request`` line (ids, route template,
status, latency, principal; never a text, token or key) and the metrics. For the
review Lambdas it remembers the Lambda request id for the jobs' own lines. The fields
and metrics, and why: docs/DECISIONS.md#logs-and-metrics-issue-12.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from chalice.app import Request, Response

from chalicelib.api.telemetry import Metric, Telemetry, telemetry
from chalicelib.models.principal import Principal
from chalicelib.models.review import ReviewReport
from chalicelib.wiring import services

API_PREFIX = "/api/v1"
COUNTED_REFUSALS = frozenset({"memory_day_full", "secret_in_memory"})
"""Error codes that are metrics of their own: an agent writing more than a day log
holds, or trying to store a credential."""


@dataclass
class RequestRecord:
    """What one HTTP request did, as the log line and the metrics tell it."""

    method: str
    route: str
    request_id: str | None
    function_request_id: str | None
    cold_start: bool
    principal_kind: str | None = None
    principal_id: str | None = None
    workspace_id: str | None = None
    error_code: str | None = None
    tools: list[str] = field(default_factory=list)
    tool_errors: list[str] = field(default_factory=list)
    recall: dict[str, Any] | None = None
    review_actions: Counter[tuple[str, str]] = field(default_factory=Counter)
    review_id: str | None = None


@dataclass(frozen=True)
class JobContext:
    """The Lambda invocation a job's log lines belong to."""

    function_request_id: str | None
    cold_start: bool


_request: ContextVar[RequestRecord | None] = ContextVar("pinework_request", default=None)
_job: ContextVar[JobContext | None] = ContextVar("pinework_job", default=None)
_cold = {"start": True}


def observe(event: Any, get_response: Callable[[Any], Any]) -> Any:
    """Chalice middleware for every event: log and measure HTTP requests; give the
    review Lambdas their invocation's context."""
    if isinstance(event, Request):
        return _observe_request(event, get_response)
    context = getattr(event, "context", None)
    job = JobContext(getattr(context, "aws_request_id", None), _cold_start())
    token = _job.set(job)
    try:
        with telemetry(services().settings).traced(f"## {type(event).__name__}", {}):
            return get_response(event)
    finally:
        _job.reset(token)


def current_job() -> JobContext:
    """The Lambda invocation running now (outside a Lambda: no request id)."""
    return _job.get() or JobContext(None, False)


def note_principal(principal: Principal) -> None:
    """The request's caller, from its bearer token."""
    record = _request.get()
    if record is not None:
        record.principal_kind = principal.kind.value
        record.principal_id = principal.id
        record.workspace_id = principal.workspace_id


def note_caller_without_token(api_key: str | None) -> None:
    """A key-value or MCP caller without a bearer token (its key or IP is not logged)."""
    record = _request.get()
    if record is not None and record.principal_kind is None:
        record.principal_kind = "api_key" if api_key is not None else "anonymous"


def note_error(code: str) -> None:
    """The error code of the request's answer."""
    record = _request.get()
    if record is not None:
        record.error_code = code


def note_tool(name: str, error_code: str | None) -> None:
    """An MCP tool the request called, and the code of its error result if any."""
    record = _request.get()
    if record is not None:
        record.tools.append(name)
        if error_code is not None:
            record.tool_errors.append(error_code)


def note_recall(
    kind: str,
    kept: int,
    fallback: str | None,
    skipped: str | None,
    ms: float,
    *,
    reranker: str | None = None,
    stopped_at: str | None = None,
    scoring_ms: float | None = None,
) -> None:
    """A recall's figures (``kind``: ``on_demand`` or ``run_start``;
    docs/operations.md#recall-fallback): ``reranker`` what the reranker did (``ran``,
    ``off``, ``loading``, ``over_budget``, ``failed``; ``None`` when scoring did not
    reach it), ``stopped_at`` the stage its deadline stopped the scorer before,
    ``scoring_ms`` the scoring's own time."""
    record = _request.get()
    if record is not None:
        record.recall = {
            "kind": kind,
            "kept": kept,
            "fallback": fallback,
            "skipped": skipped,
            "ms": round(ms, 1),
            "reranker": reranker,
            "stopped_at": stopped_at,
            "scoring_ms": None if scoring_ms is None else round(scoring_ms, 1),
        }


def note_review(report: ReviewReport, decided: str | None = None) -> None:
    """A review run (every action's outcome) or one decision (``decided``: its id)."""
    record = _request.get()
    if record is None or report.dry_run:
        return
    record.review_id = report.id
    record.review_actions.update(review_outcomes(report, decided))


def review_outcomes(report: ReviewReport, only: str | None = None) -> Counter[tuple[str, str]]:
    """``(action kind, outcome)`` counts of a report: ``applied``, ``skipped``,
    ``pending`` or ``rejected`` (only the action ``only`` when given)."""
    kinds = {action.id: action.action for action in report.plan.actions}
    outcomes: dict[str, str] = {}
    for decision in report.decisions:
        outcomes[decision.action_id] = decision.state
    for done in report.applied:
        outcomes[done.action_id] = "applied"
    for passed in report.skipped:
        outcomes[passed.action_id] = "skipped"
    return Counter(
        (kinds[action_id], outcome)
        for action_id, outcome in outcomes.items()
        if action_id in kinds and (only is None or action_id == only)
    )


def review_metrics(tel: Telemetry, actions: Counter[tuple[str, str]], request_id: Any) -> None:
    """One ``ReviewActions`` record per (action, outcome) with its count."""
    for (kind, outcome), count in sorted(actions.items()):
        tel.emit(
            [Metric("ReviewActions", "Count", count)],
            {"action": kind, "outcome": outcome},
            metadata={"request_id": request_id},
        )


def _observe_request(event: Request, get_response: Callable[[Any], Any]) -> Any:
    tel = telemetry(services().settings)
    context = event.context or {}
    lambda_request_id = getattr(event.lambda_context, "aws_request_id", None)
    path = str(context.get("resourcePath") or "?")
    record = RequestRecord(
        method=event.method,
        route=path.removeprefix(API_PREFIX) or "/",
        request_id=context.get("requestId") or lambda_request_id,
        function_request_id=lambda_request_id,
        cold_start=_cold_start(),
    )
    token = _request.set(record)
    started = time.perf_counter()
    try:
        with tel.traced(f"## {record.method} {record.route}", {"route": record.route}) as span:
            response = get_response(event)
            status = response.status_code if isinstance(response, Response) else 200
            if span is not None:
                span.put_annotation("status", status)
                if record.principal_kind is not None:
                    span.put_annotation("principal_kind", record.principal_kind)
    finally:
        _request.reset(token)
    _finish(tel, record, status, (time.perf_counter() - started) * 1000)
    return response


def _finish(tel: Telemetry, record: RequestRecord, status: int, latency_ms: float) -> None:
    agent = record.principal_kind == "agent"
    fields: dict[str, Any] = {
        "request_id": record.request_id,
        "function_request_id": record.function_request_id,
        "cold_start": record.cold_start,
        "method": record.method,
        "route": record.route,
        "status": status,
        "latency_ms": round(latency_ms, 1),
        "principal_kind": record.principal_kind,
        "workspace_id": record.workspace_id,
        "agent_id": record.principal_id if agent else None,
        "person_id": record.principal_id if record.principal_kind == "person" else None,
        "error_code": record.error_code,
    }
    if record.tools:
        fields["mcp_tools"] = record.tools
        fields["tool_error_codes"] = record.tool_errors or None
    if record.recall is not None:
        fields.update({f"recall_{key}": value for key, value in record.recall.items()})
    if record.review_id is not None:
        fields["review_id"] = record.review_id
        fields["review_actions"] = {
            f"{kind}:{outcome}": count for (kind, outcome), count in record.review_actions.items()
        }
    level = logging.ERROR if status >= 500 else logging.WARNING if status == 429 else logging.INFO
    tel.log(
        "request", {key: value for key, value in fields.items() if value is not None}, level=level
    )
    _metrics(tel, record, status)


def _metrics(tel: Telemetry, record: RequestRecord, status: int) -> None:
    metadata = {"request_id": record.request_id}
    tel.emit(
        [Metric("Requests", "Count", 1)],
        {"route": f"{record.method} {record.route}", "status": str(status)},
        more_dimensions=[{"status": str(status)}],
        metadata=metadata,
    )
    recall = record.recall
    if recall is not None and recall["skipped"] is None:
        tel.emit(
            [
                Metric("RecallLatency", "Milliseconds", recall["ms"]),
                Metric("MemoriesKept", "Count", recall["kept"]),
                Metric("RecallFallback", "Count", 1 if recall["fallback"] else 0),
            ],
            {},
            metadata=metadata,
        )
    review_metrics(tel, record.review_actions, record.request_id)
    for code in [record.error_code, *record.tool_errors]:
        if code in COUNTED_REFUSALS:
            tel.emit([Metric(code, "Count", 1)], {}, metadata=metadata)


def _cold_start() -> bool:
    cold, _cold["start"] = _cold["start"], False
    return cold
