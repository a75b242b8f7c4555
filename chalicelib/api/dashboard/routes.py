"""Every route of the dashboard, one line of view each (docs/reference.md#13-dashboard,
docs/issues.md#issue-13).

Pages: ``/`` (agents), ``/agents/{id}`` (memories) and its ``/days``, ``/recall`` (and
``/recalls/{id}``, what a run saw),
``/reviews``, ``/pictures``, ``/data`` tabs, ``/memories/{id}``, ``/reviews/{id}``,
``/exports/{id}``, ``/erasures``, ``/erasures/{id}``, ``/wiki``, ``/wiki/{id}``,
``/settings``, ``/people`` (owners only); sign-in at ``/sign-in``; vendored files at
``/static/{name}``. And one JSON route,
``POST /api/v1/sign-in-links`` (a person's bearer token -> a one-time sign-in link;
``pinework dashboard`` calls it).
"""

from __future__ import annotations

from collections.abc import Callable

from chalice.app import Blueprint, Response

from chalicelib.api.context import call_context
from chalicelib.api.dashboard.adapter import page, public
from chalicelib.api.http import ANY_CONTENT, endpoint, json_response, reject_other_methods
from chalicelib.services.access.auth import bearer_token_hash
from chalicelib.web.context import WebContext
from chalicelib.web.http import WebRequest, WebResponse
from chalicelib.web.views import (
    agents,
    auth,
    bulk,
    days,
    learnings,
    lifecycle,
    memories,
    memory,
    pending,
    people,
    pictures,
    recall,
    reviews,
    static,
    wiki,
)
from chalicelib.wiring import Services

dashboard_web = Blueprint(__name__)
signed_in = page(dashboard_web)
open_to_all = public(dashboard_web)


Route = Callable[[Callable[..., Response]], Callable[..., Response]]


def _route(path: str, method: str = "GET") -> Route:
    route: Route = dashboard_web.route(path, methods=[method], content_types=ANY_CONTENT)
    return route


@_route("/")
@signed_in
def agents_overview(web: WebContext) -> WebResponse:
    """The agents of the person's workspace."""
    return agents.overview(web)


@_route("/sign-in")
@open_to_all
def sign_in_page(request: WebRequest, wired: Services) -> WebResponse:
    """The sign-in form."""
    return auth.sign_in_page(request, wired)


@_route("/not-found")
@open_to_all
def not_found(request: WebRequest, wired: Services) -> WebResponse:
    """The page of an address with no page (404, with the navigation when signed in)."""
    return auth.not_found_page(request, wired)


@_route("/sign-in", "POST")
@open_to_all
def sign_in(request: WebRequest, wired: Services) -> WebResponse:
    """Sign in with a person's token (form body)."""
    return auth.sign_in_submit(request, wired)


@_route("/sign-in/link")
@open_to_all
def sign_in_link(request: WebRequest, wired: Services) -> WebResponse:
    """A one-time link's confirmation page (signs nobody in)."""
    return auth.confirm_link(request, wired)


@_route("/sign-in/link", "POST")
@open_to_all
def sign_in_link_confirmed(request: WebRequest, wired: Services) -> WebResponse:
    """Sign in with a one-time link's code (form body, same origin), then redirect."""
    return auth.sign_in_with_link(request, wired)


@_route("/sign-out", "POST")
@open_to_all
def sign_out(request: WebRequest, wired: Services) -> WebResponse:
    """End the session."""
    return auth.sign_out(request, wired)


@_route("/static/{name}")
@open_to_all
def static_asset(request: WebRequest, wired: Services, name: str) -> WebResponse:
    """A vendored file (CSS, JS, icon)."""
    return static.static_file(request, wired, name)


@_route("/agents/{agent_id}")
@signed_in
def agent_memories(web: WebContext, agent_id: str) -> WebResponse:
    """An agent's memories: filters, search, paging."""
    return memories.agent_memories(web, agent_id)


@_route("/agents/{agent_id}/facts", "POST")
@signed_in
def save_fact(web: WebContext, agent_id: str) -> WebResponse:
    """Save a fact for the agent."""
    return memories.save_fact(web, agent_id)


@_route("/agents/{agent_id}/bulk", "POST")
@signed_in
def bulk_on_list(web: WebContext, agent_id: str) -> WebResponse:
    """Archive, veto, tag or untag the memories ticked on the agent's list."""
    return bulk.apply_on_list(web, agent_id)


@_route("/agents/{agent_id}/bulk/{bulk_id}/undo", "POST")
@signed_in
def undo_bulk_on_list(web: WebContext, agent_id: str, bulk_id: str) -> WebResponse:
    """Undo a bulk action of the agent's list."""
    return bulk.undo_on_list(web, agent_id, bulk_id)


@_route("/agents/{agent_id}/data")
@signed_in
def agent_data(web: WebContext, agent_id: str) -> WebResponse:
    """The agent's Data tab: export it, erase it."""
    return lifecycle.data_tab(web, agent_id)


@_route("/agents/{agent_id}/export", "POST")
@signed_in
def export_agent(web: WebContext, agent_id: str) -> WebResponse:
    """Start the agent's export."""
    return lifecycle.export_agent(web, agent_id)


@_route("/agents/{agent_id}/erase", "POST")
@signed_in
def erase_agent(web: WebContext, agent_id: str) -> WebResponse:
    """Queue the agent's erasure (reason, name typed to confirm)."""
    return lifecycle.erase_agent(web, agent_id)


@_route("/exports", "POST")
@signed_in
def export_workspace(web: WebContext) -> WebResponse:
    """Start the workspace's export."""
    return lifecycle.export_workspace(web)


@_route("/exports/{export_id}")
@signed_in
def export_page(web: WebContext, export_id: str) -> WebResponse:
    """One export: its state, then its download link."""
    return lifecycle.export_page(web, export_id)


@_route("/erasures")
@signed_in
def erasures_page(web: WebContext) -> WebResponse:
    """The workspace's past erasures, newest first."""
    return lifecycle.erasures_page(web)


@_route("/erasures/{target_id}")
@signed_in
def erasure_page(web: WebContext, target_id: str) -> WebResponse:
    """One erasure: its state, then its tombstone."""
    return lifecycle.erasure_page(web, target_id)


@_route("/pending")
@signed_in
def pending_page(web: WebContext) -> WebResponse:
    """The workspace's review actions waiting for a person."""
    return pending.pending_page(web)


@_route("/learnings")
@signed_in
def learnings_page(web: WebContext) -> WebResponse:
    """The workspace's learnings (docs/reference.md#15-learnings)."""
    return learnings.learnings_page(web)


@_route("/learnings", "POST")
@signed_in
def propose_learning(web: WebContext) -> WebResponse:
    """A person adds a learning (active at once)."""
    return learnings.propose(web)


@_route("/learnings/{learning_id}")
@signed_in
def learning_page(web: WebContext, learning_id: str) -> WebResponse:
    """One learning: its decisions and history."""
    return learnings.learning_page(web, learning_id)


@_route("/wiki")
@signed_in
def wiki_list(web: WebContext) -> WebResponse:
    """The workspace's wiki pages (docs/reference.md#wiki-on-the-dashboard)."""
    return wiki.wiki_page(web)


@_route("/wiki", "POST")
@signed_in
def create_wiki_page(web: WebContext) -> WebResponse:
    """A person creates a wiki page (a draft)."""
    return wiki.create(web)


@_route("/wiki/{page_ref}")
@signed_in
def wiki_page_view(web: WebContext, page_ref: str) -> WebResponse:
    """One wiki page: its text, its forms and its history."""
    return wiki.page_view(web, page_ref)


@_route("/wiki/{page_ref}/edit", "POST")
@signed_in
def edit_wiki_page(web: WebContext, page_ref: str) -> WebResponse:
    """Edit a wiki page (a stale form is refused)."""
    return wiki.change(web, page_ref, "edit")


@_route("/wiki/{page_ref}/publish", "POST")
@signed_in
def publish_wiki_page(web: WebContext, page_ref: str) -> WebResponse:
    """Publish a wiki page."""
    return wiki.change(web, page_ref, "publish")


@_route("/wiki/{page_ref}/archive", "POST")
@signed_in
def archive_wiki_page(web: WebContext, page_ref: str) -> WebResponse:
    """Archive a wiki page."""
    return wiki.change(web, page_ref, "archive")


@_route("/learnings/{learning_id}/approve", "POST")
@signed_in
def approve_learning(web: WebContext, learning_id: str) -> WebResponse:
    """Approve (editing the text first, or not)."""
    return learnings.decide(web, learning_id, "approve")


@_route("/learnings/{learning_id}/edit", "POST")
@signed_in
def edit_learning(web: WebContext, learning_id: str) -> WebResponse:
    """Edit an active learning's text."""
    return learnings.decide(web, learning_id, "edit")


@_route("/learnings/{learning_id}/reject", "POST")
@signed_in
def reject_learning(web: WebContext, learning_id: str) -> WebResponse:
    """Reject a proposed learning, with a reason."""
    return learnings.decide(web, learning_id, "reject")


@_route("/learnings/{learning_id}/retire", "POST")
@signed_in
def retire_learning(web: WebContext, learning_id: str) -> WebResponse:
    """Retire an active learning."""
    return learnings.decide(web, learning_id, "retire")


@_route("/memories/{memory_id}")
@signed_in
def memory_page(web: WebContext, memory_id: str) -> WebResponse:
    """One memory: fields, chain, history."""
    return memory.memory_page(web, memory_id)


@_route("/memories/{memory_id}/edit", "POST")
@signed_in
def edit_memory(web: WebContext, memory_id: str) -> WebResponse:
    """Edit text and/or expiry."""
    return memory.edit(web, memory_id)


@_route("/memories/{memory_id}/veto", "POST")
@signed_in
def veto_memory(web: WebContext, memory_id: str) -> WebResponse:
    """Veto (optional note)."""
    return memory.lifecycle(web, memory_id, "veto")


@_route("/memories/{memory_id}/archive", "POST")
@signed_in
def archive_memory(web: WebContext, memory_id: str) -> WebResponse:
    """Archive with a reason."""
    return memory.lifecycle(web, memory_id, "archive")


@_route("/memories/{memory_id}/erase", "POST")
@signed_in
def erase_memory(web: WebContext, memory_id: str) -> WebResponse:
    """Erase with a reason and a confirmation (docs/reference.md#erasing-a-memory)."""
    return memory.erase(web, memory_id)


@_route("/memories/{memory_id}/unarchive", "POST")
@signed_in
def unarchive_memory(web: WebContext, memory_id: str) -> WebResponse:
    """Undo a veto or an archive (docs/reference.md#unarchive-rules)."""
    return memory.lifecycle(web, memory_id, "unarchive")


@_route("/agents/{agent_id}/days")
@signed_in
def agent_day_logs(web: WebContext, agent_id: str) -> WebResponse:
    """An agent's day logs by date, with their fill."""
    return days.day_logs(web, agent_id)


@_route("/agents/{agent_id}/recall")
@signed_in
def agent_recall(web: WebContext, agent_id: str) -> WebResponse:
    """Recall preview form and the recall log."""
    return recall.recall_page(web, agent_id)


@_route("/agents/{agent_id}/recalls/{recall_id}")
@signed_in
def agent_run_block(web: WebContext, agent_id: str, recall_id: str) -> WebResponse:
    """What a logged run saw: its block, rebuilt."""
    return recall.run_block(web, agent_id, recall_id)


@_route("/agents/{agent_id}/recall", "POST")
@signed_in
def agent_recall_preview(web: WebContext, agent_id: str) -> WebResponse:
    """Preview a recall for a task (counts and logs nothing)."""
    return recall.preview(web, agent_id)


@_route("/agents/{agent_id}/reviews")
@signed_in
def agent_reviews(web: WebContext, agent_id: str) -> WebResponse:
    """The agent's routine and review reports."""
    return reviews.agent_reviews(web, agent_id)


@_route("/agents/{agent_id}/reviews", "POST")
@signed_in
def run_agent_review(web: WebContext, agent_id: str) -> WebResponse:
    """Run (or dry-run) the agent's review now."""
    return reviews.run_review(web, agent_id)


@_route("/agents/{agent_id}/routine/pause", "POST")
@signed_in
def pause_routine(web: WebContext, agent_id: str) -> WebResponse:
    """Pause the agent's routine."""
    return reviews.routine_change(web, agent_id, "pause")


@_route("/agents/{agent_id}/routine/resume", "POST")
@signed_in
def resume_routine(web: WebContext, agent_id: str) -> WebResponse:
    """Resume the agent's routine."""
    return reviews.routine_change(web, agent_id, "resume")


@_route("/agents/{agent_id}/routine/delete", "POST")
@signed_in
def delete_routine(web: WebContext, agent_id: str) -> WebResponse:
    """Delete the agent's routine."""
    return reviews.routine_change(web, agent_id, "delete")


@_route("/agents/{agent_id}/routine/create", "POST")
@signed_in
def create_routine(web: WebContext, agent_id: str) -> WebResponse:
    """Create the agent's routine again."""
    return reviews.routine_change(web, agent_id, "create")


@_route("/agents/{agent_id}/pictures")
@signed_in
def agent_pictures(web: WebContext, agent_id: str) -> WebResponse:
    """Facts over time, recalls per day, day-log fill per date."""
    return pictures.pictures(web, agent_id)


@_route("/reviews/{review_id}")
@signed_in
def review_report(web: WebContext, review_id: str) -> WebResponse:
    """One review's report."""
    return reviews.review_page(web, review_id)


@_route("/reviews/{review_id}/actions/{action_ref}/approve", "POST")
@signed_in
def approve_action(web: WebContext, review_id: str, action_ref: str) -> WebResponse:
    """Approve a pending review action: it is applied now."""
    return reviews.decide(web, review_id, action_ref, "approve")


@_route("/reviews/{review_id}/actions/{action_ref}/reject", "POST")
@signed_in
def reject_action(web: WebContext, review_id: str, action_ref: str) -> WebResponse:
    """Reject a pending review action: it is never applied."""
    return reviews.decide(web, review_id, action_ref, "reject")


@_route("/reviews/{review_id}/actions/{action_ref}/undo", "POST")
@signed_in
def undo_action(web: WebContext, review_id: str, action_ref: str) -> WebResponse:
    """Undo an applied review action: what it changed is restored."""
    return reviews.decide(web, review_id, action_ref, "undo")


@_route("/settings")
@signed_in
def settings(web: WebContext) -> WebResponse:
    """The workspace's settings and this session."""
    return reviews.settings_page(web)


@_route("/settings/review-approval", "POST")
@signed_in
def set_review_approval(web: WebContext) -> WebResponse:
    """Set the workspace's review approval."""
    return reviews.set_review_approval(web)


@_route("/settings/learning-approval", "POST")
@signed_in
def set_learning_approval(web: WebContext) -> WebResponse:
    """Set whether agents' proposed learnings wait for a person."""
    return reviews.set_learning_approval(web)


@_route("/people")
@signed_in
def people_page(web: WebContext) -> WebResponse:
    """Owners only: the workspace's agents with their tokens, its persons with their roles."""
    return people.people_page(web)


@_route("/people/agents", "POST")
@signed_in
def create_agent(web: WebContext) -> WebResponse:
    """Create an agent (its token shown once)."""
    return people.create_agent(web)


@_route("/people/persons", "POST")
@signed_in
def invite_person(web: WebContext) -> WebResponse:
    """Invite a person as owner or member (their token shown once)."""
    return people.invite_person(web)


@_route("/people/persons/{person_id}/role", "POST")
@signed_in
def set_person_role(web: WebContext, person_id: str) -> WebResponse:
    """Change a person's role (never the last owner's to member)."""
    return people.set_role(web, person_id)


@_route("/people/agents/{agent_id}/tokens", "POST")
@signed_in
def issue_agent_token(web: WebContext, agent_id: str) -> WebResponse:
    """Issue one more token for an agent (shown once)."""
    return people.issue_token(web, agent_id)


@_route("/people/tokens/{token_id}/revoke", "POST")
@signed_in
def revoke_agent_token(web: WebContext, token_id: str) -> WebResponse:
    """Revoke an agent's token (confirmed)."""
    return people.revoke_token(web, token_id)


@dashboard_web.route("/api/v1/sign-in-links", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
def create_sign_in_link() -> Response:
    """A person's bearer token -> a one-time dashboard sign-in link (201)."""
    request = dashboard_web.current_request
    call = call_context(request)
    made_with = bearer_token_hash(request.headers.get("authorization"))
    link = call.services.dashboard.sessions.create_link(call.principal, token_hash=made_with)
    return json_response(link.to_wire(), 201)


reject_other_methods(
    dashboard_web,
    {
        "/": ["GET"],
        "/sign-in": ["GET", "POST"],
        "/sign-in/link": ["GET", "POST"],
        "/sign-out": ["POST"],
        "/static/{name}": ["GET"],
        "/agents/{agent_id}": ["GET"],
        "/agents/{agent_id}/facts": ["POST"],
        "/agents/{agent_id}/bulk": ["POST"],
        "/agents/{agent_id}/bulk/{bulk_id}/undo": ["POST"],
        "/memories/{memory_id}": ["GET"],
        "/memories/{memory_id}/edit": ["POST"],
        "/memories/{memory_id}/veto": ["POST"],
        "/memories/{memory_id}/erase": ["POST"],
        "/memories/{memory_id}/archive": ["POST"],
        "/memories/{memory_id}/unarchive": ["POST"],
        "/agents/{agent_id}/days": ["GET"],
        "/agents/{agent_id}/recall": ["GET", "POST"],
        "/agents/{agent_id}/reviews": ["GET", "POST"],
        "/agents/{agent_id}/routine/pause": ["POST"],
        "/agents/{agent_id}/routine/resume": ["POST"],
        "/agents/{agent_id}/routine/delete": ["POST"],
        "/agents/{agent_id}/routine/create": ["POST"],
        "/agents/{agent_id}/pictures": ["GET"],
        "/agents/{agent_id}/data": ["GET"],
        "/agents/{agent_id}/export": ["POST"],
        "/agents/{agent_id}/erase": ["POST"],
        "/exports": ["POST"],
        "/exports/{export_id}": ["GET"],
        "/erasures": ["GET"],
        "/erasures/{target_id}": ["GET"],
        "/settings/learning-approval": ["POST"],
        "/learnings": ["GET", "POST"],
        "/learnings/{learning_id}": ["GET"],
        "/learnings/{learning_id}/approve": ["POST"],
        "/learnings/{learning_id}/edit": ["POST"],
        "/learnings/{learning_id}/reject": ["POST"],
        "/learnings/{learning_id}/retire": ["POST"],
        "/wiki": ["GET", "POST"],
        "/wiki/{page_ref}": ["GET"],
        "/wiki/{page_ref}/edit": ["POST"],
        "/wiki/{page_ref}/publish": ["POST"],
        "/wiki/{page_ref}/archive": ["POST"],
        "/reviews/{review_id}": ["GET"],
        "/reviews/{review_id}/actions/{action_ref}/approve": ["POST"],
        "/reviews/{review_id}/actions/{action_ref}/reject": ["POST"],
        "/reviews/{review_id}/actions/{action_ref}/undo": ["POST"],
        "/settings": ["GET"],
        "/not-found": ["GET"],
        "/settings/review-approval": ["POST"],
        "/people": ["GET"],
        "/people/agents": ["POST"],
        "/people/persons": ["POST"],
        "/people/persons/{person_id}/role": ["POST"],
        "/people/agents/{agent_id}/tokens": ["POST"],
        "/people/tokens/{token_id}/revoke": ["POST"],
        "/api/v1/sign-in-links": ["POST"],
    },
)
