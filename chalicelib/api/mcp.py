"""``POST /api/v1/mcp``: the MCP endpoint over HTTP (SPEC §11); the protocol is in
``mcp_protocol``.

Streamable HTTP, stateless, JSON responses: POST only (GET, which would open
an SSE stream, and DELETE, which would end a session, are 405 with
``Allow: POST``). Credentials work as on the key-value routes: an invalid
bearer token is 401 before any message is read; without one, only the
key-value tools work (anonymous or ``X-Api-Key`` scope).
"""

from __future__ import annotations

import json
from typing import Any

from chalice.app import Blueprint, Response

from chalicelib.api.http import endpoint, reject_other_methods
from chalicelib.api.kv import optional_principal, source_ip
from chalicelib.errors import InvalidRequest, Unauthorized
from chalicelib.models.principal import Principal
from chalicelib.services.memories import RunContext
from chalicelib.services.rules import check_header
from chalicelib.wiring import services

mcp_api = Blueprint(__name__)
CONTENT_TYPES = ["*/*"]
"""Any content type reaches the JSON-RPC parser (a wrong one is a parse error, not 415)."""
_SERVER_ERROR = -32000
"""JSON-RPC "server error" code used for answers refused before dispatch (401, 400)."""


def _request() -> Any:
    return mcp_api.current_request


@mcp_api.route("/mcp", methods=["POST"], content_types=CONTENT_TYPES)
@endpoint
def mcp_post() -> Response:
    """One JSON-RPC message (or batch) in, its answer out (200 JSON, or 202 without a body)."""
    # Imported here: the MCP wire types cost ~0.2 s to import, which only MCP
    # requests should pay on a cold Lambda.
    from chalicelib.api import mcp_protocol

    request = _request()
    headers = request.headers
    version = headers.get("mcp-protocol-version")
    if version is not None:
        refused = mcp_protocol.unsupported_version_reply(version.strip())
        if refused is not None:
            return _render(refused.status, refused.body)
    wired = services()
    try:
        principal = optional_principal(request, wired)
        run = _run_context(headers, principal)
    except Unauthorized as error:
        body = _refusal(error.code, error.message)
        return _render(401, body, {"WWW-Authenticate": 'Bearer realm="pinework"'})
    except InvalidRequest as error:
        return _render(400, _refusal(error.code, error.message))
    api_key = headers.get("x-api-key")
    address = source_ip(request)
    caller = mcp_protocol.McpCaller(
        services=wired,
        principal=principal,
        kv_scope=lambda: wired.kv.scope_for(principal, api_key, address),
        run=run,
    )
    reply = mcp_protocol.handle_post(request.raw_body, caller)
    return _render(reply.status, reply.body)


def _run_context(headers: Any, principal: Principal | None) -> RunContext:
    if principal is None or not principal.is_agent:
        return RunContext()
    return RunContext(
        run_id=check_header(headers.get("x-pinework-run"), "X-Pinework-Run"),
        task_key=check_header(headers.get("x-pinework-task"), "X-Pinework-Task"),
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
