"""Audit texts of archived memories expire (docs/reference.md#retention): hidden from the
history at once after the period, removed from the table by the nightly worker and by
``pinework admin sweep-retention``; the archived memory keeps its own text."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import boto3
import pytest
from chalice.test import Client

from chalicelib import wiring
from chalicelib.ids import FixedClock
from chalicelib.settings import REVIEW_QUEUE_NAME
from tests.helpers import START, TABLE, Api, World

ORIGINAL = "The staging database listens on port 6543 behind the bastion"
EDITED = "The staging database listens on port 7654 behind the new bastion"
FRESH = "Deploys to production need two approvals from the platform team"
DAYS = 365


@pytest.fixture
def worker(wired: wiring.Services) -> Any:
    boto3.client("sqs", region_name="us-east-1").create_queue(QueueName=REVIEW_QUEUE_NAME)
    from app import app

    with Client(app) as client:
        yield client


def nightly(worker: Any, world: World, day: str) -> None:
    body = json.dumps({"workspaceId": world.workspace_id, "agentId": world.agent.id, "date": day})
    event = worker.events.generate_sqs_event(message_bodies=[body], queue_name=REVIEW_QUEUE_NAME)
    assert worker.lambda_.invoke("review_worker", dict(event)).payload == {"batchItemFailures": []}


def audit_text(dynamodb: Any) -> str:
    items = dynamodb.scan(TableName=TABLE)["Items"]
    return json.dumps([item for item in items if item["sk"]["S"].startswith("AUDIT#")])


def history_texts(api: Api, world: World, memory_id: str) -> str:
    status, body = api.call("GET", f"/memories/{memory_id}/history", world.person)
    assert status == 200
    return json.dumps(body["data"])


def archived_memory(api: Api, world: World, text: str) -> str:
    _, saved = api.call("POST", "/memories", world.agent, {"text": text})
    return str(saved["id"])


def test_texts_go_from_history_after_the_period_and_from_the_table_at_the_nightly_run(
    api: Api, world: World, worker: Any, clock: FixedClock, dynamodb: Any
) -> None:
    memory_id = archived_memory(api, world, ORIGINAL)
    assert api.call("PATCH", f"/memories/{memory_id}", world.person, {"text": EDITED})[0] == 200
    archived = api.call(
        "POST", f"/memories/{memory_id}/archive", world.agent, {"reason": "moved to the wiki"}
    )
    assert archived[0] == 200
    clock.set(START + timedelta(days=DAYS - 1))
    fresh_id = archived_memory(api, world, FRESH)
    assert (
        api.call("POST", f"/memories/{fresh_id}/archive", world.agent, {"reason": "done"})[0] == 200
    )
    nightly(worker, world, "2027-11-29")
    assert ORIGINAL in history_texts(api, world, memory_id)  # inside the period: kept
    assert ORIGINAL in audit_text(dynamodb)

    clock.set(START + timedelta(days=DAYS, seconds=1))
    shown = history_texts(api, world, memory_id)
    assert ORIGINAL not in shown and EDITED not in shown and "moved to the wiki" not in shown
    assert '"action": "archive"' in shown  # who did what and when stays
    assert ORIGINAL in audit_text(dynamodb)  # not swept yet: only hidden

    nightly(worker, world, "2027-11-30")
    stored = audit_text(dynamodb)
    assert ORIGINAL not in stored and EDITED not in stored and "moved to the wiki" not in stored
    assert FRESH in stored and FRESH in history_texts(api, world, fresh_id)  # archived later
    _, memory = api.call("GET", f"/memories/{memory_id}", world.person)
    assert memory["text"] == EDITED and memory["status"] == "archived"
    unarchived = api.call("POST", f"/memories/{memory_id}/unarchive", world.person, {})
    assert unarchived[0] == 200 and unarchived[1]["text"] == EDITED
    assert EDITED in history_texts(api, world, memory_id)  # the unarchive record is new


def test_the_operator_sweep_covers_every_agent_and_reruns_change_nothing(
    api: Api, world: World, wired: wiring.Services, clock: FixedClock, dynamodb: Any
) -> None:
    first = archived_memory(api, world, ORIGINAL)
    assert api.call("POST", f"/memories/{first}/archive", world.agent, {"reason": "done"})[0] == 200
    _, other = api.call("POST", "/memories", world.other_agent, {"text": FRESH})
    assert (
        api.call("POST", f"/memories/{other['id']}/archive", world.other_agent, {"reason": "done"})[
            0
        ]
        == 200
    )
    clock.set(START + timedelta(days=DAYS + 2))
    report = wired.admin.sweep_retention()
    assert report["memories"] == 2 and report["records"] >= 4 and report["agents"] >= 2
    stored = audit_text(dynamodb)
    assert ORIGINAL not in stored and FRESH not in stored
    assert wired.admin.sweep_retention()["memories"] == 0
