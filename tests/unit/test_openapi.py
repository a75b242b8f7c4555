"""The OpenAPI document (docs/issues.md#issue-15-item-1): valid OpenAPI 3.1, the same routes as
the Chalice app, every error code, and the retry and version headers where they
apply."""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest
from openapi_spec_validator import validate
from openapi_spec_validator.validation.exceptions import OpenAPIValidationError

from chalicelib import errors
from chalicelib.api.idempotency import is_idempotent
from chalicelib.api.openapi import document_for
from chalicelib.api.openapi_document import build_document, route_table
from chalicelib.api.operations import OPERATIONS

READ_ONLY_POSTS = {("POST", "/kv/recall"), ("POST", "/mcp")}
"""POSTs that change nothing themselves (``/mcp`` carries JSON-RPC, whose tools are
the HTTP routes' own operations)."""
NOT_REPLAYED = {("POST", "/sign-in-links"), ("POST", "/webhooks")}
"""State-changing POSTs without ``Idempotency-Key``: the answer is a one-time credential
(a sign-in link, a webhook's signing secret), which a replay would have to store in clear."""


@pytest.fixture(scope="module")
def app() -> Any:
    from app import app as chalice_app

    return chalice_app


@pytest.fixture(scope="module")
def document(app: Any) -> dict[str, Any]:
    return build_document(app.routes)


def served(app: Any) -> set[tuple[str, str]]:
    """(method, path) of every API route (below ``/api/v1``; the dashboard's pages are
    HTML, not part of the contract) of the app's table that serves a request."""
    found = set()
    for path, methods in app.routes.items():
        if not path.startswith("/api/v1/"):
            continue
        for method, entry in methods.items():
            if not entry.view_function.__name__.startswith("not_allowed_"):
                found.add((method, path.removeprefix("/api/v1")))
    return found


def documented(document: dict[str, Any]) -> set[tuple[str, str]]:
    return {
        (method.upper(), path)
        for path, operations in document["paths"].items()
        for method in operations
    }


def test_the_document_is_valid_openapi_3_1(document: dict[str, Any]) -> None:
    assert document["openapi"].startswith("3.1")
    validate(document)


def test_the_validator_catches_a_broken_document(document: dict[str, Any]) -> None:
    broken = {**document, "paths": {"/memories": {"post": {"responses": "none"}}}}
    with pytest.raises(OpenAPIValidationError):
        validate(broken)


def test_every_route_is_documented_and_every_documented_route_exists(
    app: Any, document: dict[str, Any]
) -> None:
    routes = served(app)
    assert len(routes) >= 28
    assert routes - documented(document) == set(), "routes missing from the document"
    assert documented(document) - routes == set(), "documented operations with no route"
    assert set(OPERATIONS) == routes, "operations.py and the route table differ"


def test_route_table_skips_the_405_views(app: Any) -> None:
    names = {view.__name__ for _, _, view in route_table(app.routes)}
    assert "save_fact" in names
    assert not any(name.startswith("not_allowed_") for name in names)


def test_operation_ids_are_the_view_names_and_unique(document: dict[str, Any]) -> None:
    ids = [op["operationId"] for ops in document["paths"].values() for op in ops.values()]
    assert len(ids) == len(set(ids))
    assert {"save_fact", "append_day_line", "archive_memory", "kv_remember", "mcp_post"} <= set(ids)


def test_every_state_changing_route_takes_an_idempotency_key(
    app: Any, document: dict[str, Any]
) -> None:
    for method, path, view in route_table(app.routes):
        changes_state = method in ("POST", "PATCH", "DELETE") and (method, path) not in (
            READ_ONLY_POSTS | NOT_REPLAYED
        )
        assert is_idempotent(view) is changes_state, (method, path)
        parameters = document["paths"][path][method.lower()].get("parameters", [])
        has_key = {"$ref": "#/components/parameters/IdempotencyKey"} in parameters
        assert has_key is changes_state, (method, path)


def test_if_match_and_etag_are_documented_where_they_apply(document: dict[str, Any]) -> None:
    changes = {
        ("patch", "/memories/{memory_id}"),
        ("post", "/memories/{memory_id}/archive"),
        ("post", "/memories/{memory_id}/veto"),
        ("post", "/memories/{memory_id}/unarchive"),
        ("post", "/memories/{memory_id}/erase"),
        ("patch", "/learnings/{learning_id}"),
        ("post", "/learnings/{learning_id}/approve"),
        ("post", "/learnings/{learning_id}/reject"),
        ("post", "/learnings/{learning_id}/retire"),
        ("patch", "/pages/{page_ref}"),
        ("post", "/pages/{page_ref}/publish"),
        ("post", "/pages/{page_ref}/archive"),
    }
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if_match = {"$ref": "#/components/parameters/IfMatch"} in operation.get(
                "parameters", []
            )
            assert if_match is ((method, path) in changes), (method, path)
            if if_match:
                assert "412" in operation["responses"]
    for method, path in changes | {("post", "/memories"), ("get", "/memories/{memory_id}")}:
        success = next(
            response
            for status, response in document["paths"][path][method]["responses"].items()
            if status.startswith("2")
        )
        assert success["headers"]["ETag"]["required"] is True


def error_codes(response: dict[str, Any]) -> list[str]:
    schema = response["content"]["application/json"]["schema"]
    if "$ref" in schema:
        return []
    return list(schema["properties"]["error"]["properties"]["code"]["enum"])


def test_each_error_status_lists_codes_of_that_status(document: dict[str, Any]) -> None:
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for status, response in operation["responses"].items():
                if status.startswith("2"):
                    continue
                for code in error_codes(response):
                    assert errors.STATUS_BY_CODE[code] == int(status), (method, path, code)


def test_the_seed_codes_are_on_their_routes(document: dict[str, Any]) -> None:
    def codes(method: str, path: str) -> set[str]:
        responses = document["paths"][path][method]["responses"].items()
        return {
            code
            for status, response in responses
            if not status.startswith("2")
            for code in error_codes(response)
        }

    assert {
        "memory_text_too_long",
        "secret_in_memory",
        "memory_agent_required",
        "memory_agent_mismatch",
        "memory_day_append_only",
        "memory_not_own",
        "memory_supersede_archived",
        "invalid_request",
        "unauthorized",
        "rate_limited",
        "idempotency_key_reused",
        "idempotency_key_in_use",
    } <= codes("post", "/memories")
    assert {"memory_day_agent_only", "memory_day_full"} <= codes("post", "/memories/day")
    assert {
        "memory_veto_human_only",
        "memory_superseded",
        "memory_day_exists",
        "memory_not_archived",
        "precondition_failed",
    } <= codes("post", "/memories/{memory_id}/unarchive")
    assert "memory_already_archived" in codes("post", "/memories/{memory_id}/archive")
    assert "payload_too_large" in codes("post", "/kv/remember")


def test_every_error_code_is_in_the_overview_table(document: dict[str, Any]) -> None:
    description = document["info"]["description"]
    classes = [
        value
        for value in vars(errors).values()
        if inspect.isclass(value) and issubclass(value, errors.PineworkError)
    ]
    for error in classes:
        status = errors.STATUS_BY_CODE[error.code]
        assert re.search(rf"\| `{error.code}` \| {status} \|", description), error.code


def test_links_lead_from_save_to_archive_to_unarchive(document: dict[str, Any]) -> None:
    save = document["paths"]["/memories"]["post"]["responses"]["201"]["links"]
    assert save["archive_memory"]["parameters"]["memory_id"] == "$response.body#/id"
    archive = document["paths"]["/memories/{memory_id}/archive"]["post"]["responses"]["200"]
    unarchive = archive["links"]["unarchive_memory"]["parameters"]
    assert unarchive == {
        "memory_id": "$response.body#/id",
        "header.If-Match": "$response.header.ETag",
    }


def test_the_kv_tools_and_mcp_accept_anonymous_callers(document: dict[str, Any]) -> None:
    for path in ("/kv/remember", "/kv/recall", "/kv/forget", "/mcp"):
        assert {} in document["paths"][path]["post"]["security"]
    assert document["paths"]["/openapi.json"]["get"]["security"] == []
    assert document["paths"]["/memories"]["post"]["security"] == [{"bearer": []}]


def test_the_document_is_built_once_per_app(app: Any) -> None:
    assert document_for(app) is document_for(app)


def test_documented_limits_reach_their_fields(document: dict[str, Any]) -> None:
    from chalicelib.api.openapi_document import FIELD_LIMITS

    schemas = document["components"]["schemas"]
    for (model, field), limits in FIELD_LIMITS.items():
        prop = schemas[model]["properties"][field]
        strings = [option for option in prop.get("anyOf", [prop]) if option.get("type") == "string"]
        assert strings and all(option.items() >= limits.items() for option in strings), (
            model,
            field,
        )
    assert schemas["SaveFactRequest"]["properties"]["text"]["maxLength"] == 500
