"""The key-value meta-tools through the HTTP API (docs/reference.md#10-key-value,
docs/issues.md#issue-5): shapes, exact values, scopes, the anonymous TTL, sizes and S3, secrets, bad
input."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from chalice.test import Client

from chalicelib import wiring
from chalicelib.ids import FixedClock
from chalicelib.limits import KV_ANON_VALUE_MAX_BYTES, VALUE_MAX_BYTES
from chalicelib.storage.kv import INLINE_MAX_BYTES
from tests.helpers import BUCKET, START, TABLE, Actor, World


class Kv:
    """Calls ``/api/v1/kv/*`` as API Gateway would deliver them, with a chosen client IP."""

    def __init__(self, client: Client) -> None:
        self._http = client.http

    def call(
        self,
        action: str,
        body: Any = None,
        *,
        actor: Actor | None = None,
        api_key: str | None = None,
        ip: str = "198.51.100.7",
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
        method: str = "POST",
        path: str | None = None,
    ) -> tuple[int, Any]:
        """Return (status, JSON body) of one request."""
        sent = {"Content-Type": "application/json", **(headers or {})}
        if actor is not None:
            sent["Authorization"] = f"Bearer {actor.token}"
        if api_key is not None:
            sent["X-Api-Key"] = api_key
        # What API Gateway puts in requestContext.identity.sourceIp.
        self._http._local_gateway.event_converter.LOCAL_SOURCE_IP = ip
        payload = raw if raw is not None else json.dumps(body).encode() if body is not None else b""
        response = self._http.request(
            method, path or f"/api/v1/kv/{action}", headers=sent, body=payload
        )
        text = response.body.decode("utf-8") if response.body else ""
        return response.status_code, (json.loads(text) if text else None)

    def ok(self, action: str, body: Any = None, **options: Any) -> dict[str, Any]:
        status, answer = self.call(action, body, **options)
        assert status == 200, answer
        assert isinstance(answer, dict)
        return answer

    def error(self, action: str, body: Any = None, **options: Any) -> tuple[int, str]:
        status, answer = self.call(action, body, **options)
        assert isinstance(answer, dict) and set(answer) == {"error"}, answer
        assert set(answer["error"]) == {"code", "message"} and answer["error"]["message"]
        return status, answer["error"]["code"]


@pytest.fixture
def kv(wired: wiring.Services) -> Iterator[Kv]:
    from app import app

    with Client(app) as client:
        yield Kv(client)


def recall_value(kv: Kv, key: str, **options: Any) -> str | None:
    answer = kv.ok("recall", {"key": key}, **options)
    assert set(answer) == {"key", "value", "found"} and answer["key"] == key
    assert answer["found"] is (answer["value"] is not None)
    return answer["value"]


# Shapes and values


def test_string_and_object_values_round_trip_exactly(kv: Kv, world: World) -> None:
    text = 'a "quoted" line\nand ünïcode 🎉 \\ / \u2028'
    assert kv.ok("remember", {"key": "s", "value": text}, actor=world.agent) == {
        "stored": True,
        "key": "s",
        "ttl": "permanent",
    }
    kv.ok("remember", {"key": "o", "value": {"a": 1}}, actor=world.agent)
    target = {"ticker": "AAPL", "cik": "0000320193", "since": "2026-08-10", "n": [1, 2.5]}
    kv.ok("remember", {"key": "t", "value": target}, actor=world.agent)

    assert recall_value(kv, "s", actor=world.agent) == text
    assert recall_value(kv, "o", actor=world.agent) == '{"a":1}'
    assert recall_value(kv, "t", actor=world.agent) == json.dumps(
        target, separators=(",", ":"), ensure_ascii=False
    )


def test_numbers_are_kept_digit_for_digit(kv: Kv) -> None:
    raw = (
        b'{"key": "n", "value": {"big": 12345678901234567890123, "f": 1.10, "e": 1e400, "x": 0.1}}'
    )
    kv.ok("remember", raw=raw)
    assert recall_value(kv, "n") == '{"big":12345678901234567890123,"f":1.1,"e":1e400,"x":0.1}'


def test_integers_longer_than_python_converts_are_kept_digit_for_digit(kv: Kv) -> None:
    huge = "9" + "0123456789" * 500  # 5,001 digits: Python's int() refuses over 4,300
    kv.ok("remember", raw=b'{"key": "h", "value": ' + huge.encode() + b"}")
    assert recall_value(kv, "h") == huge
    nested = f'{{"key": "g", "value": {{"n": -{huge}, "m": [1, {huge}]}}}}'
    kv.ok("remember", raw=nested.encode())
    assert recall_value(kv, "g") == f'{{"n":-{huge},"m":[1,{huge}]}}'


@pytest.mark.parametrize(
    ("value", "stored"),
    [(None, "null"), ("", ""), (0, "0"), (True, "true"), ([], "[]"), ("1.10", "1.10")],
)
def test_any_json_value_is_stored_as_a_string(kv: Kv, value: Any, stored: str) -> None:
    kv.ok("remember", {"key": "k", "value": value})
    assert recall_value(kv, "k") == stored


def test_missing_key_is_found_false_and_forget_reports_deleted(kv: Kv) -> None:
    assert kv.ok("recall", {"key": "nope"}) == {"key": "nope", "value": None, "found": False}
    assert kv.ok("forget", {"key": "nope"}) == {"deleted": False, "key": "nope"}
    kv.ok("remember", {"key": "k", "value": "v"})
    assert kv.ok("forget", {"key": "k"}) == {"deleted": True, "key": "k"}
    assert recall_value(kv, "k") is None
    assert kv.ok("forget", {"key": "k"}) == {"deleted": False, "key": "k"}


def test_recall_without_a_key_lists_keys_with_the_count(kv: Kv, world: World) -> None:
    assert kv.ok("recall", {}, actor=world.agent) == {"keys": [], "count": 0}
    for key in ["b", "a", "ключ", "c"]:
        kv.ok("remember", {"key": key, "value": 1}, actor=world.agent)
    kv.ok("forget", {"key": "c"}, actor=world.agent)
    assert kv.ok("recall", {}, actor=world.agent) == {
        "keys": ["a", "b", "ключ"],
        "count": 3,
    }
    assert kv.ok("recall", raw=b"", actor=world.agent)["count"] == 3
    assert kv.ok("recall", {"key": None}, actor=world.agent)["count"] == 3


def test_listing_follows_every_dynamodb_page(kv: Kv, world: World, dynamodb: Any) -> None:
    # Six values just under the inline limit make more than DynamoDB's 1 MB page.
    value = "x" * (INLINE_MAX_BYTES - 100)
    keys = [f"page-{n}" for n in range(6)]
    for key in keys:
        kv.ok("remember", {"key": key, "value": value}, actor=world.agent)
    first_page = dynamodb.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": f"KV#account#{world.workspace_id}"}},
    )
    assert "LastEvaluatedKey" in first_page and len(first_page["Items"]) < len(keys)
    assert kv.ok("recall", {}, actor=world.agent) == {"keys": keys, "count": 6}


def test_overwrite_replaces_the_value(kv: Kv) -> None:
    kv.ok("remember", {"key": "k", "value": "one"})
    kv.ok("remember", {"key": "k", "value": {"two": 2}})
    assert recall_value(kv, "k") == '{"two":2}'
    assert kv.ok("recall", {})["count"] == 1


# Scopes


def test_agents_and_persons_of_a_workspace_share_one_scope(kv: Kv, world: World) -> None:
    kv.ok("remember", {"key": "report_data", "value": {"m": 1}}, actor=world.agent)
    assert recall_value(kv, "report_data", actor=world.other_agent) == '{"m":1}'
    assert recall_value(kv, "report_data", actor=world.person) == '{"m":1}'
    assert recall_value(kv, "report_data", actor=world.outsider_agent) is None
    assert recall_value(kv, "report_data", actor=world.outsider) is None
    assert recall_value(kv, "report_data") is None
    assert recall_value(kv, "report_data", api_key=world.workspace_id) is None


def test_byo_keys_that_share_a_prefix_never_see_each_other(kv: Kv) -> None:
    kv.ok("remember", {"key": "k", "value": "one"}, api_key="k1")
    kv.ok("remember", {"key": "k", "value": "twelve"}, api_key="k12")
    assert recall_value(kv, "k", api_key="k1") == "one"
    assert recall_value(kv, "k", api_key="k12") == "twelve"
    assert kv.ok("remember", {"key": "x", "value": 1}, api_key="k1")["ttl"] == "permanent"
    assert kv.ok("recall", {}, api_key="k12") == {"keys": ["k"], "count": 1}
    assert recall_value(kv, "k") is None


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("203.0.113.1", "203.0.113.10"),
        ("2001:db8::1", "2001:db8:0:1::1"),  # different /64s
        ("2001:db8:0:1::1", "2001:db8:1:1::1"),
        ("10.0.0.1", "::ffff:10.0.0.2"),
    ],
)
def test_anonymous_callers_by_ip_never_see_each_other(kv: Kv, first: str, second: str) -> None:
    assert kv.ok("remember", {"key": "k", "value": "mine"}, ip=first)["ttl"] == "24h"
    assert recall_value(kv, "k", ip=first) == "mine"
    assert recall_value(kv, "k", ip=second) is None
    assert kv.ok("recall", {}, ip=second) == {"keys": [], "count": 0}


def test_the_addresses_of_one_ipv6_64_share_one_anonymous_scope(kv: Kv) -> None:
    kv.ok("remember", {"key": "k", "value": "one /64"}, ip="2001:db8::1")
    assert recall_value(kv, "k", ip="2001:db8::12") == "one /64"
    assert recall_value(kv, "k", ip="2001:db8::ffff:ffff:ffff:ffff") == "one /64"


def test_one_ipv6_address_in_any_spelling_is_one_scope(kv: Kv) -> None:
    kv.ok("remember", {"key": "k", "value": "v6"}, ip="2001:db8:0:0:0:0:0:1")
    assert recall_value(kv, "k", ip="2001:DB8::1") == "v6"
    kv.ok("remember", {"key": "k", "value": "v4"}, ip="192.0.2.5")
    assert recall_value(kv, "k", ip="::ffff:192.0.2.5") == "v4"


def test_spoofed_forwarding_headers_do_not_change_the_anonymous_scope(kv: Kv) -> None:
    kv.ok("remember", {"key": "k", "value": "victim"}, ip="192.0.2.1")
    spoofed = {
        "X-Forwarded-For": "192.0.2.1",
        "X-Real-IP": "192.0.2.1",
        "Forwarded": "for=192.0.2.1",
        "CF-Connecting-IP": "192.0.2.1",
        "True-Client-IP": "192.0.2.1",
    }
    assert recall_value(kv, "k", ip="198.51.100.66", headers=spoofed) is None
    assert kv.ok("forget", {"key": "k"}, ip="198.51.100.66", headers=spoofed)["deleted"] is False
    assert recall_value(kv, "k", ip="192.0.2.1", headers={"X-Forwarded-For": "1.1.1.1"}) == (
        "victim"
    )


def test_a_bearer_token_wins_over_an_api_key(kv: Kv, world: World) -> None:
    kv.ok("remember", {"key": "k", "value": "account"}, actor=world.agent, api_key="mine")
    assert recall_value(kv, "k", actor=world.person) == "account"
    assert recall_value(kv, "k", api_key="mine") is None


def test_an_invalid_bearer_token_is_401_not_anonymous(kv: Kv) -> None:
    for authorization in ["Bearer pwk_nope", "Basic dXNlcjpwYXNz", "Bearer", ""]:
        headers = {"Authorization": authorization}
        assert kv.error("remember", {"key": "k", "value": 1}, headers=headers) == (
            401,
            "unauthorized",
        )
    assert kv.ok("recall", {}) == {"keys": [], "count": 0}


def test_an_empty_api_key_is_invalid(kv: Kv) -> None:
    assert kv.error("recall", {}, headers={"X-Api-Key": "  "}) == (400, "invalid_request")


# Anonymous TTL


def test_anonymous_entries_live_24_hours_after_their_last_write(kv: Kv, clock: FixedClock) -> None:
    kv.ok("remember", {"key": "k", "value": "v"})
    clock.set(START + timedelta(hours=23, minutes=59, seconds=59))
    assert recall_value(kv, "k") == "v"
    assert kv.ok("recall", {}) == {"keys": ["k"], "count": 1}
    clock.set(START + timedelta(hours=24, seconds=1))
    assert recall_value(kv, "k") is None
    assert kv.ok("recall", {}) == {"keys": [], "count": 0}
    assert kv.ok("forget", {"key": "k"})["deleted"] is False


def test_a_new_write_restarts_the_24_hours(kv: Kv, clock: FixedClock) -> None:
    kv.ok("remember", {"key": "k", "value": "v1"})
    clock.set(START + timedelta(hours=20))
    kv.ok("remember", {"key": "k", "value": "v2"})
    clock.set(START + timedelta(hours=43, minutes=59))
    assert recall_value(kv, "k") == "v2"
    clock.set(START + timedelta(hours=44, seconds=1))
    assert recall_value(kv, "k") is None


def test_anonymous_items_carry_the_ttl_attribute_and_others_do_not(
    kv: Kv, world: World, dynamodb: Any
) -> None:
    kv.ok("remember", {"key": "anon", "value": "v"})
    kv.ok("remember", {"key": "byok", "value": "v"}, api_key="key")
    kv.ok("remember", {"key": "acct", "value": "v"}, actor=world.agent)
    items = dynamodb.scan(TableName=TABLE)["Items"]
    ttl = {
        item["sk"]["S"]: item.get("expiresAtEpoch") for item in items if "KV#" in item["pk"]["S"]
    }
    assert ttl["KEY#anon"] == {"N": str(int((START + timedelta(hours=24)).timestamp()))}
    assert ttl["KEY#byok"] is None and ttl["KEY#acct"] is None
    described = dynamodb.describe_time_to_live(TableName=TABLE)["TimeToLiveDescription"]
    assert described["AttributeName"] == "expiresAtEpoch"


def test_permanent_entries_do_not_expire(kv: Kv, world: World, clock: FixedClock) -> None:
    kv.ok("remember", {"key": "k", "value": "v"}, api_key="key")
    kv.ok("remember", {"key": "k", "value": "w"}, actor=world.agent)
    clock.set(START + timedelta(days=400))
    assert recall_value(kv, "k", api_key="key") == "v"
    assert recall_value(kv, "k", actor=world.person) == "w"


# Keys


def test_keys_are_1_to_512_bytes_of_utf8(kv: Kv) -> None:
    assert kv.ok("remember", {"key": "é" * 256, "value": 1})["key"] == "é" * 256
    assert kv.ok("remember", {"key": "k" * 512, "value": 1})["stored"] is True
    for bad in ["", "k" * 513, "é" * 256 + "k", "🎉" * 129]:
        for action, body in [
            ("remember", {"key": bad, "value": 1}),
            ("recall", {"key": bad}),
            ("forget", {"key": bad}),
        ]:
            assert kv.error(action, body) == (400, "invalid_request"), (action, len(bad))
    assert kv.ok("recall", {})["count"] == 2


# Sizes and S3


def objects(s3: Any) -> list[str]:
    return [item["Key"] for item in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])]


def test_large_values_go_to_s3_and_come_back(kv: Kv, world: World, s3: Any) -> None:
    big = "ü" * (INLINE_MAX_BYTES // 2 + 1)  # just over the inline limit in UTF-8 bytes
    kv.ok("remember", {"key": "big", "value": big}, actor=world.agent)
    assert len(objects(s3)) == 1 and objects(s3)[0].startswith("kv/keep/")
    assert recall_value(kv, "big", actor=world.agent) == big
    kv.ok("remember", {"key": "big", "value": "small now"}, actor=world.agent)
    assert objects(s3) == []  # the replaced value's object is gone
    assert recall_value(kv, "big", actor=world.agent) == "small now"


def test_a_5_mb_value_round_trips(kv: Kv, s3: Any) -> None:
    value = {"blob": "0123456789abcdef" * (5 * 1024 * 1024 // 16)}
    kv.ok("remember", {"key": "five", "value": value}, api_key="mine")
    assert objects(s3)[0].startswith("kv/keep/")
    stored = recall_value(kv, "five", api_key="mine")
    assert stored is not None and len(stored) > 5 * 1024 * 1024
    assert json.loads(stored) == value
    assert kv.ok("forget", {"key": "five"}, api_key="mine")["deleted"] is True
    assert objects(s3) == []


def test_values_over_the_maximum_are_413_and_change_nothing(kv: Kv, s3: Any) -> None:
    kv.ok("remember", {"key": "k", "value": "kept"}, api_key="mine")
    too_big = "x" * (VALUE_MAX_BYTES - 1)  # two quotes make it one byte too many
    refused = kv.error("remember", {"key": "k", "value": too_big}, api_key="mine")
    assert refused == (413, "payload_too_large")
    # Escapes count: 2 bytes each in the answer that would carry the value.
    escaped = "\n" * (VALUE_MAX_BYTES // 2)
    refused = kv.error("remember", {"key": "k", "value": escaped}, api_key="mine")
    assert refused == (413, "payload_too_large")
    assert recall_value(kv, "k", api_key="mine") == "kept"
    assert objects(s3) == []


def test_anonymous_values_stop_at_256_kib_and_stay_in_the_table(kv: Kv, s3: Any) -> None:
    largest = "x" * (KV_ANON_VALUE_MAX_BYTES - 2)  # with its quotes, exactly the cap
    kv.ok("remember", {"key": "k", "value": largest})
    assert kv.error("remember", {"key": "k", "value": largest + "x"}) == (
        413,
        "payload_too_large",
    )
    assert recall_value(kv, "k") == largest
    assert objects(s3) == []  # under the inline limit: anonymous values never reach S3
    kv.ok("remember", {"key": "k", "value": largest + "x"}, api_key="mine")


# Secrets


@pytest.mark.parametrize(
    "value",
    [
        "AKIAIOSFODNN7EXAMPLE",
        {"db": {"password": "Tr0ub4dor&3xx"}},
        "token: ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
    ],
)
def test_values_that_look_like_secrets_are_refused(kv: Kv, value: Any) -> None:
    assert kv.error("remember", {"key": "k", "value": value}) == (400, "secret_in_memory")
    assert recall_value(kv, "k") is None


def test_ordinary_values_are_not_mistaken_for_secrets(kv: Kv) -> None:
    for value in [
        {"ticker": "AAPL", "cik": "0000320193", "since": "2026-08-10"},
        "draft: Dear ACME team, the password policy changes next week.",
        {"value": 383300000000, "fresh_until": "2026-05-15T00:00:00Z"},
        "mem_01JD0000000000000000000000 and 3f786850e387550fdab836ed7e6dc881de23001b",
    ]:
        kv.ok("remember", {"key": "k", "value": value})


# Bad input


@pytest.mark.parametrize(
    "raw",
    [
        b'{"key": "k", "value": NaN}',
        b'{"key": "k", "value": Infinity}',
        b'{"key": "k", "value": [-Infinity]}',
        b'{"key": "k", "value": "\\ud83d"}',
        b'{"key": "k", "value": 1',
        b'{"key": "k", "value": 1, "value": 2}',
        b'{"key": "k"}',
        b'{"value": 1}',
        b'{"key": 5, "value": 1}',
        b'{"key": "k", "value": 1, "ttl": "24h"}',
        b'["k", 1]',
        b"\xff\xfe",
    ],
)
def test_bad_remember_bodies_are_invalid_and_change_nothing(kv: Kv, raw: bytes) -> None:
    kv.ok("remember", {"key": "k", "value": "before"})
    assert kv.error("remember", raw=raw) == (400, "invalid_request")
    assert recall_value(kv, "k") == "before"


def test_bad_recall_and_forget_bodies_are_invalid(kv: Kv) -> None:
    for action, raw in [
        ("recall", b'{"key": 1}'),
        ("recall", b'{"keys": "k"}'),
        ("forget", b"{}"),
        ("forget", b'{"key": null}'),
        ("forget", b'{"key": "k", "extra": 1}'),
    ]:
        assert kv.error(action, raw=raw) == (400, "invalid_request"), raw


def test_wrong_methods_and_query_strings(kv: Kv) -> None:
    status, answer = kv.call("remember", method="GET")
    assert status == 405 and answer["error"]["code"] == "method_not_allowed"
    assert kv.error("recall", {}, path="/api/v1/kv/recall?key=k") == (400, "invalid_request")


def test_deep_nesting_is_invalid_not_a_crash(kv: Kv) -> None:
    raw = b'{"key": "k", "value": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    assert kv.error("remember", raw=raw) == (400, "invalid_request")


# Revisions: compare-and-set (docs/reference.md#kv-revisions)


def test_a_write_from_a_stale_read_is_refused_and_changes_nothing(kv: Kv, world: World) -> None:
    def read(actor: Actor) -> dict[str, Any]:
        return kv.ok("recall", {"key": "notes", "withRevision": True}, actor=actor)

    assert read(world.agent) == {"key": "notes", "value": None, "found": False, "revision": 0}
    created = kv.ok("remember", {"key": "notes", "value": "a", "ifRevision": 0}, actor=world.agent)
    assert created == {"stored": True, "key": "notes", "ttl": "permanent", "revision": 1}
    seen_by_agent = read(world.agent)["revision"]
    seen_by_person = read(world.person)["revision"]  # one workspace: one space
    assert seen_by_agent == seen_by_person == 1
    agent_wrote = kv.ok(
        "remember", {"key": "notes", "value": "ab", "ifRevision": seen_by_agent}, actor=world.agent
    )
    assert agent_wrote["revision"] == 2
    refused = kv.error(
        "remember",
        {"key": "notes", "value": "ac", "ifRevision": seen_by_person},
        actor=world.person,
    )
    assert refused == (412, "precondition_failed")
    assert kv.error(
        "remember", {"key": "notes", "value": "x", "ifRevision": 0}, actor=world.agent
    ) == (
        412,
        "precondition_failed",
    )
    assert kv.error("forget", {"key": "notes", "ifRevision": 1}, actor=world.person) == (
        412,
        "precondition_failed",
    )
    assert read(world.person) == {"key": "notes", "value": "ab", "found": True, "revision": 2}
    assert kv.ok("forget", {"key": "notes", "ifRevision": 2}, actor=world.person) == {
        "deleted": True,
        "key": "notes",
    }
    # Without withRevision or ifRevision the answers keep their shapes.
    kv.ok("remember", {"key": "plain", "value": "v"}, actor=world.agent)
    assert recall_value(kv, "plain", actor=world.agent) == "v"


@pytest.mark.parametrize(
    "body",
    [
        {"key": "k", "value": "v", "ifRevision": -1},
        {"key": "k", "value": "v", "ifRevision": "1"},
        {"key": "k", "value": "v", "ifRevision": 1.5},
        {"withRevision": True},
        {"key": "k", "withRevision": "yes"},
    ],
)
def test_bad_revision_fields_are_invalid_requests(
    kv: Kv, world: World, body: dict[str, Any]
) -> None:
    action = "remember" if "value" in body else "recall"
    assert kv.error(action, body, actor=world.agent) == (400, "invalid_request")
    assert recall_value(kv, "k", actor=world.agent) is None
