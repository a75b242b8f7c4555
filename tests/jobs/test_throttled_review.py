"""A throttled review fails its own SQS message only (docs/reference.md#6-errors,
docs/reference.md#9-review; docs/issues.md#issue-12): the worker reports it in ``batchItemFailures``
so SQS retries that agent alone, and the other agents of the batch are reviewed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from chalice.test import Client

from chalicelib import wiring
from chalicelib.models.principal import Principal, PrincipalKind
from chalicelib.models.requests import SaveFactRequest
from chalicelib.services.run_context import RunContext
from chalicelib.settings import REVIEW_QUEUE_NAME
from tests.helpers import Faults


@pytest.fixture
def app_client(wired: wiring.Services) -> Iterator[Client]:
    boto3.client("sqs", region_name="us-east-1").create_queue(QueueName=REVIEW_QUEUE_NAME)
    from app import app

    with Client(app) as client:
        yield client


def agent_with_twins(wired: wiring.Services, workspace_id: str) -> Principal:
    issued = wired.admin.create_agent(workspace_id, "agent")
    agent = Principal(kind=PrincipalKind.AGENT, id=issued.id, workspace_id=workspace_id)
    for text in ("Use pnpm for installs", "use pnpm for installs"):
        wired.memories.save(agent, SaveFactRequest(text=text), RunContext())
    return agent


def live_count(wired: wiring.Services, agent: Principal) -> int:
    from chalicelib.models.requests import ListQuery

    return len(wired.memories.list(agent, ListQuery.model_validate({})).memories)


def test_a_throttled_agent_fails_its_message_alone(
    wired: wiring.Services, app_client: Any, faults: Faults
) -> None:
    workspace = wired.admin.create_workspace("ws")
    throttled = agent_with_twins(wired, workspace.id)
    reviewed = agent_with_twins(wired, workspace.id)
    bodies = [
        json.dumps({"workspaceId": workspace.id, "agentId": agent.id, "date": "2026-11-29"})
        for agent in (throttled, reviewed)
    ]
    event = app_client.events.generate_sqs_event(message_bodies=bodies, queue_name="q")
    for number, record in enumerate(event["Records"]):
        record["messageId"] = f"m{number}"
    faults.fail("ProvisionedThroughputExceededException", mentioning=throttled.id, times=None)
    response = app_client.lambda_.invoke("review_worker", event)
    assert response.payload == {"batchItemFailures": [{"itemIdentifier": "m0"}]}
    assert live_count(wired, reviewed) == 1  # merged
    faults.clear()
    assert live_count(wired, throttled) == 2  # untouched, retried later by SQS
    retried = app_client.events.generate_sqs_event(message_bodies=bodies[:1], queue_name="q")
    assert app_client.lambda_.invoke("review_worker", retried).payload == {"batchItemFailures": []}
    assert live_count(wired, throttled) == 1
