"""``pinework webhooks add|list|test|remove``, the client's webhook methods and
``pinework.webhooks.verify`` against the real app and a loopback receiver
(docs/reference.md#webhooks, docs/reference.md#webhook-signatures): the secret is shown
once, a signed ping verifies, and a tampered body, another secret or an old timestamp
fails verification."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from pinework import Client, cli
from pinework.webhooks import WebhookVerificationError, verify
from tests.helpers import Actor, InjectedCliRunner, Receiver, World


def run(transport: httpx.MockTransport, actor: Actor, *args: str) -> Any:
    runner = InjectedCliRunner(cli.Connections(client=lambda: Client.from_env(transport=transport)))
    env = {"PINEWORK_API_URL": "http://pinework.test", "PINEWORK_TOKEN": actor.token}
    return runner.invoke(cli.app, ["webhooks", *args], env=env)


def test_add_list_test_and_remove_an_endpoint_from_the_cli(
    app_transport: httpx.MockTransport, world: World, local: Any, receiver: Receiver
) -> None:
    added = run(app_transport, world.person, "add", receiver.url, "--type", "pinework.memory.saved")
    assert added.exit_code == 0, added.output
    line, secret_line = added.stdout.splitlines()
    webhook_id = line.split()[0]
    secret = secret_line.split()[1]
    assert webhook_id.startswith("whk_") and secret.startswith("whsec_")
    listed = run(app_transport, world.person, "list")
    assert listed.stdout.split()[:2] == [webhook_id, "active"] and secret not in listed.stdout
    tested = run(app_transport, world.person, "test", webhook_id)
    assert tested.exit_code == 0 and " ok  204 " in tested.stdout
    (request,) = receiver.received
    sent_at = int(request["headers"]["webhook-timestamp"])  # the tests' fixed clock
    event = verify(request["body"], request["headers"], secret, now=sent_at)
    assert event["type"] == "pinework.webhook.ping" and event["subject"] == webhook_id
    refused = run(app_transport, world.agent, "list")
    assert refused.exit_code == 1 and "forbidden" in refused.output
    removed = run(app_transport, world.person, "remove", webhook_id)
    assert removed.exit_code == 0 and removed.stdout.strip() == f"removed {webhook_id}"
    assert run(app_transport, world.person, "list").stdout.strip() == "no webhook endpoints"
    gone = run(app_transport, world.person, "test", webhook_id, "--json")
    assert gone.exit_code == 1 and "webhook_not_found" in gone.output


def test_the_client_registers_and_verify_refuses_tampered_or_old_deliveries(
    app_transport: httpx.MockTransport, world: World, local: Any, receiver: Receiver
) -> None:
    with Client("http://pinework.test", token=world.person.token, transport=app_transport) as c:
        webhook = c.create_webhook(receiver.url, description="audit log")
        assert webhook.secret and c.list_webhooks().data[0].secret is None
        attempt = c.test_webhook(webhook.id)
        assert attempt.ok and attempt.status_code == 204
        assert [d.id for d in c.list_webhook_deliveries(webhook.id).data] == [attempt.id]
    (request,) = receiver.received
    body, headers = request["body"], request["headers"]
    sent_at = int(headers["webhook-timestamp"])  # the tests' fixed clock
    assert json.loads(body)["id"] == verify(body, headers, webhook.secret, now=sent_at)["id"]
    tampered = body.replace(b"pinework.webhook.ping", b"pinework.memory.erased")
    cases = [
        (tampered, headers, webhook.secret, sent_at),
        (body, headers, "whsec_" + "A" * 44, sent_at),
        (body, headers, webhook.secret, sent_at + 301),
        (
            body,
            {k: v for k, v in headers.items() if k.lower() != "webhook-signature"},
            webhook.secret,
            sent_at,
        ),
    ]
    for case_body, case_headers, secret, now in cases:
        with pytest.raises(WebhookVerificationError):
            verify(case_body, case_headers, secret, now=now)
    assert verify(body, headers, webhook.secret, now=sent_at + 299)["type"].endswith("ping")
