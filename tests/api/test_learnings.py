"""Learnings (docs/reference.md#15-learnings, docs/issues.md#issue-25): an agent proposes, a person
approves (editing first), rejects or retires; every agent of the workspace is told the
active ones in their own block before its memories; a rejected text stays rejected."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.services import learnings as learning_rules
from tests.helpers import Api, World

VPN = "Staging deploys need the VPN turned on first"


def propose(api: Api, actor: Any, text: str, **headers: str) -> tuple[int, dict[str, str], Any]:
    return api.send("POST", "/learnings", actor, {"text": text}, headers=headers)


def test_an_agent_proposes_a_person_approves_and_every_agent_is_told(
    api: Api, world: World
) -> None:
    status, headers, proposed = propose(api, world.agent, VPN, **{"X-Pinework-Run": "run-7"})
    assert status == 201, proposed
    assert (proposed["state"], proposed["proposedBy"], proposed["runId"]) == (
        "proposed",
        world.agent.id,
        "run-7",
    )
    assert proposed["id"].startswith("lrn_") and headers["ETag"] == f'"{proposed["id"]}.v1"'
    # the same fact again, in other words' case: the live learning, not a second one
    status, again = api.call("POST", "/learnings", world.other_agent, {"text": VPN.lower()})
    assert status == 200 and again["id"] == proposed["id"]
    path = f"/learnings/{proposed['id']}"
    assert api.call("POST", f"{path}/approve", world.agent, {})[0] == 403

    # not yet active: no agent is told it
    status, recall = api.call(
        "POST", "/memories/recall", world.other_agent, {"query": "deploy to staging"}
    )
    assert status == 200 and recall["learnings"] == [] and "LEARNINGS" not in recall["block"]

    edited = "Staging deploys need the corporate VPN turned on first"
    status, stale = api.call(
        "POST", f"{path}/approve", world.person, {"text": edited}, headers={"If-Match": '"x"'}
    )
    assert (status, stale["error"]["code"]) == (412, "precondition_failed")
    status, approved = api.call(
        "POST",
        f"{path}/approve",
        world.person,
        {"text": edited},
        headers={"If-Match": headers["ETag"]},
    )
    assert status == 200, approved
    assert (approved["state"], approved["text"], approved["decidedBy"]) == (
        "active",
        edited,
        world.person.id,
    )
    assert api.call("POST", f"{path}/approve", world.person, {})[1]["error"]["code"] == (
        "learning_decided"
    )

    api.call("POST", "/memories", world.other_agent, {"text": "The staging cluster is stg-eu-1"})
    status, recall = api.call(
        "POST", "/memories/recall", world.other_agent, {"query": "how do I deploy to staging?"}
    )
    assert status == 200
    assert [item["learning"]["id"] for item in recall["learnings"]] == [proposed["id"]]
    block = recall["block"]
    assert block.index("--- LEARNINGS") < block.index("--- MEMORY ---")
    assert f"{proposed['id']} (" in block and edited in block
    log = api.call("GET", "/recalls", world.other_agent)[1]["data"][0]
    assert [entry["learningId"] for entry in log["learnings"]] == [proposed["id"]]

    history = api.call("GET", f"{path}/history", world.agent)[1]["data"]
    assert [record["action"] for record in history] == ["propose", "approve"]
    assert history[1]["before"] == {"state": "proposed", "text": VPN}
    assert history[1]["after"] == {"state": "active", "text": edited}

    retired = api.call("POST", f"{path}/retire", world.person, {"reason": "VPN is gone"})[1]
    assert retired["state"] == "retired" and retired["reason"] == "VPN is gone"
    status, recall = api.call(
        "POST", "/memories/recall", world.other_agent, {"query": "how do I deploy to staging?"}
    )
    assert recall["learnings"] == [] and "LEARNINGS" not in recall["block"]
    listed = api.call("GET", "/learnings?state=retired", world.agent)[1]["data"]
    assert [found["id"] for found in listed] == [proposed["id"]]


def test_a_rejected_learning_is_not_proposed_again(api: Api, world: World) -> None:
    proposed = propose(api, world.agent, "Friday deploys skip the review")[2]
    path = f"/learnings/{proposed['id']}"
    assert api.call("POST", f"{path}/reject", world.person, {"reason": "   "})[0] == 400
    rejected = api.call("POST", f"{path}/reject", world.person, {"reason": "never true"})[1]
    assert rejected["state"] == "rejected"
    for text in ("Friday deploys skip the review", "friday deploys skip the review!"):
        status, refused = api.call("POST", "/learnings", world.other_agent, {"text": text})
        assert (status, refused["error"]["code"]) == (409, "learning_rejected"), text
        assert proposed["id"] in refused["error"]["message"]
    assert api.call("POST", f"{path}/retire", world.person, {})[1]["error"]["code"] == (
        "learning_decided"
    )
    # a person may still say it: active at once
    status, _, mine = propose(api, world.person, "Friday deploys skip the review")
    assert status == 201 and mine["state"] == "active" and mine["proposedByType"] == "person"


def test_texts_ids_and_workspaces_are_checked(api: Api, world: World) -> None:
    assert (
        api.call("POST", "/learnings", world.agent, {"text": "x" * 501})[1]["error"]["code"]
        == "memory_text_too_long"
    )
    assert api.call("POST", "/learnings", world.agent, {"text": " \u200b "})[0] == 400
    secret = "the deploy key is ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    assert (
        api.call("POST", "/learnings", world.agent, {"text": secret})[1]["error"]["code"]
        == "secret_in_memory"
    )
    proposed = propose(api, world.agent, "Builds cache in the artifacts bucket")[2]
    for actor in (world.outsider, world.outsider_agent):
        status, body = api.call("GET", f"/learnings/{proposed['id']}", actor)
        assert (status, body["error"]["code"]) == (404, "learning_not_found")
    assert api.call("GET", "/learnings/lrn_nope", world.person)[0] == 404
    assert api.call("GET", "/learnings", world.outsider)[1]["data"] == []
    assert api.call("GET", "/learnings", world.person)[1]["data"][0]["id"] == proposed["id"]


def test_proposals_are_limited_per_agent_and_per_workspace(
    api: Api, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(learning_rules, "LEARNING_PROPOSALS_PER_DAY", 2)
    monkeypatch.setattr(learning_rules, "MAX_LIVE_LEARNINGS", 3)
    assert propose(api, world.agent, "The CI runners are arm64")[0] == 201
    assert propose(api, world.agent, "Docs live in the handbook repo")[0] == 201
    status, _, limited = propose(api, world.agent, "Releases are cut on Tuesdays")
    assert (status, limited["error"]["code"]) == (429, "rate_limited")
    assert propose(api, world.other_agent, "Releases are cut on Tuesdays")[0] == 201
    status, _, full = propose(api, world.person, "Pager duty rotates weekly")
    assert (status, full["error"]["code"]) == (409, "learning_limit_reached")
    first = api.call("GET", "/learnings", world.person)[1]["data"][-1]
    api.call("POST", f"/learnings/{first['id']}/reject", world.person, {"reason": "wrong"})
    assert propose(api, world.person, "Pager duty rotates weekly")[0] == 201
