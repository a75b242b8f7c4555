"""Approval mode of the daily review (docs/issues.md#issue-4-item-6 and
docs/issues.md#issue-4-item-8): with the workspace setting ``reviewApproval: required`` a review
applies nothing, and persons approve or reject each action; approval mode applies only approved
actions."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import wiring
from chalicelib.errors import InvalidRequest
from chalicelib.ids import FixedClock
from tests.helpers import BUCKET, Api, World, error_code, every_memory, review, save


@pytest.fixture
def approval(wired: wiring.Services, world: World) -> None:
    """The world's workspace reviews in approval mode."""
    workspace = wired.admin.set_review_approval(world.workspace_id, "required")
    assert workspace.review_approval == "required"


def two_duplicate_pairs(api: Api, world: World) -> None:
    save(api, world, "Deploys need the VPN on")
    save(api, world, "deploys need the VPN on!")
    save(api, world, "Use pnpm, not npm")
    save(api, world, "use pnpm, not npm")


def decide(api: Api, world: World, review_id: str, action: str, verb: str) -> dict[str, Any]:
    status, body = api.call(
        "POST", f"/reviews/{review_id}/actions/{action}/{verb}", world.person, {}
    )
    assert status == 200, body
    assert body["object"] == "review"
    return dict(body)


def states(report: dict[str, Any]) -> dict[str, str]:
    return {d["actionId"]: d["state"] for d in report["decisions"]}


def summaries(api: Api, world: World) -> list[dict[str, Any]]:
    status, listed = api.call("GET", f"/reviews?agentId={world.agent.id}", world.person)
    assert status == 200, listed
    return list(listed["data"])


def by_id(api: Api, world: World) -> dict[str, dict[str, Any]]:
    return {m["id"]: m for m in every_memory(api, world)}


@pytest.mark.usefixtures("approval")
def test_approval_mode_applies_nothing_and_shows_pending_actions(
    api: Api, world: World, s3: Any
) -> None:
    two_duplicate_pairs(api, world)
    before = every_memory(api, world)
    report = review(api, world)
    assert report["approval"] == "required" and report["status"] == "pending"
    assert [a["action"] for a in report["plan"]["actions"]] == ["merge", "merge"]
    assert states(report) == {"a1": "pending", "a2": "pending"}
    assert report["decisions"][0]["decidedBy"] is None
    assert report["applied"] == [] and report["skipped"] == []
    assert every_memory(api, world) == before
    status, shown = api.call("GET", f"/reviews/{report['id']}", world.person)
    assert status == 200 and shown == report
    (summary,) = summaries(api, world)
    assert (summary["status"], summary["approval"], summary["pending"]) == (
        "pending",
        "required",
        2,
    )
    stored = json.loads(s3.get_object(Bucket=BUCKET, Key=report["reportKey"])["Body"].read())
    assert stored["status"] == "pending" and states(stored) == states(report)


@pytest.mark.usefixtures("approval")
def test_approval_mode_applies_only_approved_actions(
    api: Api, world: World, s3: Any, clock: FixedClock
) -> None:
    two_duplicate_pairs(api, world)
    report = review(api, world)
    first, second = report["plan"]["actions"]
    clock.set(clock.now() + timedelta(hours=2))
    approved = decide(api, world, report["id"], "1", "approve")
    assert states(approved) == {"a1": "applied", "a2": "pending"}
    decision = approved["decisions"][0]
    assert decision["decidedBy"] == world.person.id
    assert decision["decidedAt"] == "2026-11-30T14:00:00.000Z"
    assert [o["actionId"] for o in approved["applied"]] == ["a1"]
    assert approved["applied"][0]["detail"] == f"superseded by {first['keepId']}"
    memories = by_id(api, world)
    (loser,) = first["memoryIds"]
    assert memories[loser]["supersededBy"] == first["keepId"]
    for untouched in [*second["memoryIds"], second["keepId"]]:
        assert memories[untouched]["status"] == "active"
    status, history = api.call("GET", f"/memories/{loser}/history", world.person)
    assert status == 200
    last = history["data"][-1]
    assert (last["action"], last["actorType"], last["actorId"]) == (
        "supersede",
        "system",
        report["id"],
    )
    assert f"approved by {world.person.id}" in last["reason"]
    rejected = decide(api, world, report["id"], "a2", "reject")
    assert states(rejected) == {"a1": "applied", "a2": "rejected"}
    assert rejected["status"] == "done" and rejected["decisions"][1]["decidedBy"] == world.person.id
    for untouched in [*second["memoryIds"], second["keepId"]]:
        assert by_id(api, world)[untouched]["status"] == "active"
    (summary,) = summaries(api, world)
    assert {k: summary[k] for k in ("status", "applied", "skipped", "rejected", "pending")} == {
        "status": "done",
        "applied": 1,
        "skipped": 0,
        "rejected": 1,
        "pending": 0,
    }
    stored = json.loads(s3.get_object(Bucket=BUCKET, Key=report["reportKey"])["Body"].read())
    assert stored["status"] == "done" and stored["decisions"] == rejected["decisions"]
    assert api.call("GET", f"/reviews/{report['id']}", world.agent)[1] == rejected


@pytest.mark.usefixtures("approval")
def test_a_decided_action_cannot_be_decided_again(api: Api, world: World) -> None:
    two_duplicate_pairs(api, world)
    report = review(api, world)
    path = f"/reviews/{report['id']}/actions"
    decide(api, world, report["id"], "1", "approve")
    assert error_code(api.call("POST", f"{path}/1/approve", world.person, {})) == (
        409,
        "conflict",
    )
    assert error_code(api.call("POST", f"{path}/a1/reject", world.person, {})) == (
        409,
        "conflict",
    )
    decide(api, world, report["id"], "2", "reject")
    before = every_memory(api, world)
    status, body = api.call("POST", f"{path}/2/approve", world.person, {})
    assert (status, body["error"]["code"]) == (409, "conflict")
    assert "rejected" in body["error"]["message"] and world.person.id in body["error"]["message"]
    assert every_memory(api, world) == before
    shown = api.call("GET", f"/reviews/{report['id']}", world.person)[1]
    assert states(shown) == {"a1": "applied", "a2": "rejected"}


@pytest.mark.usefixtures("approval")
def test_an_action_whose_memory_changed_is_skipped_with_the_reason(api: Api, world: World) -> None:
    save(api, world, "Use pnpm, not npm")
    save(api, world, "use pnpm, not npm")
    report = review(api, world)
    (action,) = report["plan"]["actions"]
    (loser,) = action["memoryIds"]
    status, _ = api.call("PATCH", f"/memories/{loser}", world.person, {"text": "Use pnpm 9"})
    assert status == 200
    decided = decide(api, world, report["id"], "1", "approve")
    assert states(decided) == {"a1": "skipped"}
    assert decided["skipped"][0]["detail"] == f"{loser} changed since the plan was made"
    assert decided["decisions"][0]["detail"] == decided["skipped"][0]["detail"]
    assert decided["applied"] == [] and decided["status"] == "done"
    assert by_id(api, world)[loser]["status"] == "active"
    (summary,) = summaries(api, world)
    assert (summary["skipped"], summary["pending"]) == (1, 0)


@pytest.mark.usefixtures("approval")
def test_an_approved_lift_creates_the_fact(api: Api, world: World, clock: FixedClock) -> None:
    assert api.call("POST", "/memories/day", world.agent, {"line": "!fact CI runs on arm64"})[
        0
    ] in (
        200,
        201,
    )
    clock.set(clock.now() + timedelta(days=1))
    report = review(api, world)
    assert [a["action"] for a in report["plan"]["actions"]] == ["lift"]
    assert not [m for m in every_memory(api, world) if m["text"] == "CI runs on arm64"]
    decided = decide(api, world, report["id"], "a1", "approve")
    created = decided["decisions"][0]["createdId"]
    assert created and decided["applied"][0]["createdId"] == created
    assert by_id(api, world)[created]["text"] == "CI runs on arm64"


@pytest.mark.usefixtures("approval")
@pytest.mark.parametrize("vetoed", [False, True])
def test_an_approved_lift_is_checked_again_for_a_twin_saved_since_the_plan(
    api: Api, world: World, clock: FixedClock, vetoed: bool
) -> None:
    """docs/reference.md#review-step-3 holds at approval too: a fact saved after the plan (and,
    worse, vetoed) is neither duplicated nor brought back by approving the lift."""
    line = {"line": "!fact The cache TTL is 300 seconds"}
    assert api.call("POST", "/memories/day", world.agent, line)[0] in (200, 201)
    clock.set(clock.now() + timedelta(days=1))
    report = review(api, world)
    assert [a["action"] for a in report["plan"]["actions"]] == ["lift"]
    twin = save(api, world, "The cache TTL is 300 seconds")["id"]
    if vetoed:
        status, body = api.call(
            "POST", f"/memories/{twin}/veto", world.person, {"reason": "it is 60"}
        )
        assert status == 200, body
    before = every_memory(api, world)
    decided = decide(api, world, report["id"], "a1", "approve")
    why = "a person vetoed" if vetoed else "already a fact"
    assert states(decided) == {"a1": "skipped"}
    assert decided["skipped"][0]["detail"] == f"not lifted ({why}: {twin})"
    assert every_memory(api, world) == before


@pytest.mark.usefixtures("approval")
def test_only_persons_of_the_workspace_decide(api: Api, world: World) -> None:
    two_duplicate_pairs(api, world)
    before = every_memory(api, world)
    report = review(api, world)
    path = f"/reviews/{report['id']}/actions"
    for actor in (world.agent, world.outsider_agent):
        assert error_code(api.call("POST", f"{path}/1/approve", actor, {})) == (403, "forbidden")
        assert error_code(api.call("POST", f"{path}/1/reject", actor, {})) == (403, "forbidden")
    for verb in ("approve", "reject"):
        assert error_code(api.call("POST", f"{path}/1/{verb}", world.outsider, {})) == (
            404,
            "not_found",
        )
    assert error_code(api.call("POST", "/reviews/rvw_nope/actions/1/approve", world.person)) == (
        404,
        "not_found",
    )
    assert error_code(api.call("POST", f"{path}/3/approve", world.person, {})) == (
        404,
        "not_found",
    )
    for bad in ("0", "x", "a0", "-1", "b1"):
        assert error_code(api.call("POST", f"{path}/{bad}/approve", world.person, {})) == (
            400,
            "invalid_request",
        )
    assert error_code(api.call("POST", f"{path}/1/approve", world.person, {"note": "x"})) == (
        400,
        "invalid_request",
    )
    assert error_code(api.call("POST", f"{path}/1/approve", world.person, raw=b"{")) == (
        400,
        "invalid_request",
    )
    assert error_code(api.call("GET", f"{path}/1/approve", world.person)) == (
        405,
        "method_not_allowed",
    )
    assert error_code(api.call("POST", f"{path}/1/approve", None, {})) == (401, "unauthorized")
    assert every_memory(api, world) == before
    shown = api.call("GET", f"/reviews/{report['id']}", world.person)[1]
    assert states(shown) == {"a1": "pending", "a2": "pending"}


def test_without_approval_reviews_apply_at_once_and_nothing_waits(api: Api, world: World) -> None:
    save(api, world, "Use pnpm, not npm")
    save(api, world, "use pnpm, not npm")
    report = review(api, world)
    assert (report["approval"], report["status"], report["decisions"]) == ("none", "done", [])
    assert [a["actionId"] for a in report["applied"]] == ["a1"]
    assert error_code(
        api.call("POST", f"/reviews/{report['id']}/actions/1/approve", world.person, {})
    ) == (409, "conflict")
    (summary,) = summaries(api, world)
    assert (summary["status"], summary["approval"]) == ("done", "none")


@pytest.mark.usefixtures("approval")
def test_dry_run_in_approval_mode_changes_nothing(api: Api, world: World) -> None:
    two_duplicate_pairs(api, world)
    before = every_memory(api, world)
    report = review(api, world, dry_run=True)
    assert (report["status"], report["approval"], report["reportKey"]) == (
        "planned",
        "required",
        None,
    )
    assert len(report["plan"]["actions"]) == 2 and report["decisions"] == []
    assert every_memory(api, world) == before
    assert api.call("GET", f"/reviews?agentId={world.agent.id}", world.person)[1]["data"] == []


def test_setting_back_to_none_applies_later_reviews_again(
    api: Api, world: World, wired: wiring.Services
) -> None:
    wired.admin.set_review_approval(world.workspace_id, "required")
    save(api, world, "Use pnpm, not npm")
    save(api, world, "use pnpm, not npm")
    pending = review(api, world)
    assert pending["status"] == "pending"
    assert wired.admin.set_review_approval(world.workspace_id, " None ").review_approval == "none"
    applied = review(api, world)
    assert (applied["approval"], len(applied["applied"])) == ("none", 1)
    # The earlier review keeps the mode it ran with: its action is now skipped.
    decided = decide(api, world, pending["id"], "1", "approve")
    assert (
        states(decided) == {"a1": "skipped"} and "no longer live" in decided["skipped"][0]["detail"]
    )


def test_admin_refuses_bad_values_and_unknown_workspaces(
    wired: wiring.Services, world: World
) -> None:
    with pytest.raises(InvalidRequest):
        wired.admin.set_review_approval(world.workspace_id, "sometimes")
    with pytest.raises(InvalidRequest):
        wired.admin.set_review_approval("wsp_01JABCDEF0000000000000000", "required")
    with pytest.raises(InvalidRequest):
        wired.admin.set_review_approval("not-a-workspace", "required")


@pytest.mark.usefixtures("approval")
def test_scheduled_review_in_approval_mode_stores_one_pending_plan(
    api: Api, world: World, wired: wiring.Services
) -> None:
    two_duplicate_pairs(api, world)
    before = every_memory(api, world)
    first = wired.reviews.run_scheduled(world.workspace_id, world.agent.id, "2026-11-29")
    assert first is not None and first.status == "pending"
    assert wired.reviews.run_scheduled(world.workspace_id, world.agent.id, "2026-11-29") is None
    (summary,) = summaries(api, world)
    assert (summary["id"], summary["trigger"], summary["pending"]) == (first.id, "schedule", 2)
    assert every_memory(api, world) == before
    decide(api, world, first.id, "2", "approve")
    assert states(api.call("GET", f"/reviews/{first.id}", world.person)[1]) == {
        "a1": "pending",
        "a2": "applied",
    }


@pytest.mark.usefixtures("approval")
def test_a_rejected_action_is_not_proposed_again(
    api: Api, world: World, wired: wiring.Services
) -> None:
    two_duplicate_pairs(api, world)
    report = review(api, world)
    first, second = report["plan"]["actions"]
    decide(api, world, report["id"], "a2", "reject")
    again = review(api, world)
    assert [a["memoryIds"] for a in again["plan"]["actions"]] == [first["memoryIds"]]
    (note,) = [n for n in again["plan"]["notes"] if n.startswith("not proposed again")]
    assert second["memoryIds"][0] in note and f"{report['id']} a2 by {world.person.id}" in note
    # The person's decision outlives the setting: without approval it is still not applied.
    wired.admin.set_review_approval(world.workspace_id, "none")
    applied = review(api, world)
    assert [o["actionId"] for o in applied["applied"]] == ["a1"]
    for kept in [*second["memoryIds"], second["keepId"]]:
        assert by_id(api, world)[kept]["status"] == "active"


@pytest.mark.usefixtures("approval")
def test_a_rejected_merge_holds_when_a_new_duplicate_joins_the_group(
    api: Api, world: World
) -> None:
    save(api, world, "Use pnpm, not npm")
    save(api, world, "use pnpm, not npm")
    report = review(api, world)
    (merge,) = report["plan"]["actions"]
    (loser,) = merge["memoryIds"]
    decide(api, world, report["id"], "1", "reject")
    newcomer = save(api, world, "USE pnpm, not npm!")["id"]
    again = review(api, world)
    (action,) = again["plan"]["actions"]
    # The newcomer keeps (newest); the two whose merge was rejected are not folded
    # together into it: only one of them is.
    assert action["keepId"] == newcomer and len(action["memoryIds"]) == 1
    assert sorted([*action["memoryIds"], *action["expectedVersions"]]) == sorted(
        [action["memoryIds"][0], action["memoryIds"][0], newcomer]
    )
    (note,) = [n for n in again["plan"]["notes"] if n.startswith("not proposed again")]
    assert loser in note and merge["keepId"] in note and f"{report['id']} a1" in note


@pytest.mark.usefixtures("approval")
@pytest.mark.parametrize(
    ("ref", "status", "shown"),
    [
        ("%202", 400, "' 2' is not an action"),
        ("%2e%2e", 400, "'..' is not an action"),
        ("9" * 400, 404, "has no action '" + "9" * 40 + "…'"),
        ("999", 404, "has no action '999'"),
        ("a999", 404, "has no action 'a999'"),
    ],
)
def test_action_references_are_decoded_and_out_of_range_is_not_found(
    api: Api, world: World, ref: str, status: int, shown: str
) -> None:
    two_duplicate_pairs(api, world)
    report = review(api, world)
    got, body = api.call("POST", f"/reviews/{report['id']}/actions/{ref}/approve", world.person, {})
    assert got == status and shown in body["error"]["message"], body
    assert len(body["error"]["message"]) < 200
