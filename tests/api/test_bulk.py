"""Persons' bulk actions on memories and their undo through the HTTP API
(docs/reference.md#bulk-actions, docs/issues.md#issue-46-item-3)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import Api, World, error_code, save


def _bulk(api: Api, world: World, body: dict[str, Any]) -> tuple[int, Any]:
    return api.call("POST", "/memories/bulk", world.person, body)


def _memory(api: Api, world: World, memory_id: str) -> Any:
    status, body = api.call("GET", f"/memories/{memory_id}", world.person)
    assert status == 200, body
    return body


def _history(api: Api, world: World, memory_id: str) -> list[str]:
    status, body = api.call("GET", f"/memories/{memory_id}/history", world.person)
    assert status == 200, body
    return [record["action"] for record in body["data"]]


def test_archive_by_ids_changes_each_memory_as_alone_and_answers_what_it_could_not(
    api: Api, world: World
) -> None:
    facts = [save(api, world, f"Fact number {n} about the build") for n in range(3)]
    api.call("POST", f"/memories/{facts[2]['id']}/archive", world.agent, {"reason": "old"})
    other = api.call(
        "POST", "/memories", world.outsider_agent, {"text": "Another workspace's fact"}
    )[1]
    ids = [facts[0]["id"], facts[1]["id"], facts[2]["id"], other["id"]]
    status, body = _bulk(api, world, {"action": "archive", "ids": ids, "reason": "cleanup"})
    assert status == 200, body
    assert body["id"].startswith("blk_") and body["action"] == "archive"
    assert [(c["id"], c["version"]) for c in body["changed"]] == [
        (facts[0]["id"], 2),
        (facts[1]["id"], 2),
    ]
    assert [(s["id"], s["code"]) for s in body["skipped"]] == [
        (facts[2]["id"], "memory_already_archived"),
        (other["id"], "memory_not_found"),
    ]
    for fact in facts[:2]:
        memory = _memory(api, world, fact["id"])
        assert (memory["status"], memory["archiveReason"]) == ("archived", "cleanup")
        assert _history(api, world, fact["id"])[-1] == "archive"
    assert _memory(api, world, facts[2]["id"])["archiveReason"] == "old"
    assert api.call("GET", f"/memories/{other['id']}", world.outsider)[1]["status"] == "active"

    status, undone = api.call("POST", f"/memories/bulk/{body['id']}/undo", world.person, {})
    assert status == 200, undone
    assert [c["id"] for c in undone["restored"]] == [facts[0]["id"], facts[1]["id"]]
    assert undone["skipped"] == []
    for fact in facts[:2]:
        assert _memory(api, world, fact["id"])["status"] == "active"
        assert _history(api, world, fact["id"])[-2:] == ["archive", "unarchive"]
    again = api.call("POST", f"/memories/bulk/{body['id']}/undo", world.person, {})
    assert error_code(again) == (409, "conflict")
    status, record = api.call("GET", f"/memories/bulk/{body['id']}", world.person)
    assert status == 200 and record["undoneAt"] is not None and len(record["changed"]) == 2


def test_undo_leaves_a_memory_changed_since_and_reverts_only_the_tags_it_moved(
    api: Api, world: World
) -> None:
    first = save(api, world, "The billing job runs nightly", tags=["billing"])
    second = save(api, world, "The billing job writes to S3", tags=["billing", "s3"])
    status, body = _bulk(
        api,
        world,
        {"action": "tag", "ids": [first["id"], second["id"]], "tags": [" Ops", "s3"]},
    )
    assert status == 200, body
    assert [(c["id"], c["tags"]) for c in body["changed"]] == [
        (first["id"], ["ops", "s3"]),
        (second["id"], ["ops"]),
    ]
    assert _memory(api, world, second["id"])["tags"] == ["billing", "ops", "s3"]
    # a person edits the first fact after the bulk action: its undo must leave it
    status, edited, _ = api.send(
        "PATCH",
        f"/memories/{first['id']}",
        world.person,
        {"text": "The billing job runs nightly at 02:00"},
        headers={"If-Match": f'"{first["id"]}.v2"'},
    )
    assert status == 200, edited
    status, undone = api.call("POST", f"/memories/bulk/{body['id']}/undo", world.person, {})
    assert status == 200, undone
    assert [c["id"] for c in undone["restored"]] == [second["id"]]
    assert [(s["id"], s["code"]) for s in undone["skipped"]] == [
        (first["id"], "precondition_failed")
    ]
    assert _memory(api, world, second["id"])["tags"] == ["billing", "s3"]  # s3 was its own
    assert _memory(api, world, first["id"])["tags"] == ["billing", "ops", "s3"]


def test_a_filter_acts_on_one_agents_matching_facts_a_page_at_a_time(
    api: Api, world: World
) -> None:
    tagged = [save(api, world, f"Staging fact {n}", tags=["staging"]) for n in range(3)]
    plain = save(api, world, "Production fact")
    theirs = api.call("POST", "/memories", world.other_agent, {"text": "x", "tags": ["staging"]})[1]
    status, body = _bulk(
        api,
        world,
        {
            "action": "untag",
            "filter": {"agentId": world.agent.id, "tag": ["staging"]},
            "tags": ["staging"],
        },
    )
    assert status == 200, body
    assert sorted(c["id"] for c in body["changed"]) == sorted(f["id"] for f in tagged)
    assert body["nextToken"] is None and body["skipped"] == []
    assert all(_memory(api, world, f["id"])["tags"] == [] for f in tagged)
    assert len(_history(api, world, plain["id"])) == 1
    assert api.call("GET", f"/memories/{theirs['id']}", world.person)[1]["tags"] == ["staging"]
    veto = _bulk(
        api, world, {"action": "veto", "filter": {"agentId": world.agent.id}, "note": "wrong"}
    )[1]
    assert len(veto["changed"]) == 4
    assert _memory(api, world, plain["id"])["archiveReason"] == "vetoed"


def test_a_filter_of_more_than_a_hundred_answers_the_next_page(api: Api, world: World) -> None:
    ids = [save(api, world, f"Bulk fact {n}", tags=["many"])["id"] for n in range(101)]
    query = {"agentId": world.agent.id, "tag": ["many"]}
    first = _bulk(api, world, {"action": "tag", "filter": query, "tags": ["seen"]})[1]
    assert len(first["changed"]) == 100 and first["nextToken"] is not None
    rest = _bulk(
        api,
        world,
        {"action": "tag", "filter": {**query, "nextToken": first["nextToken"]}, "tags": ["seen"]},
    )[1]
    assert [c["id"] for c in rest["changed"]] == [ids[0]] and rest["nextToken"] is None


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"action": "archive", "reason": "x"}, "invalid_request"),  # no selection
        ({"action": "archive", "ids": ["mem_1"], "reason": "x"}, "invalid_request"),
        ({"action": "archive", "ids": [], "reason": "x"}, "invalid_request"),
        ({"action": "archive", "ids": "ID", "reason": "x"}, "invalid_request"),
        ({"action": "archive", "ids": ["ID", "ID"], "reason": "x"}, "invalid_request"),
        ({"action": "archive", "ids": ["ID"]}, "invalid_request"),  # no reason
        ({"action": "archive", "ids": ["ID"], "reason": "x", "tags": ["a"]}, "invalid_request"),
        ({"action": "tag", "ids": ["ID"]}, "memory_tag_invalid"),
        ({"action": "tag", "ids": ["ID"], "tags": ["no spaces"]}, "memory_tag_invalid"),
        ({"action": "veto", "ids": ["ID"], "note": "AKIAIOSFODNN7EXAMPLE"}, "secret_in_memory"),
        ({"action": "erase", "ids": ["ID"]}, "invalid_request"),
        ({"action": "untag", "filter": {"agentId": "agt_nope"}, "tags": ["a"]}, "forbidden"),
    ],
)
def test_a_bad_request_is_refused_whole_and_changes_nothing(
    api: Api, world: World, body: dict[str, Any], code: str
) -> None:
    fact = save(api, world, "Untouched fact")
    if isinstance(body.get("ids"), list):
        body = {**body, "ids": [fact["id"] if i == "ID" else i for i in body["ids"]]}
    answer = _bulk(api, world, body)
    assert error_code(answer)[1] == code, answer
    assert len(_history(api, world, fact["id"])) == 1


def test_agents_are_refused_and_another_workspace_cannot_read_or_undo(
    api: Api, world: World
) -> None:
    fact = save(api, world, "A fact")
    refused = api.call(
        "POST",
        "/memories/bulk",
        world.agent,
        {"action": "archive", "ids": [fact["id"]], "reason": "r"},
    )
    assert error_code(refused) == (403, "forbidden")
    bulk_id = _bulk(api, world, {"action": "archive", "ids": [fact["id"]], "reason": "r"})[1]["id"]
    assert error_code(api.call("GET", f"/memories/bulk/{bulk_id}", world.outsider)) == (
        404,
        "not_found",
    )
    undo = api.call("POST", f"/memories/bulk/{bulk_id}/undo", world.outsider, {})
    assert error_code(undo) == (404, "not_found")
    assert _memory(api, world, fact["id"])["status"] == "archived"
    nothing = _bulk(api, world, {"action": "archive", "ids": [fact["id"]], "reason": "r"})[1]
    assert nothing["id"] is None and nothing["changed"] == []
