"""The recall index (docs/issues.md#issue-23-item-1, docs/issues.md#issue-23-item-3): one entry per
live fact, in step with every change through the API; a recall through it scores and keeps
exactly what scoring every fact item does; expired facts are not read; a fact archived
after the index was read is never returned."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from chalicelib import wiring
from chalicelib.ids import FixedClock, to_rfc3339
from chalicelib.limits import SCORE_CUTOFF
from chalicelib.models.recall import RecallEntry
from chalicelib.storage.keys import recall_index_partition, recall_index_sort_floor
from tests.helpers import START, TABLE, Api, World, save

WORDS = [
    "deploy",
    "staging",
    "vpn",
    "bastion",
    "cluster",
    "kafka",
    "backup",
    "nightly",
    "report",
    "invoice",
    "billing",
    "customer",
    "ticket",
    "runbook",
    "dashboard",
    "alarm",
    "queue",
    "worker",
    "schema",
    "migration",
    "token",
    "secret",
    "rotation",
    "region",
    "replica",
    "latency",
    "budget",
    "vendor",
    "contract",
    "renewal",
    "laptop",
    "badge",
    "office",
    "parking",
    "lunch",
    "friday",
    "standup",
    "retro",
    "sprint",
    "release",
    "hotfix",
    "branch",
    "review",
    "approval",
]


def index_items(dynamodb: Any, agent_id: str) -> list[dict[str, Any]]:
    """Every item of the agent's index partition (entries and marker), as stored."""
    response = dynamodb.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": recall_index_partition(agent_id)}},
        ConsistentRead=True,
    )
    return list(response["Items"])


def indexed_ids(dynamodb: Any, agent_id: str) -> dict[str, str]:
    """Memory id -> indexed text, for the agent's entries (the marker left out)."""
    found = {}
    for item in index_items(dynamodb, agent_id):
        sk = item["sk"]["S"]
        if sk.startswith("~"):
            continue
        found[sk.split("#", 1)[1]] = item["t"]["S"]
    return found


def live_fact_texts(api: Api, world: World) -> dict[str, str]:
    status, body = api.call("GET", "/memories?status=active&kind=fact&limit=200", world.agent)
    assert status == 200, body
    return {memory["id"]: memory["text"] for memory in body["data"]}


def test_the_index_holds_exactly_the_active_facts_through_every_change(
    api: Api, world: World, dynamodb: Any
) -> None:
    kept = save(api, world, "The staging deploy needs the VPN")
    edited = save(api, world, "Lunch is at noon")
    archived = save(api, world, "The kafka cluster is in us-east-2")
    vetoed = save(api, world, "The billing job runs at 02:00")
    old = save(api, world, "The release branch is cut on Fridays")
    new = save(api, world, "The release branch is cut on Thursdays", supersedes=old["id"])
    api.call("POST", "/memories/day", world.agent, {"line": "worked on the deploy"})
    assert (
        api.call("PATCH", f"/memories/{edited['id']}", world.person, {"text": "Lunch is at one"})[0]
        == 200
    )
    assert (
        api.call("POST", f"/memories/{archived['id']}/archive", world.agent, {"reason": "moved"})[0]
        == 200
    )
    assert api.call("POST", f"/memories/{vetoed['id']}/veto", world.person, {})[0] == 200
    live = live_fact_texts(api, world)
    assert set(live) == {kept["id"], edited["id"], new["id"]}
    assert indexed_ids(dynamodb, world.agent.id) == live  # same ids, same texts
    # Unarchive brings its entry back; the later expiry edit moves it (one entry still).
    assert api.call("POST", f"/memories/{archived['id']}/unarchive", world.person, {})[0] == 200
    later = to_rfc3339(START + timedelta(days=400))
    status, body = api.call("PATCH", f"/memories/{kept['id']}", world.person, {"expiresAt": later})
    assert status == 200, body
    live = live_fact_texts(api, world)
    assert archived["id"] in live
    assert indexed_ids(dynamodb, world.agent.id) == live
    marker = [item for item in index_items(dynamodb, world.agent.id) if item["sk"]["S"] == "~BUILT"]
    assert len(marker) == 1


def test_expired_facts_are_not_read_and_stay_listed(
    api: Api, world: World, wired: wiring.Services, clock: FixedClock, dynamodb: Any
) -> None:
    soon = save(
        api, world, "The vpn rotation is due", expiresAt=to_rfc3339(START + timedelta(days=1))
    )
    lasting = save(api, world, "The vpn gateway is vpn-2")
    index = wired.recall._index
    entries = index.entries(world.agent.id, START)
    assert entries is not None and {e.memory_id for e in entries} == {soon["id"], lasting["id"]}
    clock.set(START + timedelta(days=1))  # expiresAt <= now: expired
    entries = index.entries(world.agent.id, clock.now())
    assert entries is not None and [e.memory_id for e in entries] == [lasting["id"]]
    # The Query's key condition skips it: DynamoDB returns one entry and the marker.
    response = dynamodb.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :pk AND sk >= :low",
        ExpressionAttributeValues={
            ":pk": {"S": recall_index_partition(world.agent.id)},
            ":low": {"S": recall_index_sort_floor(clock.now())},
        },
    )
    assert response["Count"] == 2
    # The fact itself is still active: lists and the review see it.
    listed = api.call("GET", f"/memories/{soon['id']}", world.agent)[1]
    assert listed["status"] == "active"
    result = api.call("POST", "/memories/recall", world.agent, {"query": "vpn rotation"})[1]
    assert soon["id"] not in [item["memory"]["id"] for item in result["memories"]]


def _fact(rng: random.Random) -> str:
    pick = [rng.choice(WORDS) for _ in range(7)]
    return (
        f"The {pick[0]} {pick[1]} needs {pick[2]} {pick[3]} before the {pick[4]}; "
        f"ask about {pick[5]} {pick[6]}."
    )


def test_a_recall_through_the_index_keeps_what_scoring_every_fact_keeps(
    api: Api, world: World, wired: wiring.Services, clock: FixedClock
) -> None:
    """More facts than the second stage re-ranks (200), so its word pieces are fetched for
    some candidates only; queries of one and of several clauses."""
    rng = random.Random(23)
    for _ in range(230):
        save(api, world, _fact(rng))
    agent = world.agent.id
    queries = [
        "What does the kafka cluster need before the release?",
        "deploy staging vpn",
        "Check the billing invoice, then the schema migration; ask about the laptop badge.",
        "Who approves the hotfix branch review?",
    ]
    memories = wired.recall._memories
    for query in queries:
        now = clock.now()
        facts = [
            f for f in memories.live_facts(agent, recall_counts=False) if not f.is_expired(now)
        ]
        scored, fallback = wired.recall.score_all(query, facts, now)
        assert fallback is None
        expected = wired.recall.within_budget(
            [item for item in scored if (item.score or 0.0) >= SCORE_CUTOFF]
        )
        status, result = api.call("POST", "/memories/recall", world.agent, {"query": query})
        assert status == 200, result
        got = [(item["memory"]["id"], item["score"]) for item in result["memories"]]
        assert got == [(item.memory.id, item.score) for item in expected]
        assert got  # each query keeps something, so the comparison means something


def test_a_fact_archived_after_the_index_was_read_is_not_returned(
    api: Api, world: World, wired: wiring.Services
) -> None:
    target = save(api, world, "The nightly backup job runs at 02:00")
    save(api, world, "The nightly report goes to finance")
    index = wired.recall._index
    read = index.entries

    def read_then_archive(agent_id: str, now: Any) -> list[RecallEntry] | None:
        found = read(agent_id, now)
        archived = api.call(
            "POST", f"/memories/{target['id']}/archive", world.agent, {"reason": "gone"}
        )
        assert archived[0] == 200
        return found

    index.entries = read_then_archive  # type: ignore[method-assign]
    try:
        result = api.call("POST", "/memories/recall", world.agent, {"query": "nightly backup job"})[
            1
        ]
    finally:
        index.entries = read  # type: ignore[method-assign]
    assert target["id"] not in [item["memory"]["id"] for item in result["memories"]]
    assert result["memories"], "the other nightly fact is still recalled"
