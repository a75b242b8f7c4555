"""What the OpenAPI document declares, the server enforces (docs/issues.md#issue-27-item-5):
every path id has its shape, and a value outside a declared pattern or bound is refused
by the server (4xx) as a client checking the schema first would refuse it; a real id
passes the schema."""

from __future__ import annotations

import re
from typing import Any

import pytest

from chalicelib.api.openapi_document import build_document
from tests.helpers import Api, World

REAL = {
    "memory_id": "mem_01M8P570G0QJRZ8T2NSWNPVZ62",
    "routine_id": "rtn_01M8P570G0QJRZ8T2NSWNPVZ62",
    "review_id": "rvw_01M8P570G0QJRZ8T2NSWNPVZ62",
    "action_ref": "a2",
    "agent_id": "agt_01M8P570G0QJRZ8T2NSWNPVZ62",
    "target_id": "wsp_01M8P570G0QJRZ8T2NSWNPVZ62",
    "export_id": "exp_01M8P570G0QJRZ8T2NSWNPVZ62",
    "learning_id": "lrn_01M8P570G0QJRZ8T2NSWNPVZ62",
    "page_ref": "pag_01M8P570G0QJRZ8T2NSWNPVZ62",
    "bulk_id": "blk_01M8P570G0QJRZ8T2NSWNPVZ62",
    "recall_id": "rcl_01M8P570G0QJRZ8T2NSWNPVZ62",
    "webhook_id": "whk_01M8P570G0QJRZ8T2NSWNPVZ62",
}
"""One id of the right shape per path parameter (none of them exists)."""
MISSHAPEN = ["nope", "mem_", "01M8P570G0QJRZ8T2NSWNPVZ62", "lrn_01M8P570G0QJRZ8T2NSWNPVZ6!"]
MISSHAPEN_BY_NAME = {"page_ref": ["Nope", "pag_", "a--b", "pag_01M8P570G0QJRZ8T2NSWNPVZ6!"]}
"""A wiki page is named by its id or its slug (``nope`` is a slug's shape)."""


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    from app import app

    return build_document(app.routes)


def path_parameters(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    found = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []):
                if parameter.get("in") == "path":
                    found.append((method.upper(), path, parameter))
    return found


def test_every_path_id_declares_its_shape_and_the_server_refuses_any_other(
    document: dict[str, Any], api: Api, world: World
) -> None:
    checked = 0
    for method, path, parameter in path_parameters(document):
        name, pattern = parameter["name"], parameter["schema"].get("pattern")
        assert pattern, f"{method} {path}: {name} has no pattern"
        assert re.search(pattern, REAL[name]), f"{name}: a real id fails {pattern}"
        for bad in MISSHAPEN_BY_NAME.get(name, MISSHAPEN):
            assert not re.search(pattern, bad)
            # The other path parameters of the route get real shapes: only one is wrong.
            filled = path.replace("{" + name + "}", bad)
            for other, value in REAL.items():
                filled = filled.replace("{" + other + "}", value)
            status, answer = api.call(method, filled, world.person, {})
            assert 400 <= status < 500, (method, filled, status, answer)
            checked += 1
    assert checked >= 40


def test_no_bound_is_written_in_pydantics_own_words(document: dict[str, Any]) -> None:
    text = repr(document)
    for word in ("'ge':", "'le':", "'gt':", "'lt':"):
        assert word not in text
    limits = [
        parameter["schema"]
        for _, path, parameter in (
            (method, path, parameter)
            for path, operations in document["paths"].items()
            for method, operation in operations.items()
            for parameter in operation.get("parameters", [])
        )
        if parameter.get("name") == "limit"
    ]
    assert limits and all(schema["minimum"] == 1 for schema in limits)


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("/memories", "limit=0"),
        ("/learnings", "limit=0"),
        ("/memories", "agentId=agt_nope"),
        ("/recalls", "agentId=nope"),
    ],
)
def test_a_query_outside_its_declared_bounds_is_refused(
    api: Api, world: World, path: str, query: str
) -> None:
    assert 400 <= api.call("GET", f"{path}?{query}", world.person)[0] < 500


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/memories", {"text": "fact", "supersedes": "mem_nope"}),
        ("POST", "/memories", {"text": "fact", "agentId": "nope"}),
        ("POST", "/memories/recall", {"query": "q", "agentId": "agt_x"}),
        ("POST", "/reviews", {"agentId": "nope", "dryRun": True}),
        ("POST", "/routines", {"agentId": "nope"}),
        ("PATCH", "/memories/mem_01M8P570G0QJRZ8T2NSWNPVZ62", {}),
        ("POST", "/kv/remember", {"key": "k" * 513, "value": 1}),
        ("POST", "/kv/recall", {"key": ""}),
    ],
)
def test_a_body_outside_its_declared_schema_is_refused(
    api: Api, world: World, method: str, path: str, body: dict[str, Any]
) -> None:
    status, answer = api.call(method, path, world.person, body)
    assert 400 <= status < 500, answer
