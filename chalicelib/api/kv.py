"""Routes of the key-value meta-tools (docs/reference.md#10-key-value), under ``/api/v1``.

``POST /kv/remember``, ``/kv/recall``, ``/kv/forget``. Anyone may call them;
the scope comes from the credentials (``KvService.scope_for``): a bearer token
(which must be valid: an unknown one is 401, never anonymous), else
``X-Api-Key``, else the client IP from API Gateway's request context.
"""

from __future__ import annotations

from typing import Any

from chalice.app import Blueprint, Response

from chalicelib.api.cross_site import same_site_json_only
from chalicelib.api.exact_json import parse_exact_body
from chalicelib.api.http import endpoint, json_response, reject_other_methods
from chalicelib.api.idempotency import idempotent
from chalicelib.api.observe import note_caller_without_token, note_principal
from chalicelib.errors import InvalidRequest
from chalicelib.models.kv import ForgetRequest, KvRecallRequest, RememberRequest
from chalicelib.models.principal import Principal
from chalicelib.services.kv.service import KvScope
from chalicelib.wiring import Services, services

kv_api = Blueprint(__name__)
CONTENT_TYPES = ["*/*"]
"""Any content type reaches our own guard, so a wrong one is our 415 ``unsupported_media_type``."""


def _request() -> Any:
    return kv_api.current_request


same_site_json = same_site_json_only(_request, lambda: services().settings)
"""Cross-site requests and non-JSON bodies are refused first (docs/reference.md#cross-site)."""


def optional_principal(request: Any, wired: Services) -> Principal | None:
    """The bearer principal if an ``Authorization`` header was sent, else None.

    Raises:
        Unauthorized: the header is there but not a known bearer token.
    """
    authorization = request.headers.get("authorization")
    if authorization is None:
        return None
    principal = wired.auth.authenticate(authorization)
    note_principal(principal)
    return principal


def source_ip(request: Any) -> str | None:
    """The client IP as API Gateway saw the connection (``requestContext.identity.sourceIp``).

    Never a header: ``X-Forwarded-For`` and the like are whatever the caller wrote.
    """
    context = getattr(request, "context", None) or {}
    identity = context.get("identity") or {}
    value = identity.get("sourceIp")
    return value if isinstance(value, str) else None


def kv_scope(request: Any, wired: Services) -> KvScope:
    """The caller's key-value scope: bearer token, else ``X-Api-Key``, else client IP.

    Raises:
        Unauthorized: an invalid bearer token; anonymous without a source IP.
        InvalidRequest: an empty or over-long ``X-Api-Key``.
    """
    principal = optional_principal(request, wired)
    if principal is None:
        note_caller_without_token(request.headers.get("x-api-key"))
    return wired.kv.scope_for(principal, request.headers.get("x-api-key"), source_ip(request))


def kv_caller_scope(request: Any) -> str:
    """The ``Idempotency-Key`` scope of a key-value call (docs/issues.md#issue-15): the bearer
    principal, else the ``X-Api-Key`` or anonymous scope (per caller, not per workspace).

    Raises:
        Unauthorized, InvalidRequest: as ``kv_scope``.
    """
    wired = services()
    principal = optional_principal(request, wired)
    if principal is not None:
        return f"principal#{principal.workspace_id}#{principal.id}"
    return "kv#" + kv_scope(request, wired).name


def _call() -> tuple[Services, KvScope]:
    request = _request()
    if request.query_params:
        raise InvalidRequest("The key-value routes take no query parameters; send a JSON body.")
    wired = services()
    return wired, kv_scope(request, wired)


@kv_api.route("/kv/remember", methods=["POST"], content_types=CONTENT_TYPES)
@endpoint
@same_site_json
@idempotent(kv_api, scope=kv_caller_scope)
def kv_remember() -> Response:
    """``{key, value}`` -> ``{stored: true, key, ttl}`` (docs/reference.md#10-key-value)."""
    wired, scope = _call()
    body = parse_exact_body(_request().raw_body, RememberRequest)
    return json_response(wired.kv.remember(scope, body.key, body.value, body.if_revision).to_wire())


@kv_api.route("/kv/recall", methods=["POST"], content_types=CONTENT_TYPES)
@endpoint
@same_site_json
def kv_recall() -> Response:
    """``{key}`` -> ``{key, value, found}``; ``{}`` or ``{cursor, limit}`` -> a page
    ``{keys, count, next}`` (docs/reference.md#10-key-value)."""
    wired, scope = _call()
    body = parse_exact_body(_request().raw_body, KvRecallRequest)
    if body.key is None:
        return json_response(wired.kv.list_keys(scope, body.cursor, body.limit).to_wire())
    return json_response(wired.kv.recall(scope, body.key).to_wire(body.with_revision))


@kv_api.route("/kv/forget", methods=["POST"], content_types=CONTENT_TYPES)
@endpoint
@same_site_json
@idempotent(kv_api, scope=kv_caller_scope)
def kv_forget() -> Response:
    """``{key}`` -> ``{deleted, key}`` (docs/reference.md#10-key-value)."""
    wired, scope = _call()
    body = parse_exact_body(_request().raw_body, ForgetRequest)
    return json_response(wired.kv.forget(scope, body.key, body.if_revision).to_wire())


reject_other_methods(
    kv_api, {"/kv/remember": ["POST"], "/kv/recall": ["POST"], "/kv/forget": ["POST"]}
)
