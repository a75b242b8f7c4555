"""Every route of the dashboard, one line of view each (SPEC §13, issue 13).

Pages: ``/`` (agents), ``/agents/{id}`` (memories) and its ``/days``, ``/recall``,
``/reviews``, ``/pictures`` tabs, ``/memories/{id}``, ``/reviews/{id}``,
``/settings``; sign-in at ``/sign-in``; vendored files at ``/static/{name}``. And
one JSON route, ``POST /api/v1/sign-in-links`` (a person's bearer token -> a
one-time sign-in link; ``pinework dashboard`` calls it).
"""

from __future__ import annotations

from collections.abc import Callable

from chalice.app import Blueprint, Response

from chalicelib.api.context import call_context
from chalicelib.api.dashboard.adapter import page, public
from chalicelib.api.http import ANY_CONTENT, endpoint, json_response, reject_other_methods
from chalicelib.web.context import WebContext
from chalicelib.web.http import WebRequest, WebResponse
from chalicelib.web.views import agents, auth, memories, memory, static
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


@_route("/sign-in", "POST")
@open_to_all
def sign_in(request: WebRequest, wired: Services) -> WebResponse:
    """Sign in with a person's token (form body)."""
    return auth.sign_in_submit(request, wired)


@_route("/sign-in/link")
@open_to_all
def sign_in_link(request: WebRequest, wired: Services) -> WebResponse:
    """Sign in with a one-time link, then redirect."""
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


@_route("/memories/{memory_id}/unarchive", "POST")
@signed_in
def unarchive_memory(web: WebContext, memory_id: str) -> WebResponse:
    """Undo a veto or an archive (SPEC §4 rules)."""
    return memory.lifecycle(web, memory_id, "unarchive")


@dashboard_web.route("/api/v1/sign-in-links", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
def create_sign_in_link() -> Response:
    """A person's bearer token -> a one-time dashboard sign-in link (201)."""
    call = call_context(dashboard_web.current_request)
    link = call.services.dashboard.sessions.create_link(call.principal)
    return json_response(link.to_wire(), 201)


reject_other_methods(
    dashboard_web,
    {
        "/": ["GET"],
        "/sign-in": ["GET", "POST"],
        "/sign-in/link": ["GET"],
        "/sign-out": ["POST"],
        "/static/{name}": ["GET"],
        "/agents/{agent_id}": ["GET"],
        "/agents/{agent_id}/facts": ["POST"],
        "/memories/{memory_id}": ["GET"],
        "/memories/{memory_id}/edit": ["POST"],
        "/memories/{memory_id}/veto": ["POST"],
        "/memories/{memory_id}/archive": ["POST"],
        "/memories/{memory_id}/unarchive": ["POST"],
        "/api/v1/sign-in-links": ["POST"],
    },
)
