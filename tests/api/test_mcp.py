"""``POST /api/v1/mcp`` through the Chalice test client (docs/reference.md#11-mcp,
docs/issues.md#issue-5): JSON-RPC 2.0, the handshake, tools/list with generated schemas, every tool,
tool errors with the spec's codes, batches, HTTP-level answers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import mcp_types
import pytest
from chalice.test import Client

from chalicelib import wiring
from chalicelib.settings import Settings
from tests.helpers import Mcp, World, gateway_call

TOOL_NAMES = [
    "remember",
    "recall",
    "forget",
    "memory_save",
    "memory_day",
    "memory_recall",
    "memory_list",
    "memory_get",
    "memory_archive",
    "learning_propose",
    "learning_list",
]


@pytest.fixture
def mcp(wired: wiring.Services) -> Iterator[Mcp]:
    from app import app

    with Client(app) as client:
        yield Mcp(client)


def test_initialize_negotiates_a_handshake_version(mcp: Mcp) -> None:
    params = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    }
    result = mcp.result("initialize", params)
    parsed = mcp_types.InitializeResult.model_validate(result)
    assert parsed.protocol_version == "2025-06-18"
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["serverInfo"]["name"] == "pinework-memory"
    newer = mcp.result("initialize", {**params, "protocolVersion": "2099-01-01"})
    assert newer["protocolVersion"] == "2025-11-25"


def test_notifications_and_client_responses_get_202_without_a_body(mcp: Mcp) -> None:
    status, _, body = mcp.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert (status, body) == (202, None)
    status, _, body = mcp.post({"jsonrpc": "2.0", "id": 7, "result": {}})
    assert (status, body) == (202, None)
    status, _, body = mcp.post({"jsonrpc": "2.0", "id": None, "error": {"code": 1, "message": "x"}})
    assert (status, body) == (202, None)


MALFORMED = [
    # The contract fuzz's finding (schemathesis 4.32.5, seed 7, ST201): an error code
    # that is an object, on a response with a null id.
    {"jsonrpc": "2.0", "id": None, "error": {"code": {}, "message": "x"}},
    {"jsonrpc": "2.0", "id": 3, "error": {"code": "1", "message": "x"}},
    {"jsonrpc": "2.0", "id": 3, "error": {"code": 1}},
    {"jsonrpc": "2.0", "id": 3, "error": "failed"},
    {"jsonrpc": "2.0", "id": 3, "error": None},
    {"jsonrpc": "2.0", "id": 3, "result": {}, "error": {"code": 1, "message": "x"}},
    {"jsonrpc": "2.0", "id": None, "result": {}},
    {"jsonrpc": "2.0", "result": {}},
    {"jsonrpc": "2.0", "method": "notifications/initialized", "params": "now"},
    {"jsonrpc": "2.0", "method": 5},
    {"jsonrpc": "2.0", "id": None, "method": "ping"},
    {"jsonrpc": "1.0", "method": "notifications/initialized"},
]
"""Responses and notifications that break the document's JsonRpcMessage schema or
JSON-RPC 2.0's shape of a message."""


@pytest.mark.parametrize("message", MALFORMED, ids=[json.dumps(m) for m in MALFORMED])
def test_malformed_responses_and_notifications_are_refused(mcp: Mcp, message: Any) -> None:
    status, _, body = mcp.post(message)
    assert status == 400, body
    assert body["id"] is None and body["error"]["code"] == mcp_types.INVALID_REQUEST


def test_a_batch_with_a_malformed_message_is_refused_whole(mcp: Mcp, world: World) -> None:
    save = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "memory_save", "arguments": {"text": "Deploys freeze on Fridays"}},
    }
    status, _, body = mcp.post([save, MALFORMED[0]], actor=world.agent)
    assert status == 400 and body["error"]["code"] == mcp_types.INVALID_REQUEST
    assert body["error"]["message"].startswith("Message 2 of the batch: error must be")
    listed = mcp.ok("memory_list", {"kind": "fact"}, actor=world.agent)
    assert listed["data"] == []  # nothing of it ran
    status, _, answers = mcp.post([save], actor=world.agent)
    assert status == 200 and answers[0]["result"]["isError"] is False


def test_a_message_whose_id_is_not_a_string_number_or_null_is_refused(mcp: Mcp) -> None:
    for bad in (True, False, [1], {"n": 1}, 1.5):
        for message in (
            {"jsonrpc": "2.0", "id": bad, "result": {}},
            {"jsonrpc": "2.0", "id": bad, "method": "ping"},
        ):
            status, _, body = mcp.post(message)
            assert status != 202 and body["error"]["code"] == mcp_types.INVALID_REQUEST, message


def test_ping_and_unknown_methods(mcp: Mcp) -> None:
    assert mcp.result("ping") == {}
    for method in ["server/discover", "resources/list", "nope"]:
        assert mcp.request(method)["error"]["code"] == mcp_types.METHOD_NOT_FOUND


def test_tools_list_has_every_tool_with_generated_schemas(mcp: Mcp) -> None:
    result = mcp.result("tools/list")
    tools = {tool["name"]: tool for tool in result["tools"]}
    assert list(tools) == TOOL_NAMES
    for tool in tools.values():
        mcp_types.Tool.model_validate(tool)
        assert tool["inputSchema"]["type"] == "object" and tool["description"]
        assert tool["inputSchema"]["additionalProperties"] is False
    assert tools["remember"]["inputSchema"]["required"] == ["key", "value"]
    assert set(tools["memory_save"]["inputSchema"]["properties"]) >= {
        "text",
        "expiresAt",
        "supersedes",
        "agentId",
    }
    assert tools["memory_archive"]["inputSchema"]["required"] == ["memoryId", "reason"]
    assert tools["recall"]["annotations"]["readOnlyHint"] is True
    assert "learning_propose" in tools["memory_save"]["description"]
    assert tools["learning_propose"]["inputSchema"]["required"] == ["text"]


def test_an_agent_proposes_a_learning_and_lists_the_active_ones(mcp: Mcp, world: World) -> None:
    fact = {"text": "Staging deploys need the VPN"}
    proposed = mcp.ok("learning_propose", fact, actor=world.agent)
    assert proposed["object"] == "learning" and proposed["state"] == "proposed"
    assert mcp.ok("learning_list", {}, actor=world.agent)["data"] == []
    mine = mcp.ok("learning_list", {"state": "proposed"}, actor=world.agent)["data"]
    assert [found["id"] for found in mine] == [proposed["id"]]
    # another agent's proposals are for persons (docs/issues.md#issue-42-item-5)
    theirs = mcp.ok("learning_list", {"state": "proposed"}, actor=world.other_agent)["data"]
    assert theirs == []
    assert mcp.tool_error("learning_propose", {"text": " "}, actor=world.agent) == (
        "invalid_request"
    )
    assert mcp.tool_error("learning_propose", fact) == "unauthorized"


def test_key_value_tools_anonymous_and_with_a_token(mcp: Mcp, world: World) -> None:
    assert mcp.ok("remember", {"key": "k", "value": {"a": 1}}) == {
        "stored": True,
        "key": "k",
        "ttl": "24h",
    }
    assert mcp.ok("recall", {"key": "k"}) == {"key": "k", "value": '{"a":1}', "found": True}
    assert mcp.ok("recall", {}) == {"keys": ["k"], "count": 1}
    assert mcp.ok("recall") == {"keys": ["k"], "count": 1}
    assert mcp.ok("forget", {"key": "k"}) == {"deleted": True, "key": "k"}
    assert mcp.ok("forget", {"key": "k"}) == {"deleted": False, "key": "k"}

    assert mcp.ok("remember", {"key": "h", "value": "x"}, actor=world.agent)["ttl"] == "permanent"
    assert mcp.ok("recall", {"key": "h"}, actor=world.other_agent)["value"] == "x"
    assert mcp.ok("recall", {"key": "h"}, headers={"X-Api-Key": "k1"})["found"] is False


def test_numbers_in_tool_arguments_keep_their_digits(mcp: Mcp) -> None:
    raw = (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"remember",'
        b'"arguments":{"key":"n","value":[12345678901234567890123,1.10,1e400]}}}'
    )
    status, _, answer = mcp.post(raw=raw)
    assert status == 200 and answer["result"]["isError"] is False
    assert mcp.ok("recall", {"key": "n"})["value"] == "[12345678901234567890123,1.1,1e400]"


def test_memory_tools_call_the_services(mcp: Mcp, world: World) -> None:
    run = {"X-Pinework-Run": "run_1", "X-Pinework-Task": "PIN-7"}
    saved = mcp.ok(
        "memory_save", {"text": "The staging deploy needs the VPN"}, actor=world.agent, headers=run
    )
    assert saved["object"] == "memory" and saved["taskKey"] == "PIN-7"
    assert saved["runId"] == "run_1"
    day = mcp.ok("memory_day", {"line": "fixed the deploy"}, actor=world.agent, headers=run)
    assert day["kind"] == "day" and "[PIN-7] fixed the deploy" in day["text"]
    recalled = mcp.ok("memory_recall", {"query": "staging deploy VPN"}, actor=world.agent)
    assert recalled["object"] == "recall"
    assert [item["memory"]["id"] for item in recalled["memories"]] == [saved["id"]]
    listed = mcp.ok("memory_list", {"kind": "fact", "limit": 10}, actor=world.agent)
    assert [memory["id"] for memory in listed["data"]] == [saved["id"]]
    assert listed["object"] == "list" and listed["nextToken"] is None
    paged = mcp.ok("memory_list", {"limit": 1}, actor=world.agent)
    assert len(paged["data"]) == 1 and paged["nextToken"] is not None
    rest = mcp.ok("memory_list", {"limit": 1, "nextToken": paged["nextToken"]}, actor=world.agent)
    assert {paged["data"][0]["id"], rest["data"][0]["id"]} == {saved["id"], day["id"]}
    got = mcp.ok("memory_get", {"memoryId": saved["id"]}, actor=world.agent)
    assert got["text"] == saved["text"] and got["status"] == "active"
    assert mcp.tool_error("memory_get", {"memoryId": saved["id"]}, actor=world.other_agent) == (
        "memory_not_own"
    )
    assert mcp.tool_error("memory_get", {"memoryId": saved["id"]}, actor=world.outsider) == (
        "memory_not_found"
    )
    assert mcp.tool_error("memory_get", {"memoryId": "mem_nope"}, actor=world.agent) == (
        "memory_not_found"
    )
    archived = mcp.ok(
        "memory_archive", {"memoryId": saved["id"], "reason": "moved off"}, actor=world.agent
    )
    assert archived["status"] == "archived" and archived["archiveReason"] == "moved off"
    every = mcp.ok("memory_list", {"all": True}, actor=world.agent)
    assert {memory["id"] for memory in every["data"]} == {saved["id"], day["id"]}
    by_person = mcp.ok("memory_list", {"agentId": world.agent.id, "all": True}, actor=world.person)
    assert len(by_person["data"]) == 2


def test_domain_errors_are_tool_errors_with_the_spec_code(mcp: Mcp, world: World) -> None:
    assert mcp.tool_error("memory_save", {"text": "x" * 501}, actor=world.agent) == (
        "memory_text_too_long"
    )
    assert mcp.tool_error("memory_save", {"text": "ok"}, actor=world.person) == (
        "memory_agent_required"
    )
    assert mcp.tool_error("memory_day", {"line": "hi"}, actor=world.person) == (
        "memory_day_agent_only"
    )
    missing = {"memoryId": "mem_01JD0000000000000000000000", "reason": "r"}
    assert mcp.tool_error("memory_archive", missing, actor=world.agent) == "memory_not_found"
    assert mcp.tool_error("memory_save", {"text": "fact"}) == "unauthorized"
    assert mcp.tool_error("remember", {"key": "", "value": 1}) == "invalid_request"
    assert mcp.tool_error("remember", {"key": "k", "value": "AKIAIOSFODNN7EXAMPLE"}) == (
        "secret_in_memory"
    )
    assert mcp.tool_error("remember", {"key": "k"}) == "invalid_request"
    assert mcp.tool_error("memory_list", {"limit": 0}, actor=world.agent) == "invalid_request"
    assert mcp.tool_error("memory_list", {"bogus": 1}, actor=world.agent) == "invalid_request"


def test_an_unknown_tool_or_bad_params_are_json_rpc_errors(mcp: Mcp) -> None:
    assert mcp.request("tools/call", {"name": "nope"})["error"]["code"] == (
        mcp_types.INVALID_PARAMS
    )
    assert mcp.request("tools/call", {})["error"]["code"] == mcp_types.INVALID_PARAMS
    assert mcp.request("tools/call", [1])["error"]["code"] == mcp_types.INVALID_PARAMS
    no_name = mcp.request("tools/call", {"name": 7})["error"]
    assert (no_name["code"], no_name["message"]) == (
        mcp_types.INVALID_PARAMS,
        "tools/call needs a tool name (a string).",
    )
    bad_arguments = mcp.request("tools/call", {"name": "recall", "arguments": [1]})["error"]
    assert (bad_arguments["code"], bad_arguments["message"]) == (
        mcp_types.INVALID_PARAMS,
        "tools/call arguments must be an object.",
    )


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"{not json", mcp_types.PARSE_ERROR),
        (b"", mcp_types.PARSE_ERROR),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","x":NaN}', mcp_types.PARSE_ERROR),
        (b'{"jsonrpc":"1.0","id":1,"method":"ping"}', mcp_types.INVALID_REQUEST),
        (b'{"jsonrpc":"2.0","id":1,"method":5}', mcp_types.INVALID_REQUEST),
        (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', mcp_types.INVALID_REQUEST),
        (b'{"jsonrpc":"2.0","id":1}', mcp_types.INVALID_REQUEST),
        (b"[]", mcp_types.INVALID_REQUEST),
        (b"42", mcp_types.INVALID_REQUEST),
    ],
)
def test_broken_messages_are_400_with_a_json_rpc_error(mcp: Mcp, raw: bytes, code: int) -> None:
    status, _, answer = mcp.post(raw=raw)
    assert status == 400
    assert answer["jsonrpc"] == "2.0" and answer["id"] is None
    assert answer["error"]["code"] == code


def test_batches_answer_each_request(mcp: Mcp) -> None:
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "two", "method": "nope"},
    ]
    status, _, answers = mcp.post(batch)
    assert status == 200
    assert answers[0] == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert answers[1]["id"] == "two" and answers[1]["error"]["code"] == mcp_types.METHOD_NOT_FOUND
    status, _, body = mcp.post([{"jsonrpc": "2.0", "method": "notifications/initialized"}])
    assert (status, body) == (202, None)


def test_get_and_delete_are_405_with_allow_post(mcp: Mcp) -> None:
    for method in ["GET", "DELETE"]:
        status, headers, body = mcp.post(raw=b"", method=method)
        assert status == 405 and body["error"]["code"] == "method_not_allowed"
        assert headers.get("Allow") == "POST"


def test_an_invalid_bearer_token_is_401(mcp: Mcp) -> None:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    status, headers, answer = mcp.post(ping, headers={"Authorization": "Bearer pwk_nope"})
    assert status == 401 and headers.get("WWW-Authenticate", "").startswith("Bearer")
    assert answer["error"]["data"] == {"code": "unauthorized"}


def test_an_unsupported_protocol_version_header_is_400(mcp: Mcp) -> None:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    status, _, answer = mcp.post(ping, headers={"MCP-Protocol-Version": "1999-01-01"})
    assert status == 400 and answer["error"]["code"] == mcp_types.UNSUPPORTED_PROTOCOL_VERSION
    assert "2025-06-18" in answer["error"]["data"]["supported"]
    status, _, answer = mcp.post(ping, headers={"MCP-Protocol-Version": "2025-06-18"})
    assert status == 200 and answer["result"] == {}


def test_a_malformed_run_header_is_400(mcp: Mcp, world: World) -> None:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    status, _, answer = mcp.post(ping, actor=world.agent, headers={"X-Pinework-Run": "x" * 200})
    assert status == 400 and answer["error"]["data"] == {"code": "invalid_request"}


@pytest.mark.parametrize(
    ("origin", "hosts", "allowed", "ok"),
    [
        ("http://localhost:3000", "", "", True),
        ("http://127.0.0.1:8000", "", "", True),
        ("http://[::1]:8000", "", "", True),
        ("https://api.example.com", "api.example.com", "", True),
        ("https://api.example.com", "", "", False),  # never compared with Host
        ("https://app.example", "api.example.com", "https://app.example, https://b.example", True),
        ("https://evil.example", "api.example.com", "https://app.example", False),
        ("http://localhost.evil.example", "", "", False),
        (
            "https://x.execute-api.eu-west-1.amazonaws.com",
            "*.execute-api.eu-west-1.amazonaws.com",
            "",
            True,
        ),
        (
            "https://execute-api.eu-west-1.amazonaws.com.evil",
            "*.execute-api.eu-west-1.amazonaws.com",
            "",
            False,
        ),
        ("null", "", "", False),
        ("file://", "", "", False),
    ],
)
def test_origin_rule(origin: str, hosts: str, allowed: str, ok: bool) -> None:
    from chalicelib.api.cross_site import origin_allowed

    assert origin_allowed(origin, Settings(allowed_hosts=hosts), allowed) is ok


def test_a_foreign_browser_origin_is_refused_before_anything_runs(mcp: Mcp) -> None:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    status, _, body = mcp.post(ping, headers={"Origin": "https://evil.example"})
    assert status == 403 and body["error"]["data"]["code"] == "forbidden"
    assert "PINEWORK_MCP_ALLOWED_ORIGINS" in body["error"]["message"]
    status, _, body = mcp.post(ping, headers={"Origin": "http://localhost:5173"})
    assert status == 200 and body["result"] == {}
    status, _, body = mcp.post(ping)  # no Origin: not a browser
    assert status == 200


PLANT_CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "remember", "arguments": {"key": "planted", "value": "x"}},
}


def planted(mcp: Mcp) -> bool:
    return bool(mcp.ok("recall", {"key": "planted"})["found"])


def assert_refused(status: int, body: Any, wanted_status: int, code: str) -> None:
    assert status == wanted_status, body
    assert body["jsonrpc"] == "2.0" and body["id"] is None
    assert body["error"]["code"] == -32000 and body["error"]["message"]
    assert body["error"]["data"] == {"code": code}


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", ""],
)
def test_a_body_not_declared_json_is_415_and_runs_nothing(mcp: Mcp, content_type: str) -> None:
    status, _, body = mcp.post(PLANT_CALL, headers={"Content-Type": content_type})
    assert_refused(status, body, 415, "unsupported_media_type")
    assert not planted(mcp)


def test_a_body_without_content_type_is_415(mcp: Mcp) -> None:
    response = mcp._http.request(
        "POST", "/api/v1/mcp", headers={"Host": "127.0.0.1:8000"}, body=json.dumps(PLANT_CALL)
    )
    assert_refused(response.status_code, json.loads(response.body), 415, "unsupported_media_type")
    assert not planted(mcp)


@pytest.mark.parametrize("site", ["cross-site", "same-site", " Cross-Site "])
def test_sec_fetch_site_of_another_site_is_403_even_with_an_allowed_origin(
    mcp: Mcp, site: str
) -> None:
    headers = {"Sec-Fetch-Site": site, "Origin": "http://localhost:5173"}
    status, _, body = mcp.post(PLANT_CALL, headers=headers)
    assert_refused(status, body, 403, "forbidden")
    assert not planted(mcp)
    for fine in ["same-origin", "none"]:
        status, _, body = mcp.post(PLANT_CALL, headers={"Sec-Fetch-Site": fine})
        assert status == 200 and body["result"]["isError"] is False, body


def test_an_origin_listed_for_mcp_may_be_another_site(mcp: Mcp, wired: wiring.Services) -> None:
    wiring.install(
        replace(
            wired,
            settings=wired.settings.model_copy(
                update={"mcp_allowed_origins": "https://app.example"}
            ),
        )
    )
    listed = {"Origin": "https://app.example", "Sec-Fetch-Site": "cross-site"}
    status, _, body = mcp.post(PLANT_CALL, headers=listed)
    assert status == 200 and body["result"]["isError"] is False, body
    unlisted = {"Origin": "http://localhost:5173", "Sec-Fetch-Site": "cross-site"}
    status, _, body = mcp.post(PLANT_CALL, headers=unlisted)
    assert_refused(status, body, 403, "forbidden")


@pytest.mark.parametrize(
    "extra",
    [
        [("Origin", "http://localhost:8600"), ("Origin", "https://evil.example")],
        [("Origin", "https://evil.example"), ("Origin", "http://localhost:8600")],
        [("Content-Type", "text/plain")],
        [("Sec-Fetch-Site", "same-origin"), ("Sec-Fetch-Site", "cross-site")],
        [("Host", "evil.example")],
    ],
)
def test_a_guarded_header_sent_twice_is_403_in_the_json_rpc_shape(
    mcp: Mcp, extra: list[tuple[str, str]]
) -> None:
    sent = [("Host", "127.0.0.1:8000"), ("Content-Type", "application/json"), *extra]
    status, body = gateway_call("/api/v1/mcp", sent, json.dumps(PLANT_CALL).encode())
    assert_refused(status, body, 403, "forbidden")
    assert "more than once" in body["error"]["message"]
    assert not planted(mcp)
    once = [("Host", "127.0.0.1:8000"), ("Content-Type", "application/json")]
    status, body = gateway_call("/api/v1/mcp", once, json.dumps(PLANT_CALL).encode())
    assert status == 200 and body["result"]["isError"] is False, body


def test_a_host_that_is_not_this_api_is_refused_whatever_the_origin(
    mcp: Mcp, wired: wiring.Services
) -> None:
    """DNS rebinding: the attacker's name resolves to the server, so ``Host`` and
    ``Origin`` agree with each other; both are held to the configured hosts."""
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    for host, origin in (
        ("rebind.attacker.example:8000", "http://rebind.attacker.example:8000"),
        ("rebind.attacker.example", None),
        ("127.0.0.1.nip.io:8000", None),
        ("localhost@evil.example", None),
    ):
        extra = {"Host": host, **({"Origin": origin} if origin else {})}
        status, _, body = mcp.post(ping, headers=extra)
        assert status == 403, host
        assert body["error"]["data"]["code"] == "forbidden"
        assert "PINEWORK_ALLOWED_HOSTS" in body["error"]["message"]
    for host in ("localhost:8000", "[::1]:9", "127.0.0.1"):
        assert mcp.post(ping, headers={"Host": host})[0] == 200, host


def test_configured_hosts_are_answered(wired: wiring.Services) -> None:
    from app import app

    hosts = "mcp.example.com, *.execute-api.eu-west-1.amazonaws.com"
    wiring.install(
        replace(wired, settings=wired.settings.model_copy(update={"allowed_hosts": hosts}))
    )
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    with Client(app) as client:
        mcp = Mcp(client)
        for host, ok in (
            ("mcp.example.com", True),
            ("abc123.execute-api.eu-west-1.amazonaws.com", True),
            ("execute-api.eu-west-1.amazonaws.com", False),
            ("mcp.example.com.evil.example", False),
        ):
            origin = {"Origin": f"https://{host}"}
            assert (mcp.post(ping, headers={"Host": host, **origin})[0] == 200) is ok, host


def test_the_input_rules_of_issue_14_give_the_same_codes_over_mcp(mcp: Mcp, world: World) -> None:
    """Run headers, recall texts, key-value keys, look-alike and blank texts are
    refused by the same services, with the same codes, as over the HTTP routes."""
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    for headers, refused in (
        ({"X-Pinework-Task": "AKIAIOSFODNN7EXAMPLE"}, "secret_in_memory"),
        ({"X-Pinework-Run": "ghp_" + "A1b2C3d4" * 4 + "wXyZ"}, "secret_in_memory"),
        ({"X-Pinework-Task": "x] 23:59 [PIN-999"}, "invalid_request"),
        ({"X-Pinework-Task": "durable"}, "invalid_request"),
    ):
        status, _, answer = mcp.post(ping, actor=world.agent, headers=headers)
        assert status == 400 and answer["error"]["data"] == {"code": refused}
    full_width_key = "".join(chr(ord(c) + 0xFEE0) for c in "AKIAIOSFODNN7EXAMPLE")
    agent = {"actor": world.agent}
    assert mcp.tool_error("memory_save", {"text": full_width_key}, **agent) == "secret_in_memory"
    assert mcp.tool_error("memory_save", {"text": "\u3164"}, **agent) == "invalid_request"
    assert mcp.tool_error("memory_day", {"line": "\u0301"}, **agent) == "invalid_request"
    query = {"query": "use AKIAIOSFODNN7EXAMPLE"}
    assert mcp.tool_error("memory_recall", query, **agent) == "secret_in_memory"
    key = {"key": "ghp_" + "A1b2C3d4" * 4 + "wXyZ", "value": "x"}
    assert mcp.tool_error("remember", key, **agent) == "secret_in_memory"
    saved = mcp.ok("memory_save", {"text": "Deploys need the VPN"}, **agent)
    spoof = {"memoryId": saved["id"], "reason": "v\u0435toed"}
    assert mcp.tool_error("memory_archive", spoof, **agent) == "invalid_request"
    assert [m["id"] for m in mcp.ok("memory_list", {"all": True}, **agent)["data"]] == [saved["id"]]
    assert mcp.ok("recall", {}, **agent) == {"keys": [], "count": 0}


def test_tags_and_metadata_go_through_the_memory_tools(mcp: Mcp, world: World) -> None:
    billing = mcp.ok(
        "memory_save",
        {
            "text": "Invoices are cut on the 1st",
            "tags": ["Billing"],
            "metadata": {"project": "ledger"},
        },
        actor=world.agent,
    )
    assert billing["tags"] == ["billing"] and billing["metadata"] == {"project": "ledger"}
    ops = mcp.ok(
        "memory_save",
        {"text": "Invoices deploy from bastion-2", "tags": ["ops"]},
        actor=world.agent,
    )
    listed = mcp.ok("memory_list", {"tags": ["billing"]}, actor=world.agent)
    assert [memory["id"] for memory in listed["data"]] == [billing["id"]]
    either = mcp.ok("memory_list", {"anyTags": ["billing", "ops"]}, actor=world.agent)
    assert {memory["id"] for memory in either["data"]} == {billing["id"], ops["id"]}
    recalled = mcp.ok("memory_recall", {"query": "invoices", "tags": ["ops"]}, actor=world.agent)
    assert [item["memory"]["id"] for item in recalled["memories"]] == [ops["id"]]
    assert mcp.tool_error("memory_list", {"tags": ["billing,ops"]}, actor=world.agent) == (
        "memory_tag_invalid"
    )
    assert mcp.tool_error("memory_list", {"tags": ["not a tag"]}, actor=world.agent) == (
        "memory_tag_invalid"
    )
