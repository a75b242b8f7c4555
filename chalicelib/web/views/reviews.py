"""Reviews and the routine of an agent, one review's report, and the workspace's
review approval (docs/reference.md#9-review, docs/reference.md#13-dashboard,
docs/issues.md#issue-13).

Approve, reject and undo call ``ReviewService`` as the signed-in person (the same
version-checked apply as ``POST /reviews/{id}/actions/{n}/approve``, the same
restore as ``…/undo``); a conflict may be approved keeping either fact. Each
action is drawn by ``_review_action.html``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote

from chalicelib.errors import InvalidRequest, PineworkError
from chalicelib.limits import PENDING_COUNT_MAX, REVIEWS_COUNT_MAX
from chalicelib.models.review import (
    ActionDecision,
    ActionOutcome,
    ActionUndo,
    ReviewAction,
    ReviewReport,
)
from chalicelib.models.review_requests import RunReviewRequest as RunRequest
from chalicelib.models.review_run import ReviewRun
from chalicelib.models.totals import ListTotal
from chalicelib.services.review.sameness import compare
from chalicelib.web.context import FormError, WebContext
from chalicelib.web.http import WebResponse

SUMMARIES_PAGE = 20
WAITING = 20
"""Actions waiting for a person listed on an agent's reviews page (oldest review first)."""
RoutineVerb = Literal["pause", "resume", "delete", "create"]
DONE = {"pause": "paused", "resume": "resumed", "delete": "deleted", "create": "created"}
Verb = Literal["approve", "reject", "undo"]
DECIDED: dict[str, tuple[str, str]] = {
    "approve": ("approved", "Approved."),
    "reject": ("rejected", "Rejected."),
    "undo": ("undone", "Undone: what it changed is restored."),
}


@dataclass(frozen=True)
class ActionView:
    """One planned action with where it stands.

    Attributes:
        action: the plan's action (reason, evidence, memories).
        state: ``pending``, ``applying``, ``applied``, ``skipped``, ``rejected``, or
            ``planned`` (a dry run).
        detail: what applying did, or why it was skipped.
        decision: the person's decision (approval mode), if any.
        undone: the person's undo of the applied action, if any.
    """

    action: ReviewAction
    state: str
    detail: str | None
    decision: ActionDecision | None
    undone: ActionUndo | None = None

    @property
    def undoable(self) -> bool:
        """Applied and not undone yet: Undo is offered (the service decides)."""
        return self.state == "applied" and self.undone is None

    @property
    def texts(self) -> dict[str, str]:
        """The facts' texts as the plan's evidence lines quote them, by memory id."""
        found: dict[str, str] = {}
        for line in self.action.evidence:
            quoted = _EVIDENCE_LINE.match(line)
            if quoted is not None:
                found[quoted["id"]] = quoted["text"]
        return found

    @property
    def difference(self) -> str | None:
        """What contradicts what in a conflict ("5432 ≠ 6432"; docs/issues.md#issue-26-item-2),
        from the two facts' texts; None for other actions or texts no longer quoted."""
        if self.action.action != "resolve_conflict" or not self.action.keep_id:
            return None
        texts = self.texts
        other = next((m for m in self.action.memory_ids if m in texts), None)
        if self.action.keep_id not in texts or other is None:
            return None
        return compare(texts[self.action.keep_id], texts[other]).difference()


_EVIDENCE_LINE = re.compile(
    r"^(?P<id>mem_\w+) \([^)]*\): (?P<text>.*?)(?: \| evidence: .*)?$", re.S
)
"""An evidence line of a plan (``conflicts.provenance``): the id, then the fact's text."""


def action_views(report: ReviewReport) -> list[ActionView]:
    """Each action of the plan with its state, in plan order."""
    decisions = {decision.action_id: decision for decision in report.decisions}
    outcomes: dict[str, tuple[str, ActionOutcome]] = {}
    for state, listed in (("applied", report.applied), ("skipped", report.skipped)):
        for outcome in listed:
            outcomes[outcome.action_id] = (state, outcome)
    undone = {undo.action_id: undo for undo in report.undone}
    views = []
    for action in report.plan.actions:
        decision = decisions.get(action.id)
        undo = undone.get(action.id)
        if action.id in outcomes:
            state, outcome = outcomes[action.id]
            views.append(ActionView(action, state, outcome.detail, decision, undo))
        elif decision is not None:
            views.append(ActionView(action, decision.state, decision.detail, decision, undo))
        else:
            state = "planned" if report.dry_run else "skipped"
            views.append(ActionView(action, state, None, None, undo))
    return views


def agent_reviews(
    web: WebContext,
    agent_id: str,
    *,
    plan: ReviewReport | None = None,
    error: FormError | None = None,
) -> WebResponse:
    """``GET /agents/{agent_id}/reviews``: the routine, run-now, and the reports, with
    how many there are (docs/reference.md#list-totals)."""
    services = web.services
    agent = services.dashboard.workspace.agent(web.principal, agent_id)
    after = web.request.param("after")
    if after is not None and not after.startswith("rvw_"):
        raise InvalidRequest("after must be an rvw_ id from this page.")
    summaries, more = services.reviews.list_reviews(web.principal, agent.id, SUMMARIES_PAGE, after)
    total = services.reviews.count_reviews(web.principal, agent.id, after, REVIEWS_COUNT_MAX)
    routines, _ = services.routines.list(web.principal, agent.id)
    waiting, more_waiting = services.reviews.list_pending(web.principal, agent.id, WAITING, None)
    # Counted only when the list is cut: otherwise the list is the count.
    waiting_total = (
        services.reviews.count_pending(web.principal, agent.id, None, PENDING_COUNT_MAX)
        if more_waiting is not None
        else ListTotal.whole(len(waiting))
    )
    return web.page(
        "agent_reviews.html",
        status=error.status if error else 200,
        nav="agents",
        agent=agent,
        tab="reviews",
        routine=routines[0] if routines else None,
        summaries=summaries,
        summaries_total=total,
        more=more,
        after=after,
        plan=plan,
        plan_actions=action_views(plan) if plan else [],
        waiting=waiting,
        more_waiting=more_waiting is not None,
        waiting_total=waiting_total,
        error=error,
        workspace=services.dashboard.workspace.workspace(web.principal),
    )


def routine_change(web: WebContext, agent_id: str, verb: RoutineVerb) -> WebResponse:
    """``POST /agents/{agent_id}/routine/{verb}``: pause, resume, delete or create the
    agent's "Memory dreaming" routine (``RoutineService``)."""
    routines = web.services.routines
    try:
        if verb == "create":
            routines.create(web.principal, agent_id)
        else:
            getattr(routines, verb)(web.principal, agent_id)
    except PineworkError as error:
        return agent_reviews(web, agent_id, error=FormError.of(error, "routine"))
    return web.back({}, f"/agents/{agent_id}/reviews", done=DONE[verb])


def run_review(web: WebContext, agent_id: str) -> WebResponse:
    """``POST /agents/{agent_id}/reviews``: run the agent's review now (for yesterday,
    UTC); ``dry_run=yes`` shows the plan and changes nothing."""
    dry_run = web.request.form().get("dry_run") == "yes"
    try:
        # ``POST /reviews``'s own choice: inline when it surely fits in the request,
        # else queued for the review worker (the Bedrock reviewer, many facts).
        outcome = web.services.review_runs.start(
            web.principal, RunRequest.model_validate({"agentId": agent_id, "dryRun": dry_run})
        )
    except PineworkError as error:
        return agent_reviews(web, agent_id, error=FormError.of(error, "run"))
    if isinstance(outcome, ReviewRun):
        return web.back({}, f"/reviews/{outcome.id}", done="queued")
    if dry_run:
        return agent_reviews(web, agent_id, plan=outcome)
    return web.back({}, f"/reviews/{outcome.id}", done="reviewed")


def review_page(web: WebContext, review_id: str) -> WebResponse:
    """``GET /reviews/{review_id}``: the report, each action's reason, evidence and
    state, with approve / reject for pending ones; a queued review's progress
    (queued, running, failed) until its report exists (``GET /reviews/{id}``)."""
    report = web.services.review_runs.get(web.principal, review_id)
    agent = web.services.dashboard.workspace.agent(web.principal, report.agent_id)
    if isinstance(report, ReviewRun):
        return web.page("review_run.html", nav="agents", run=report, agent=agent)
    return web.page(
        "review.html",
        nav="agents",
        report=report,
        agent=agent,
        actions=action_views(report),
    )


def decide(web: WebContext, review_id: str, action_ref: str, verb: Verb) -> WebResponse:
    """``POST /reviews/{review_id}/actions/{action_ref}/{approve|reject|undo}``; an
    approval may name the fact to keep (``keep``, a conflict's other side).

    With htmx the answer is the action's card (its new state, or the error next to
    its buttons) and, swapped out of band, the review's status badge and counts and
    an emptied page notice (``_review_decided.html``), with ``HX-Replace-Url``
    dropping ``?done=`` from the address; otherwise a redirect back to the report
    (``?done=`` says what was done), or the report with the error shown.
    """
    reviews = web.services.reviews
    keep = web.request.form().get("keep") or None
    try:
        if verb == "approve":
            report = reviews.approve(web.principal, review_id, action_ref, keep)
        elif verb == "reject":
            report = reviews.reject(web.principal, review_id, action_ref)
        else:
            report = reviews.undo(web.principal, review_id, action_ref)
        error = None
    except PineworkError as failure:
        report = reviews.get(web.principal, review_id)
        error = FormError.of(failure, action_ref)
    views = {view.action.id: view for view in action_views(report)}
    wanted = action_ref if action_ref.startswith("a") else f"a{action_ref}"
    if web.request.htmx and wanted in views:
        answer = web.page(
            "_review_decided.html",
            status=error.status if error else 200,
            report=report,
            item=views[wanted],
            action_error=error,
            action_notice=None if error else DECIDED[verb][1],
        )
        # The address loses an earlier ``?done=``: a reload shows no stale banner.
        answer.headers["HX-Replace-Url"] = web.request.url(f"/reviews/{quote(report.id)}")
        return answer
    if error is not None:
        agent = web.services.dashboard.workspace.agent(web.principal, report.agent_id)
        return web.page(
            "review.html",
            status=error.status,
            nav="agents",
            report=report,
            agent=agent,
            actions=list(views.values()),
            error=error,
        )
    return web.back({}, f"/reviews/{review_id}", done=DECIDED[verb][0])


def settings_page(
    web: WebContext,
    *,
    error: FormError | None = None,
    learning_error: FormError | None = None,
) -> WebResponse:
    """``GET /settings``: the workspace, its review and learning approval, the session."""
    shown = error or learning_error
    return web.page(
        "settings.html",
        status=shown.status if shown else 200,
        nav="settings",
        workspace=web.services.dashboard.workspace.workspace(web.principal),
        session=web.signed_in.session,
        error=error,
        learning_error=learning_error,
    )


def set_learning_approval(web: WebContext) -> WebResponse:
    """``POST /settings/learning-approval``: ``required`` or ``none``, which needs the
    form's ``confirm=yes`` (the risk is named otherwise; docs/reference.md#learning-approval)."""
    form = web.request.form()
    value = form.get("approval", "")
    try:
        web.services.dashboard.workspace.set_learning_approval(
            web.principal, value, confirmed=form.get("confirm") == "yes"
        )
    except PineworkError as error:
        return settings_page(web, learning_error=FormError.of(error, "learning-approval"))
    return web.back({}, "/settings", done="learning-approval")


def set_review_approval(web: WebContext) -> WebResponse:
    """``POST /settings/review-approval``: ``none`` or ``required`` for the workspace."""
    value = web.request.form().get("approval", "")
    try:
        web.services.dashboard.workspace.set_review_approval(web.principal, value)
    except PineworkError as error:
        return settings_page(web, error=FormError.of(error, "approval"))
    return web.back({}, "/settings", done="approval")
