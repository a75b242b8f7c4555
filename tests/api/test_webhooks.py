"""Webhook endpoints (docs/reference.md#webhooks, docs/issues.md#issue-47 items 2 and 3):
persons register, list, test, resume and remove them; deliveries reach a real loopback
receiver (with the local setting) signed, in order, after a failure retried with backoff
and paused after 24 hours of failures; URLs that are not HTTPS or resolve to non-public
addresses are refused at registration and again at delivery."""

from __future__ import annotations

import json
import socket
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import wiring
from chalicelib.ids import FixedClock
from chalicelib.services.webhooks.signing import signature
from chalicelib.storage.events import SETTLE
from tests.helpers import TABLE, Api, Receiver, World, error_code, save


def register(api: Api, world: World, url: str, **fields: Any) -> dict[str, Any]:
    status, body = api.call("POST", "/webhooks", world.person, {"url": url, **fields})
    assert status == 201, body
    return dict(body)


def settle(clock: FixedClock, more: timedelta = timedelta(0)) -> None:
    clock.set(clock.now() + SETTLE + timedelta(seconds=1) + more)


def verified(request: dict[str, Any], secret: str) -> bool:
    headers = {name.lower(): value for name, value in request["headers"].items()}
    expected = signature(
        secret, headers["webhook-id"], int(headers["webhook-timestamp"]), request["body"]
    )
    return bool(headers["webhook-signature"] == expected)


def test_a_person_registers_sees_the_secret_once_and_removes_an_endpoint(
    api: Api, world: World, local: Any, receiver: Receiver
) -> None:
    created = register(api, world, receiver.url, description="search index")
    assert created["id"].startswith("whk_") and created["secret"].startswith("whsec_")
    assert created["state"] == "active" and created["eventTypes"] == ["*"]
    status, listed = api.call("GET", "/webhooks", world.person)
    assert status == 200 and [item["id"] for item in listed["data"]] == [created["id"]]
    assert listed["data"][0]["secret"] is None
    assert created["secret"] not in json.dumps(listed)
    # agents and other workspaces see nothing and change nothing
    assert error_code(api.call("GET", "/webhooks", world.agent)) == (403, "forbidden")
    assert error_code(api.call("POST", "/webhooks", world.agent, {"url": receiver.url})) == (
        403,
        "forbidden",
    )
    assert api.call("GET", "/webhooks", world.outsider)[1]["data"] == []
    path = f"/webhooks/{created['id']}"
    assert error_code(api.call("DELETE", path, world.outsider, {})) == (404, "webhook_not_found")
    status, removed = api.call("DELETE", path, world.person, {})
    assert status == 200 and removed["id"] == created["id"]
    assert api.call("GET", "/webhooks", world.person)[1]["data"] == []
    assert error_code(api.call("DELETE", path, world.person, {})) == (404, "webhook_not_found")


def test_event_types_are_checked_and_the_endpoints_of_a_workspace_are_limited(
    api: Api, world: World, local: Any, receiver: Receiver
) -> None:
    bad = api.call(
        "POST", "/webhooks", world.person, {"url": receiver.url, "eventTypes": ["memory.saved"]}
    )
    assert error_code(bad) == (400, "invalid_request")
    for _ in range(10):
        register(api, world, receiver.url, eventTypes=["pinework.memory.saved"])
    refused = api.call("POST", "/webhooks", world.person, {"url": receiver.url})
    assert error_code(refused) == (409, "webhook_limit_reached")
    first = api.call("GET", "/webhooks", world.person)[1]["data"][0]["id"]
    assert api.call("DELETE", f"/webhooks/{first}", world.person, {})[0] == 200
    register(api, world, receiver.url)


@pytest.mark.parametrize(
    "url",
    [
        "http://hooks.example.com/in",
        "ftp://hooks.example.com/in",
        "https://10.1.2.3/in",
        "https://192.168.0.10/in",
        "https://172.16.5.4/in",
        "https://169.254.169.254/latest/meta-data",
        "https://[fd00:ec2::254]/",
        "https://[::ffff:10.0.0.1]/",
        "https://[::ffff:127.0.0.1]/",
        "https://127.0.0.1/in",
        "https://[::1]/in",
        "https://0.0.0.0/in",
        "https://100.64.0.1/in",
        "https://224.0.0.1/in",
        "https://user:pass@hooks.example.com/in",
    ],
)
def test_unsafe_urls_are_refused_at_registration(api: Api, world: World, url: str) -> None:
    answer = api.call("POST", "/webhooks", world.person, {"url": url})
    assert error_code(answer) == (400, "webhook_url_refused"), url
    assert api.call("GET", "/webhooks", world.person)[1]["data"] == []


def test_the_local_setting_allows_loopback_only(api: Api, world: World, local: Any) -> None:
    for url in ("http://10.0.0.8/in", "https://169.254.169.254/", "http://[::ffff:10.0.0.1]/"):
        answer = api.call("POST", "/webhooks", world.person, {"url": url})
        assert error_code(answer) == (400, "webhook_url_refused"), url
    assert api.call("POST", "/webhooks", world.person, {"url": "http://127.0.0.1:9/x"})[0] == 201


def test_changes_are_delivered_signed_in_order_and_filtered_by_type(
    api: Api, world: World, local: Any, receiver: Receiver, clock: FixedClock
) -> None:
    every = register(api, world, receiver.url)
    saved_only = register(api, world, receiver.url, eventTypes=["pinework.memory.archived"])
    first = save(api, world, "The deploy window is Tuesday 10:00")
    second = save(api, world, "Staging uses the eu-west-1 region")
    path = f"/memories/{first['id']}/archive"
    assert api.call("POST", path, world.agent, {"reason": "moved"})[0] == 200
    settle(clock)
    counts = local.webhook_delivery.run()
    assert counts["delivered"] == 4 and counts["failed"] == 0
    events = receiver.events()
    full = [event for event in events if event["type"] != "pinework.memory.archived"]
    assert [(e["type"], e["subject"]) for e in full] == [
        ("pinework.memory.saved", first["id"]),
        ("pinework.memory.saved", second["id"]),
    ]
    archived = [event for event in events if event["type"] == "pinework.memory.archived"]
    assert len(archived) == 2  # one for each endpoint
    secrets = (every["secret"], saved_only["secret"])
    assert all(any(verified(r, s) for s in secrets) for r in receiver.received)
    assert "Tuesday" not in json.dumps(events)
    # nothing is sent twice
    settle(clock)
    assert local.webhook_delivery.run()["delivered"] == 0 and len(receiver.received) == 4
    status, deliveries = api.call("GET", f"/webhooks/{every['id']}/deliveries", world.person)
    assert status == 200 and len(deliveries["data"]) == 3
    assert all(item["ok"] and item["statusCode"] == 204 for item in deliveries["data"])


def test_a_failing_receiver_is_retried_with_backoff_then_recovers_in_order(
    api: Api, world: World, local: Any, receiver: Receiver, clock: FixedClock
) -> None:
    created = register(api, world, receiver.url)
    ids = [save(api, world, f"Fact number {n} about the build")["id"] for n in range(3)]
    receiver.failures = 2
    settle(clock)
    assert local.webhook_delivery.run()["failed"] == 1
    shown = api.call("GET", "/webhooks", world.person)[1]["data"][0]
    assert shown["failedAttempts"] == 1 and shown["lastError"].startswith("HTTP 500")
    # not before the backoff
    assert local.webhook_delivery.run() == {
        "endpoints": 1,
        "delivered": 0,
        "failed": 0,
        "paused": 0,
    }
    clock.set(clock.now() + timedelta(seconds=31))
    assert local.webhook_delivery.run()["failed"] == 1
    clock.set(clock.now() + timedelta(seconds=61))
    assert local.webhook_delivery.run()["delivered"] == 3
    subjects = [event["subject"] for event in receiver.events()]
    assert subjects == [ids[0], ids[0], ids[0], ids[1], ids[2]]
    assert len({r["headers"]["webhook-id"] for r in receiver.received[:3]}) == 1  # same id
    shown = api.call("GET", "/webhooks", world.person)[1]["data"][0]
    assert shown["failedAttempts"] == 0 and shown["failingSince"] is None
    deliveries = api.call("GET", f"/webhooks/{created['id']}/deliveries", world.person)[1]
    attempts = [(item["attempt"], item["ok"]) for item in reversed(deliveries["data"])]
    assert attempts == [(1, False), (2, False), (3, True), (1, True), (1, True)]


def test_an_endpoint_failing_for_a_day_is_paused_until_a_person_resumes_it(
    api: Api, world: World, local: Any, receiver: Receiver, clock: FixedClock
) -> None:
    created = register(api, world, receiver.url)
    memory = save(api, world, "The release train leaves at noon")
    receiver.failures = 10_000
    settle(clock)
    paused = 0
    for _ in range(40):
        paused += local.webhook_delivery.run()["paused"]
        clock.set(clock.now() + timedelta(hours=1, seconds=1))
    assert paused == 1
    shown = api.call("GET", "/webhooks", world.person)[1]["data"][0]
    assert shown["state"] == "paused" and shown["pausedAt"] is not None
    tries = len(receiver.received)
    assert tries >= 24  # kept trying for at least 24 hours
    assert local.webhook_delivery.run()["failed"] == 0 and len(receiver.received) == tries
    receiver.failures = 0
    status, resumed = api.call("POST", f"/webhooks/{created['id']}/resume", world.person, {})
    assert status == 200 and resumed["state"] == "active" and resumed["failedAttempts"] == 0
    assert local.webhook_delivery.run()["delivered"] == 1
    assert receiver.events()[-1]["subject"] == memory["id"]


def test_a_test_ping_is_signed_and_recorded(
    api: Api, world: World, local: Any, receiver: Receiver
) -> None:
    created = register(api, world, receiver.url)
    status, attempt = api.call("POST", f"/webhooks/{created['id']}/test", world.person, {})
    assert status == 200 and attempt["ok"] and attempt["statusCode"] == 204
    (request,) = receiver.received
    assert verified(request, created["secret"])
    assert json.loads(request["body"])["type"] == "pinework.webhook.ping"
    shown = api.call("GET", f"/webhooks/{created['id']}/deliveries", world.person)[1]
    assert [item["eventType"] for item in shown["data"]] == ["pinework.webhook.ping"]


def fake_dns(monkeypatch: pytest.MonkeyPatch, names: dict[str, str]) -> list[str]:
    """Resolve the ``names`` to the given addresses (others as usual); the names asked."""
    asked: list[str] = []
    real = socket.getaddrinfo

    def lookup(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host in names:
            asked.append(host)
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (names[host], port or 0))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    return asked


def test_a_name_that_resolves_to_loopback_at_delivery_is_refused(
    api: Api,
    world: World,
    wired: wiring.Services,
    receiver: Receiver,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    names = {"hooks.example.com": "93.184.216.34"}
    asked = fake_dns(monkeypatch, names)
    created = register(api, world, f"https://hooks.example.com:{receiver.port}/in")
    save(api, world, "The on-call rota changes on Monday")
    names["hooks.example.com"] = "127.0.0.1"  # the DNS answer changes after registration
    settle(clock)
    assert wired.webhook_delivery.run()["failed"] == 1
    assert receiver.received == [] and asked == ["hooks.example.com"] * 2
    (delivery,) = api.call("GET", f"/webhooks/{created['id']}/deliveries", world.person)[1]["data"]
    assert delivery["statusCode"] is None and "loopback" in delivery["error"]


def test_a_delivery_connects_to_the_checked_address_without_a_second_lookup(
    api: Api,
    world: World,
    local: Any,
    receiver: Receiver,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked = fake_dns(monkeypatch, {"receiver.test": "127.0.0.1"})
    register(api, world, f"http://receiver.test:{receiver.port}/in")
    save(api, world, "Builds run on the large runners")
    settle(clock)
    assert local.webhook_delivery.run()["delivered"] == 1
    (request,) = receiver.received
    headers = {name.lower(): value for name, value in request["headers"].items()}
    assert headers["host"] == f"receiver.test:{receiver.port}"
    assert asked == ["receiver.test", "receiver.test"]  # registration, delivery: once each


def test_erasing_the_workspace_deletes_its_endpoints_and_deliveries(
    api: Api, world: World, local: Any, receiver: Receiver, dynamodb: Any
) -> None:
    created = register(api, world, receiver.url)
    assert api.call("POST", f"/webhooks/{created['id']}/test", world.person, {})[0] == 200
    local.admin.erase("workspace", world.workspace_id, by="ticket-9")
    left = [
        item
        for page in dynamodb.get_paginator("scan").paginate(TableName=TABLE)
        for item in page["Items"]
        if "WEBHOOK" in item["pk"]["S"] or created["id"] in item["sk"]["S"]
    ]
    assert left == []


def test_an_export_never_carries_an_endpoint_or_its_secret(
    api: Api, world: World, local: Any, receiver: Receiver
) -> None:
    created = register(api, world, receiver.url)
    assert api.call("POST", f"/webhooks/{created['id']}/test", world.person, {})[0] == 200
    lines: list[str] = []
    local.admin.export("workspace", world.workspace_id, lines.append)
    body = "\n".join(lines)
    assert created["secret"] not in body and created["id"] not in body
    assert "WEBHOOK" not in body and json.loads(lines[-1])["type"] == "end"
