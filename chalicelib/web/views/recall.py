"""Recall for one agent (docs/reference.md#13-dashboard, docs/issues.md#issue-13): a preview of what
the agent would get for a task (every fact's score, kept or not, and the block) and the recall log
(which memories each run and session was given).

The preview runs ``RecallPreviewService``: it counts nothing and logs nothing
(docs/DECISIONS.md "Dashboard").
"""

from __future__ import annotations

from chalicelib.errors import InvalidRequest, PineworkError
from chalicelib.limits import RECALL_LOG_COUNT_MAX, RECALL_QUERY_MAX_CHARS
from chalicelib.services.recall.preview import RecallPreview
from chalicelib.web.context import FormError, WebContext
from chalicelib.web.http import WebResponse

LOG_PAGE = 20


def recall_page(
    web: WebContext,
    agent_id: str,
    *,
    preview: RecallPreview | None = None,
    error: FormError | None = None,
    task: str = "",
) -> WebResponse:
    """``GET /agents/{agent_id}/recall``: the preview form and the recall log, with how
    many entries it holds (docs/reference.md#list-totals)."""
    services = web.services
    agent = services.dashboard.workspace.agent(web.principal, agent_id)
    after = web.request.param("after")
    if after is not None and not after.startswith("rcl_"):
        raise InvalidRequest("after must be an rcl_ id from this page.")
    entries, more = services.recall.log(web.principal, agent.id, LOG_PAGE, after)
    return web.page(
        "agent_recall.html",
        status=error.status if error else 200,
        nav="agents",
        agent=agent,
        tab="recall",
        preview=preview,
        error=error,
        task=task,
        entries=entries,
        log_more=more,
        log_after=after,
        log_total=services.recall.log_total(web.principal, agent.id, after, RECALL_LOG_COUNT_MAX),
        query_max=RECALL_QUERY_MAX_CHARS,
    )


def preview(web: WebContext, agent_id: str) -> WebResponse:
    """``POST /agents/{agent_id}/recall``: preview a recall for the task in the form
    (changes nothing; POST because a task may be 4,000 characters)."""
    task = web.request.form().get("task", "")
    try:
        result = web.services.dashboard.recall_preview.preview(web.principal, agent_id, task)
    except PineworkError as error:
        return recall_page(web, agent_id, error=FormError.of(error, "preview"), task=task)
    return recall_page(web, agent_id, preview=result, task=task)


def run_block(web: WebContext, agent_id: str, recall_id: str) -> WebResponse:
    """``GET /agents/{agent_id}/recalls/{recall_id}``: what a logged run saw, its block
    rebuilt as of the recall's moment and what could not be put back
    (docs/reference.md#what-a-run-saw; ``recall_not_found`` for an id not in the log)."""
    agent = web.services.dashboard.workspace.agent(web.principal, agent_id)
    seen = web.services.run_blocks.get(web.principal, agent.id, recall_id)
    return web.page("run_block.html", nav="agents", agent=agent, tab="recall", seen=seen)
