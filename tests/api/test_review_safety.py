"""A review that never destroys information (docs/issues.md#issue-14, items 1 to 3) through
the HTTP API: the issue's reproductions (ports, names, vault paths, a longer fact) are not
merged but wait for a person, pending actions are listed and decided, and every
applied action can be undone by a person."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from chalicelib import wiring
from chalicelib.ids import FixedClock
from tests.helpers import Api, World, error_code, every_memory, review, save

REPRODUCTIONS = {
    "port": (
        "Production database runs PostgreSQL on port 5432 in region us-east-1 behind the "
        "pgbouncer connection pool with nightly backups to the archive bucket",
        "Production database runs PostgreSQL on port 6432 in region us-east-1 behind the "
        "pgbouncer connection pool with nightly backups to the archive bucket",
    ),
    "name": (
        "Ana approves production deploys for the payments service after the Friday change board",
        "Bob approves production deploys for the payments service after the Friday change board",
    ),
    "vault path": (
        "The payments service reads its database password from kv/payments/staging in Vault",
        "The payments service reads its database password from kv/payments/production in Vault",
    ),
}


def by_id(api: Api, world: World) -> dict[str, dict[str, Any]]:
    return {m["id"]: m for m in every_memory(api, world)}


def action_call(
    api: Api, world: World, report: dict[str, Any], action: str, verb: str, body: Any = None
) -> tuple[int, Any]:
    path = f"/reviews/{report['id']}/actions/{action}/{verb}"
    return api.call("POST", path, world.person, {} if body is None else body)


def pending(api: Api, world: World, query: str = "") -> list[dict[str, Any]]:
    status, body = api.call("GET", f"/reviews/pending{query}", world.person)
    assert status == 200, body
    assert body["object"] == "list"
    return list(body["data"])


@pytest.mark.parametrize("case", list(REPRODUCTIONS))
def test_one_different_detail_is_never_merged_and_waits_for_a_person(
    api: Api, world: World, case: str
) -> None:
    older_text, newer_text = REPRODUCTIONS[case]
    older = save(api, world, older_text)
    newer = save(api, world, newer_text)
    dry = review(api, world, dry_run=True)
    (planned,) = dry["plan"]["actions"]
    assert planned["action"] == "resolve_conflict" and planned["waitsForPerson"] is True
    report = review(api, world)
    (action,) = report["plan"]["actions"]
    assert (action["keepId"], action["memoryIds"]) == (newer["id"], [older["id"]])
    assert report["applied"] == [] and report["status"] == "pending"
    assert [(d["actionId"], d["state"]) for d in report["decisions"]] == [("a1", "pending")]
    memories = by_id(api, world)
    assert memories[older["id"]]["status"] == memories[newer["id"]]["status"] == "active"
    (waiting,) = pending(api, world)
    assert (waiting["object"], waiting["reviewId"], waiting["agentId"]) == (
        "pending_action",
        report["id"],
        world.agent.id,
    )
    assert waiting["action"] == action
    # Asked once: the next night's review does not propose the pair again.
    again = review(api, world)
    assert again["plan"]["actions"] == []
    assert any("waits for a person" in note for note in again["plan"]["notes"])
    assert len(pending(api, world)) == 1
    # A person approves (the newer one is kept), then undoes it: both live again.
    assert action_call(api, world, report, "a1", "approve")[0] == 200
    assert by_id(api, world)[older["id"]]["supersededBy"] == newer["id"]
    status, undone = action_call(api, world, report, "a1", "undo")
    assert status == 200 and [u["actionId"] for u in undone["undone"]] == ["a1"]
    memories = by_id(api, world)
    assert memories[older["id"]]["status"] == memories[newer["id"]]["status"] == "active"


OTHER_SUBJECTS = [
    ("The prod database listens on port 6432", "The staging database listens on port 5432"),
    ("The us-east-1 cluster has 12 nodes", "The eu-west-1 cluster has 8 nodes"),
    ("Python 3.11 is used by the API", "Python 3.12 is used by the worker"),
]


def test_facts_about_different_subjects_are_not_a_conflict_but_one_subject_is(
    api: Api, world: World
) -> None:
    """A user's reproductions (environment, region, component): nothing to decide;
    the same subject with another value still waits for a person."""
    saved = [save(api, world, text)["id"] for pair in OTHER_SUBJECTS for text in pair]
    report = review(api, world)
    assert report["plan"]["actions"] == [] and pending(api, world) == []
    memories = by_id(api, world)
    assert all(memories[i]["status"] == "active" for i in saved)
    same = save(api, world, "The prod database listens on port 5432")
    report = review(api, world)
    (action,) = report["plan"]["actions"]
    assert action["action"] == "resolve_conflict" and action["waitsForPerson"] is True
    assert (action["keepId"], action["memoryIds"]) == (same["id"], [saved[0]])
    assert [w["action"]["keepId"] for w in pending(api, world)] == [same["id"]]


def test_a_longer_fact_keeps_its_clause(api: Api, world: World) -> None:
    longer = save(api, world, "Nightly backups go to the archive bucket and are kept for 35 days")
    save(api, world, "Nightly backups go to the archive bucket")
    report = review(api, world)
    assert report["plan"]["actions"] == []
    assert by_id(api, world)[longer["id"]]["status"] == "active"


def test_a_person_picks_the_side_of_a_conflict_and_can_undo_it(api: Api, world: World) -> None:
    older = save(api, world, REPRODUCTIONS["port"][0])
    newer = save(api, world, REPRODUCTIONS["port"][1])
    report = review(api, world)
    assert error_code(
        action_call(
            api, world, report, "a1", "approve", {"keepId": "mem_01KAAAAAAAAAAAAAAAAAAAAA99"}
        )
    ) == (400, "invalid_request")
    status, decided = action_call(api, world, report, "a1", "approve", {"keepId": older["id"]})
    assert status == 200, decided
    assert decided["decisions"][0]["state"] == "applied"
    assert decided["decisions"][0]["keepId"] == older["id"]
    assert decided["applied"][0]["memoryIds"] == [newer["id"]]
    assert decided["status"] == "done" and pending(api, world) == []
    memories = by_id(api, world)
    assert memories[newer["id"]]["supersededBy"] == older["id"]
    assert memories[older["id"]]["status"] == "active"
    status, undone = action_call(api, world, report, "a1", "undo")
    assert status == 200, undone
    assert [u["actionId"] for u in undone["undone"]] == ["a1"]
    memories = by_id(api, world)
    assert memories[newer["id"]]["status"] == "active"
    assert memories[newer["id"]]["supersededBy"] is None


def test_a_rejected_conflict_keeps_both_and_is_not_proposed_again(api: Api, world: World) -> None:
    save(api, world, REPRODUCTIONS["name"][0])
    save(api, world, REPRODUCTIONS["name"][1])
    report = review(api, world)
    status, rejected = action_call(api, world, report, "1", "reject")
    assert status == 200 and rejected["decisions"][0]["state"] == "rejected"
    assert pending(api, world) == []
    again = review(api, world)
    assert again["plan"]["actions"] == []
    assert any("rejected" in note for note in again["plan"]["notes"])
    assert all(m["status"] == "active" for m in every_memory(api, world))


def test_undo_brings_back_a_fact_the_review_merged_away(api: Api, world: World) -> None:
    save(api, world, "Deploys need the VPN on")
    save(api, world, "deploys need the VPN on!")
    report = review(api, world)
    (action,) = report["plan"]["actions"]
    (loser,) = action["memoryIds"]
    before = by_id(api, world)[loser]
    assert before["archiveReason"] == "superseded"
    # A person's unarchive still refuses a superseded memory, and says how to undo it.
    status, body = api.call("POST", f"/memories/{loser}/unarchive", world.person, {})
    assert (status, body["error"]["code"]) == (409, "memory_superseded")
    assert f"pinework review undo {report['id']}" in body["error"]["message"]
    agent_undo = api.call("POST", f"/reviews/{report['id']}/actions/a1/undo", world.agent, {})
    assert error_code(agent_undo) == (403, "forbidden")
    status, undone = action_call(api, world, report, "a1", "undo")
    assert status == 200, undone
    (record,) = undone["undone"]
    assert record["undoneBy"] == world.person.id and loser in record["detail"]
    restored = by_id(api, world)[loser]
    assert (restored["status"], restored["archiveReason"], restored["supersededBy"]) == (
        "active",
        None,
        None,
    )
    status, history = api.call("GET", f"/memories/{loser}/history", world.person)
    last = history["data"][-1]
    assert (last["action"], last["actorType"], last["actorId"]) == (
        "undo",
        "person",
        world.person.id,
    )
    # Idempotent: a second undo answers the report and changes nothing.
    snapshot = every_memory(api, world)
    status, again = action_call(api, world, report, "a1", "undo")
    assert status == 200 and again["undone"] == undone["undone"]
    assert every_memory(api, world) == snapshot
    status, summaries = api.call("GET", f"/reviews?agentId={world.agent.id}", world.person)
    assert summaries["data"][0]["undone"] == 1
    status, shown = api.call("GET", f"/reviews/{report['id']}", world.person)
    assert shown["undone"] == undone["undone"]
    # The next review does not merge them again: an undo is a person's decision.
    later = review(api, world)
    assert later["plan"]["actions"] == []
    assert any("undone by" in note for note in later["plan"]["notes"])
    assert all(m["status"] == "active" for m in every_memory(api, world))


def test_undo_refuses_when_the_memory_changed_since(
    api: Api, world: World, clock: FixedClock
) -> None:
    soon = (clock.now() + timedelta(days=2)).date().isoformat()
    expired = save(api, world, "Lunch orders go in the kitchen channel", expiresAt=soon)
    clock.set(clock.now() + timedelta(days=5))
    report = review(api, world)
    (action,) = report["plan"]["actions"]
    assert (action["action"], action["reason"]) == ("archive", "expired")
    api.call("PATCH", f"/memories/{expired['id']}", world.person, {"text": "Lunch orders: #food"})
    snapshot = every_memory(api, world)
    assert error_code(action_call(api, world, report, "a1", "undo")) == (
        409,
        "review_undo_conflict",
    )
    assert every_memory(api, world) == snapshot


def test_undo_of_renew_and_lift_restores_exactly_what_they_changed(
    api: Api, world: World, clock: FixedClock, wired: wiring.Services
) -> None:
    soon = (clock.now() + timedelta(days=2)).date().isoformat()
    renewed = save(api, world, "Grafana dashboards are under ops/metrics", expiresAt=soon)
    old = save(api, world, "The staging database is db-stg-2")
    api.call("POST", "/memories/recall", world.agent, {"query": "grafana dashboards ops metrics"})
    clock.set(clock.now() + timedelta(days=3))
    assert api.call(
        "POST",
        "/memories/day",
        world.agent,
        {"line": "!fact The staging database is db-stg-2, rebuilt on Sundays"},
    )[0] in (200, 201)
    clock.set(clock.now() + timedelta(days=1))
    report = review(api, world)
    kinds = {a["action"]: a for a in report["plan"]["actions"]}
    assert set(kinds) == {"renew", "lift"}, report["plan"]
    lifted = next(o for o in report["applied"] if o["action"] == "lift")["createdId"]
    assert by_id(api, world)[old["id"]]["supersededBy"] == lifted
    for action in report["plan"]["actions"]:
        status, body = action_call(api, world, report, action["id"], "undo")
        assert status == 200, body
    memories = by_id(api, world)
    assert memories[renewed["id"]]["expiresAt"] == renewed["expiresAt"]
    assert memories[renewed["id"]]["expired"] is True
    assert memories[old["id"]]["status"] == "active" and memories[old["id"]]["supersededBy"] is None
    assert memories[lifted]["status"] == "archived"
    assert memories[lifted]["archiveReason"].startswith("undone: lifted by")
    # The text stays claimed: the next review does not lift it again.
    assert [a for a in review(api, world)["plan"]["actions"] if a["action"] == "lift"] == []


def test_undo_refuses_what_changed_nothing_and_bad_references(api: Api, world: World) -> None:
    save(api, world, REPRODUCTIONS["port"][0])
    save(api, world, REPRODUCTIONS["port"][1])
    report = review(api, world)
    assert error_code(action_call(api, world, report, "a1", "undo")) == (409, "conflict")
    assert error_code(action_call(api, world, report, "a9", "undo")) == (404, "not_found")
    assert error_code(action_call(api, world, report, "x1", "undo")) == (400, "invalid_request")
    assert error_code(api.call("POST", "/reviews/rvw_nope/actions/a1/undo", world.person, {})) == (
        404,
        "not_found",
    )
    assert error_code(
        api.call("POST", f"/reviews/{report['id']}/actions/a1/undo", world.outsider, {})
    ) == (404, "not_found")
    assert error_code(
        api.call("POST", f"/reviews/{report['id']}/actions/a1/undo", world.person, {"x": 1})
    ) == (400, "invalid_request")


def test_pending_list_is_for_the_workspace_and_pages(api: Api, world: World) -> None:
    for older, newer in REPRODUCTIONS.values():
        save(api, world, older)
        save(api, world, newer)
    review(api, world)
    waiting = pending(api, world)
    assert len(waiting) == 3 and {w["action"]["id"] for w in waiting} == {"a1", "a2", "a3"}
    assert pending(api, world, f"?agentId={world.other_agent.id}") == []
    status, first = api.call("GET", "/reviews/pending?limit=2", world.person)
    assert status == 200 and len(first["data"]) == 2 and first["nextToken"]
    status, rest = api.call(
        "GET", f"/reviews/pending?limit=2&nextToken={first['nextToken']}", world.person
    )
    assert [w["action"]["id"] for w in first["data"] + rest["data"]] == [
        w["action"]["id"] for w in waiting
    ]
    status, own = api.call("GET", "/reviews/pending", world.agent)
    assert status == 200 and len(own["data"]) == 3
    assert error_code(
        api.call("GET", f"/reviews/pending?agentId={world.other_agent.id}", world.agent)
    ) == (403, "memory_not_own")
    assert error_code(api.call("GET", "/reviews/pending?nextToken=bad", world.person)) == (
        400,
        "invalid_request",
    )
    status, outside = api.call("GET", "/reviews/pending", world.outsider)
    assert status == 200 and outside["data"] == []


def test_approval_mode_lists_every_pending_action(
    api: Api, world: World, wired: wiring.Services
) -> None:
    wired.admin.set_review_approval(world.workspace_id, "required")
    save(api, world, "Use pnpm, not npm")
    save(api, world, "use pnpm, not npm")
    save(api, world, REPRODUCTIONS["port"][0])
    save(api, world, REPRODUCTIONS["port"][1])
    report = review(api, world)
    assert [a["action"] for a in report["plan"]["actions"]] == ["merge", "resolve_conflict"]
    assert [w["action"]["action"] for w in pending(api, world)] == ["merge", "resolve_conflict"]
    status, decided = action_call(api, world, report, "a1", "approve")
    assert status == 200 and decided["decisions"][0]["state"] == "applied"
    assert [w["action"]["id"] for w in pending(api, world)] == ["a2"]
