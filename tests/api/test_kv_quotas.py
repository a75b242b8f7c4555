"""Key-value quotas, paged key listings and bounded MCP batches through the HTTP API and MCP
(docs/reference.md#kv-quotas, docs/reference.md#kv-listing, docs/reference.md#11-mcp):
small quotas per scope kind so each is reached in a few calls."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from chalice.test import Client

from chalicelib import wiring
from chalicelib.ids import FixedClock
from chalicelib.limits import (
    KV_ACCOUNT_MAX_BYTES,
    KV_ACCOUNT_MAX_KEYS,
    KV_ANON_MAX_BYTES,
    KV_ANON_MAX_KEYS,
    KV_ANON_VALUE_MAX_BYTES,
    KV_BYOK_MAX_BYTES,
    KV_BYOK_MAX_KEYS,
    KV_BYOK_NEW_SCOPES_PER_DAY,
    MCP_BATCH_MAX_MESSAGES,
)
from chalicelib.settings import Settings
from tests.helpers import BUCKET, TABLE, Api, World

SMALL = {
    "kv_anon_max_keys": 3,
    "kv_anon_max_bytes": 60,
    "kv_byok_max_keys": 5,
    "kv_byok_max_bytes": 100,
    "kv_account_max_keys": 8,
    "kv_account_max_bytes": 160,
    "kv_byok_new_scopes_per_day": 2,
}
KINDS = {
    # kind: (scope prefix, max keys, max bytes)
    "anon": ("anon#", 3, 60),
    "byok": ("byok#", 5, 100),
    "account": ("account#", 8, 160),
}


@pytest.fixture
def api(world: World, dynamodb: Any, s3: Any, clock: FixedClock) -> Iterator[Api]:
    """The API on services with small key-value quotas (installed after ``world``'s)."""
    from app import app

    settings = Settings(table_name=TABLE, bucket_name=BUCKET, read_concurrency=1, **SMALL)
    built = wiring.build_services(settings, clock=clock, client=dynamodb, s3=s3)
    wiring.install(built)
    with Client(app) as client:
        yield Api(client)
    wiring.install(None)


def credentials(kind: str, world: World) -> dict[str, str]:
    if kind == "account":
        return {"Authorization": f"Bearer {world.agent.token}"}
    return {"X-Api-Key": "my own key"} if kind == "byok" else {}


def kv(api: Api, action: str, body: Any, headers: dict[str, str]) -> tuple[int, Any]:
    return api.call("POST", f"/kv/{action}", body=body, headers=headers)


def stored_keys(dynamodb: Any, prefix: str) -> list[str]:
    items = dynamodb.scan(TableName=TABLE)["Items"]
    return sorted(
        item["sk"]["S"].removeprefix("KEY#")
        for item in items
        if item["pk"]["S"].startswith("KV#" + prefix) and item["sk"]["S"].startswith("KEY#")
    )


def refused(answer: tuple[int, Any]) -> tuple[int, str]:
    status, body = answer
    assert set(body) == {"error"} and body["error"]["message"], body
    return status, body["error"]["code"]


# Defaults


def test_the_default_quotas_differ_by_scope_kind_and_come_from_the_environment() -> None:
    defaults = Settings()
    assert (defaults.kv_anon_max_keys, defaults.kv_anon_max_bytes) == (
        KV_ANON_MAX_KEYS,
        KV_ANON_MAX_BYTES,
    )
    assert (defaults.kv_byok_max_keys, defaults.kv_byok_max_bytes) == (
        KV_BYOK_MAX_KEYS,
        KV_BYOK_MAX_BYTES,
    )
    assert (defaults.kv_account_max_keys, defaults.kv_account_max_bytes) == (
        KV_ACCOUNT_MAX_KEYS,
        KV_ACCOUNT_MAX_BYTES,
    )
    assert KV_ANON_MAX_BYTES < KV_BYOK_MAX_BYTES < KV_ACCOUNT_MAX_BYTES
    assert KV_ANON_MAX_KEYS < KV_BYOK_MAX_KEYS < KV_ACCOUNT_MAX_KEYS
    assert KV_BYOK_MAX_BYTES < 1024**3  # a stranger's key is far below a gigabyte
    assert defaults.kv_anon_max_value_bytes == KV_ANON_VALUE_MAX_BYTES
    names = {
        "PINEWORK_KV_ANON_MAX_KEYS": "1",
        "PINEWORK_KV_ANON_MAX_BYTES": "2",
        "PINEWORK_KV_ANON_MAX_VALUE_BYTES": "3",
        "PINEWORK_KV_BYOK_MAX_KEYS": "4",
        "PINEWORK_KV_BYOK_MAX_BYTES": "5",
        "PINEWORK_KV_ACCOUNT_MAX_KEYS": "6",
        "PINEWORK_KV_ACCOUNT_MAX_BYTES": "7",
        "PINEWORK_KV_BYOK_NEW_SCOPES_PER_DAY": "8",
    }
    read = Settings.from_env(names)
    assert [
        read.kv_anon_max_keys,
        read.kv_anon_max_bytes,
        read.kv_anon_max_value_bytes,
        read.kv_byok_max_keys,
        read.kv_byok_max_bytes,
        read.kv_account_max_keys,
        read.kv_account_max_bytes,
        read.kv_byok_new_scopes_per_day,
    ] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert defaults.kv_byok_new_scopes_per_day == KV_BYOK_NEW_SCOPES_PER_DAY


# Quotas per scope kind


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_scope_holds_at_most_its_kinds_keys(
    api: Api, world: World, dynamodb: Any, kind: str
) -> None:
    prefix, max_keys, _ = KINDS[kind]
    headers = credentials(kind, world)
    keys = [f"k{number}" for number in range(max_keys)]
    for key in keys:
        assert kv(api, "remember", {"key": key, "value": "v"}, headers)[0] == 200
    answer = kv(api, "remember", {"key": "one-more", "value": "v"}, headers)
    assert refused(answer) == (403, "kv_quota_exceeded")
    assert f"{max_keys} keys" in answer[1]["error"]["message"]
    assert stored_keys(dynamodb, prefix) == keys
    # A full scope still overwrites its keys, and forgetting one makes room.
    assert kv(api, "remember", {"key": "k0", "value": "w"}, headers)[0] == 200
    assert kv(api, "forget", {"key": "k1"}, headers)[1]["deleted"] is True
    assert kv(api, "remember", {"key": "one-more", "value": "v"}, headers)[0] == 200
    assert kv(api, "recall", {}, headers)[1]["count"] == max_keys


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_scope_holds_at_most_its_kinds_bytes(
    api: Api, world: World, dynamodb: Any, kind: str
) -> None:
    prefix, _, max_bytes = KINDS[kind]
    headers = credentials(kind, world)
    # Key "a" (1 byte) and a value filling the rest: exactly the quota.
    full = {"key": "a", "value": "x" * (max_bytes - 1)}
    assert kv(api, "remember", full, headers)[0] == 200
    assert refused(kv(api, "remember", {"key": "b", "value": ""}, headers)) == (
        403,
        "kv_quota_exceeded",
    )
    grown = {"key": "a", "value": "x" * max_bytes}
    assert refused(kv(api, "remember", grown, headers)) == (403, "kv_quota_exceeded")
    assert kv(api, "recall", {"key": "a"}, headers)[1]["value"] == full["value"]
    assert stored_keys(dynamodb, prefix) == ["a"]
    # Shrinking the value frees its bytes for another key.
    assert kv(api, "remember", {"key": "a", "value": "x" * (max_bytes - 5)}, headers)[0] == 200
    assert kv(api, "remember", {"key": "bcd", "value": "y"}, headers)[0] == 200


def test_scopes_have_separate_quotas(api: Api, world: World) -> None:
    for number in range(3):
        assert kv(api, "remember", {"key": f"k{number}", "value": 1}, {})[0] == 200
    assert refused(kv(api, "remember", {"key": "k9", "value": 1}, {}))[1] == "kv_quota_exceeded"
    other_key = {"X-Api-Key": "another"}
    assert kv(api, "remember", {"key": "k9", "value": 1}, other_key)[0] == 200


# Networks: the anonymous scope and new X-Api-Key scopes per day


def from_ip(api: Api, address: str) -> None:
    """Send the next requests from ``address`` (API Gateway's ``sourceIp``)."""
    api._client.http._local_gateway.event_converter.LOCAL_SOURCE_IP = address


def scopes(dynamodb: Any, prefix: str) -> set[str]:
    items = dynamodb.scan(TableName=TABLE)["Items"]
    return {item["pk"]["S"] for item in items if item["pk"]["S"].startswith("KV#" + prefix)}


def test_anonymous_ipv6_callers_share_one_scope_per_64(api: Api, world: World) -> None:
    from_ip(api, "2001:db8:1:2::1")
    assert kv(api, "remember", {"key": "k", "value": "mine"}, {})[0] == 200
    from_ip(api, "2001:db8:1:2:ffff:ffff:ffff:fffe")
    assert kv(api, "recall", {"key": "k"}, {})[1]["value"] == "mine"
    assert kv(api, "remember", {"key": "k2", "value": 1}, {})[0] == 200
    assert kv(api, "remember", {"key": "k3", "value": 1}, {})[0] == 200
    # The /64 holds one anonymous quota (3 keys here), whatever address it uses.
    from_ip(api, "2001:db8:1:2::9")
    assert refused(kv(api, "remember", {"key": "k4", "value": 1}, {})) == (
        403,
        "kv_quota_exceeded",
    )
    from_ip(api, "2001:db8:1:3::1")
    assert kv(api, "recall", {"key": "k"}, {})[1]["found"] is False
    assert kv(api, "remember", {"key": "k4", "value": 1}, {})[0] == 200


def test_a_network_starts_at_most_its_new_x_api_key_scopes_a_day(
    api: Api, world: World, dynamodb: Any, clock: FixedClock
) -> None:
    from_ip(api, "2001:db8:1:2::1")
    for number in range(2):
        headers = {"X-Api-Key": f"key {number}"}
        assert kv(api, "remember", {"key": "k", "value": 1}, headers)[0] == 200
    from_ip(api, "2001:db8:1:2::77")  # the same /64
    answer = kv(api, "remember", {"key": "k", "value": 1}, {"X-Api-Key": "key 2"})
    assert refused(answer) == (403, "kv_quota_exceeded")
    assert "2 new X-Api-Key scopes per UTC day" in answer[1]["error"]["message"]
    assert len(scopes(dynamodb, "byok#")) == 2  # no entry, no usage item of "key 2"
    assert kv(api, "recall", {}, {"X-Api-Key": "key 2"})[1] == {
        "keys": [],
        "count": 0,
    }
    # Keys that exist keep working, here and from any other network.
    assert kv(api, "remember", {"key": "k2", "value": 1}, {"X-Api-Key": "key 0"})[0] == 200
    from_ip(api, "203.0.113.5")
    assert kv(api, "remember", {"key": "k3", "value": 1}, {"X-Api-Key": "key 1"})[0] == 200
    # Another network starts its own; the full one may again the next UTC day.
    assert kv(api, "remember", {"key": "k", "value": 1}, {"X-Api-Key": "key 2"})[0] == 200
    from_ip(api, "2001:db8:1:2::1")
    assert refused(kv(api, "remember", {"key": "k", "value": 1}, {"X-Api-Key": "key 3"}))[0] == 403
    clock.set(clock.now().replace(hour=0, minute=0, second=0) + timedelta(days=1))
    assert kv(api, "remember", {"key": "k", "value": 1}, {"X-Api-Key": "key 3"})[0] == 200
    assert len(scopes(dynamodb, "byok#")) == 4


# Paged listing


def test_recall_lists_keys_in_pages_that_follow_the_cursor(api: Api, world: World) -> None:
    headers = credentials("account", world)
    keys = sorted(["b", "a", "ключ", "c", "d", "e", "f"])
    for key in keys:
        kv(api, "remember", {"key": key, "value": 1}, headers)
    seen, cursor, pages = [], None, 0
    while True:
        body: dict[str, Any] = {"limit": 3} if cursor is None else {"limit": 3, "cursor": cursor}
        status, page = kv(api, "recall", body, headers)
        assert status == 200 and page["count"] == 7
        assert len(page["keys"]) == (3 if page.get("next") else 1)
        assert page.get("truncated") is (True if page.get("next") else None)
        seen += page["keys"]
        pages += 1
        cursor = page.get("next")
        if cursor is None:
            break
    assert seen == keys and pages == 3


def test_a_limit_over_the_maximum_is_lowered_not_refused(api: Api, world: World) -> None:
    headers = credentials("account", world)
    status, page = kv(api, "recall", {"limit": 10**9}, headers)
    assert status == 200 and page == {"keys": [], "count": 0}


@pytest.mark.parametrize(
    "body",
    [
        {"cursor": "not a cursor!"},
        {"cursor": ""},
        {"cursor": base64.urlsafe_b64encode(b"mem_123").decode()},
        {"cursor": base64.urlsafe_b64encode(b"k:").decode()},
        {"cursor": base64.urlsafe_b64encode(b"k:" + b"x" * 513).decode()},
        {"cursor": 5},
        {"limit": 0},
        {"limit": "10"},
        {"limit": True},
        {"key": "a", "cursor": base64.urlsafe_b64encode(b"k:a").decode().rstrip("=")},
        {"key": "a", "limit": 2},
    ],
)
def test_a_bad_cursor_or_limit_is_invalid(api: Api, body: dict[str, Any]) -> None:
    assert refused(kv(api, "recall", body, {})) == (400, "invalid_request")


def test_a_cursor_continues_after_a_forgotten_key(api: Api) -> None:
    for key in ["a", "b", "c"]:
        kv(api, "remember", {"key": key, "value": 1}, {})
    first = kv(api, "recall", {"limit": 2}, {})[1]
    kv(api, "forget", {"key": "b"}, {})
    rest = kv(api, "recall", {"limit": 2, "cursor": first["next"]}, {})[1]
    assert (first["keys"], rest) == (["a", "b"], {"keys": ["c"], "count": 2})


# MCP


def mcp(api: Api, payload: Any, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    return api.call("POST", "/mcp", body=payload, headers=headers)


def call(number: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params}


def test_mcp_remember_past_the_quota_is_a_tool_error(api: Api, dynamodb: Any) -> None:
    for number in range(3):
        mcp(api, call(number, "remember", {"key": f"k{number}", "value": 1}))
    status, answer = mcp(api, call(9, "remember", {"key": "k9", "value": 1}))
    result = answer["result"]
    assert status == 200 and result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "kv_quota_exceeded"
    assert stored_keys(dynamodb, "anon#") == ["k0", "k1", "k2"]


def test_mcp_recall_pages_with_the_cursor(api: Api) -> None:
    for key in ["a", "b", "c"]:
        mcp(api, call(1, "remember", {"key": key, "value": 1}))
    first = mcp(api, call(2, "recall", {"limit": 2}))[1]["result"]["structuredContent"]
    assert first["keys"] == ["a", "b"] and first["count"] == 3 and first["next"]
    second = mcp(api, call(3, "recall", {"limit": 2, "cursor": first["next"]}))[1]
    assert second["result"]["structuredContent"] == {"keys": ["c"], "count": 3}
    bad = mcp(api, call(4, "recall", {"cursor": "nope!"}))[1]["result"]
    assert bad["isError"] is True
    assert bad["structuredContent"]["error"]["code"] == "invalid_request"


def test_a_batch_over_the_maximum_is_refused_whole(api: Api, dynamodb: Any) -> None:
    batch = [
        call(number, "remember", {"key": f"k{number}", "value": 1})
        for number in range(MCP_BATCH_MAX_MESSAGES + 1)
    ]
    status, answer = mcp(api, batch)
    assert status == 400 and answer["id"] is None
    assert answer["error"]["code"] == -32600  # JSON-RPC invalid request
    assert str(MCP_BATCH_MAX_MESSAGES) in answer["error"]["message"]
    assert stored_keys(dynamodb, "anon#") == []


def test_every_call_of_a_batch_counts_against_the_quota(api: Api, dynamodb: Any) -> None:
    batch = [
        call(number, "remember", {"key": f"k{number}", "value": 1})
        for number in range(MCP_BATCH_MAX_MESSAGES)
    ]
    status, answers = mcp(api, batch)
    assert status == 200 and len(answers) == MCP_BATCH_MAX_MESSAGES
    codes = [
        answer["result"]["structuredContent"].get("error", {}).get("code") for answer in answers
    ]
    assert codes == [None] * 3 + ["kv_quota_exceeded"] * (MCP_BATCH_MAX_MESSAGES - 3)
    assert stored_keys(dynamodb, "anon#") == ["k0", "k1", "k2"]
