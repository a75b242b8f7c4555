"""The review proposes learnings (docs/reference.md#learnings-and-the-review,
docs/issues.md#issue-25-item-4): a fact two agents of a workspace hold becomes a proposed
learning citing both; approving it may archive the copies (each with its Undo); a fact
that repeats an active learning is reported, never merged; a dry run proposes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib.normalized import content_digest
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.keys import same_fact_partition
from tests.helpers import TABLE, Api, World, review

SHARED = "The billing API is rate-limited to 100 requests per second"


def run_review(api: Api, world: World, agent: Any, dry_run: bool = False) -> dict[str, Any]:
    status, body = api.call(
        "POST", "/reviews", world.person, {"agentId": agent.id, "dryRun": dry_run}
    )
    assert status == 200, body
    return dict(body)


def proposed(api: Api, world: World) -> list[dict[str, Any]]:
    return list(api.call("GET", "/learnings?state=proposed", world.person)[1]["data"])


def test_a_fact_two_agents_hold_is_proposed_once_and_its_copies_archived_on_approval(
    api: Api, world: World
) -> None:
    mine = api.call("POST", "/memories", world.agent, {"text": SHARED})[1]
    theirs = api.call("POST", "/memories", world.other_agent, {"text": SHARED.lower() + "."})[1]
    alone = api.call("POST", "/memories", world.agent, {"text": "Dana prefers PDF invoices"})[1]

    dry = review(api, world, dry_run=True)
    assert any("would propose it as a learning" in note for note in dry["plan"]["notes"])
    assert proposed(api, world) == []  # a dry run writes nothing

    first = review(api, world)
    notes = [note for note in first["plan"]["notes"] if mine["id"] in note]
    assert len(notes) == 1 and "proposed as learning lrn_" in notes[0], first["plan"]["notes"]
    (learning,) = proposed(api, world)
    assert (learning["proposedByType"], learning["proposedBy"]) == ("review", first["id"])
    assert learning["evidence"] == [mine["id"], theirs["id"]] and learning["text"] == SHARED
    assert all(alone["id"] not in note for note in first["plan"]["notes"])

    second = run_review(api, world, world.other_agent)
    assert any(
        f"the proposed learning {learning['id']} says it already" in note
        for note in second["plan"]["notes"]
    ), second["plan"]["notes"]
    assert len(proposed(api, world)) == 1

    path = f"/learnings/{learning['id']}/approve"
    status, approved = api.call("POST", path, world.person, {"archiveCopies": True})
    assert status == 200 and approved["state"] == "active", approved
    for memory in (mine, theirs):
        now = api.call("GET", f"/memories/{memory['id']}", world.person)[1]
        assert (now["status"], now["archiveReason"]) == (
            "archived",
            f"covered by learning {learning['id']}",
        )
    assert api.call("GET", f"/memories/{alone['id']}", world.person)[1]["status"] == "active"
    # each copy's Undo brings it back
    assert api.call("POST", f"/memories/{theirs['id']}/unarchive", world.person, {})[0] == 200

    # now the active learning covers the fact: reported, not merged or archived
    third = run_review(api, world, world.other_agent)
    assert any(
        f"{theirs['id']} says what the active learning {learning['id']} says" in note
        for note in third["plan"]["notes"]
    ), third["plan"]["notes"]
    assert api.call("GET", f"/memories/{theirs['id']}", world.person)[1]["status"] == "active"


def test_a_rejected_proposal_is_not_made_again(api: Api, world: World) -> None:
    api.call("POST", "/memories", world.agent, {"text": SHARED})
    api.call("POST", "/memories", world.other_agent, {"text": SHARED})
    review(api, world)
    (learning,) = proposed(api, world)
    path = f"/learnings/{learning['id']}/reject"
    assert api.call("POST", path, world.person, {"reason": "agent-specific"})[0] == 200
    again = run_review(api, world, world.other_agent)
    assert any("not proposed, A person rejected" in note for note in again["plan"]["notes"])
    assert proposed(api, world) == []


def test_a_fact_stored_before_the_character_rule_is_not_proposed(
    api: Api, world: World, dynamodb: Any
) -> None:
    # Stored before the rule (docs/reference.md#stored-text): written into the table as is.
    legacy = SHARED + "\x85"
    for agent in (world.agent, world.other_agent):
        saved = api.call("POST", "/memories", agent, {"text": SHARED})[1]
        dynamodb.update_item(
            TableName=TABLE,
            Key={"pk": {"S": f"MEMORY#{saved['id']}"}, "sk": {"S": "MEMORY"}},
            UpdateExpression="SET #t = :t",
            ExpressionAttributeNames={"#t": "text"},
            ExpressionAttributeValues={":t": {"S": legacy}},
        )
    report = review(api, world)
    assert any("not proposed" in note and "U+0085" in note for note in report["plan"]["notes"]), (
        report["plan"]["notes"]
    )
    assert proposed(api, world) == []


VPN = "The staging deploy needs the VPN on port 1194"
NO_VPN = "The staging deploy does not need the VPN on port 1194"


def test_a_fact_in_a_conflict_is_not_proposed(api: Api, world: World) -> None:
    """docs/issues.md#issue-42-item-6: the agent's own live fact disputes it."""
    mine = api.call("POST", "/memories", world.agent, {"text": VPN})[1]
    api.call("POST", "/memories", world.agent, {"text": NO_VPN})
    api.call("POST", "/memories", world.other_agent, {"text": VPN})
    report = review(api, world)
    notes = [note for note in report["plan"]["notes"] if f"{mine['id']} is held by" in note]
    assert len(notes) == 1 and "not proposed as a learning" in notes[0], report["plan"]
    assert proposed(api, world) == []
    # the other agent, whose store holds no dispute, proposes it
    run_review(api, world, world.other_agent)
    assert [learning["text"] for learning in proposed(api, world)] == [VPN]


def test_a_fact_an_active_learning_contradicts_is_not_proposed(api: Api, world: World) -> None:
    told = api.call("POST", "/learnings", world.person, {"text": NO_VPN})[1]
    api.call("POST", "/memories", world.agent, {"text": VPN})
    api.call("POST", "/memories", world.other_agent, {"text": VPN})
    report = review(api, world)
    assert any(
        f"the active learning {told['id']} says something different" in note
        for note in report["plan"]["notes"]
    ), report["plan"]["notes"]
    assert proposed(api, world) == []


def test_the_look_across_agents_reads_the_shared_facts_index_not_their_stores(
    api: Api, world: World, dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/issues.md#issue-41-item-3: an entry per live fact by its normalized text, kept
    by every write; the review queries it, never another agent's facts."""
    mine = api.call("POST", "/memories", world.agent, {"text": SHARED})[1]
    theirs = api.call("POST", "/memories", world.other_agent, {"text": SHARED.upper() + "!"})[1]
    api.call("POST", "/memories", world.other_agent, {"text": "Dana prefers PDF invoices"})
    partition = same_fact_partition(world.workspace_id, content_digest(SHARED))

    def entries() -> list[str]:
        rows = dynamodb.query(
            TableName=TABLE,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": partition}},
        )["Items"]
        return sorted(row["memoryId"]["S"] for row in rows)

    assert entries() == sorted([mine["id"], theirs["id"]])
    asked: list[str] = []
    original = DynamoDBTable.query

    def recording(table: DynamoDBTable, **kwargs: Any) -> Iterator[dict[str, Any]]:
        asked.append(str(kwargs.get("ExpressionAttributeValues", {})))
        return original(table, **kwargs)

    monkeypatch.setattr(DynamoDBTable, "query", recording)
    review(api, world)
    assert not [query for query in asked if world.other_agent.id in query], asked
    (learning,) = proposed(api, world)
    assert learning["evidence"] == [mine["id"], theirs["id"]]

    # archiving a copy takes it out of the index; bringing it back files it again
    api.call("POST", f"/memories/{theirs['id']}/archive", world.other_agent, {"reason": "old"})
    assert entries() == [mine["id"]]
    assert api.call("POST", f"/memories/{theirs['id']}/unarchive", world.person, {})[0] == 200
    assert entries() == sorted([mine["id"], theirs["id"]])
