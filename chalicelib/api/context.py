"""Who is calling and for which run: bearer token -> principal, run headers."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from chalicelib.api.observe import note_principal
from chalicelib.errors import InvalidRequest
from chalicelib.models.principal import Principal
from chalicelib.services.run_context import RunContext, read_run_context
from chalicelib.wiring import Services, services


@dataclass(frozen=True)
class CallContext:
    """Everything a view needs besides its body: the services, principal, and run."""

    services: Services
    principal: Principal
    run: RunContext


def call_context(request: Any, *, takes_query: bool = False) -> CallContext:
    """Authenticate a Chalice request and read an agent's ``X-Pinework-*`` headers
    (a person's are checked the same way, then ignored: persons have no runs).

    Args:
        takes_query: the route reads a query string; otherwise any is refused.

    Raises:
        Unauthorized: missing or unknown bearer token.
        InvalidRequest: a malformed run/task/session header (``read_run_context``);
            an unexpected query string.
        SecretInMemory: a run/task/session header looks like a credential.
    """
    wired = services()
    headers = request.headers
    principal = wired.auth.authenticate(headers.get("authorization"))
    note_principal(principal)
    if not takes_query:
        reject_query(request)
    # Checked for everyone (the OpenAPI document states one rule for each header).
    run = read_run_context(
        run=headers.get("x-pinework-run"),
        task=headers.get("x-pinework-task"),
        session=headers.get("x-pinework-session"),
        secrets=wired.secrets,
    )
    if not principal.is_agent:
        # Run, task and session describe an agent's run; a person has none.
        return CallContext(services=wired, principal=principal, run=RunContext())
    return CallContext(services=wired, principal=principal, run=run)


def reject_query(request: Any) -> None:
    """Refuse a query string on a route that takes none.

    Raises:
        InvalidRequest: some query parameter was sent.
    """
    if request.query_params:
        names = ", ".join(sorted(request.query_params))
        raise InvalidRequest(f"This route takes no query parameters (got {names}).")


def query_params(request: Any, repeatable: Collection[str] = ()) -> dict[str, str]:
    """The query string as a dict (Chalice gives ``None`` when there is none); a
    parameter of ``repeatable`` given more than once arrives comma-joined (a list's
    ``tag`` filters, docs/reference.md#tags).

    Raises:
        InvalidRequest: another parameter was given more than once.
    """
    params = request.query_params
    if params is None:
        return {}
    for name in params:
        if len(params.getlist(name)) > 1 and name not in repeatable:
            raise InvalidRequest(f"Query parameter {name!r} is given more than once.")
    return {name: ",".join(params.getlist(name)) for name in params}
