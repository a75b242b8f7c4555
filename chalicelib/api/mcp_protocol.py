"""The Model Context Protocol server behind ``POST /api/v1/mcp``
(docs/reference.md#11-mcp): stateless JSON-RPC 2.0 over streamable HTTP, JSON
answers only, one message or a batch per POST. It answers ``initialize``, ``ping``,
``tools/list`` and ``tools/call`` (the tools of ``mcp_tools``: the key-value tools and
the ``memory_*`` tools); a domain error is a tool result with ``isError: true`` and the
error envelope, a throttled call a JSON-RPC error with ``data.code`` ``rate_limited``.
Wire types are the official ``mcp-types``; no Chalice here (``chalicelib/api/mcp.py``
adapts it to HTTP). Choices: docs/DECISIONS.md#mcp-issue-5.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

import mcp_types as mcp
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION
from pydantic import BaseModel, ValidationError

from chalicelib.api.exact_json import load_exact
from chalicelib.api.http import validate
from chalicelib.api.mcp_tools import TOOLS, TOOLS_BY_NAME, McpCaller
from chalicelib.api.observe import note_error, note_tool
from chalicelib.errors import InvalidRequest, PineworkError, RateLimited
from chalicelib.limits import MCP_BATCH_MAX_MESSAGES
from chalicelib.models.responses import JsonRpcMessage
from chalicelib.release import RELEASE

logger = logging.getLogger(__name__)

SERVER_NAME = "pinework-memory"
SERVER_VERSION = RELEASE
INSTRUCTIONS = (
    "Pinework Memory. remember/recall/forget keep small state under a key, scoped by your "
    "credentials (anonymous entries last 24 hours). memory_* tools keep an agent's facts and "
    "day log and need a bearer token."
)


@dataclass(frozen=True)
class McpReply:
    """What the HTTP adapter sends: a status, a JSON body (None: no body), headers."""

    status: int
    body: Any = None
    headers: dict[str, str] | None = None


class JsonRpcError(Exception):
    """A JSON-RPC error answer (``code`` from the JSON-RPC / MCP tables)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


# JSON-RPC


def handle_post(raw_body: bytes | None, caller: McpCaller) -> McpReply:
    """Answer one POST: a message or a batch (JSON-RPC 2.0, MCP streamable HTTP).

    Returns:
        200 with the response (or the batch's responses); 202 without a body
        when nothing needs an answer (notifications, client responses); 400
        with a JSON-RPC error for an unparseable body, an invalid message, or a
        batch of more than ``MCP_BATCH_MAX_MESSAGES`` messages (none of it run;
        docs/reference.md#11-mcp).
    """
    try:
        parsed = load_exact(raw_body)
    except InvalidRequest as error:
        return McpReply(400, _error(None, mcp.PARSE_ERROR, error.message))
    if isinstance(parsed, list):
        if not parsed:
            return McpReply(400, _error(None, mcp.INVALID_REQUEST, "An empty batch."))
        if len(parsed) > MCP_BATCH_MAX_MESSAGES:
            # Refused whole, before any message runs: a batch never multiplies a request.
            message = (
                f"A batch holds at most {MCP_BATCH_MAX_MESSAGES} messages; this one has "
                f"{len(parsed)}. Nothing was run: send them in smaller batches."
            )
            return McpReply(400, _error(None, mcp.INVALID_REQUEST, message))
        for number, item in enumerate(parsed, start=1):
            problem = _malformed(item)
            if problem is not None:
                # Refused whole, as the document's batch schema refuses it: none of it runs.
                message = f"Message {number} of the batch: {problem} Nothing was run."
                return McpReply(400, _error(None, mcp.INVALID_REQUEST, message))
        answers = [answer for item in parsed if (answer := _answer(item, caller)) is not None]
        return McpReply(200, answers) if answers else McpReply(202)
    answer = _answer(parsed, caller)
    if answer is None:
        return McpReply(202)
    throttled = _retry_after(answer)
    if throttled is not None:
        return McpReply(429, answer, {"Retry-After": str(throttled)})
    failed = "error" in answer and answer["error"]["code"] == mcp.INVALID_REQUEST
    return McpReply(400 if failed else 200, answer)


RATE_LIMITED_CODE = -32000
"""JSON-RPC "server error" code of a throttled message (``data.code: rate_limited``)."""


def rate_limited_error(request_id: Any, error: RateLimited) -> dict[str, Any]:
    """The JSON-RPC error answering a throttled message (docs/reference.md#error-rate_limited)."""
    data = {"code": error.code, "retryAfterSeconds": error.retry_after_seconds}
    note_error(error.code)
    return _error(request_id, RATE_LIMITED_CODE, error.message, data)


def _retry_after(answer: dict[str, Any]) -> int | None:
    data = answer.get("error", {}).get("data")
    if isinstance(data, dict) and data.get("code") == RateLimited.code:
        return int(data["retryAfterSeconds"])
    return None


def unsupported_version_reply(requested: str) -> McpReply | None:
    """400 for an ``MCP-Protocol-Version`` header this server does not speak, else None."""
    if requested in HANDSHAKE_PROTOCOL_VERSIONS:
        return None
    supported = list(HANDSHAKE_PROTOCOL_VERSIONS)
    message = f"Unsupported MCP-Protocol-Version {requested!r}; use one of {supported}."
    data = mcp.UnsupportedProtocolVersionErrorData(supported=supported, requested=requested)
    return McpReply(
        400,
        _error(None, mcp.UNSUPPORTED_PROTOCOL_VERSION, message, data.model_dump(by_alias=True)),
    )


_MALFORMED_FIELD = {
    "jsonrpc": "Send a JSON-RPC 2.0 message object.",
    "id": "id must be a string, an integer or null.",
    "method": "method must be a string.",
    "params": "params must be an object or an array.",
    "error": "error must be an object with an integer code and a string message.",
}
"""What a message that breaks ``JsonRpcMessage`` (the document's schema) is told, by field."""


def _malformed(message: Any) -> str | None:
    """Why ``message`` is not a JSON-RPC 2.0 message (docs/reference.md#11-mcp), or None.

    Every message meets the document's ``JsonRpcMessage`` schema, checked strictly (no
    coercion: ``"1"`` is not an integer code). A request or notification has a string
    ``method`` and, if it has an ``id`` (a request), a string or integer one; a response (no
    ``method``) has an ``id`` and exactly one of ``result`` and ``error``, and a
    ``result`` answers a request, so its ``id`` is not null.
    """
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return _MALFORMED_FIELD["jsonrpc"]
    try:
        JsonRpcMessage.model_validate(message, strict=True)
    except ValidationError as error:
        field = str(error.errors()[0]["loc"][0])
        return _MALFORMED_FIELD.get(field, f"{field} is not valid here.")
    if "method" in message:
        if not isinstance(message["method"], str):
            return _MALFORMED_FIELD["method"]
        request_id = message.get("id", "")  # a notification has none
        if isinstance(request_id, bool) or not isinstance(request_id, str | int):
            return "id must be a string or an integer."
        return None
    answered = ("result" in message) != (message.get("error") is not None)
    if "id" not in message or not answered:
        return "A JSON-RPC message needs a method, or an id and either a result or an error."
    if "result" in message and message["id"] is None:
        return "A result answers a request: its id is a string or an integer, not null."
    return None


def _answer(message: Any, caller: McpCaller) -> dict[str, Any] | None:
    """The response to one message, or None for a notification or a client response
    (a malformed message is answered with ``-32600``, id null)."""
    problem = _malformed(message)
    if problem is not None:
        return _error(None, mcp.INVALID_REQUEST, problem)
    if "method" not in message:
        return None  # a response to a server request; this server sends none
    if "id" not in message:
        return None  # notifications (initialized, cancelled, …) need no answer
    return _run(message["id"], message["method"], message.get("params"), caller)


def _run(request_id: str | int, method: str, params: Any, caller: McpCaller) -> dict[str, Any]:
    """The response to one well-formed request: its result, or the JSON-RPC error
    its ``params`` or its method raised (an unexpected failure is logged, and
    answered as ``INTERNAL_ERROR``)."""
    if params is not None and not isinstance(params, dict):
        return _error(request_id, mcp.INVALID_PARAMS, "params must be an object.")
    try:
        result = _dispatch(method, params or {}, caller)
    except JsonRpcError as error:
        return _error(request_id, error.code, error.message, error.data)
    except RateLimited as error:
        return rate_limited_error(request_id, error)
    except Exception:
        logger.exception("MCP %s failed", method)
        return _error(request_id, mcp.INTERNAL_ERROR, "Something went wrong on our side.")
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _dispatch(method: str, params: dict[str, Any], caller: McpCaller) -> dict[str, Any]:
    if method == "initialize":
        return _initialize(params)
    if method == "ping":
        return {}
    if method == "tools/list":
        tools = mcp.ListToolsResult(tools=[tool.to_tool() for tool in TOOLS])
        return _dump(tools)
    if method == "tools/call":
        return _dump(_call_tool(params, caller))
    raise JsonRpcError(mcp.METHOD_NOT_FOUND, f"Method not found: {method}.")


def _initialize(params: dict[str, Any]) -> dict[str, Any]:
    requested = params.get("protocolVersion")
    version = requested if requested in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION
    result = mcp.InitializeResult(
        protocol_version=version,
        capabilities=mcp.ServerCapabilities(tools=mcp.ToolsCapability(list_changed=False)),
        server_info=mcp.Implementation(name=SERVER_NAME, version=SERVER_VERSION),
        instructions=INSTRUCTIONS,
    )
    return _dump(result)


def _call_tool(params: dict[str, Any], caller: McpCaller) -> mcp.CallToolResult:
    try:
        call = mcp.CallToolRequestParams.model_validate(params)
    except ValidationError as error:
        fields = {str(detail["loc"][0]) for detail in error.errors() if detail["loc"]}
        problem = (
            "tools/call arguments must be an object."
            if fields == {"arguments"}
            else "tools/call needs a tool name (a string)."
        )
        raise JsonRpcError(mcp.INVALID_PARAMS, problem) from error
    tool = TOOLS_BY_NAME.get(call.name)
    if tool is None:
        raise JsonRpcError(mcp.INVALID_PARAMS, f"Unknown tool: {call.name}.")
    try:
        arguments = validate(call.arguments or {}, tool.arguments)
        structured = tool.handler(caller, arguments)
    except RateLimited:
        note_tool(tool.name, RateLimited.code)
        raise  # not the tool's answer: the whole call is to be retried (429)
    except PineworkError as error:
        note_tool(tool.name, error.code)
        return _tool_error(error)
    except Exception:
        logger.exception("MCP tool %s failed", tool.name)
        note_tool(tool.name, PineworkError.code)
        return _tool_error(PineworkError("Something went wrong on our side; try again."))
    note_tool(tool.name, None)
    return mcp.CallToolResult(
        content=[mcp.TextContent(type="text", text=_json_text(structured))],
        structured_content=structured,
        is_error=False,
    )


def _tool_error(error: PineworkError) -> mcp.CallToolResult:
    body = {"error": {"code": error.code, "message": error.message}}
    return mcp.CallToolResult(
        content=[mcp.TextContent(type="text", text=_json_text(body))],
        structured_content=body,
        is_error=True,
    )


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _dump(model: BaseModel) -> dict[str, Any]:
    # exclude_unset: only what was set, so newer-era fields (resultType, ttlMs …)
    # do not leak into answers on the handshake-era protocol.
    return model.model_dump(by_alias=True, mode="json", exclude_unset=True)


def _error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}
