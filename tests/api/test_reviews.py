"""The daily review through the HTTP API (docs/reference.md#routes-reviews,
docs/reference.md#9-review): plan, apply, report in S3, idempotence, dry-run, lift and veto."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import boto3
import pytest

from chalicelib import wiring
from chalicelib.ids import FixedClock
from chalicelib.services.recall.embedding import is_current
from tests.helpers import BUCKET, TABLE, Api, World, error_code, every_memory, review, save


@pytest.fixture
def bucket(s3: Any) -> Any:
    """The reports bucket (``settings.bucket_name``, made by ``conftest.s3``)."""
    return s3


def live_texts(api: Api, world: World) -> list[str]:
    return sorted(m["text"] for m in every_memory(api, world) if m["status"] == "active")


def test_identical_facts_merge_into_the_most_recalled(api: Api, world: World, bucket: Any) -> None:
    first = save(api, world, "Deploys need the VPN on")
    second = save(api, world, "deploys need the VPN on!")
    third = save(api, world, "Deploys  need the vpn on")
    status, _ = api.call("POST", "/memories/recall", world.agent, {"query": "vpn deploys"})
    assert status == 200
    api.call("POST", "/memories/recall", world.person, {"query": "VPN", "agentId": world.agent.id})
    report = review(api, world)
    (action,) = report["plan"]["actions"]
    assert action["action"] == "merge" and action["reason"] and action["evidence"]
    kept = action["keepId"]
    assert set(action["memoryIds"]) | {kept} == {first["id"], second["id"], third["id"]}
    assert [a["actionId"] for a in report["applied"]] == [action["id"]]
    assert report["skipped"] == []
    memories = {m["id"]: m for m in every_memory(api, world)}
    assert memories[kept]["status"] == "active"
    for loser in action["memoryIds"]:
        assert memories[loser]["status"] == "archived"
        assert memories[loser]["archiveReason"] == "superseded"
        assert memories[loser]["supersededBy"] == kept
        status, history = api.call("GET", f"/memories/{loser}/history", world.person)
        last = history["data"][-1]
        assert (last["action"], last["actorType"], last["actorId"]) == (
            "supersede",
            "system",
            report["id"],
        )
    stored = bucket.get_object(Bucket=BUCKET, Key=report["reportKey"])
    assert json.loads(stored["Body"].read())["applied"] == report["applied"]


def test_second_review_changes_nothing(api: Api, world: World) -> None:
    save(api, world, "The build cache lives in S3")
    save(api, world, "The build cache lives in S3.")
    review(api, world)
    before = every_memory(api, world)
    again = review(api, world)
    assert again["plan"]["actions"] == [] and again["applied"] == []
    assert every_memory(api, world) == before


def test_dry_run_returns_the_plan_and_changes_nothing(api: Api, world: World) -> None:
    save(api, world, "Use pnpm, not npm")
    save(api, world, "use pnpm, not npm")
    before = every_memory(api, world)
    report = review(api, world, dry_run=True)
    assert report["dryRun"] is True
    assert [a["action"] for a in report["plan"]["actions"]] == ["merge"]
    assert report["applied"] == [] and report["reportKey"] is None
    assert every_memory(api, world) == before
    status, listed = api.call("GET", f"/reviews?agentId={world.agent.id}", world.person)
    assert status == 200 and listed["data"] == []


def test_expired_facts_are_renewed_replaced_or_archived(
    api: Api, world: World, clock: FixedClock
) -> None:
    soon = (clock.now() + timedelta(days=2)).date().isoformat()
    recalled = save(api, world, "Grafana dashboards are under ops/metrics", expiresAt=soon)
    covered = save(api, world, "The release branch is named release-2026", expiresAt=soon)
    forgotten = save(api, world, "Lunch orders go in the kitchen channel", expiresAt=soon)
    clock.set(clock.now() + timedelta(days=1))
    newer = save(api, world, "The release branch is named release-2026 and is cut on Mondays")
    clock.set(clock.now() + timedelta(days=9))
    # Recall never picks an expired fact: record a recall 5 days ago straight in the table.
    table = wiring.services().settings.table_name
    boto3.client("dynamodb", region_name="us-east-1").update_item(
        TableName=table,
        Key={"pk": {"S": f"MEMORY#{recalled['id']}"}, "sk": {"S": "MEMORY"}},
        UpdateExpression="SET lastRecalledAt = :at, recallCount = :one",
        ExpressionAttributeValues={
            ":at": {"S": "2026-12-05T12:00:00.000Z"},
            ":one": {"N": "1"},
        },
    )
    report = review(api, world)
    by_memory = {a["memoryIds"][0]: a for a in report["plan"]["actions"]}
    assert by_memory[recalled["id"]]["action"] == "renew"
    assert by_memory[covered["id"]]["action"] == "replace"
    assert by_memory[covered["id"]]["keepId"] == newer["id"]
    assert by_memory[forgotten["id"]]["action"] == "archive"
    assert by_memory[forgotten["id"]]["reason"] == "expired"
    memories = {m["id"]: m for m in every_memory(api, world)}
    assert memories[recalled["id"]]["status"] == "active"
    assert memories[recalled["id"]]["expired"] is False
    assert memories[covered["id"]]["supersededBy"] == newer["id"]
    assert memories[forgotten["id"]]["archiveReason"] == "expired"


def test_durable_day_lines_are_lifted_once_and_a_veto_is_final(
    api: Api, world: World, clock: FixedClock, dynamodb: Any
) -> None:
    for line in (
        "!fact The staging database is db-stg-2",
        "ran the tests",
        "[durable] CI runs on arm64",
    ):
        assert api.call("POST", "/memories/day", world.agent, {"line": line})[0] in (200, 201)
    clock.set(clock.now() + timedelta(days=1))
    report = review(api, world)
    lifted = [a for a in report["applied"] if a["action"] == "lift"]
    assert len(lifted) == 2
    texts = live_texts(api, world)
    assert "The staging database is db-stg-2" in texts and "CI runs on arm64" in texts
    assert not any("ran the tests" in text for text in texts if "\n" not in text)
    fact = next(m for m in every_memory(api, world) if m["text"] == "CI runs on arm64")
    # Embedded when lifted, as a save would be: recall does not re-embed it.
    key = {"pk": {"S": f"MEMORY#{fact['id']}"}, "sk": {"S": "MEMORY"}}
    item = dynamodb.get_item(TableName=TABLE, Key=key)["Item"]
    assert is_current(bytes(item["embedding"]["B"]))
    assert api.call("POST", f"/memories/{fact['id']}/veto", world.person, {})[0] == 200
    again = review(api, world)
    assert [a for a in again["plan"]["actions"] if a["action"] == "lift"] == []
    assert any("vetoed" in note for note in again["plan"]["notes"])
    assert "CI runs on arm64" not in live_texts(api, world)


def test_contradicting_facts_without_evidence_wait_for_a_person(api: Api, world: World) -> None:
    """docs/issues.md#issue-14: run provenance alone no longer decides a conflict; only saved
    evidence does (docs/reference.md#review-step-5). Without it both stay live and a person
    decides."""
    person_fact = api.call(
        "POST",
        "/memories",
        world.person,
        {"text": "The nightly job is enabled in prod", "agentId": world.agent.id},
    )[1]
    status, agent_fact = api.call(
        "POST",
        "/memories",
        world.agent,
        {"text": "The nightly job is not enabled in prod"},
        headers={"X-Pinework-Run": "run_77"},
    )
    assert status == 201
    report = review(api, world)
    (action,) = report["plan"]["actions"]
    assert action["action"] == "resolve_conflict" and action["waitsForPerson"] is True
    assert action["keepId"] == agent_fact["id"] and action["memoryIds"] == [person_fact["id"]]
    assert report["applied"] == [] and report["status"] == "pending"
    assert {m["id"] for m in every_memory(api, world) if m["status"] == "active"} == {
        person_fact["id"],
        agent_fact["id"],
    }


def test_stale_facts_covered_by_newer_ones_are_archived(
    api: Api, world: World, clock: FixedClock
) -> None:
    old = save(api, world, "The docs site builds with mkdocs", expiresAt="2027-12-31")
    clock.set(clock.now() + timedelta(days=10))
    save(api, world, "The docs site builds with mkdocs material theme", expiresAt="2027-12-31")
    clock.set(clock.now() + timedelta(days=31))
    report = review(api, world)
    (action,) = report["plan"]["actions"]
    assert action["action"] == "archive" and action["memoryIds"] == [old["id"]]
    assert action["reason"].startswith("stale")


def test_reports_are_listed_and_read_by_persons(api: Api, world: World) -> None:
    save(api, world, "Ship on Tuesdays")
    save(api, world, "ship on tuesdays")
    first = review(api, world)
    second = review(api, world)
    status, listed = api.call("GET", f"/reviews?agentId={world.agent.id}", world.person)
    assert status == 200
    assert [s["id"] for s in listed["data"]] == [second["id"], first["id"]]
    assert listed["data"][1]["applied"] == 1 and listed["data"][0]["planned"] == 0
    status, page = api.call("GET", f"/reviews?agentId={world.agent.id}&limit=1", world.person)
    assert [s["id"] for s in page["data"]] == [second["id"]] and page["nextToken"]
    status, rest = api.call(
        "GET",
        f"/reviews?agentId={world.agent.id}&limit=1&nextToken={page['nextToken']}",
        world.person,
    )
    assert [s["id"] for s in rest["data"]] == [first["id"]]
    status, full = api.call("GET", f"/reviews/{first['id']}", world.person)
    assert status == 200 and full["plan"] == first["plan"] and full["applied"] == first["applied"]
    assert api.call("GET", f"/reviews/{first['id']}", world.agent)[0] == 200
    assert error_code(api.call("GET", f"/reviews/{first['id']}", world.outsider)) == (
        404,
        "not_found",
    )
    assert error_code(api.call("GET", "/reviews/rvw_nope", world.person)) == (404, "not_found")


def test_bad_review_requests_change_nothing(api: Api, world: World) -> None:
    save(api, world, "Keep one")
    save(api, world, "keep one")
    before = every_memory(api, world)
    assert error_code(api.call("POST", "/reviews", world.agent, {"agentId": world.agent.id})) == (
        403,
        "forbidden",
    )
    assert error_code(api.call("POST", "/reviews", world.person, {})) == (
        400,
        "memory_agent_required",
    )
    assert error_code(
        api.call("POST", "/reviews", world.person, {"agentId": world.agent.id, "dryRun": "yes"})
    ) == (400, "invalid_request")
    assert error_code(api.call("POST", "/reviews", world.person, raw=b"[1]")) == (
        400,
        "invalid_request",
    )
    assert error_code(
        api.call("POST", "/reviews", world.outsider, {"agentId": world.agent.id})
    ) == (403, "forbidden")
    assert error_code(api.call("GET", "/reviews?agentId=x&limit=0", world.person))[0] == 400
    assert every_memory(api, world) == before


def test_deciding_an_undone_action_says_it_was_undone(
    api: Api, world: World, wired: wiring.Services
) -> None:
    save(api, world, "Deploys need the VPN on")
    save(api, world, "deploys need the VPN on!")
    report = review(api, world)
    path = f"/reviews/{report['id']}/actions/a1"
    before = api.call("POST", f"{path}/approve", world.person, {})
    assert error_code(before) == (409, "conflict") and "undo it instead" in str(before[1])
    assert api.call("POST", f"{path}/undo", world.person, {})[0] == 200
    for verb in ("approve", "reject"):
        status, body = api.call("POST", f"{path}/{verb}", world.person, {})
        assert (status, body["error"]["code"]) == (409, "conflict")
        message = body["error"]["message"]
        assert f"{world.person.id} undid it at" in message and "undo it instead" not in message
    # Approval mode: approved, then undone; a second decision names both.
    wired.admin.set_review_approval(world.workspace_id, "required")
    save(api, world, "Use pnpm, not npm")
    save(api, world, "use pnpm, not npm")
    second = review(api, world)
    path = f"/reviews/{second['id']}/actions/a1"
    assert api.call("POST", f"{path}/approve", world.person, {})[0] == 200
    assert api.call("POST", f"{path}/undo", world.person, {})[0] == 200
    status, body = api.call("POST", f"{path}/reject", world.person, {})
    assert (status, body["error"]["code"]) == (409, "conflict")
    assert f"then undone by {world.person.id} at" in body["error"]["message"]
