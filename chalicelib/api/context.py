"""Who is calling and for which run: bearer token -> principal, run headers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chalicelib.errors import InvalidRequest
from chalicelib.models.principal import Principal
from chalicelib.services.memories import RunContext
from chalicelib.services.rules import check_header
from chalicelib.wiring import Services, services


@dataclass(frozen=True)
class CallContext:
    """Everything a view needs besides its body: the services, principal, and run."""

    services: Services
    principal: Principal
    run: RunContext


def call_context(request: Any) -> CallContext:
    """Authenticate a Chalice request and read the ``X-Pinework-*`` headers.

    Raises:
        Unauthorized: missing or unknown bearer token.
        InvalidRequest: a malformed run or task header.
    """
    wired = services()
    headers = request.headers
    principal = wired.auth.authenticate(headers.get("authorization"))
    run = RunContext(
        run_id=check_header(headers.get("x-pinework-run"), "X-Pinework-Run"),
        task_key=check_header(headers.get("x-pinework-task"), "X-Pinework-Task"),
        session_id=check_header(headers.get("x-pinework-session"), "X-Pinework-Session"),
    )
    return CallContext(services=wired, principal=principal, run=run)


def query_params(request: Any) -> dict[str, str]:
    """The query string as a dict (Chalice gives ``None`` when there is none).

    Raises:
        InvalidRequest: a parameter was given more than once.
    """
    params = request.query_params
    if params is None:
        return {}
    for name in params:
        if len(params.getlist(name)) > 1:
            raise InvalidRequest(f"Query parameter {name!r} is given more than once.")
    return {name: params[name] for name in params}
