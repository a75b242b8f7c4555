"""DynamoDB throttling through the API (docs/reference.md#6-errors, docs/issues.md#issue-12): never
a 500, always 429
``rate_limited`` with ``Retry-After``, on every route, the MCP endpoint and the
key-value tools. Faults come from botocore itself (``Stubber``, or a ``before-call``
hook on the real moto-backed client: ``tests.conftest.Faults``); no project module
is patched."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from chalice.test import Client

from chalicelib import wiring
from chalicelib.ids import FixedClock
from chalicelib.settings import Settings
from tests.helpers import BUCKET, TABLE, Actor, Api, Faults, World

THROTTLES = [
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
]


def assert_rate_limited(status: int, body: Any, headers: dict[str, str] | None = None) -> None:
    assert status == 429, body
    assert body["error"]["code"] == "rate_limited"
    assert "retry" in body["error"]["message"].lower()
    if headers is not None:
        assert headers["Retry-After"] == "1"


def raw(api_client: Client, method: str, path: str, actor: Actor | None, body: Any = None) -> Any:
    headers = {"Content-Type": "application/json"}
    if actor is not None:
        headers["Authorization"] = f"Bearer {actor.token}"
    payload = b"" if body is None else json.dumps(body).encode()
    return api_client.http.request(method, "/api/v1" + path, headers=headers, body=payload)


@pytest.fixture
def api_client(wired: wiring.Services) -> Iterator[Client]:
    from app import app

    with Client(app) as client:
        yield client


def test_a_throttled_token_lookup_is_429_with_retry_after_stubber(
    aws: None, clock: FixedClock
) -> None:
    client = boto3.client("dynamodb", region_name="us-east-1")
    with Stubber(client) as stubber:
        stubber.add_client_error(
            "get_item",
            service_error_code="ProvisionedThroughputExceededException",
            service_message="Rate of requests exceeds the allowed throughput.",
            http_status_code=400,
        )
        wiring.install(
            wiring.build_services(
                Settings(table_name=TABLE, bucket_name=BUCKET), clock=clock, client=client
            )
        )
        try:
            from app import app

            with Client(app) as api_client:
                response = raw(api_client, "GET", "/memories", Actor("agt_x", "pwk_any"))
        finally:
            wiring.install(None)
        stubber.assert_no_pending_responses()
    body = json.loads(response.body)
    assert_rate_limited(response.status_code, body, dict(response.headers))


@pytest.mark.parametrize("code", THROTTLES)
def test_each_throttling_code_on_a_save_is_429_and_stores_nothing(
    api: Api, world: World, faults: Faults, code: str
) -> None:
    faults.fail(code, operation="TransactWriteItems")
    status, body = api.call("POST", "/memories", world.agent, {"text": "Deploys need the VPN"})
    assert_rate_limited(status, body)
    status, listed = api.call("GET", "/memories", world.agent)
    assert status == 200 and listed["data"] == []


@pytest.mark.parametrize("reason", ["ThrottlingError", "ProvisionedThroughputExceeded"])
def test_a_transaction_cancelled_by_throttling_is_429(
    api: Api, world: World, faults: Faults, reason: str
) -> None:
    faults.fail(
        "TransactionCanceledException",
        operation="TransactWriteItems",
        reasons=["None", reason],
    )
    status, body = api.call("POST", "/memories", world.agent, {"text": "Deploys need the VPN"})
    assert_rate_limited(status, body)


@pytest.mark.parametrize(
    ("operation", "method", "path", "body"),
    [
        ("GetItem", "GET", "/memories/{id}", None),
        ("Query", "GET", "/memories", None),
        ("BatchGetItem", "GET", "/memories", None),
        ("TransactWriteItems", "POST", "/memories/day", {"line": "second line"}),
        ("Query", "POST", "/memories/recall", {"query": "how do I deploy"}),
        ("GetItem", "GET", "/routines", None),
    ],
)
def test_throttled_reads_and_updates_are_429(
    api: Api,
    world: World,
    faults: Faults,
    operation: str,
    method: str,
    path: str,
    body: Any,
) -> None:
    saved = api.call("POST", "/memories", world.agent, {"text": "Deploys need the VPN"})[1]
    assert api.call("POST", "/memories/day", world.agent, {"line": "first line"})[0] == 201
    # Skip the token lookup when the operation is GetItem, so the view's own read fails.
    faults.fail("ThrottlingException", operation=operation, skip=1 if operation == "GetItem" else 0)
    status, answer = api.call(method, path.replace("{id}", saved["id"]), world.agent, body)
    assert_rate_limited(status, answer)


def test_every_route_answers_429_when_dynamodb_throttles_everything(
    api_client: Client, world: World, faults: Faults
) -> None:
    """Every route of the app (including routes added later): when it reached
    DynamoDB and every call was throttled, it answers 429; never a 500."""
    from app import app

    bodies: dict[tuple[str, str], Any] = {
        ("POST", "/api/v1/kv/remember"): {"key": "k", "value": 1},
        ("POST", "/api/v1/kv/recall"): {"key": "k"},
        ("POST", "/api/v1/kv/forget"): {"key": "k"},
        ("POST", "/api/v1/memories"): {"text": "a fact"},
        ("POST", "/api/v1/memories/day"): {"line": "a line"},
    }
    faults.fail("ProvisionedThroughputExceededException", times=None)
    answered = views = 0
    for path, methods in app.routes.items():
        if not path.startswith("/api/v1/"):
            continue  # the dashboard's pages: tests/api/test_dashboard_throttling.py
        for method, entry in methods.items():
            if entry.view_function.__name__.startswith("not_allowed"):
                continue
            views += 1
            concrete = path.replace("{memory_id}", "mem_01KAAAAAAAAAAAAAAAAAAAAAAA")
            concrete = concrete.replace("{routine_id}", world.agent.id)
            concrete = concrete.replace("{review_id}", "rvw_01KAAAAAAAAAAAAAAAAAAAAAAA")
            concrete = concrete.replace("{action_ref}", "1")
            for actor in (world.agent, world.person, None):
                before = len(faults.calls)
                if path.endswith("/mcp"):
                    body: Any = {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "tools/call",
                        "params": {"name": "remember", "arguments": {"key": "k", "value": 1}},
                    }
                else:
                    body = bodies.get((method, path))
                sent = None if method in ("GET", "DELETE") else body or {}
                response = raw(api_client, method, concrete[len("/api/v1") :], actor, sent)
                assert response.status_code != 500, (method, path)
                if len(faults.calls) > before:
                    answered += 1
                    assert response.status_code == 429, (method, path, response.body)
                    assert response.headers["Retry-After"] == "1"
    # The 28 API views of today (27, and the dashboard's POST /sign-in-links) reached
    # DynamoDB for an agent and a person (the token lookup first); routes added later
    # that need no token (a public document) reach nothing.
    assert views >= 28 and answered >= 2 * 28


def _sweep(api: Api, faults: Faults, request: Callable[[], tuple[int, Any]], ok: int) -> int:
    """Throttle the n-th DynamoDB call of ``request`` for every n it makes: each answer
    is 429 or the normal success, never anything else. Returns the number of calls."""
    before = len(faults.calls)
    status, body = request()
    assert status == ok, body
    calls = len(faults.calls) - before
    for n in range(calls):
        faults.clear()
        faults.fail("ThrottlingException", skip=n)
        status, body = request()
        assert status in (ok, 429), (n, status, body)
        if status == 429:
            assert body["error"]["code"] == "rate_limited"
    faults.clear()
    return calls


def test_a_throttle_at_any_call_of_a_request_is_429_or_success(
    api: Api, world: World, faults: Faults
) -> None:
    for number in range(3):
        api.call("POST", "/memories", world.agent, {"text": f"Deploy step {number} needs the VPN"})
    api.call("POST", "/memories/day", world.agent, {"line": "worked on deploys"})
    counts = [
        _sweep(
            api, faults, lambda: api.call("POST", "/memories", world.agent, {"text": "x y"}), 201
        ),
        _sweep(
            api, faults, lambda: api.call("POST", "/memories/day", world.agent, {"line": "z"}), 200
        ),
        _sweep(api, faults, lambda: api.call("GET", "/memories?all=true", world.agent), 200),
        _sweep(
            api,
            faults,
            lambda: api.call("POST", "/memories/recall", world.agent, {"query": "deploy vpn"}),
            200,
        ),
        _sweep(
            api,
            faults,
            lambda: api.call(
                "POST",
                "/memories/recall/start",
                world.agent,
                {"sessionId": "s1", "resumed": False, "task": "deploy with the vpn"},
            ),
            200,
        ),
        _sweep(
            api,
            faults,
            lambda: api.call("POST", "/kv/remember", None, {"key": "k", "value": 2}),
            200,
        ),
        _sweep(
            api,
            faults,
            lambda: api.call(
                "POST", "/reviews", world.person, {"agentId": world.agent.id, "dryRun": True}
            ),
            200,
        ),
    ]
    assert min(counts) >= 1 and sum(counts) >= 20, counts


def test_a_throttled_archive_changes_nothing(api: Api, world: World, faults: Faults) -> None:
    status, saved = api.call("POST", "/memories", world.agent, {"text": "Staging uses the VPN"})
    faults.fail("ThrottlingException", operation="TransactWriteItems")
    status, body = api.call(
        "POST", f"/memories/{saved['id']}/archive", world.agent, {"reason": "old"}
    )
    assert_rate_limited(status, body)
    status, memory = api.call("GET", f"/memories/{saved['id']}", world.agent)
    assert memory["status"] == "active"
    status, history = api.call("GET", f"/memories/{saved['id']}/history", world.agent)
    assert [record["action"] for record in history["data"]] == ["create"]


def test_throttled_s3_on_a_large_value_is_429(api: Api, s3: Any) -> None:
    Faults(s3).fail("SlowDown", operation="PutObject")
    big = "x " * 200_000  # past the anonymous value cap: sent with a key of one's own
    mine = {"X-Api-Key": "mine"}
    status, body = api.call(
        "POST", "/kv/remember", None, {"key": "big", "value": big}, headers=mine
    )
    assert_rate_limited(status, body)
    status, found = api.call("POST", "/kv/recall", None, {"key": "big"}, headers=mine)
    assert status == 200 and found["found"] is False


def test_mcp_tool_call_throttled_is_http_429_with_a_json_rpc_error(
    api_client: Client, world: World, faults: Faults
) -> None:
    faults.fail("ThrottlingException", operation="TransactWriteItems")
    message = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "memory_save", "arguments": {"text": "Deploys need the VPN"}},
    }
    response = raw(api_client, "POST", "/mcp", world.agent, message)
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "1"
    answer = json.loads(response.body)
    assert answer["id"] == 7 and answer["error"]["code"] == -32000
    assert answer["error"]["data"] == {"code": "rate_limited", "retryAfterSeconds": 1}


def test_mcp_throttled_token_lookup_is_429(
    api_client: Client, world: World, faults: Faults
) -> None:
    faults.fail("ProvisionedThroughputExceededException", operation="GetItem")
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    response = raw(api_client, "POST", "/mcp", world.agent, message)
    assert response.status_code == 429 and response.headers["Retry-After"] == "1"
    assert json.loads(response.body)["error"]["data"]["code"] == "rate_limited"


def test_mcp_batch_answers_the_throttled_message_alone(
    api_client: Client, world: World, faults: Faults
) -> None:
    """A batch is not replayed whole: the saved fact's answer stays, only the throttled
    message says rate_limited (a retry of the whole batch would save the fact twice)."""
    batch = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "memory_save", "arguments": {"text": "Deploys need the VPN"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "remember", "arguments": {"key": "k", "value": 1}},
        },
    ]
    faults.fail("ThrottlingException", operation="PutItem", mentioning="KV#")
    response = raw(api_client, "POST", "/mcp", world.agent, batch)
    assert response.status_code == 200
    first, second = json.loads(response.body)
    assert first["id"] == 1 and first["result"]["isError"] is False
    assert second["id"] == 2 and second["error"]["data"]["code"] == "rate_limited"


def test_a_transaction_conflict_is_sent_again_not_rate_limited(
    api: Api, world: World, faults: Faults
) -> None:
    faults.fail(
        "TransactionCanceledException",
        operation="TransactWriteItems",
        reasons=["TransactionConflict", "None"],
        times=2,
    )
    status, saved = api.call("POST", "/memories", world.agent, {"text": "Deploys need the VPN"})
    assert status == 201
    assert api.call("GET", f"/memories/{saved['id']}", world.agent)[0] == 200


def test_a_lasting_transaction_conflict_is_409_conflict(
    api: Api, world: World, faults: Faults
) -> None:
    faults.fail(
        "TransactionCanceledException",
        operation="TransactWriteItems",
        reasons=["TransactionConflict", "None"],
        times=None,
    )
    status, body = api.call("POST", "/memories", world.agent, {"text": "Deploys need the VPN"})
    assert status == 409 and body["error"]["code"] == "conflict"


def test_a_write_colliding_with_a_transaction_is_409_conflict(
    api: Api, world: World, faults: Faults, s3: Any
) -> None:
    """A plain write (an erasure's ``UpdateItem`` of an audit record) that meets a
    transaction on its item is 409 ``conflict``; the erasure run again finishes."""
    saved = api.call("POST", "/memories", world.agent, {"text": "Deploys need the VPN"})[1]
    faults.fail("TransactionConflictException", operation="UpdateItem")
    path = f"/memories/{saved['id']}/erase"
    status, body = api.call("POST", path, world.person, {"reason": "asked"})
    assert status == 409 and body["error"]["code"] == "conflict"
    assert api.call("POST", path, world.person, {"reason": "asked"})[0] == 200
    history = api.call("GET", f"/memories/{saved['id']}/history", world.person)[1]["data"]
    assert history[0]["after"]["text"] is None  # the create record's text is gone now
