"""Concurrent decisions on one review action (docs/issues.md#issue-4-item-6): the decision is a
conditional write, so of many simultaneous approvals (and rejections) exactly
one wins and the action is applied at most once."""

from __future__ import annotations

import boto3
import pytest
from botocore.config import Config

from chalicelib import wiring
from chalicelib.errors import Conflict
from chalicelib.ids import IdFactory
from chalicelib.models.principal import Principal, PrincipalKind
from chalicelib.models.requests import ListQuery, SaveFactRequest
from chalicelib.models.review import ReviewReport
from chalicelib.models.review_requests import RunReviewRequest
from chalicelib.services.run_context import RunContext
from chalicelib.settings import Settings
from infra.tables import create_table
from tests.helpers import embedded_client, run_together


@pytest.fixture
def wired(endpoint: str) -> wiring.Services:
    """Services on a fresh table and bucket of the embedded server."""
    client = embedded_client(endpoint)
    name = "race-" + IdFactory(wiring.SystemClock()).new("t").lower()
    create_table(client, name)
    s3 = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(max_pool_connections=64, s3={"addressing_style": "path"}),
    )
    s3.create_bucket(Bucket=name)
    return wiring.build_services(Settings(table_name=name, bucket_name=name), client=client, s3=s3)


def pending_review(wired: wiring.Services) -> tuple[Principal, Principal, ReviewReport]:
    """A person and an agent of an approval-mode workspace, and a review with one merge."""
    workspace = wired.admin.create_workspace("race")
    wired.admin.set_review_approval(workspace.id, "required")
    agent_id = wired.admin.create_agent(workspace.id, "racer").id
    person_id = wired.admin.create_person(workspace.id, "ana@example.com").id
    agent = Principal(kind=PrincipalKind.AGENT, id=agent_id, workspace_id=workspace.id)
    person = Principal(kind=PrincipalKind.PERSON, id=person_id, workspace_id=workspace.id)
    for text in ("Deploys need the VPN on", "deploys need the VPN on!"):
        wired.memories.save(agent, SaveFactRequest(text=text), RunContext())
    report = wired.reviews.run_now(person, RunReviewRequest.model_validate({"agentId": agent_id}))
    assert report.status == "pending" and len(report.plan.actions) == 1
    return agent, person, report


def test_concurrent_approvals_apply_the_action_exactly_once(wired: wiring.Services) -> None:
    agent, person, report = pending_review(wired)
    results = run_together(
        10,
        lambda n: (
            wired.reviews.approve(person, report.id, "1")
            if n % 2
            else wired.reviews.reject(person, report.id, "a1")
        ),
    )
    won = [result for result in results if isinstance(result, ReviewReport)]
    lost = [result for result in results if isinstance(result, Exception)]
    assert len(won) == 1 and len(lost) == 9, results
    assert all(isinstance(error, Conflict) for error in lost), lost
    final = wired.reviews.get(person, report.id)
    (decision,) = final.decisions
    assert decision.state in ("applied", "rejected") and final.status == "done"
    (loser,) = report.plan.actions[0].memory_ids
    history, _ = wired.memories.history(person, loser)
    supersedes = [record for record in history if record.action == "supersede"]
    assert len(supersedes) == (1 if decision.state == "applied" else 0)
    (summary,), _ = wired.reviews.list_reviews(person, agent.id, 10, None)
    assert summary.pending == 0 and summary.applied + summary.rejected == 1
    live = wired.memories.list(agent, ListQuery.model_validate({}))
    assert len(live.memories) == (1 if decision.state == "applied" else 2)


def test_concurrent_undos_restore_once_and_all_answer_the_report(wired: wiring.Services) -> None:
    """docs/issues.md#issue-14-item-3: the undo record is a conditional put in the undo's
    transaction, so of many simultaneous undos exactly one writes, and every caller gets the
    report."""
    workspace = wired.admin.create_workspace("undo-race")
    agent_id = wired.admin.create_agent(workspace.id, "racer").id
    person_id = wired.admin.create_person(workspace.id, "ana@example.com").id
    agent = Principal(kind=PrincipalKind.AGENT, id=agent_id, workspace_id=workspace.id)
    person = Principal(kind=PrincipalKind.PERSON, id=person_id, workspace_id=workspace.id)
    for text in ("Deploys need the VPN on", "deploys need the VPN on!"):
        wired.memories.save(agent, SaveFactRequest(text=text), RunContext())
    report = wired.reviews.run_now(person, RunReviewRequest.model_validate({"agentId": agent_id}))
    (loser,) = report.plan.actions[0].memory_ids
    results = run_together(8, lambda n: wired.reviews.undo(person, report.id, "a1"))
    assert all(isinstance(result, ReviewReport) for result in results), results
    assert all([u.action_id for u in result.undone] == ["a1"] for result in results)
    history, _ = wired.memories.history(person, loser)
    assert [record.action for record in history].count("undo") == 1
    (summary,), _ = wired.reviews.list_reviews(person, agent.id, 10, None)
    assert summary.undone == 1
    assert len(wired.memories.list(agent, ListQuery.model_validate({})).memories) == 2
