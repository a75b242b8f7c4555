"""What a run saw (docs/reference.md#what-a-run-saw, docs/issues.md#issue-46-item-4):
``GET /recalls/{id}/block`` rebuilds the block a logged recall gave from the log and the
audit history, the same block while nothing changed, each fact as it was then after
edits, erased text left out and named, and who may read it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from chalicelib.ids import FixedClock
from tests.helpers import START, Api, World, error_code, save

STAGING = "The staging deploy needs the VPN on"
BASTION = "Staging deploys run through the bastion host bastion-2"


def recalled(api: Api, world: World, query: str) -> dict[str, Any]:
    status, body = api.call("POST", "/memories/recall", world.agent, {"query": query})
    assert status == 200 and body["recallId"], body
    return dict(body)


def block_of(api: Api, world: World, recall_id: str) -> dict[str, Any]:
    path = f"/recalls/{recall_id}/block?agentId={world.agent.id}"
    status, body = api.call("GET", path, world.person)
    assert status == 200, body
    return dict(body)


def test_the_rebuilt_block_is_the_block_given_while_nothing_changed(
    api: Api, world: World, clock: FixedClock
) -> None:
    save(api, world, STAGING)
    save(api, world, BASTION)
    assert api.call("POST", "/memories/day", world.agent, {"line": "fixed the deploy"})[0] == 201
    clock.set(START + timedelta(minutes=5))
    given = recalled(api, world, "how do I deploy to staging?")
    assert STAGING in given["block"] and "fixed the deploy" in given["block"]
    clock.set(START + timedelta(minutes=9))
    # A later day line is not in what the run saw.
    assert api.call("POST", "/memories/day", world.agent, {"line": "later work"})[0] == 200
    seen = block_of(api, world, given["recallId"])
    assert seen["object"] == "recall_block" and seen["rebuilt"] is True
    assert seen["block"] == given["block"]
    assert (seen["recallId"], seen["agentId"], seen["kind"]) == (
        given["recallId"],
        world.agent.id,
        "on_demand",
    )
    assert seen["erased"] == [] and seen["learningsChanged"] == []
    own = api.call("GET", f"/recalls/{given['recallId']}/block", world.agent)
    assert own[0] == 200 and own[1]["block"] == given["block"]


def test_facts_are_shown_as_they_were_and_erased_text_is_left_out(
    api: Api, world: World, clock: FixedClock
) -> None:
    staging = save(api, world, STAGING)["id"]
    bastion = save(api, world, BASTION)["id"]
    clock.set(START + timedelta(minutes=5))
    given = recalled(api, world, "how do I deploy to staging?")
    shown = {item["memory"]["id"] for item in given["memories"]}
    assert shown == {staging, bastion}
    clock.set(START + timedelta(minutes=6))
    edited = {"text": "The staging deploy needs the office VPN on"}
    assert api.call("PATCH", f"/memories/{staging}", world.person, edited)[0] == 200
    erased = {"reason": "personal data"}
    assert api.call("POST", f"/memories/{bastion}/erase", world.person, erased)[0] == 200
    seen = block_of(api, world, given["recallId"])
    assert STAGING in seen["block"] and "office VPN" not in seen["block"]
    assert "bastion-2" not in seen["block"] and bastion not in seen["block"]
    assert seen["erased"] == [bastion]
    assert seen["block"].startswith("--- MEMORY ---") and seen["block"].endswith("---")


def test_a_learning_changed_since_is_left_out_and_named(
    api: Api, world: World, clock: FixedClock
) -> None:
    status, proposed = api.call("POST", "/learnings", world.agent, {"text": STAGING})
    assert status == 201
    path = f"/learnings/{proposed['id']}"
    assert api.call("POST", f"{path}/approve", world.person, {})[0] == 200
    save(api, world, BASTION)
    clock.set(START + timedelta(minutes=5))
    given = recalled(api, world, "how do I deploy to staging?")
    assert [item["learning"]["id"] for item in given["learnings"]] == [proposed["id"]]
    assert block_of(api, world, given["recallId"])["block"] == given["block"]
    clock.set(START + timedelta(minutes=6))
    assert api.call("POST", f"{path}/retire", world.person, {"reason": "moved"})[0] == 200
    seen = block_of(api, world, given["recallId"])
    assert seen["learningsChanged"] == [proposed["id"]] and STAGING not in seen["block"]
    assert "bastion-2" in seen["block"]


def test_who_may_read_a_runs_block(api: Api, world: World) -> None:
    save(api, world, STAGING)
    given = recalled(api, world, "staging deploy")
    recall_id = given["recallId"]
    theirs = api.call(
        "GET", f"/recalls/{recall_id}/block?agentId={world.agent.id}", world.other_agent
    )
    assert error_code(theirs) == (403, "memory_not_own")
    # Named under another agent of the workspace, the id is not in that agent's log.
    other = api.call(
        "GET", f"/recalls/{recall_id}/block?agentId={world.other_agent.id}", world.person
    )
    assert error_code(other) == (404, "recall_not_found")
    outsider = api.call(
        "GET", f"/recalls/{recall_id}/block?agentId={world.agent.id}", world.outsider
    )
    assert outsider[0] == 403
    unnamed = api.call("GET", f"/recalls/{recall_id}/block", world.person)
    assert error_code(unnamed) == (400, "memory_agent_required")
    missing = api.call("GET", "/recalls/rcl_01M8P570G0QJRZ8T2NSWNPVZ62/block", world.agent)
    assert error_code(missing) == (404, "recall_not_found")
    preview = api.call(
        "POST", "/memories/recall", world.agent, {"query": "staging", "count": False}
    )
    assert preview[1]["recallId"] is None  # a preview is not logged: nothing to rebuild
