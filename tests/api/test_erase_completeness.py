"""Proof that erasing a workspace, an agent or a person is complete
(docs/reference.md#erasing-an-agent-a-person-or-a-workspace, docs/issues.md#issue-24-item-3):
a workspace seeded through every route is erased, then the whole table and every object
version in the bucket are searched for its texts, tokens and ids; only the erasure's
tombstone may name it, and the other workspace is unchanged to the byte."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from chalice.test import Client

from chalicelib import wiring
from chalicelib.errors import NotFound
from chalicelib.ids import FixedClock
from chalicelib.services.lifecycle.erasure import ErasureProgress
from tests.helpers import BUCKET, TABLE, Api, World, save
from tests.helpers import DashboardPage as Page
from tests.lifecycle_seed import TEXTS, seed, wiki_page

OTHER_TEXT = "The elsewhere cache is redis-elsewhere-9"


def everything(dynamodb: Any, s3: Any) -> tuple[dict[tuple[str, str], str], dict[str, bytes]]:
    """Every item (its JSON) and every object version's body, by key."""
    items: dict[tuple[str, str], str] = {}
    for page in dynamodb.get_paginator("scan").paginate(TableName=TABLE):
        for item in page["Items"]:
            raw = json.dumps(item, sort_keys=True, default=lambda b: bytes(b).decode("latin-1"))
            items[(item["pk"]["S"], item["sk"]["S"])] = raw
    objects: dict[str, bytes] = {}
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=BUCKET):
        for version in page.get("Versions", []):
            body = s3.get_object(Bucket=BUCKET, Key=version["Key"], VersionId=version["VersionId"])
            objects[f"{version['Key']}@{version['VersionId']}"] = body["Body"].read()
    return items, objects


def traces(
    items: dict[tuple[str, str], str], objects: dict[str, bytes], needles: set[str]
) -> list[str]:
    """The items and object versions that hold one of ``needles`` (JSON-escaped too)."""
    escaped = needles | {json.dumps(needle)[1:-1] for needle in needles}
    found = [f"{pk} {sk}" for (pk, sk), raw in items.items() if any(n in raw for n in escaped)]
    found += [
        name
        for name, body in objects.items()
        if any(n.encode() in body or n in name for n in needles)
    ]
    return found


def tombstone(items: dict[tuple[str, str], str], workspace_id: str, agent_id: str) -> list[str]:
    """What an agent's erasure leaves naming it: its record, and its entry in the
    workspace's past erasures (keyed by the time it started; ids and a time only)."""
    started = json.loads(items[(f"ERASURE#{agent_id}", "RECORD")])["startedAt"]["S"]
    return [f"ERASURE#{agent_id} RECORD", f"ERASURE#{workspace_id} LIST#{started}#{agent_id}"]


def seed_elsewhere(api: Api, world: World) -> None:
    assert api.call("POST", "/memories", world.outsider_agent, {"text": OTHER_TEXT})[0] == 201
    assert api.call("POST", "/memories/day", world.outsider_agent, {"line": "kept"})[0] == 201
    status, _ = api.call(
        "POST", "/kv/remember", world.outsider, {"key": "notes", "value": OTHER_TEXT}
    )
    assert status == 200


def secrets_of(world: World, made: set[str]) -> set[str]:
    tokens = {world.agent.token, world.other_agent.token, world.person.token}
    hashes = {hashlib.sha256(token.encode()).hexdigest() for token in tokens}
    return (
        set(made)
        | tokens
        | hashes
        | {text.removeprefix("!fact ") for text in TEXTS}
        | {"ana@example.com"}
    )


def test_an_erased_workspace_leaves_no_trace_but_its_tombstone(
    api: Api,
    world: World,
    wired: wiring.Services,
    dynamodb: Any,
    versioned: Any,
    clock: FixedClock,
) -> None:
    made = seed(api, world, wired, clock)
    seed_elsewhere(api, world)
    with Client(__import__("app").app) as client:
        page = Page(client)
        assert page.sign_in(world.person.token).status_code == 303
        elsewhere = Page(client)
        assert elsewhere.sign_in(world.outsider.token).status_code == 303
    items, objects = everything(dynamodb, versioned)
    needles = secrets_of(world, made)
    assert len(traces(items, objects, needles)) > 40  # the search sees what was seeded
    other_ids = {world.outsider.id, world.outsider_agent.id}
    theirs_before = {
        key: raw
        for key, raw in items.items()
        if any(found in raw for found in other_ids) and not any(n in raw for n in needles)
    }

    dry = wired.admin.erase("workspace", world.workspace_id, by="ticket-7", dry_run=True)
    assert everything(dynamodb, versioned) == (items, objects)  # a dry run changes nothing
    steps: list[ErasureProgress] = []
    done = wired.admin.erase("workspace", world.workspace_id, by="ticket-7", progress=steps.append)
    assert not done.already_erased and done.erased_by == "ticket-7"
    assert done.items == dry.items and done.object_versions == dry.object_versions
    assert {step.phase for step in steps} == {"collect", "delete"}

    items, objects = everything(dynamodb, versioned)
    left = traces(items, objects, needles)
    assert left == [f"ERASURE#{world.workspace_id} RECORD"]
    theirs_after = {key: raw for key, raw in items.items() if key in theirs_before}
    assert theirs_after == theirs_before
    # tokens of the erased workspace no longer work; the other workspace's do
    assert api.call("GET", "/memories", world.agent)[0] == 401
    assert api.call("GET", "/memories", world.outsider_agent)[0] == 200
    again = wired.admin.erase("workspace", world.workspace_id, by="someone else")
    assert again.already_erased and again.erased_by == "ticket-7"
    assert again.items == done.items


def test_erasing_an_agent_leaves_its_siblings(
    api: Api, world: World, wired: wiring.Services, dynamodb: Any, versioned: Any
) -> None:
    mine = save(api, world, TEXTS[0])
    api.call("POST", "/memories/day", world.agent, {"line": "checked billing-svc-88"})
    sibling = api.call("POST", "/memories", world.other_agent, {"text": TEXTS[1]})[1]
    before, _ = everything(dynamodb, versioned)
    report = wired.admin.erase("agent", world.agent.id, by="ops")
    items, objects = everything(dynamodb, versioned)
    # the tombstone, and its entry in the workspace's past erasures (ids and a time)
    left = traces(items, objects, {world.agent.id, mine["id"], TEXTS[0], "billing-svc-88"})
    assert sorted(left) == tombstone(items, world.workspace_id, world.agent.id)
    assert report.items["MEMORY"] == 2 and report.items["AGENT"] == 1
    for key in (
        (f"MEMORY#{sibling['id']}", "MEMORY"),
        (f"WORKSPACE#{world.workspace_id}", "WORKSPACE"),
    ):
        assert items[key] == before[key]
    assert api.call("GET", f"/memories/{sibling['id']}", world.person)[0] == 200


def test_a_persons_wiki_page_naming_an_agent_stays_through_its_erasure(
    api: Api, world: World, wired: wiring.Services, dynamodb: Any, versioned: Any
) -> None:
    page_id = wiki_page(api, world, extra=f"Ask {world.agent.id}.")
    before, _ = everything(dynamodb, versioned)
    pages = {key: raw for key, raw in before.items() if key[0].startswith("WIKI")}
    assert len(pages) >= 5  # the page, its slug, count, summary, two history records
    wired.admin.erase("agent", world.agent.id, by="ops")
    items, _ = everything(dynamodb, versioned)
    assert {key: raw for key, raw in items.items() if key[0].startswith("WIKI")} == pages
    assert api.call("GET", f"/pages/{page_id}", world.person)[0] == 200


def test_erasing_a_person_keeps_what_they_did(
    api: Api, world: World, wired: wiring.Services, dynamodb: Any, versioned: Any
) -> None:
    fact = save(api, world)
    api.call("PATCH", f"/memories/{fact['id']}", world.person, {"text": "edited by ana"})
    report = wired.admin.erase("person", world.person.id, by="ops")
    assert report.items.get("PERSON") == 1 and report.items.get("PERSONEMAIL") == 1
    items, objects = everything(dynamodb, versioned)
    assert traces(items, objects, {"ana@example.com", world.person.token}) == []
    assert api.call("GET", "/memories", world.person)[0] == 401
    history = api.call("GET", f"/memories/{fact['id']}/history", world.agent)[1]["data"]
    assert history[-1]["actorId"] == world.person.id  # their id stays on what they did


def test_an_interrupted_erasure_resumes_and_unknown_targets_are_refused(
    api: Api, world: World, wired: wiring.Services, dynamodb: Any, versioned: Any, monkeypatch: Any
) -> None:
    from chalicelib.storage import owner_store

    monkeypatch.setattr(owner_store, "OWNED_PAGE_ITEMS", 5)
    for text in TEXTS:
        save(api, world, text.removeprefix("!fact "))

    class Crash(Exception):
        pass

    def crash_in_delete(step: ErasureProgress) -> None:
        if step.phase == "delete" and step.scanned >= 10:
            raise Crash

    with pytest.raises(Crash):
        wired.admin.erase("agent", world.agent.id, by="ops", progress=crash_in_delete)
    items, _ = everything(dynamodb, versioned)
    assert any(TEXTS[1] in raw for raw in items.values())  # not done yet
    finished = wired.admin.erase("agent", world.agent.id, by="ops")
    assert not finished.already_erased
    items, objects = everything(dynamodb, versioned)
    left = traces(items, objects, {world.agent.id, TEXTS[1]})
    assert sorted(left) == tombstone(items, world.workspace_id, world.agent.id)
    with pytest.raises(NotFound):
        wired.admin.erase("agent", "agt_01JDQZZZZZZZZZZZZZZZZZZZZZ", by="ops")
