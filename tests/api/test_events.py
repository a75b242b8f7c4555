"""Change events and their pull feed (docs/reference.md#change-events, docs/issues.md#issue-47):
each memory and learning change writes one event in its own transaction (a cancelled
change writes none), events name what changed and never hold its text, a person reads
the workspace's feed and an agent only its own, a cursor pages every event once in
order, and an erasure deletes the events of what it erases."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import wiring
from chalicelib.ids import FixedClock, IdFactory, ulid_floor
from chalicelib.services.memory.audit import audit_record
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.events import SETTLE
from chalicelib.storage.memories import DynamoDBMemoryRepository
from chalicelib.storage.protocols import WriteConflict
from tests.helpers import TABLE, Actor, Api, World, error_code, save

SECRET_TEXT = "The staging deploy needs the VPN on and port 8443"


def feed(api: Api, actor: Actor, clock: FixedClock, **query: Any) -> list[dict[str, Any]]:
    """Every event the actor's feed holds once settled, page by page (``limit``)."""
    clock.set(clock.now() + SETTLE + timedelta(seconds=1))
    events: list[dict[str, Any]] = []
    after = None
    while True:
        params = "&".join(
            f"{k}={v}" for k, v in {**query, **({"after": after} if after else {})}.items()
        )
        status, page = api.call("GET", "/events" + (f"?{params}" if params else ""), actor)
        assert status == 200, page
        events.extend(page["data"])
        after = page["nextCursor"]
        if not page["hasMore"]:
            return events


def event_items(dynamodb: Any) -> list[dict[str, Any]]:
    """Every event item in the table (both feeds' copies)."""
    found = []
    for page in dynamodb.get_paginator("scan").paginate(TableName=TABLE):
        for item in page["Items"]:
            if item["pk"]["S"].startswith(("EVENTS#", "AGENTEVENTS#")):
                found.append(item)
    return found


def test_each_memory_change_writes_one_event_of_its_type_and_no_text(
    api: Api, world: World, clock: FixedClock
) -> None:
    first = save(api, world, SECRET_TEXT)
    second = save(
        api, world, "The staging deploy needs the VPN and port 9443", supersedes=first["id"]
    )
    path = f"/memories/{second['id']}"
    assert (
        api.call("PATCH", path, world.person, {"text": "Staging deploys need port 9443"})[0] == 200
    )
    assert api.call("POST", path + "/archive", world.agent, {"reason": "moved to prod"})[0] == 200
    assert api.call("POST", path + "/unarchive", world.agent)[0] == 200
    third = save(api, world, "Friday deploys skip the change board")
    assert api.call("POST", f"/memories/{third['id']}/veto", world.person, {})[0] == 200
    assert api.call("POST", path + "/erase", world.person, {"reason": "ticket 4"})[0] == 200
    for line in ("started the deploy", "finished the deploy"):
        assert api.call("POST", "/memories/day", world.agent, {"line": line})[0] in (200, 201)

    events = feed(api, world.person, clock)
    kinds = [(event["type"].removeprefix("pinework.memory."), event["subject"]) for event in events]
    day = kinds[-1][1]
    assert kinds == [
        ("saved", first["id"]),
        ("saved", second["id"]),
        ("superseded", first["id"]),
        ("edited", second["id"]),
        ("archived", second["id"]),
        ("unarchived", second["id"]),
        ("saved", third["id"]),
        ("vetoed", third["id"]),
        ("erased", second["id"]),
        ("day_line_appended", day),
        ("day_line_appended", day),
    ]
    assert len({event["id"] for event in events}) == len(events)
    superseded = events[2]
    assert superseded["data"]["supersededBy"] == second["id"]
    assert superseded["data"]["archiveReason"] == "superseded"
    assert events[4]["data"]["archiveReason"] is None  # a person's own reason is text
    assert events[7]["data"]["archiveReason"] == "vetoed"
    for event in events:
        assert event["specversion"] == "1.0" and event["id"].startswith("evt_")
        assert event["workspace"] == world.workspace_id and event["agent"] == world.agent.id
        assert event["data"]["agentId"] == world.agent.id
    raw = json.dumps(events) + json.dumps(feed(api, world.agent, clock))
    for words in (SECRET_TEXT, "VPN", "9443", "moved to prod", "ticket 4", "deploy"):
        assert words not in raw
    # the agent's own feed holds the same events
    assert [event["id"] for event in feed(api, world.agent, clock)] == [e["id"] for e in events]


def test_a_cancelled_change_writes_no_event(
    api: Api, world: World, clock: FixedClock, wired: wiring.Services, dynamodb: Any
) -> None:
    fact = save(api, world)
    path = f"/memories/{fact['id']}"
    before = len(event_items(dynamodb))
    stale = api.call("PATCH", path, world.person, {"text": "v2"}, headers={"If-Match": '"9"'})
    assert error_code(stale) == (412, "precondition_failed")
    assert len(event_items(dynamodb)) == before
    # the transaction itself refused: a change written from a stale read
    memories = DynamoDBMemoryRepository(DynamoDBTable(dynamodb, TABLE))
    read = memories.get(fact["id"])
    assert read is not None
    assert api.call("POST", path + "/archive", world.agent, {"reason": "gone"})[0] == 200
    changed = read.model_copy(update={"text": "v3", "version": read.version + 1})
    audit = audit_record(IdFactory(clock), clock, None, "edit", read, changed)
    with pytest.raises(WriteConflict):
        memories.transition(read, changed, audit)
    types = [event["type"] for event in feed(api, world.person, clock)]
    assert types == ["pinework.memory.saved", "pinework.memory.archived"]
    assert len(event_items(dynamodb)) == before + 2  # the archive's two copies


def test_an_agent_reads_only_its_own_events_and_a_person_only_the_workspaces(
    api: Api, world: World, clock: FixedClock
) -> None:
    mine = save(api, world, "The builder caches wheels in /tmp/wheels")
    theirs = api.call("POST", "/memories", world.other_agent, {"text": "Reviews start at 9"})[1]
    outside = api.call("POST", "/memories", world.outsider_agent, {"text": "The spy note"})[1]
    assert [e["subject"] for e in feed(api, world.agent, clock)] == [mine["id"]]
    assert [e["subject"] for e in feed(api, world.other_agent, clock)] == [theirs["id"]]
    assert [e["subject"] for e in feed(api, world.person, clock)] == [mine["id"], theirs["id"]]
    assert [e["subject"] for e in feed(api, world.outsider, clock)] == [outside["id"]]
    # a cursor taken from another feed shows nothing of that feed
    cursor = feed(api, world.outsider_agent, clock)[-1]["id"]
    clock.set(clock.now() - timedelta(seconds=1))
    shown = api.call("GET", f"/events?after={cursor}", world.agent)[1]["data"]
    assert outside["id"] not in json.dumps(shown)


def test_the_cursor_pages_every_event_once_in_order_across_days(
    api: Api, world: World, clock: FixedClock
) -> None:
    saved = []
    for day in range(4):
        for number in range(3):
            if day != 2:  # a day without events is walked over
                saved.append(save(api, world, f"Fact {number} of day {day} about deploys")["id"])
        clock.set(clock.now() + timedelta(days=1))
    for limit in (1, 2, 5, 200):
        events = feed(api, world.person, clock, limit=limit)
        assert [event["subject"] for event in events] == saved, limit
        ids = [event["id"] for event in events]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)
    last = events[-1]["id"]
    status, page = api.call("GET", f"/events?after={last}", world.person)
    assert (status, page["data"], page["nextCursor"], page["hasMore"]) == (200, [], last, False)


def test_an_event_shows_once_settled_and_goes_after_the_kept_days(
    api: Api, world: World, clock: FixedClock
) -> None:
    fact = save(api, world)
    assert api.call("GET", "/events", world.person)[1]["data"] == []  # younger than SETTLE
    assert [e["subject"] for e in feed(api, world.person, clock)] == [fact["id"]]
    clock.set(clock.now() + timedelta(days=30, seconds=1))
    status, page = api.call("GET", "/events", world.person)
    assert (status, page["data"], page["nextCursor"]) == (200, [], None)


def test_a_cursor_from_the_future_or_the_far_past_is_answered_not_refused(
    api: Api, world: World, clock: FixedClock
) -> None:
    fact = save(api, world)
    ahead = "evt_" + ulid_floor(clock.now() + timedelta(minutes=1))
    status, page = api.call("GET", f"/events?after={ahead}", world.person)
    assert (status, page["data"], page["nextCursor"]) == (200, [], ahead)
    old = "evt_" + ulid_floor(clock.now() - timedelta(days=400))
    assert [e["subject"] for e in feed(api, world.person, clock, after=old)] == [fact["id"]]


@pytest.mark.parametrize(
    "query",
    [
        "after=mem_01JD0000000000000000000000",
        "after=evt_x",
        "after=evt_81JD0000000000000000000000",
        "limit=0",
        "limit=x",
        "since=1",
    ],
)
def test_a_bad_cursor_or_limit_is_invalid_request(api: Api, world: World, query: str) -> None:
    assert error_code(api.call("GET", f"/events?{query}", world.person)) == (
        400,
        "invalid_request",
    )


def test_learning_changes_write_their_events_and_an_agents_proposal_is_in_its_feed(
    api: Api, world: World, clock: FixedClock
) -> None:
    proposed = api.call("POST", "/learnings", world.agent, {"text": "Deploys need the VPN"})[1]
    path = f"/learnings/{proposed['id']}"
    assert api.call("POST", f"{path}/approve", world.person, {})[0] == 200
    assert api.call("POST", f"{path}/retire", world.person, {"reason": "VPN gone"})[0] == 200
    other = api.call("POST", "/learnings", world.agent, {"text": "Friday deploys skip review"})[1]
    assert (
        api.call("POST", f"/learnings/{other['id']}/reject", world.person, {"reason": "no"})[0]
        == 200
    )
    mine = api.call("POST", "/learnings", world.person, {"text": "Builds run on arm64"})[1]
    events = feed(api, world.person, clock)
    assert [(e["type"].removeprefix("pinework.learning."), e["subject"]) for e in events] == [
        ("proposed", proposed["id"]),
        ("approved", proposed["id"]),
        ("retired", proposed["id"]),
        ("proposed", other["id"]),
        ("rejected", other["id"]),
        ("proposed", mine["id"]),
    ]
    assert [e["data"]["state"] for e in events] == [
        "proposed",
        "active",
        "retired",
        "proposed",
        "rejected",
        "active",
    ]
    assert "VPN" not in json.dumps(events) and "arm64" not in json.dumps(events)
    assert [e["subject"] for e in feed(api, world.agent, clock)] == [
        e["subject"] for e in events[:5]
    ]
    assert "agent" not in events[5]


def test_erasing_an_agent_or_the_workspace_deletes_their_events(
    api: Api, world: World, clock: FixedClock, wired: wiring.Services, dynamodb: Any
) -> None:
    save(api, world, "The builder caches wheels in /tmp/wheels")
    clock.set(clock.now() + timedelta(days=3))
    api.call("POST", "/memories", world.other_agent, {"text": "Reviews start at 9"})
    api.call("POST", "/memories", world.outsider_agent, {"text": "The spy note"})
    clock.set(clock.now() + timedelta(days=2))

    def naming(owner: str) -> list[str]:
        return [json.dumps(item) for item in event_items(dynamodb) if owner in json.dumps(item)]

    assert len(naming(world.agent.id)) == 2
    wired.admin.erase("agent", world.agent.id, by="ops")
    assert naming(world.agent.id) == []
    assert len(naming(world.other_agent.id)) == 2
    wired.admin.erase("workspace", world.workspace_id, by="ops")
    assert naming(world.workspace_id) == [] and naming(world.other_agent.id) == []
    assert len(naming(world.outsider_agent.id)) == 2  # the other workspace keeps its own


def test_an_erasure_deletes_expired_events_dynamodb_has_not_deleted_yet(
    api: Api, world: World, clock: FixedClock, wired: wiring.Services, dynamodb: Any
) -> None:
    save(api, world, "The builder caches wheels in /tmp/wheels")
    clock.set(clock.now() + timedelta(days=40))  # past the 30 kept days: TTL is lazy
    assert len(event_items(dynamodb)) == 2
    assert api.call("GET", "/events", world.person)[1]["data"] == []
    wired.admin.erase("agent", world.agent.id, by="ops")
    assert event_items(dynamodb) == []
