"""The key-value tools and the MCP endpoint against the real local server (docs/issues.md#issue-5):
the official MCP Python SDK client connects, lists the tools and calls every one;
a large value (stored in the embedded S3) survives a restart; anonymous scopes
follow the connection's address (IPv4, IPv6), never forwarding headers."""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers import LocalServer, cli

try:  # the SDK's 1.x name
    from mcp.client.streamable_http import streamablehttp_client as _legacy_client
except ImportError:  # 2.x
    _legacy_client = None
from mcp import ClientSession
from mcp import types as mcp_types
from mcp.client import Client as McpClient
from mcp.client.streamable_http import streamable_http_client

TOOLS = {
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
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    running = LocalServer(tmp_path_factory.mktemp("kv") / "data")
    running.start()
    yield running
    running.stop()


def api(server: LocalServer, host: str = "127.0.0.1") -> str:
    return f"http://{host}:{server.api_port}/api/v1"


@asynccontextmanager
async def mcp_session(url: str, headers: dict[str, str]) -> AsyncIterator[ClientSession]:
    """An initialized SDK session over streamable HTTP with these headers."""
    if _legacy_client is not None:  # pragma: no cover - SDK 1.x
        async with (
            _legacy_client(url, headers=headers) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session
        return
    import httpx2

    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def structured(result: Any) -> dict[str, Any]:
    assert result.content and result.content[0].type == "text"
    body = json.loads(result.content[0].text)
    assert body == result.structured_content
    return dict(body)


def test_the_mcp_sdk_client_lists_and_calls_every_tool(server: LocalServer) -> None:
    demo = server.demo()
    headers = {"Authorization": f"Bearer {demo['agentToken']}", "X-Pinework-Task": "PIN-5"}

    async def scenario() -> dict[str, dict[str, Any]]:
        results: dict[str, dict[str, Any]] = {}
        async with mcp_session(api(server) + "/mcp", headers) as session:
            assert session.initialize_result is not None
            assert session.initialize_result.server_info.name == "pinework-memory"
            listed = await session.list_tools()
            assert {tool.name for tool in listed.tools} == TOOLS
            await session.send_ping()

            async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
                result = await session.call_tool(name, arguments)
                assert isinstance(result, mcp_types.CallToolResult)
                assert result.is_error is False, result
                results[name] = structured(result)
                return results[name]

            await call("remember", {"key": "target", "value": {"ticker": "AAPL", "n": 1.10}})
            recalled = await call("recall", {"key": "target"})
            assert recalled == {
                "key": "target",
                "value": '{"ticker":"AAPL","n":1.1}',
                "found": True,
            }
            saved = await call("memory_save", {"text": "Deploys need the VPN"})
            await call("memory_day", {"line": "shipped the deploy"})
            await call("memory_recall", {"query": "deploy VPN"})
            await call("memory_list", {"kind": "fact"})
            await call("memory_get", {"memoryId": saved["id"]})
            await call("memory_archive", {"memoryId": saved["id"], "reason": "obsolete"})
            await call("forget", {"key": "target"})
            await call("learning_propose", {"text": "Every deploy needs the VPN"})
            await call("learning_list", {"state": "proposed"})

            failed = await session.call_tool("memory_save", {"text": "x" * 501})
            assert failed.is_error is True
            assert structured(failed)["error"]["code"] == "memory_text_too_long"
        return results

    results = asyncio.run(scenario())
    assert set(results) == TOOLS
    assert results["memory_day"]["text"].endswith("[PIN-5] shipped the deploy")
    assert results["memory_list"]["data"][0]["text"] == "Deploys need the VPN"
    assert results["memory_get"]["text"] == "Deploys need the VPN"
    assert results["memory_archive"]["status"] == "archived"
    assert results["forget"] == {"deleted": True, "key": "target"}
    assert results["learning_propose"]["state"] == "proposed"
    assert [found["text"] for found in results["learning_list"]["data"]] == [
        "Every deploy needs the VPN"
    ]


def test_the_sdk_high_level_client_connects_anonymously(server: LocalServer) -> None:
    """``mcp.Client`` probes ``server/discover`` first and falls back to ``initialize``."""

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with McpClient(api(server) + "/mcp") as client:
            stored = await client.call_tool("remember", {"key": "anon", "value": "v"})
            recalled = await client.call_tool("recall", {"key": "anon"})
            return structured(stored), structured(recalled)

    stored, recalled = asyncio.run(scenario())
    assert stored["ttl"] == "24h" and recalled["value"] == "v"


def test_the_mcp_endpoint_refuses_get_and_bad_tokens(server: LocalServer) -> None:
    url = api(server) + "/mcp"
    get = httpx.get(url, headers={"Accept": "text/event-stream"}, timeout=10)
    assert get.status_code == 405 and get.headers["allow"] == "POST"
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    bad = httpx.post(url, json=ping, headers={"Authorization": "Bearer pwk_nope"}, timeout=10)
    assert bad.status_code == 401
    note = httpx.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert note.status_code == 202 and note.content == b""


def remember(url: str, body: Any, **options: Any) -> httpx.Response:
    return httpx.post(f"{url}/kv/remember", json=body, timeout=60, **options)


def recall(url: str, key: str | None, **options: Any) -> Any:
    body = {} if key is None else {"key": key}
    response = httpx.post(f"{url}/kv/recall", json=body, timeout=60, **options)
    assert response.status_code == 200, response.text
    return response.json()


def test_anonymous_scopes_follow_the_connection_address(server: LocalServer) -> None:
    url = api(server)
    assert remember(url, {"key": "who", "value": "loopback-1"}).json()["ttl"] == "24h"
    spoofed = {"X-Forwarded-For": "203.0.113.9", "X-Real-IP": "203.0.113.9"}
    assert recall(url, "who", headers=spoofed)["value"] == "loopback-1"

    other = httpx.HTTPTransport(local_address="127.0.0.2")
    with httpx.Client(transport=other, timeout=30) as client:
        answer = client.post(f"{url}/kv/recall", json={"key": "who"}, headers=spoofed)
        assert answer.json() == {"key": "who", "value": None, "found": False}

    if not _ipv6_loopback():
        pytest.skip("no IPv6 loopback here")
    six = api(server, "[::1]")
    assert recall(six, "who")["found"] is False
    assert remember(six, {"key": "who", "value": "ipv6"}).status_code == 200
    assert recall(six, "who")["value"] == "ipv6"
    assert recall(url, "who")["value"] == "loopback-1"


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


def test_a_large_value_survives_a_restart(tmp_path: Path) -> None:
    running = LocalServer(tmp_path / "data")
    try:
        running.start()
        url = api(running)
        token = {"Authorization": f"Bearer {running.demo()['agentToken']}"}
        value = {"blob": "0123456789abcdef" * (5 * 1024 * 1024 // 16), "n": 12345678901234567890123}
        assert remember(url, {"key": "big", "value": value}, headers=token).status_code == 200
        assert remember(url, {"key": "small", "value": "s"}, headers=token).status_code == 200
        running.stop()
        running.start()
        url = api(running)
        stored = recall(url, "big", headers=token)["value"]
        assert stored == json.dumps(value, separators=(",", ":"))
        assert recall(url, None, headers=token) == {
            "keys": ["big", "small"],
            "count": 2,
        }
    finally:
        running.stop()


def test_the_cli_kv_commands_against_the_local_server(server: LocalServer) -> None:
    token = server.demo()["personToken"]
    stored = cli(server, token, "kv", "remember", "cli-key", '{"a": 1}', "--parse", "--json")
    assert stored.returncode == 0, stored.stderr
    assert json.loads(stored.stdout) == {"stored": True, "key": "cli-key", "ttl": "permanent"}
    recalled = cli(server, token, "kv", "recall", "cli-key")
    assert recalled.returncode == 0 and recalled.stdout.strip() == '{"a":1}'
    listed = cli(server, token, "kv", "recall", "--json")
    assert "cli-key" in json.loads(listed.stdout)["keys"]
    forgot = cli(server, token, "kv", "forget", "cli-key", "--json")
    assert json.loads(forgot.stdout) == {"deleted": True, "key": "cli-key"}
    missing = cli(server, token, "kv", "recall", "cli-key")
    assert missing.returncode == 1


def raw_post(
    server: LocalServer, path: str, header_pairs: list[tuple[str, str]], body: bytes
) -> tuple[int, bytes]:
    """POST with these headers exactly, repeats included (httpx and the SDK send each once)."""
    connection = http.client.HTTPConnection("127.0.0.1", server.api_port, timeout=30)
    try:
        connection.putrequest("POST", path, skip_host=True, skip_accept_encoding=True)
        for name, value in header_pairs:
            connection.putheader(name, value)
        connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_a_guarded_header_sent_twice_is_refused_by_the_local_server(server: LocalServer) -> None:
    host = ("Host", f"127.0.0.1:{server.api_port}")
    json_type = ("Content-Type", "application/json")
    plant = json.dumps({"key": "twice", "value": "x"}).encode()
    call = {"name": "remember", "arguments": {"key": "twice", "value": "x"}}
    message = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
    repeats = [
        [("Origin", f"http://localhost:{server.api_port}"), ("Origin", "https://evil.example")],
        [("Content-Type", "text/plain")],
        [("Sec-Fetch-Site", "same-origin"), ("Sec-Fetch-Site", "cross-site")],
        [("Host", "evil.example")],
    ]
    for extra in repeats:
        status, body = raw_post(server, "/api/v1/kv/remember", [host, json_type, *extra], plant)
        assert status == 403 and json.loads(body)["error"]["code"] == "forbidden", body
        status, body = raw_post(server, "/api/v1/mcp", [host, json_type, *extra], message.encode())
        assert status == 403 and json.loads(body)["error"]["data"]["code"] == "forbidden", body
        form = ("Content-Type", "application/x-www-form-urlencoded")
        status, body = raw_post(server, "/sign-in", [host, form, *extra], b"token=x")
        assert status == 403 and b"more than once" in body, body
    found = httpx.post(f"{api(server)}/kv/recall", json={"key": "twice"}).json()
    assert found["found"] is False


def test_the_local_server_reads_a_repeated_header_as_api_gateway_does_the_last(
    server: LocalServer,
) -> None:
    host = ("Host", f"127.0.0.1:{server.api_port}")
    keys = [("X-Api-Key", "first-key"), ("X-Api-Key", "last-key")]
    plant = json.dumps({"key": "which", "value": "x"}).encode()
    status, body = raw_post(
        server, "/api/v1/kv/remember", [host, ("Content-Type", "application/json"), *keys], plant
    )
    assert status == 200, body
    for key, found in [("last-key", True), ("first-key", False)]:
        answer = httpx.post(
            f"{api(server)}/kv/recall", json={"key": "which"}, headers={"X-Api-Key": key}
        ).json()
        assert answer["found"] is found, (key, answer)


def test_the_documented_mcp_servers_configuration_connects(server: LocalServer) -> None:
    """The Claude Code style ``mcpServers`` snippet of docs/integrations/mcp.md, as a
    client reads it: its URL (the server's port) and headers (``${PINEWORK_TOKEN}``
    expanded) reach the tools."""
    page = (Path(__file__).parents[2] / "docs" / "integrations" / "mcp.md").read_text()
    snippet = json.loads(page.split("```json\n", 1)[1].split("```", 1)[0])
    entry = snippet["mcpServers"]["pinework"]
    assert entry["type"] == "http"
    url = entry["url"].replace(":8000/", f":{server.api_port}/")
    token = server.demo()["agentToken"]
    headers = {
        name: value.replace("${PINEWORK_TOKEN}", token) for name, value in entry["headers"].items()
    }

    async def scenario() -> tuple[set[str], dict[str, Any]]:
        async with mcp_session(url, headers) as session:
            listed = await session.list_tools()
            saved = structured(await session.call_tool("memory_save", {"text": "Configured"}))
            got = await session.call_tool("memory_get", {"memoryId": saved["id"]})
            return {tool.name for tool in listed.tools}, structured(got)

    names, got = asyncio.run(scenario())
    assert names == TOOLS and got["text"] == "Configured"
