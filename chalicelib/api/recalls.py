"""Recall routes (docs/reference.md#7-http-api to docs/reference.md#8-recall,
docs/issues.md#issue-3), under ``/api/v1``: on-demand recall, run-start recall, and the recall
(injection) log."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any, Literal

from chalice.app import Blueprint, Response

from chalicelib.api.context import call_context, query_params
from chalicelib.api.http import (
    ANY_CONTENT,
    endpoint,
    json_response,
    parse_body,
    reject_other_methods,
    validate,
)
from chalicelib.api.idempotency import idempotent
from chalicelib.api.observe import note_recall
from chalicelib.errors import Forbidden
from chalicelib.models.recall import RecallStartRequest
from chalicelib.models.requests import AgentQuery, RecallLogQuery, RecallRequest
from chalicelib.models.responses import (
    RecallBlockObject,
    RecallLogList,
    RecallLogObject,
    RecallObject,
)
from chalicelib.services.access.who import refuse_persons
from chalicelib.services.paging import decode_next_token, encode_next_token
from chalicelib.services.recall.service import (
    RUN_START_IS_FOR_AGENTS,
    RecallResult,
    ScoredSection,
)

recalls_api = Blueprint(__name__)


def _request() -> Any:
    return recalls_api.current_request


def recall_body(
    result: RecallResult, now: datetime, kind: Literal["recall", "recall_start"]
) -> dict[str, Any]:
    """The JSON of a recall (``RecallObject``): scored memories, the block, and why it
    was skipped."""
    return RecallObject.model_validate(
        {
            "object": kind,
            "recallId": result.recall_id,
            "skipped": result.skipped is not None,
            "reason": result.skipped,
            "query": result.query,
            "fallback": result.fallback,
            "memories": [
                {"score": item.score, "memory": item.memory.to_wire(now)}
                for item in result.memories
            ],
            "learnings": [
                {"score": item.score, "learning": item.learning.to_wire()}
                for item in result.learnings
            ],
            "sections": [section_body(item) for item in result.wiki.sections],
            "wikiFailed": result.wiki.failed,
            "block": result.block,
        }
    ).wire()


def section_body(item: ScoredSection) -> dict[str, Any]:
    """The JSON of a section a recall showed (``ScoredSectionObject``)."""
    section = item.section
    return {
        "score": item.score,
        "pageId": section.page_id,
        "index": section.index,
        "anchor": section.anchor,
        "slug": section.slug,
        "title": section.title,
        "headingPath": list(section.heading_path),
        "text": section.text,
    }


def observe_recall(kind: str, result: RecallResult, started: float) -> None:
    """Record a recall's figures for the request's log line and metrics (``kind``:
    ``on_demand`` or ``run_start``; ``started``: ``time.perf_counter()`` before it)."""
    elapsed_ms = (time.perf_counter() - started) * 1000
    scoring = result.scoring
    note_recall(
        kind,
        len(result.memories),
        result.fallback,
        result.skipped,
        elapsed_ms,
        reranker=None if scoring is None else scoring.reranker,
        stopped_at=None if scoring is None else scoring.stopped_at,
        scoring_ms=None if scoring is None else scoring.seconds * 1000,
    )


@recalls_api.route("/memories/recall", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
@idempotent(recalls_api)
def recall() -> Response:
    """On-demand recall: scored memories and the rendered block."""
    call = call_context(_request())
    body = parse_body(_request().raw_body, RecallRequest)
    if body.as_of is not None:  # a preview as of a moment (docs/reference.md#as-of-a-moment)
        past, moment = call.services.recall_as_of.preview(call.principal, body, call.run)
        return json_response(recall_body(past, moment, "recall"))
    started = time.perf_counter()
    result = call.services.recall.recall(call.principal, body, call.run)
    observe_recall("on_demand", result, started)
    return json_response(recall_body(result, call.services.clock.now(), "recall"))


@recalls_api.route("/memories/recall/start", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
@idempotent(recalls_api)
def recall_at_run_start() -> Response:
    """Run-start recall: the block, or ``skipped`` with the reason."""
    call = call_context(_request())
    refuse_persons(call.principal, Forbidden, RUN_START_IS_FOR_AGENTS)
    body = parse_body(_request().raw_body, RecallStartRequest)
    started = time.perf_counter()
    result = call.services.recall.start(call.principal, body, call.run)
    observe_recall("run_start", result, started)
    return json_response(recall_body(result, call.services.clock.now(), "recall_start"))


@recalls_api.route("/recalls", methods=["GET"], content_types=ANY_CONTENT)
@endpoint
def recall_log() -> Response:
    """The recall log of an agent: which memories went to which session, run and task."""
    call = call_context(_request(), takes_query=True)
    query = validate(dict(query_params(_request())), RecallLogQuery)
    entries, continue_after = call.services.recall.log(
        call.principal,
        query.agent_id,
        query.limit,
        decode_next_token(query.next_token, prefix="rcl"),
    )
    return json_response(
        RecallLogList(
            data=[RecallLogObject.model_validate(entry.to_wire()) for entry in entries],
            next_token=encode_next_token(continue_after),
        ).wire()
    )


@recalls_api.route("/recalls/{recall_id}/block", methods=["GET"], content_types=ANY_CONTENT)
@endpoint
def recall_block(recall_id: str) -> Response:
    """What a logged recall gave the run: its block, rebuilt as of its moment."""
    call = call_context(_request(), takes_query=True)
    query = validate(dict(query_params(_request())), AgentQuery)
    seen = call.services.run_blocks.get(call.principal, query.agent_id, recall_id)
    logged = seen.entry.to_wire()
    return json_response(
        RecallBlockObject.model_validate(
            {
                "object": "recall_block",
                "recallId": logged["id"],
                "agentId": logged["agentId"],
                "kind": logged["kind"],
                "at": logged["at"],
                "query": logged["query"],
                "rebuilt": True,
                "block": seen.block,
                "erased": list(seen.erased),
                "learningsChanged": list(seen.learnings_changed),
                "sections": logged["sections"],
            }
        ).wire()
    )


reject_other_methods(
    recalls_api,
    {
        "/memories/recall": ["POST"],
        "/memories/recall/start": ["POST"],
        "/recalls": ["GET"],
        "/recalls/{recall_id}/block": ["GET"],
    },
)
