"""``POST /api/v1/mcp``: the MCP endpoint over HTTP (docs/reference.md#11-mcp); the protocol is in
``mcp_protocol``.

Streamable HTTP, stateless, JSON responses: POST only (GET, which would open
an SSE stream, and DELETE, which would end a session, are 405 with
``Allow: POST``). Credentials work as on the key-value routes: an invalid
bearer token is 401 before any message is read; without one, only the
key-value tools work (anonymous or ``X-Api-Key`` scope). Before any of that, the
key-value routes' guards (``cross_site``): a repeated ``Host``/``Origin``/
``Content-Type``/``Sec-Fetch-Site`` or a request from the wrong place is 403, a body
not declared ``application/json`` 415, each as an HTTP status with a JSON-RPC error
whose ``data.code`` is the API's code.
"""

from __future__ import annotations

import json
from typing import Any

from chalice.app import Blueprint, Response

from chalicelib.api.cross_site import (
    gateway_domain,
    host_allowed,
    origin_allowed,
    origin_listed,
    refuse_foreign_fetch_site,
    refuse_repeated_headers,
    require_json,
)
from chalicelib.api.http import endpoint, reject_other_methods
from chalicelib.api.kv import optional_principal, source_ip
from chalicelib.api.observe import note_caller_without_token, note_error
from chalicelib.errors import (
    Forbidden,
    InvalidRequest,
    RateLimited,
    SecretInMemory,
    Unauthorized,
    UnsupportedMediaType,
)
from chalicelib.models.principal import Principal
from chalicelib.services.run_context import RunContext, read_run_context
from chalicelib.settings import Settings
from chalicelib.wiring import Services, services

mcp_api = Blueprint(__name__)
CONTENT_TYPES = ["*/*"]
"""Any content type reaches the view, which refuses all but JSON (415 in the JSON-RPC
refusal shape, not Chalice's own)."""
_SERVER_ERROR = -32000
"""JSON-RPC "server error" code used for answers refused before dispatch (401, 400, 403, 415)."""


def _request() -> Any:
    return mcp_api.current_request


@mcp_api.route("/mcp", methods=["POST"], content_types=CONTENT_TYPES)
@endpoint
def mcp_post() -> Response:
    """One JSON-RPC message (or batch) in, its answer out (200 JSON, or 202 without a body)."""
    # Imported here: the MCP wire types cost ~0.2 s to import, which only MCP
    # requests should pay on a cold Lambda.
    from chalicelib.api import mcp_protocol, mcp_tools

    request = _request()
    headers = request.headers
    version = headers.get("mcp-protocol-version")
    if version is not None:
        refused = mcp_protocol.unsupported_version_reply(version.strip())
        if refused is not None:
            return _render(refused.status, refused.body)
    wired = services()
    guarded = _refuse_before_reading(request, wired.settings)
    if guarded is not None:
        return guarded
    try:
        principal = optional_principal(request, wired)
        run = _run_context(headers, principal, wired)
    except Unauthorized as error:
        body = _refusal(error.code, error.message)
        return _render(401, body, {"WWW-Authenticate": 'Bearer realm="pinework"'})
    except (InvalidRequest, SecretInMemory) as error:
        return _render(400, _refusal(error.code, error.message))
    except RateLimited as error:
        note_error(error.code)
        throttled = mcp_protocol.rate_limited_error(None, error)
        return _render(429, throttled, {"Retry-After": str(error.retry_after_seconds)})
    api_key = headers.get("x-api-key")
    address = source_ip(request)
    if principal is None:
        note_caller_without_token(api_key)
    caller = mcp_tools.McpCaller(
        services=wired,
        principal=principal,
        kv_scope=lambda: wired.kv.scope_for(principal, api_key, address),
        run=run,
    )
    reply = mcp_protocol.handle_post(request.raw_body, caller)
    return _render(reply.status, reply.body, reply.headers)


def _refuse_before_reading(request: Any, settings: Settings) -> Response | None:
    """The guards of the key-value routes, in MCP's refusal shape (docs/reference.md#cross-site):
    a repeated guarded header or a request from the wrong place (``wrong_place``, or
    ``Sec-Fetch-Site`` of another site unless ``Origin`` is listed in
    ``PINEWORK_MCP_ALLOWED_ORIGINS``) is 403 ``forbidden``, a body not declared JSON
    415 ``unsupported_media_type``; None when all pass."""
    headers = request.headers
    try:
        refuse_repeated_headers(request)
        # An origin the operator listed is another site by definition.
        if not origin_listed(headers.get("origin"), settings.mcp_allowed_origins):
            refuse_foreign_fetch_site(headers)
    except Forbidden as error:
        return _render(403, _refusal(error.code, error.message))
    refused_place = wrong_place(headers, settings, gateway_domain(request))
    if refused_place is not None:
        return _render(403, _refusal("forbidden", refused_place))
    try:
        require_json(headers, request.raw_body)
    except UnsupportedMediaType as error:
        return _render(415, _refusal(error.code, error.message))
    return None


def wrong_place(headers: Any, settings: Settings, gateway: str | None = None) -> str | None:
    """Why ``/mcp`` refuses a request's ``Host`` or ``Origin`` (MCP transport: servers
    validate them against DNS rebinding), or None when both are fine.

    ``Host`` must be an allowed host (``cross_site.host_allowed``: loopback names,
    ``PINEWORK_ALLOWED_HOSTS``, and on AWS the name API Gateway received the request on,
    ``gateway``); a request without one is not from a browser and passes.
    A browser ``Origin`` must be on an allowed host or listed in
    ``PINEWORK_MCP_ALLOWED_ORIGINS``; neither is ever compared with the other
    (docs/reference.md#cross-site).
    """
    host = headers.get("host")
    if host is not None and not host_allowed(host, settings, gateway):
        return (
            f"Host {host[:100]!r} is not a name of this API (DNS-rebinding guard): allow it "
            "with PINEWORK_ALLOWED_HOSTS."
        )
    origin = headers.get("origin")
    extra = settings.mcp_allowed_origins
    if origin is not None and not origin_allowed(origin, settings, extra, gateway):
        return (
            f"Origin {origin[:100]!r} may not call /mcp (DNS-rebinding guard): allow it "
            "with PINEWORK_MCP_ALLOWED_ORIGINS."
        )
    return None


def _run_context(headers: Any, principal: Principal | None, wired: Services) -> RunContext:
    if principal is None or not principal.is_agent:
        return RunContext()
    # The same rules as the HTTP routes (chalicelib/api/context.py); MCP has no
    # run-start recall, so the session header is not read.
    return read_run_context(
        run=headers.get("x-pinework-run"),
        task=headers.get("x-pinework-task"),
        session=None,
        secrets=wired.secrets,
    )


def _refusal(code: str, message: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": _SERVER_ERROR, "message": message, "data": {"code": code}},
    }


def _render(status: int, body: Any, headers: dict[str, str] | None = None) -> Response:
    sent: dict[str, str | list[str]] = dict(headers or {})
    if body is None:
        return Response(body="", status_code=status, headers=sent)
    sent["Content-Type"] = "application/json"
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return Response(body=text, status_code=status, headers=sent)


reject_other_methods(mcp_api, {"/mcp": ["POST"]})
