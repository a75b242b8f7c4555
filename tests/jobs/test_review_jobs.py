"""The nightly review on AWS's own machinery (docs/reference.md#9-review): the 04:00 UTC schedule,
the fan-out to SQS over every workspace, and the worker with partial failures."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from chalice.app import Cron
from chalice.test import Client

from chalicelib import wiring
from chalicelib.ids import FixedClock
from chalicelib.models.principal import Principal, PrincipalKind
from chalicelib.models.requests import ListQuery, SaveFactRequest
from chalicelib.services.run_context import RunContext
from chalicelib.settings import REVIEW_QUEUE_NAME, Settings
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.routines import DynamoDBRoutineRepository
from tests.helpers import BUCKET, TABLE


@pytest.fixture
def queue(aws: None) -> str:
    sqs = boto3.client("sqs", region_name="us-east-1")
    return str(sqs.create_queue(QueueName=REVIEW_QUEUE_NAME)["QueueUrl"])


@pytest.fixture
def app_client(wired: wiring.Services, queue: str) -> Any:
    from app import app

    with Client(app) as client:
        yield client


def drain(queue_url: str) -> list[dict[str, Any]]:
    sqs = boto3.client("sqs", region_name="us-east-1")
    messages = []
    while True:
        got = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages", [])
        if not got:
            return messages
        for message in got:
            messages.append(message)
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])


def agent_with_facts(wired: wiring.Services, workspace_id: str, *texts: str) -> Principal:
    issued = wired.admin.create_agent(workspace_id, "agent")
    principal = Principal(kind=PrincipalKind.AGENT, id=issued.id, workspace_id=workspace_id)
    for text in texts:
        wired.memories.save(principal, SaveFactRequest(text=text), RunContext())
    return principal


def sqs_event(client: Any, *bodies: str) -> dict[str, Any]:
    event = client.events.generate_sqs_event(
        message_bodies=list(bodies), queue_name=REVIEW_QUEUE_NAME
    )
    for number, record in enumerate(event["Records"]):
        record["messageId"] = f"m{number}"
    return dict(event)


def test_schedule_is_04_00_utc_daily_and_worker_reads_the_review_queue() -> None:
    from app import app

    by_name = {source.name: source for source in app.event_sources}
    schedule = by_name["review_fanout"].schedule_expression
    assert isinstance(schedule, Cron) and schedule.to_string() == "cron(0 4 * * ? *)"
    assert by_name["review_worker"].queue == REVIEW_QUEUE_NAME


def test_fan_out_pages_over_every_workspace_and_skips_inactive_routines(
    wired: wiring.Services, queue: str, dynamodb: Any, clock: FixedClock
) -> None:
    expected = set()
    for number in range(3):
        workspace = wired.admin.create_workspace(f"ws{number}")
        for _ in range(6):
            expected.add(agent_with_facts(wired, workspace.id, "a fact").id)
    paused = agent_with_facts(wired, workspace.id, "paused fact")
    person = Principal(kind=PrincipalKind.PERSON, id="usr_x", workspace_id=workspace.id)
    wired.routines.pause(person, paused.id)
    agent_with_facts(wired, workspace.id)  # never saved: no routine
    small_pages = wiring.build_services(
        Settings(table_name=TABLE, bucket_name=BUCKET), clock=clock, client=dynamodb
    )
    object.__setattr__(
        small_pages.routines,
        "_routines",
        DynamoDBRoutineRepository(DynamoDBTable(dynamodb, TABLE), page_size=4),
    )
    assert small_pages.reviews.fan_out(clock.now()) == len(expected) == 18
    bodies = [json.loads(m["Body"]) for m in drain(queue)]
    assert {body["agentId"] for body in bodies} == expected
    assert {body["date"] for body in bodies} == {"2026-11-29"}


def test_scheduled_event_uses_the_event_time_for_yesterday(
    wired: wiring.Services, app_client: Any, queue: str
) -> None:
    workspace = wired.admin.create_workspace("ws")
    agent = agent_with_facts(wired, workspace.id, "a fact")
    event = app_client.events.generate_cw_event(
        source="aws.events", detail_type="Scheduled Event", detail={}, resources=[]
    )
    event["time"] = "2027-03-01T04:00:00Z"
    response = app_client.lambda_.invoke("review_fanout", event)
    assert response.payload == {"enqueued": 1}
    (message,) = drain(queue)
    assert json.loads(message["Body"]) == {
        "workspaceId": workspace.id,
        "agentId": agent.id,
        "date": "2027-02-28",
    }


def test_worker_reports_only_the_poison_message_and_reviews_the_rest(
    wired: wiring.Services, app_client: Any
) -> None:
    workspace = wired.admin.create_workspace("ws")
    agent = agent_with_facts(wired, workspace.id, "Use pnpm", "use pnpm")
    good = json.dumps({"workspaceId": workspace.id, "agentId": agent.id, "date": "2026-11-29"})
    event = sqs_event(app_client, "not json", good, json.dumps({"agentId": "x"}))
    response = app_client.lambda_.invoke("review_worker", event)
    assert response.payload == {
        "batchItemFailures": [{"itemIdentifier": "m0"}, {"itemIdentifier": "m2"}]
    }
    live = [m for m in _facts(wired, agent) if m.status.value == "active"]
    assert len(live) == 1
    summaries, _ = wired.reviews.list_reviews(agent, None, 10, None)
    assert [s.trigger for s in summaries] == ["schedule"]


def test_a_retried_message_does_nothing_twice(wired: wiring.Services, app_client: Any) -> None:
    workspace = wired.admin.create_workspace("ws")
    agent = agent_with_facts(wired, workspace.id, "Deploy on Tuesdays", "deploy on tuesdays")
    body = json.dumps({"workspaceId": workspace.id, "agentId": agent.id, "date": "2026-11-29"})
    for _ in range(2):
        response = app_client.lambda_.invoke("review_worker", sqs_event(app_client, body))
        assert response.payload == {"batchItemFailures": []}
    summaries, _ = wired.reviews.list_reviews(agent, None, 10, None)
    assert len(summaries) == 1 and summaries[0].applied == 1


def test_worker_skips_a_paused_routine(wired: wiring.Services, app_client: Any) -> None:
    workspace = wired.admin.create_workspace("ws")
    agent = agent_with_facts(wired, workspace.id, "Same", "same")
    person = Principal(kind=PrincipalKind.PERSON, id="usr_x", workspace_id=workspace.id)
    wired.routines.pause(person, agent.id)
    body = json.dumps({"workspaceId": workspace.id, "agentId": agent.id, "date": "2026-11-29"})
    assert app_client.lambda_.invoke("review_worker", sqs_event(app_client, body)).payload == {
        "batchItemFailures": []
    }
    assert len([m for m in _facts(wired, agent) if m.status.value == "active"]) == 2


def _facts(wired: wiring.Services, agent: Principal) -> list[Any]:
    from chalicelib.models.requests import ListQuery

    page = wired.memories.list(agent, ListQuery.model_validate({"all": "true"}))
    return list(page.memories)


def test_the_nightly_review_puts_a_conflict_in_front_of_a_person_once(
    wired: wiring.Services, app_client: Any, clock: FixedClock
) -> None:
    """docs/issues.md#issue-14: the scheduled review never merges facts whose port differs; it
    leaves both live, lists the pair as pending, and a retried message or the next
    night adds nothing."""
    workspace = wired.admin.create_workspace("Nightly")
    agent = agent_with_facts(
        wired,
        workspace.id,
        "The orders database listens on port 5432 behind pgbouncer in us-east-1",
        "The orders database listens on port 6432 behind pgbouncer in us-east-1",
    )
    body = json.dumps({"workspaceId": workspace.id, "agentId": agent.id, "date": "2026-11-29"})
    assert app_client.lambda_.invoke(
        "review_worker", sqs_event(app_client, body, body)
    ).payload == {"batchItemFailures": []}
    waiting, _ = wired.reviews.list_pending(
        Principal(kind=PrincipalKind.PERSON, id="usr_x", workspace_id=workspace.id), None, 100, None
    )
    (entry,) = waiting
    assert entry.agent_id == agent.id and entry.action.waits_for_person
    assert all(
        fact.status.value == "active"
        for fact in wired.memories.list(agent, ListQuery.model_validate({"kind": "fact"})).memories
    )
    tomorrow = json.dumps({"workspaceId": workspace.id, "agentId": agent.id, "date": "2026-11-30"})
    app_client.lambda_.invoke("review_worker", sqs_event(app_client, tomorrow))
    again, _ = wired.reviews.list_pending(
        Principal(kind=PrincipalKind.PERSON, id="usr_x", workspace_id=workspace.id), None, 100, None
    )
    assert [item.review_id for item in again] == [entry.review_id]
