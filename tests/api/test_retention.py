"""Retention (docs/reference.md#retention, docs/issues.md#issue-24-item-4): recall log
entries and run-start session state carry the table's TTL, and a log entry past its
retention is gone from the API at once, whatever DynamoDB's TTL lag."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

from chalicelib import wiring
from chalicelib.ids import FixedClock
from chalicelib.services.idempotency import IdempotencyService
from chalicelib.settings import Settings
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.idempotency import DynamoDBIdempotencyStore
from chalicelib.storage.keys import recall_log_partition, session_key
from chalicelib.storage.recalls import epoch_seconds
from tests.helpers import START, TABLE, Api, World, save


def logged(api: Api, world: World) -> list[str]:
    status, body = api.call("GET", f"/recalls?agentId={world.agent.id}", world.person)
    assert status == 200, body
    return [entry["id"] for entry in body["data"]]


def test_recall_log_entries_expire_after_their_retention(
    api: Api, world: World, clock: FixedClock, dynamodb: Any
) -> None:
    save(api, world)
    headers = {"X-Pinework-Session": "chat-1"}
    body = {"resumed": False, "task": "deploy"}
    assert api.call("POST", "/memories/recall/start", world.agent, body, headers=headers)[0] == 200
    clock.set(START + timedelta(days=30))
    assert api.call("POST", "/memories/recall", world.agent, {"query": "deploy"})[0] == 200
    first, *_ = (entries := logged(api, world))[::-1]
    assert len(entries) == 2
    items = dynamodb.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": recall_log_partition(world.agent.id)}},
    )["Items"]
    expiries = sorted(int(item["expiresAtEpoch"]["N"]) for item in items)
    assert expiries == [
        epoch_seconds(START + timedelta(days=90)),
        epoch_seconds(START + timedelta(days=120)),
    ]
    session = dynamodb.get_item(
        TableName=TABLE, Key={k: {"S": v} for k, v in session_key(world.agent.id, "chat-1").items()}
    )["Item"]
    assert int(session["expiresAtEpoch"]["N"]) == epoch_seconds(START + timedelta(days=2))
    clock.set(START + timedelta(days=90, seconds=1))  # the first is past 90 days
    assert first not in logged(api, world) and len(logged(api, world)) == 1
    clock.set(START + timedelta(days=121))
    assert logged(api, world) == []


def test_idempotency_records_are_kept_for_the_configured_hours(
    wired: wiring.Services, dynamodb: Any
) -> None:
    hours = Settings.from_env({"PINEWORK_IDEMPOTENCY_RETENTION_HOURS": "2"})
    assert hours.idempotency_retention_hours == 2
    assert Settings.from_env({}).idempotency_retention_hours == 24
    table = DynamoDBTable(dynamodb, wired.settings.table_name)
    service = IdempotencyService(
        lambda: DynamoDBIdempotencyStore(table), hours.idempotency_retention_hours * 3600
    )
    before = time.time()
    service.run("scope#k", "same", lambda: {"status": 201}, deadline_ms=30_000)
    after = time.time()
    (item,) = dynamodb.scan(
        TableName=wired.settings.table_name,
        FilterExpression="begins_with(pk, :prefix)",
        ExpressionAttributeValues={":prefix": {"S": "IDEMPOTENCY#"}},
    )["Items"]
    assert before + 2 * 3600 <= int(item["expiresAtEpoch"]["N"]) <= after + 2 * 3600 + 2
