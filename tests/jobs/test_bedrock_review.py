"""A review with ``PINEWORK_REVIEWER=bedrock`` end to end (docs/reference.md#9-review,
docs/issues.md#issue-4-item-5b): the model's plan (a stubbed ``bedrock-runtime`` client) is checked
against the agent's live memories, applied by the real ``ReviewService`` on moto's DynamoDB and S3,
and reported with the dropped actions and why."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber

from chalicelib import wiring
from chalicelib.ids import FixedClock
from chalicelib.models.memory import Memory, MemoryStatus
from chalicelib.models.principal import Principal, PrincipalKind
from chalicelib.models.requests import SaveFactRequest
from chalicelib.models.review_requests import RunReviewRequest
from chalicelib.services.review.bedrock_reviewer import TOOL_NAME
from chalicelib.services.run_context import RunContext
from chalicelib.settings import Settings
from tests.helpers import BUCKET, TABLE

MODEL = "anthropic.claude-test-v1:0"
EXPECTED = {
    "modelId": MODEL,
    "system": ANY,
    "messages": ANY,
    "toolConfig": {
        "tools": [{"toolSpec": {"name": TOOL_NAME, "description": ANY, "inputSchema": ANY}}],
        "toolChoice": {"tool": {"name": TOOL_NAME}},
    },
    "inferenceConfig": ANY,
}


@dataclass
class Team:
    wired: wiring.Services
    stubber: Stubber
    agent: Principal
    other: Principal
    person: Principal


@pytest.fixture
def team(dynamodb: Any, s3: Any, clock: FixedClock) -> Iterator[Team]:
    """Services wired from settings that switch the Bedrock reviewer on."""
    bedrock = boto3.client("bedrock-runtime", region_name="us-east-1")
    settings = Settings(
        table_name=TABLE, bucket_name=BUCKET, reviewer="bedrock", bedrock_model_id=MODEL
    )
    wired = wiring.build_services(settings, clock=clock, client=dynamodb, s3=s3, bedrock=bedrock)
    workspace = wired.admin.create_workspace("Acme")
    agent = wired.admin.create_agent(workspace.id, "builder")
    other = wired.admin.create_agent(workspace.id, "reviewer")
    person = wired.admin.create_person(workspace.id, "ana@example.com")
    with Stubber(bedrock) as stubber:
        yield Team(
            wired,
            stubber,
            Principal(kind=PrincipalKind.AGENT, id=agent.id, workspace_id=workspace.id),
            Principal(kind=PrincipalKind.AGENT, id=other.id, workspace_id=workspace.id),
            Principal(kind=PrincipalKind.PERSON, id=person.id, workspace_id=workspace.id),
        )
        stubber.assert_no_pending_responses()


def save(team: Team, who: Principal, text: str, **fields: Any) -> Memory:
    request = SaveFactRequest.model_validate({"text": text, **fields})
    return team.wired.memories.save(who, request, RunContext())


def tool_answer(*actions: dict[str, Any]) -> dict[str, Any]:
    return {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "toolUse": {
                            "toolUseId": "tu_1",
                            "name": TOOL_NAME,
                            "input": {"actions": list(actions), "notes": []},
                        }
                    }
                ],
            }
        },
        "stopReason": "tool_use",
        "usage": {"inputTokens": 100, "outputTokens": 20, "totalTokens": 120},
        "metrics": {"latencyMs": 900},
    }


def run_review(team: Team) -> Any:
    request = RunReviewRequest.model_validate({"agentId": team.agent.id})
    return team.wired.reviews.run_now(team.person, request)


def test_model_plan_is_checked_applied_and_reported(team: Team, clock: FixedClock) -> None:
    kept = save(team, team.agent, "Deploys need the VPN on")
    twin = save(team, team.agent, "deploys need the VPN on!")
    soon = (clock.now() + timedelta(days=2)).date().isoformat()
    lunch = save(team, team.agent, "Lunch orders go in the kitchen channel", expiresAt=soon)
    vetoed = save(team, team.agent, "CI runs on arm64")
    team.wired.memories.veto(team.person, vetoed.id, None)
    foreign = save(team, team.other, "The other agent's fact")
    clock.set(clock.now() + timedelta(days=2))
    for line in ("!fact The staging database is db-stg-2", "[durable] CI runs on arm64"):
        team.wired.day_log.append_day_line(team.agent, line, RunContext())
    clock.set(clock.now() + timedelta(days=1))
    team.stubber.add_response(
        "converse",
        tool_answer(
            {"action": "merge", "keepId": kept.id, "memoryIds": [twin.id], "reason": "same"},
            {"action": "archive", "memoryId": lunch.id, "reason": "no longer used"},
            {"action": "lift", "text": "The staging database is db-stg-2", "reason": "durable"},
            {"action": "archive", "memoryId": foreign.id, "reason": "injected"},
            {"action": "lift", "text": "CI runs on arm64", "reason": "durable"},
            {"action": "lift", "text": "Prod runs on db-prod-9", "reason": "invented"},
            {"action": "archive", "memoryId": vetoed.id, "reason": "already gone"},
        ),
        EXPECTED,
    )
    report = run_review(team)
    assert report.reviewer == f"bedrock:{MODEL}"
    assert [a.action for a in report.applied] == ["merge", "archive", "lift"]
    assert report.skipped == []
    foreign_note, veto_note, invented_note, archived_note = report.plan.notes
    assert f"{foreign.id} is not one of the agent's facts" in foreign_note
    assert f"not lifted (a person vetoed: {vetoed.id})" in veto_note
    assert "not in the day log" in invented_note
    assert f"{vetoed.id} is not live (archived: vetoed)" in archived_note
    memories = team.wired.memories
    assert memories.get(team.person, twin.id).superseded_by == kept.id
    archived = memories.get(team.person, lunch.id)
    assert archived.status is MemoryStatus.ARCHIVED
    assert archived.archive_reason == "expired: no longer used"
    assert memories.get(team.person, foreign.id).status is MemoryStatus.ACTIVE
    lifted = memories.get(team.person, report.applied[2].created_id or "")
    assert lifted.text == "The staging database is db-stg-2"
    stored = boto3.client("s3", region_name="us-east-1").get_object(
        Bucket=BUCKET, Key=report.report_key
    )
    assert json.loads(stored["Body"].read())["plan"]["notes"] == report.plan.notes


def test_throttled_bedrock_falls_back_to_the_rules_and_says_so(team: Team) -> None:
    save(team, team.agent, "Use pnpm, not npm")
    save(team, team.agent, "use pnpm, not npm")
    team.stubber.add_client_error(
        "converse",
        service_error_code="ThrottlingException",
        service_message="Rate exceeded",
        http_status_code=429,
        expected_params=EXPECTED,
    )
    report = run_review(team)
    assert [a.action for a in report.applied] == ["merge"]
    assert report.plan.notes[0] == (
        f"Bedrock ({MODEL}) could not review: ThrottlingException: Rate exceeded; "
        "this plan is the rules-v2 reviewer's"
    )
    assert report.reviewer == report.plan.reviewer == f"rules-v2 (fallback from bedrock:{MODEL})"
