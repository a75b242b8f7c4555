"""Review retention (docs/reference.md#retention, docs/issues.md#issue-24-item-4): a review's
summary, decisions, undos and waiting actions carry the table's TTL at the review's start
plus ``PINEWORK_REVIEW_RETENTION_DAYS`` (365 by default), and a review past it is gone from
the API and the dashboard at once, answered 404 like an unknown review, whatever
DynamoDB's TTL lag."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from chalice.test import Client

from chalicelib import wiring
from chalicelib.ids import FixedClock
from chalicelib.settings import Settings
from chalicelib.storage.dynamodb import to_attributes
from chalicelib.storage.keys import (
    pending_partition,
    review_decision_key,
    review_key,
    review_lookup_key,
    review_undo_key,
)
from chalicelib.storage.recalls import epoch_seconds
from tests.helpers import START, TABLE, Api, DashboardPage, World, error_code, review, save, text

RETENTION = timedelta(days=365)


@pytest.fixture
def browser(wired: wiring.Services) -> Iterator[DashboardPage]:
    """A visitor of the dashboard (signed out)."""
    from app import app

    with Client(app) as client:
        yield DashboardPage(client)


def expiry(dynamodb: Any, key: dict[str, str]) -> int:
    """The ``expiresAtEpoch`` of the stored item at ``key``."""
    item = dynamodb.get_item(TableName=TABLE, Key=to_attributes(key), ConsistentRead=True)["Item"]
    return int(item["expiresAtEpoch"]["N"])


def listed(api: Api, world: World) -> list[str]:
    status, body = api.call("GET", f"/reviews?agentId={world.agent.id}", world.person)
    assert status == 200, body
    return [summary["id"] for summary in body["data"]]


def waiting(api: Api, world: World) -> list[tuple[str, str]]:
    status, body = api.call("GET", f"/reviews/pending?agentId={world.agent.id}", world.person)
    assert status == 200, body
    return [(entry["reviewId"], entry["action"]["id"]) for entry in body["data"]]


def decide(api: Api, world: World, review_id: str, action: str, verb: str) -> tuple[int, Any]:
    return api.call("POST", f"/reviews/{review_id}/actions/{action}/{verb}", world.person, {})


def test_the_retention_is_365_days_unless_set() -> None:
    assert Settings.from_env({}).review_retention_days == 365
    assert Settings.from_env({"PINEWORK_REVIEW_RETENTION_DAYS": "30"}).review_retention_days == 30


def test_a_review_is_gone_from_the_api_and_the_dashboard_after_its_retention(
    api: Api, world: World, clock: FixedClock, dynamodb: Any, browser: DashboardPage
) -> None:
    save(api, world, "Deploys need the VPN on")
    save(api, world, "deploys need the VPN on!")
    old = review(api, world)
    assert [action["action"] for action in old["plan"]["actions"]] == ["merge"]
    for key in (review_key(world.agent.id, old["id"]), review_lookup_key(old["id"])):
        assert expiry(dynamodb, key) == epoch_seconds(START + RETENTION)
    clock.set(START + timedelta(days=10))
    recent = review(api, world)
    assert expiry(dynamodb, review_lookup_key(recent["id"])) == epoch_seconds(
        START + timedelta(days=10) + RETENTION
    )
    clock.set(START + RETENTION)  # the last moment of the old one's period
    assert api.call("GET", f"/reviews/{old['id']}", world.person)[0] == 200
    assert listed(api, world) == [recent["id"], old["id"]]
    clock.set(START + RETENTION + timedelta(seconds=1))
    for caller in (world.person, world.agent):
        gone = api.call("GET", f"/reviews/{old['id']}", caller)
        assert error_code(gone) == (404, "not_found")
    assert listed(api, world) == [recent["id"]]
    assert api.call("GET", f"/reviews/{recent['id']}", world.person)[0] == 200
    assert error_code(decide(api, world, old["id"], "a1", "undo")) == (404, "not_found")
    assert browser.sign_in(world.person.token).status_code == 303
    assert browser.get(f"/reviews/{old['id']}").status_code == 404
    assert browser.get(f"/reviews/{recent['id']}").status_code == 200
    page = browser.get(f"/agents/{world.agent.id}/reviews")
    assert page.status_code == 200
    assert recent["id"] in text(page) and old["id"] not in text(page)


def test_decisions_undos_and_waiting_actions_expire_with_their_review(
    api: Api, world: World, clock: FixedClock, dynamodb: Any, wired: wiring.Services
) -> None:
    wired.admin.set_review_approval(world.workspace_id, "required")
    for wording in ("Deploys need the VPN on", "Use pnpm, not npm", "The cache lives in S3"):
        save(api, world, wording)
        save(api, world, wording.lower() + "!")
    ran = review(api, world)
    assert [d["actionId"] for d in ran["decisions"]] == ["a1", "a2", "a3"]
    expires = epoch_seconds(START + RETENTION)
    items = dynamodb.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": pending_partition(world.workspace_id)}},
    )["Items"]
    assert [int(item["expiresAtEpoch"]["N"]) for item in items] == [expires] * 3
    clock.set(START + timedelta(days=100))  # decided later, kept no longer than the review
    assert decide(api, world, ran["id"], "a1", "approve")[0] == 200
    assert decide(api, world, ran["id"], "a2", "reject")[0] == 200
    assert decide(api, world, ran["id"], "a1", "undo")[0] == 200
    for key in (
        review_decision_key(ran["id"], "a1"),
        review_decision_key(ran["id"], "a2"),
        review_undo_key(ran["id"], "a1"),
    ):
        assert expiry(dynamodb, key) == expires
    assert waiting(api, world) == [(ran["id"], "a3")]
    clock.set(START + RETENTION + timedelta(seconds=1))
    assert waiting(api, world) == []
    for action, verb in (("a3", "approve"), ("a3", "reject"), ("a2", "undo")):
        assert error_code(decide(api, world, ran["id"], action, verb)) == (404, "not_found")
