"""The dashboard's People and agents page, for a workspace's owners
(docs/reference.md#people-and-agents, docs/issues.md#issue-48-item-4): the agents with
their tokens and the persons with their roles; create an agent, invite a person, change a
role, issue and revoke an agent's token.

A new token is shown once, in the answer to the form that made it (never in a URL, never
again); the other forms answer 303 back to the page with a notice. Members are refused
(403) before their form is read. A refusal shows next to its form with the error's
status, what was typed kept; a role form carries the role it showed, and a stale one is
refused (412) with the role as it stands now.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from chalicelib.errors import InvalidRequest, PineworkError
from chalicelib.web.context import FormError, WebContext
from chalicelib.web.http import WebResponse

REVOKE_UNCONFIRMED = (
    "Tick the confirmation to revoke this token: the agent's next request with it is refused."
)


@dataclass(frozen=True)
class ShownToken:
    """A token shown once on the page that made it.

    Attributes:
        what: ``agent`` (a new agent), ``person`` (an invited person) or ``token``
            (one more token for an agent).
        principal_id: the agent's or person's id.
        name: the agent's name or the person's e-mail address.
        token: the bearer token in clear.
        token_id: its ``tok_…`` id.
    """

    what: str
    principal_id: str
    name: str
    token: str
    token_id: str | None


def people_page(
    web: WebContext,
    *,
    errors: dict[str, FormError] | None = None,
    form: dict[str, str] | None = None,
    shown: ShownToken | None = None,
) -> WebResponse:
    """``GET /people``: the workspace's agents (by name, each with its tokens: id, prefix,
    status, created, last used, label, a revoke form) and live persons (owners first,
    each with a role form), and the forms to create an agent and invite a person.
    ``errors`` maps a form's name to the error shown next to it (the page answers that
    status; one whose form is not on the page shows at the top); ``form`` is what was
    typed; ``shown`` a new token to show once.

    Raises:
        Forbidden: the signed-in person is not an owner (403).
    """
    people = web.services.dashboard.people.listing(web.principal)
    errors = errors or {}
    forms = {"agent", "person"}
    forms.update(f"role-{person.id}" for person in people.persons)
    for row in people.agents:
        forms.add(f"token-{row.agent.id}")
        forms.update(f"revoke-{token.id}" for token in row.tokens)
    return web.page(
        "people.html",
        status=next(iter(errors.values())).status if errors else 200,
        nav="people",
        people=people,
        errors=errors,
        # the error of a form whose row is not on the page (another workspace's, gone)
        stray_error=next((error for name, error in errors.items() if name not in forms), None),
        form=form or {},
        shown=shown,
    )


def _submit(
    web: WebContext,
    name: str,
    action: Callable[[dict[str, str]], ShownToken | str],
    back_to: str = "/people",
) -> WebResponse:
    """Check the caller is an owner (before the form is read), run ``action`` on the
    form: a ``ShownToken`` is shown on the page (200), a string is the ``done`` notice of
    the 303 to ``back_to``; a service error is shown next to the form called ``name``."""
    web.services.dashboard.people.check_owner(web.principal)
    form = web.request.form()
    try:
        result = action(form)
    except PineworkError as error:
        return people_page(web, errors={name: FormError.of(error, name)}, form=form)
    if isinstance(result, ShownToken):
        return people_page(web, shown=result)
    return web.back({}, back_to, done=result)


def create_agent(web: WebContext) -> WebResponse:
    """``POST /people/agents`` (form ``name``): a new agent; its token shown once.
    Refusals: ``invalid_request`` (a blank or over-200-character name, a control
    character)."""
    people = web.services.dashboard.people

    def create(form: dict[str, str]) -> ShownToken:
        name = form.get("name", "")
        issued = people.create_agent(web.principal, name)
        return ShownToken("agent", issued.id, name.strip(), issued.token, issued.token_id)

    return _submit(web, "agent", create)


def invite_person(web: WebContext) -> WebResponse:
    """``POST /people/persons`` (form ``email``, ``role``): a new person of the workspace;
    their token shown once (they sign in with it). Refusals: ``invalid_request`` (not an
    e-mail address, another role), ``person_exists`` (409: the address is taken)."""
    people = web.services.dashboard.people

    def invite(form: dict[str, str]) -> ShownToken:
        email = form.get("email", "")
        issued = people.invite_person(web.principal, email, form.get("role", ""))
        return ShownToken("person", issued.id, email.strip(), issued.token, issued.token_id)

    return _submit(web, "person", invite)


def set_role(web: WebContext, person_id: str) -> WebResponse:
    """``POST /people/persons/{person_id}/role`` (form ``role``, and ``shown``: the role
    the form showed): 303 back with ``?done=role-set`` (to the agents overview when the
    owner changed their own role). Refusals: ``precondition_failed``
    (412, stale form), ``conflict`` (409, the last owner; or a concurrent change),
    ``not_found``, ``invalid_request``."""
    people = web.services.dashboard.people

    def change(form: dict[str, str]) -> str:
        if not form.get("shown"):
            raise InvalidRequest("This form does not say which role it showed; reload.")
        people.set_role(web.principal, person_id, form.get("role", ""), form["shown"])
        return "role-set"

    # an owner who made themselves a member may no longer see the page: to the agents
    stepping_down = person_id == web.principal.id
    return _submit(web, f"role-{person_id}", change, "/" if stepping_down else "/people")


def issue_token(web: WebContext, agent_id: str) -> WebResponse:
    """``POST /people/agents/{agent_id}/tokens`` (form ``label``, optional): one more
    token for the agent, shown once; its other tokens keep working."""
    people = web.services.dashboard.people

    def issue(form: dict[str, str]) -> ShownToken:
        issued = people.issue_token(web.principal, agent_id, form.get("label", "").strip() or None)
        name = web.services.dashboard.workspace.display_name(web.principal, agent_id)
        return ShownToken("token", agent_id, name or agent_id, issued.token, issued.id)

    return _submit(web, f"token-{agent_id}", issue)


def revoke_token(web: WebContext, token_id: str) -> WebResponse:
    """``POST /people/tokens/{token_id}/revoke`` (form ``confirm=yes``, required): the
    token is refused from its next request; 303 back with ``?done=token-revoked``.
    Refusals: ``invalid_request`` (not confirmed), ``not_found`` (revoked already, or
    not a token of the workspace's agents)."""
    people = web.services.dashboard.people

    def revoke(form: dict[str, str]) -> str:
        if form.get("confirm") != "yes":
            raise InvalidRequest(REVOKE_UNCONFIRMED)
        people.revoke_token(web.principal, token_id)
        return "token-revoked"

    return _submit(web, f"revoke-{token_id}", revoke)
