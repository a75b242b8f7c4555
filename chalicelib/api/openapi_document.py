"""The OpenAPI 3.1 document of the API (docs/issues.md#issue-15, docs/reference.md#14-operations),
served by
``chalicelib/api/openapi.py``: generated from the app's route table, the entries
of ``chalicelib/api/operations.py`` and the pydantic request and response models.

The document lists every route with its parameters, bodies, success statuses and,
per status, the error codes it may answer (``{"error": {"code", "message"}}``,
docs/reference.md#6-errors), the ``Idempotency-Key`` of the routes that honour it, ``ETag`` and
``If-Match`` on memories, and OpenAPI links (save -> archive -> unarchive) for
stateful clients and fuzzers. Imported on the first request for the document, not
at cold start.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, models_json_schema
from pydantic_core import core_schema

from chalicelib import errors
from chalicelib.api.idempotency import (
    IDEMPOTENCY_HEADER,
    KEY_MAX_CHARS,
    REPLAYED_HEADER,
    is_idempotent,
)
from chalicelib.api.operations import OPERATIONS, Body, Operation
from chalicelib.ids import ULID_PATTERN
from chalicelib.limits import (
    ARCHIVE_REASON_MAX_CHARS,
    DAY_LINE_MAX_CHARS,
    DAY_LOG_MAX_CHARS,
    EVIDENCE_MAX_CHARS,
    FACT_MAX_CHARS,
    HEADER_MAX_CHARS,
    KEY_MAX_BYTES,
    MCP_BATCH_MAX_MESSAGES,
    PAGE_SLUG_MAX_CHARS,
    PAGE_TEXT_MAX_CHARS,
    PAGE_TITLE_MAX_CHARS,
    RECALL_QUERY_MAX_CHARS,
)
from chalicelib.models.page import SLUG_PATTERN
from chalicelib.models.responses import ErrorEnvelope, JsonRpcMessage

API_PREFIX = "/api/v1"
OPENAPI_VERSION = "3.1.0"
API_VERSION = "1.0.0"
NOT_ALLOWED_PREFIX = "not_allowed_"
"""Views ``reject_other_methods`` registers (405 for the methods a path does not serve)."""
COMMON_ERRORS = (errors.InvalidRequest, errors.RateLimited)
GATEWAY_ERRORS = (errors.BadGateway, errors.GatewayTimeout)
"""Answered by API Gateway itself when deployed (``infra/gateway_responses.py``), on
any route; a route with a request body may also get 415 ``unsupported_media_type``."""
BEARER_ERRORS = (errors.Unauthorized,)
IDEMPOTENCY_ERRORS = (errors.IdempotencyKeyReused, errors.IdempotencyKeyInUse)
PATH_PATTERNS = {
    "memory_id": f"^mem_{ULID_PATTERN}$",
    "routine_id": f"^(rtn|agt)_{ULID_PATTERN}$",
    "review_id": f"^rvw_{ULID_PATTERN}$",
    "action_ref": "^a?[1-9][0-9]*$",
    "agent_id": f"^agt_{ULID_PATTERN}$",
    "target_id": f"^(agt|usr|wsp)_{ULID_PATTERN}$",
    "export_id": f"^exp_{ULID_PATTERN}$",
    "learning_id": f"^lrn_{ULID_PATTERN}$",
    "page_ref": f"^(pag_{ULID_PATTERN}|[a-z0-9]+(-[a-z0-9]+)*)$",
    "bulk_id": f"^blk_{ULID_PATTERN}$",
    "recall_id": f"^rcl_{ULID_PATTERN}$",
    "webhook_id": f"^whk_{ULID_PATTERN}$",
}
"""The id shape of each path parameter (docs/reference.md#ids-in-paths): an id of another
shape is answered as a missing one (404), or as a bad action number (400), so a client
that checks the pattern first never sends what would be refused."""
AGENT_ID_FIELD: dict[str, int | str] = {"pattern": f"^agt_{ULID_PATTERN}$"}
MEMORY_ID_FIELD: dict[str, int | str] = {"pattern": f"^mem_{ULID_PATTERN}$"}
PAGE_SLUG_FIELD: dict[str, int | str] = {
    "minLength": 1,
    "maxLength": PAGE_SLUG_MAX_CHARS,
    "pattern": SLUG_PATTERN,
}
JSON_SCHEMA_BOUNDS = {
    "ge": "minimum",
    "le": "maximum",
    "gt": "exclusiveMinimum",
    "lt": "exclusiveMaximum",
}
"""pydantic writes the bounds of a type with a before-validator under its own names
(``ge``); JSON Schema's are these."""
PATH_PARAMETERS = {
    "memory_id": "The memory, `mem_…`.",
    "routine_id": "The routine's `rtn_…` id, or its agent's `agt_…` id.",
    "review_id": "The review, `rvw_…`.",
    "action_ref": "The action: its number (`2`) or id (`a2`).",
    "agent_id": "The agent, `agt_…`.",
    "target_id": "What was erased: an agent's `agt_…`, a person's `usr_…` or the workspace's "
    "`wsp_…` id.",
    "export_id": "The export, `exp_…`.",
    "learning_id": "The learning, `lrn_…`.",
    "page_ref": "The wiki page: its `pag_…` id or its slug.",
    "bulk_id": "The bulk action, `blk_…`.",
    "recall_id": "The recall, `rcl_…` (its `recallId`, or an `id` of the recall log).",
    "webhook_id": "The webhook endpoint, `whk_…`.",
}

FIELD_LIMITS: dict[tuple[str, str], dict[str, int | str]] = {
    ("SaveFactRequest", "text"): {"minLength": 1, "maxLength": FACT_MAX_CHARS},
    ("SaveFactRequest", "evidence"): {"minLength": 1, "maxLength": EVIDENCE_MAX_CHARS},
    ("ArchiveRequest", "reason"): {"minLength": 1, "maxLength": ARCHIVE_REASON_MAX_CHARS},
    ("VetoRequest", "reason"): {"maxLength": ARCHIVE_REASON_MAX_CHARS},
    ("RecallRequest", "query"): {"maxLength": RECALL_QUERY_MAX_CHARS},
    ("RecallStartRequest", "task"): {"maxLength": RECALL_QUERY_MAX_CHARS},
    ("RecallStartRequest", "message"): {"maxLength": RECALL_QUERY_MAX_CHARS},
    ("RecallStartRequest", "slashCommand"): {"maxLength": RECALL_QUERY_MAX_CHARS},
    ("RecallStartRequest", "sessionId"): {
        "minLength": 1,
        "maxLength": HEADER_MAX_CHARS,
        "pattern": "^[\\x21-\\x7e]([\\x20-\\x7e]*[\\x21-\\x7e])?$",
    },
    ("RememberRequest", "key"): {"minLength": 1, "maxLength": KEY_MAX_BYTES},
    ("ForgetRequest", "key"): {"minLength": 1, "maxLength": KEY_MAX_BYTES},
    ("KvRecallRequest", "key"): {"minLength": 1, "maxLength": KEY_MAX_BYTES},
    ("SaveFactRequest", "supersedes"): MEMORY_ID_FIELD,
    ("SaveFactRequest", "agentId"): AGENT_ID_FIELD,
    ("RecallRequest", "agentId"): AGENT_ID_FIELD,
    ("RunReviewRequest", "agentId"): AGENT_ID_FIELD,
    ("CreateRoutineRequest", "agentId"): AGENT_ID_FIELD,
    ("ApproveRequest", "keepId"): MEMORY_ID_FIELD,
    ("EditRequest", "text"): {"minLength": 1, "maxLength": DAY_LOG_MAX_CHARS},
    ("EraseRequest", "reason"): {"minLength": 1, "maxLength": ARCHIVE_REASON_MAX_CHARS},
    ("CreatePageRequest", "title"): {"minLength": 1, "maxLength": PAGE_TITLE_MAX_CHARS},
    ("CreatePageRequest", "text"): {"minLength": 1, "maxLength": PAGE_TEXT_MAX_CHARS},
    ("CreatePageRequest", "slug"): PAGE_SLUG_FIELD,
    ("EditPageRequest", "title"): {"minLength": 1, "maxLength": PAGE_TITLE_MAX_CHARS},
    ("EditPageRequest", "text"): {"minLength": 1, "maxLength": PAGE_TEXT_MAX_CHARS},
    ("EditPageRequest", "slug"): PAGE_SLUG_FIELD,
    ("DayLineRequest", "line"): {
        "minLength": 1,
        "maxLength": DAY_LINE_MAX_CHARS,
        "pattern": "^[^\\r\\n]*$",
    },
}
"""Limits the services check (docs/reference.md#5-limits, ``chalicelib/limits.py``), added to the
request schemas for clients: the models leave them to the services, which answer with the
seed's codes (e.g. ``memory_text_too_long``) rather than pydantic's. Characters are
code points, as JSON Schema counts them."""


def route_table(routes: Mapping[str, Mapping[str, Any]]) -> Iterator[tuple[str, str, Any]]:
    """Every (method, path below ``/api/v1``, view) of the app that serves a request
    (not the 405 answers of ``reject_other_methods``)."""
    for path, methods in routes.items():
        if not path.startswith(API_PREFIX + "/"):
            continue
        for method, entry in methods.items():
            if not entry.view_function.__name__.startswith(NOT_ALLOWED_PREFIX):
                yield method, path.removeprefix(API_PREFIX), entry.view_function


def build_document(routes: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Build the OpenAPI 3.1 document.

    Args:
        routes: the Chalice app's route table (``app.routes``).

    Returns:
        The document as JSON-ready dicts. A route without an ``OPERATIONS`` entry
        is left out (a test fails on it), and so is an entry without a route.
    """
    documented = [
        (method, path, view, OPERATIONS[(method, path)])
        for method, path, view in route_table(routes)
        if (method, path) in OPERATIONS
    ]
    refs, schemas = _schemas(documented)
    ids = {(method, path): view.__name__ for method, path, view, _ in documented}
    paths: dict[str, dict[str, Any]] = {}
    for method, path, view, operation in sorted(documented, key=lambda item: item[1]):
        paths.setdefault(path, {})[method.lower()] = _operation(
            method, path, view, operation, refs, ids
        )
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "Pinework Memory API",
            "version": API_VERSION,
            "summary": "Memory for AI agents: facts, day logs, recall, review, key-value tools.",
            "description": _overview(),
        },
        "servers": [{"url": API_PREFIX}],
        "tags": [{"name": name} for name in sorted({op.tag for *_, op in documented})],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "An agent's or a person's token (`pinework admin`).",
                },
                "apiKey": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "X-Api-Key",
                    "description": (
                        "Any string: a key-value scope of its own (docs/reference.md#10-key-value)."
                    ),
                },
            },
            "parameters": _shared_parameters(),
        },
    }


class WireSchema(GenerateJsonSchema):
    """JSON schemas of the wire: an answer carries every field of its model
    (``model_dump`` keeps defaults), so in serialization mode every field is required
    but one left out when empty (``exclude_if``)."""

    def field_is_required(
        self,
        field: core_schema.ModelField | core_schema.DataclassField | core_schema.TypedDictField,
        total: bool,
    ) -> bool:
        """Required in an answer unless it may be left out; as pydantic for requests."""
        if self.mode == "serialization" and field["type"] != "typed-dict-field":
            return field.get("serialization_exclude_if") is None
        return super().field_is_required(field, total)


def _schemas(
    documented: list[tuple[str, str, Any, Operation]],
) -> tuple[dict[tuple[type[BaseModel], str], dict[str, Any]], dict[str, Any]]:
    """Component schemas of every request and response model, and a ``$ref`` per model."""
    wanted: set[tuple[type[BaseModel], str]] = {(ErrorEnvelope, "serialization")}
    for *_, operation in documented:
        if isinstance(operation.body, type):
            wanted.add((operation.body, "validation"))
        for body in operation.responses.values():
            for model in _models(body):
                wanted.add((model, "serialization"))
    if any(op.body == "mcp" for *_, op in documented):
        # Validation mode for answers too: a JSON-RPC message has only some fields.
        wanted.add((JsonRpcMessage, "validation"))
    ordered = sorted(wanted, key=lambda pair: (pair[0].__name__, pair[1]))
    refs, definitions = models_json_schema(
        [(model, mode) for model, mode in ordered],  # type: ignore[misc]
        by_alias=True,
        ref_template="#/components/schemas/{model}",
        schema_generator=WireSchema,
    )
    schemas: dict[str, Any] = definitions.get("$defs", {})
    for (model_name, field), limits in FIELD_LIMITS.items():
        _limit(schemas.get(model_name, {}).get("properties", {}).get(field), limits)
    if "EditRequest" in schemas:  # text, expiresAt or both (docs/reference.md#7-http-api)
        schemas["EditRequest"]["minProperties"] = 1
    return refs, schemas  # type: ignore[return-value]


def _limit(schema: dict[str, Any] | None, limits: dict[str, int | str]) -> None:
    """Add ``limits`` to a string property (inside its ``anyOf`` when it is nullable)."""
    if schema is None:
        return
    for option in schema.get("anyOf", [schema]):
        if option.get("type") == "string":
            option.update(limits)


def _models(body: Body) -> tuple[type[BaseModel], ...]:
    if isinstance(body, tuple):
        return body
    if isinstance(body, type):
        return (body,)
    return ()


def _operation(
    method: str,
    path: str,
    view: Any,
    operation: Operation,
    refs: dict[tuple[type[BaseModel], str], dict[str, Any]],
    ids: dict[tuple[str, str], str],
) -> dict[str, Any]:
    """One operation object."""
    idempotent = is_idempotent(view)
    result: dict[str, Any] = {
        "operationId": view.__name__,
        "summary": operation.summary,
        "description": _description(operation, idempotent),
        "tags": [operation.tag],
        "security": _security(operation),
        "parameters": _parameters(path, operation, idempotent),
        "responses": _responses(operation, idempotent, refs, ids),
    }
    body = _request_body(operation, refs)
    if body is not None:
        result["requestBody"] = body
    if not result["parameters"]:
        del result["parameters"]
    return result


def _description(operation: Operation, idempotent: bool) -> str:
    lines = [f"Who: {operation.who}."]
    if operation.description:
        lines.append(operation.description)
    if idempotent:
        lines.append(
            f"Send `{IDEMPOTENCY_HEADER}` to retry safely: the same key and request within "
            f"24 hours get the first answer again (`{REPLAYED_HEADER}: true`) and change "
            "nothing."
        )
    if operation.if_match:
        lines.append(
            "Send `If-Match` with the memory's `ETag` to change it only if nobody changed "
            "it since you read it (else 412 `precondition_failed`, nothing changes)."
        )
    return "\n\n".join(lines)


def _security(operation: Operation) -> list[dict[str, list[str]]]:
    if operation.auth == "bearer":
        return [{"bearer": []}]
    if operation.auth == "optional":
        return [{"bearer": []}, {"apiKey": []}, {}]
    return []


def _shared_parameters() -> dict[str, Any]:
    """Header parameters several operations share (``#/components/parameters``)."""

    def header(name: str, description: str, **schema: Any) -> dict[str, Any]:
        return {
            "name": name,
            "in": "header",
            "required": False,
            "description": description,
            "schema": {"type": "string", **schema},
        }

    # Printable ASCII; an empty value counts as no header (run_context.check_header).
    printable = {"maxLength": HEADER_MAX_CHARS, "pattern": "^[\\x20-\\x7e]*$"}
    return {
        "Run": header("X-Pinework-Run", "The agent's run (`run_…`).", **printable),
        "Task": header(
            "X-Pinework-Task",
            "The task the run works on, e.g. `PIN-42` (prefixes day lines; the default "
            "recall query).",
            **printable,
        ),
        "Session": header(
            "X-Pinework-Session", "The conversation (instead of `sessionId`).", **printable
        ),
        "IdempotencyKey": header(
            IDEMPOTENCY_HEADER,
            "A key of yours (a UUID) naming this request: a retry with the same key and "
            "request gets the first answer again and changes nothing (24 hours, per caller).",
            minLength=1,
            maxLength=KEY_MAX_CHARS,
            pattern="^[\\x20-\\x7e]+$",
        ),
        "IfMatch": header(
            "If-Match",
            'The memory\'s `ETag` as received (`"mem_….v3"`), or `*`: change it only at '
            "that version.",
        ),
    }


def _parameters(path: str, operation: Operation, idempotent: bool) -> list[dict[str, Any]]:
    parameters: list[dict[str, Any]] = [
        {
            "name": name,
            "in": "path",
            "required": True,
            "description": PATH_PARAMETERS.get(name, name),
            "schema": {"type": "string", "minLength": 1, **_pattern(PATH_PATTERNS.get(name))},
        }
        for name in re.findall(r"{(\w+)}", path)
    ]
    if operation.query is not None:
        schema = operation.query.model_json_schema(by_alias=True, mode="validation")
        required = set(schema.get("required", []))
        for name, prop in schema.get("properties", {}).items():
            prop = {
                JSON_SCHEMA_BOUNDS.get(key, key): value
                for key, value in prop.items()
                if key != "title"
            }
            if name == "agentId":
                _limit(prop, AGENT_ID_FIELD)
            parameters.append(
                {"name": name, "in": "query", "required": name in required, "schema": prop}
            )
    if operation.auth == "bearer":
        parameters += [
            {"$ref": "#/components/parameters/Run"},
            {"$ref": "#/components/parameters/Task"},
        ]
    if operation.session_header:
        parameters.append({"$ref": "#/components/parameters/Session"})
    if idempotent:
        parameters.append({"$ref": "#/components/parameters/IdempotencyKey"})
    if operation.if_match:
        parameters.append({"$ref": "#/components/parameters/IfMatch"})
    return parameters


def _pattern(pattern: str | None) -> dict[str, str]:
    """``{"pattern": …}`` when there is one."""
    return {} if pattern is None else {"pattern": pattern}


def _request_body(
    operation: Operation, refs: dict[tuple[type[BaseModel], str], dict[str, Any]]
) -> dict[str, Any] | None:
    if operation.body is None:
        return None
    if operation.body == "mcp":
        # A batch answers each invalid member with its own error (JSON-RPC 2.0 §6), so
        # members are not constrained here; an empty batch is 400.
        message = refs[(JsonRpcMessage, "validation")]
        batch = {"type": "array", "minItems": 1, "maxItems": MCP_BATCH_MAX_MESSAGES}
        schema: dict[str, Any] = {"anyOf": [message, batch]}
    else:
        schema = refs[(operation.body, "validation")]
    return {
        "required": operation.body_required,
        "content": {"application/json": {"schema": schema}},
    }


def _responses(
    operation: Operation,
    idempotent: bool,
    refs: dict[tuple[type[BaseModel], str], dict[str, Any]],
    ids: dict[tuple[str, str], str],
) -> dict[str, Any]:
    responses: dict[str, Any] = {}
    for status, body in sorted(operation.responses.items()):
        responses[str(status)] = _success(status, body, operation, idempotent, refs, ids)
    by_status: dict[int, list[type[errors.PineworkError]]] = {}
    for error in _error_classes(operation, idempotent):
        by_status.setdefault(errors.STATUS_BY_CODE[error.code], []).append(error)
    for status, classes in sorted(by_status.items()):
        responses[str(status)] = _error_response(status, classes, operation)
    return responses


def _error_classes(operation: Operation, idempotent: bool) -> list[type[errors.PineworkError]]:
    """The error classes an operation may answer, each once, in a stable order."""
    classes: list[type[errors.PineworkError]] = list(COMMON_ERRORS)
    if operation.auth in ("bearer", "optional"):
        classes += BEARER_ERRORS
    if operation.body == "mcp" or operation.tag == "kv":  # cross-site refusals
        classes += [errors.Forbidden]
    classes += operation.errors
    if operation.body is not None:
        classes.append(errors.UnsupportedMediaType)
    classes += GATEWAY_ERRORS
    if idempotent:
        classes += IDEMPOTENCY_ERRORS
    if operation.if_match:
        classes.append(errors.PreconditionFailed)
    unique: dict[str, type[errors.PineworkError]] = {}
    for error in classes:
        unique.setdefault(error.code, error)
    return list(unique.values())


def _success(
    status: int,
    body: Body,
    operation: Operation,
    idempotent: bool,
    refs: dict[tuple[type[BaseModel], str], dict[str, Any]],
    ids: dict[tuple[str, str], str],
) -> dict[str, Any]:
    response: dict[str, Any] = {"description": _status_text(status, operation)}
    schema = _body_schema(body, refs)
    if schema is not None:
        response["content"] = {"application/json": {"schema": schema}}
    headers: dict[str, Any] = {}
    if operation.etag:
        headers["ETag"] = {
            "description": "The memory's (or learning's) version as a strong entity tag; "
            "send it back in `If-Match`.",
            "required": True,
            "schema": {"type": "string"},
        }
    if status == 202 and body is not None:
        headers["Location"] = {
            "description": "Where to follow it (`/api/v1/reviews/{id}`, `/api/v1/erasures/{id}`, "
            "`/api/v1/exports/{id}`).",
            "required": True,
            "schema": {"type": "string"},
        }
    if idempotent:
        headers[REPLAYED_HEADER] = {
            "description": "`true` when this is the stored answer of an earlier request "
            "with the same `Idempotency-Key`.",
            "schema": {"type": "string", "enum": ["true"]},
        }
    if headers:
        response["headers"] = headers
    links = _links(operation, ids, accepted=status == 202)
    if links:
        response["links"] = links
    return response


def _status_text(status: int, operation: Operation) -> str:
    if status == 201:
        return "Created."
    if status == 202 and operation.body == "mcp":
        return "Accepted: a notification or a client response; no body."
    if status == 202:
        return "Accepted: queued; `GET` its `Location` (`/reviews/{id}`) to follow it."
    if 201 in operation.responses and status == 200:
        return "Done: it already existed (or was appended to)."
    return "OK."


def _body_schema(
    body: Body, refs: dict[tuple[type[BaseModel], str], dict[str, Any]]
) -> dict[str, Any] | None:
    if body is None:
        return None
    if body == "mcp":
        message = refs[(JsonRpcMessage, "validation")]
        return {"anyOf": [message, {"type": "array", "items": message}]}
    if body == "document":
        return {"type": "object", "description": "An OpenAPI 3.1 document."}
    models = _models(body)
    if len(models) == 1:
        return refs[(models[0], "serialization")]
    return {"oneOf": [refs[(model, "serialization")] for model in models]}


def _links(
    operation: Operation, ids: dict[tuple[str, str], str], *, accepted: bool = False
) -> dict[str, Any]:
    """OpenAPI links: by default the answer's ``id`` is the target's one path parameter
    (and its ``ETag`` the target's ``If-Match``); a 202's are ``accepted_links``."""
    by_id = {operation_id: key for key, operation_id in ids.items()}
    links: dict[str, Any] = {}
    for link in operation.accepted_links if accepted else operation.links:
        target, given = (link, None) if isinstance(link, str) else link
        if target not in by_id:
            continue
        method, path = by_id[target]
        names = re.findall(r"{(\w+)}", path)
        if given is not None:
            parameters = dict(given)
        elif len(names) == 1:
            parameters = {names[0]: "$response.body#/id"}
        else:
            continue
        if OPERATIONS[(method, path)].if_match and operation.etag:
            parameters["header.If-Match"] = "$response.header.ETag"
        links[target] = {"operationId": target, "parameters": parameters}
    return links


def _error_response(
    status: int, classes: list[type[errors.PineworkError]], operation: Operation
) -> dict[str, Any]:
    codes = [error.code for error in classes]
    listed = "\n".join(f"- `{error.code}`: {_first_line(error)}" for error in classes)
    response: dict[str, Any] = {"description": listed}
    if operation.body == "mcp" and status in (400, 401, 403):
        response["description"] += " (a JSON-RPC error; `error.data.code` is the code)"
        response["content"] = {
            "application/json": {"schema": {"$ref": "#/components/schemas/JsonRpcMessage"}}
        }
        return response
    response["content"] = {"application/json": {"schema": envelope_schema(codes)}}
    if status == 429 or "idempotency_key_in_use" in codes:
        response["headers"] = {
            "Retry-After": {
                "description": "Seconds to wait before retrying.",
                "schema": {"type": "string"},
            }
        }
    return response


def envelope_schema(codes: list[str]) -> dict[str, Any]:
    """The error envelope with ``code`` limited to ``codes`` (docs/reference.md#6-errors)."""
    return {
        "type": "object",
        "required": ["error"],
        "additionalProperties": False,
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "message"],
                "additionalProperties": False,
                "properties": {
                    "code": {"type": "string", "enum": codes},
                    "message": {"type": "string"},
                },
            }
        },
    }


def _first_line(error: type[errors.PineworkError]) -> str:
    return (inspect.getdoc(error) or error.code).split("\n\n")[0].replace("\n", " ")


def _overview() -> str:
    """The document's description: conventions and the error table (docs/reference.md#6-errors)."""
    classes = [
        value
        for value in vars(errors).values()
        if inspect.isclass(value) and issubclass(value, errors.PineworkError)
    ]
    rows = "\n".join(
        f"| `{error.code}` | {errors.STATUS_BY_CODE[error.code]} | {_first_line(error)} |"
        for error in sorted(classes, key=lambda cls: (errors.STATUS_BY_CODE[cls.code], cls.code))
    )
    return (
        "Agents save facts and day lines, get memories recalled at the start of each run; "
        "the persons of a workspace read, edit, veto and undo; a nightly review keeps the "
        "store clean. `Authorization: Bearer <token>` on every route but the key-value "
        "tools, MCP and this document. Bodies and answers are JSON, camelCase, UTC "
        "times in RFC 3339.\n\n"
        "**Retries.** Routes that change state take `Idempotency-Key`: the same key and "
        "request within 24 hours get the first answer again (`Idempotent-Replayed: true`) "
        "and change nothing; the same key with another request is 422 "
        "`idempotency_key_reused`; while the first still runs, 409 `idempotency_key_in_use` "
        "with `Retry-After`.\n\n"
        '**No lost edits.** A memory answer carries `ETag: "<id>.v<version>"`; `PATCH`, '
        "archive, veto and unarchive take `If-Match` and answer 412 `precondition_failed` "
        "(changing nothing) when the memory moved on.\n\n"
        '**Errors** are `{"error": {"code", "message"}}`; a wrong method is 405 '
        "`method_not_allowed` with `Allow`, an unknown path 404 `not_found`.\n\n"
        "| code | HTTP | when |\n| --- | --- | --- |\n" + rows
    )
