"""Erasing a memory through the HTTP API (docs/reference.md#erasing-a-memory,
docs/issues.md#issue-24-item-1): the text leaves the item, the audit records, the review
items and reports (every version), the recall index and cached exports; a tombstone
stays and nothing brings it back."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import wiring
from chalicelib.ids import FixedClock
from chalicelib.storage import recall_index
from tests.helpers import BUCKET, TABLE, Api, World, error_code, every_memory, review, save

SECRET_V1 = "The payroll export lives in bucket acme-payroll-7731"
SECRET_V2 = "The payroll export lives in bucket acme-payroll-9902"
DUPLICATE = "the payroll export lives in bucket acme-payroll-9902!"


def traces(dynamodb: Any, s3: Any, texts: list[str]) -> list[str]:
    """Every table item and object version (current or not) that holds one of ``texts``."""
    found: list[str] = []
    pages = dynamodb.get_paginator("scan").paginate(TableName=TABLE)
    for page in pages:
        for item in page["Items"]:
            # binary attributes (packed recall entries) are searched as bytes too
            raw = json.dumps(item, default=lambda b: bytes(b).decode("utf-8", "replace"))
            if any(text in raw or json.dumps(text)[1:-1] in raw for text in texts):
                found.append(f"{item['pk']['S']} {item['sk']['S']}")
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=BUCKET):
        for version in page.get("Versions", []):
            body = s3.get_object(Bucket=BUCKET, Key=version["Key"], VersionId=version["VersionId"])[
                "Body"
            ].read()
            if any(text.encode() in body for text in texts):
                found.append(f"s3://{version['Key']}@{version['VersionId']}")
    return found


def erase(api: Api, world: World, memory_id: str, reason: str = "asked by the data subject"):
    return api.call("POST", f"/memories/{memory_id}/erase", world.person, {"reason": reason})


def test_an_erased_fact_leaves_no_trace_but_its_tombstone(
    api: Api,
    world: World,
    wired: wiring.Services,
    dynamodb: Any,
    versioned: Any,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # small segments and volumes, so the fact's entry is packed into an S3 volume
    monkeypatch.setattr(recall_index, "INLINE_SEGMENT_LIMIT", 1)
    monkeypatch.setattr(recall_index, "SEGMENT_BYTES", 2_000)
    monkeypatch.setattr(recall_index, "VOLUME_BYTES", 8_000)
    wired.admin.set_review_approval(world.workspace_id, "required")
    for number in range(60):
        save(api, world, f"The build cache for service {number} lives in region eu-west-{number}")
    target = save(api, world, SECRET_V1, evidence=f"tool said: {SECRET_V1}")
    status, edited = api.call(
        "PATCH", f"/memories/{target['id']}", world.person, {"text": SECRET_V2}
    )
    assert status == 200, edited
    save(api, world, DUPLICATE)
    for _ in range(3):  # recalls merge segments into volumes
        status, body = api.call("POST", "/memories/recall", world.agent, {"query": "payroll"})
        assert status == 200, body
    assert target["id"] in {item["memory"]["id"] for item in body["memories"]}
    volumes = versioned.list_objects_v2(Bucket=BUCKET, Prefix="recall-index/")
    assert volumes.get("KeyCount", 0) >= 1  # the fact's entry sits in an S3 volume
    report = review(api, world)  # a pending merge quoting both texts
    assert report["status"] == "pending"
    export_key = f"exports/{world.workspace_id}/exp_1.jsonl"
    versioned.put_object(Bucket=BUCKET, Key=export_key, Body=SECRET_V2.encode())
    texts = [SECRET_V1, SECRET_V2, DUPLICATE]
    assert traces(dynamodb, versioned, [SECRET_V1, SECRET_V2])  # the test can see traces

    clock.set(clock.now() + timedelta(minutes=5))
    erased_ids = []
    for memory in every_memory(api, world):
        if memory["text"] in (SECRET_V2, DUPLICATE):
            status, tombstone = erase(api, world, memory["id"])
            assert status == 200, tombstone
            erased_ids.append(memory["id"])
            assert tombstone["status"] == "erased" and tombstone["text"] == ""
            assert tombstone["erasedBy"] == world.person.id
            assert tombstone["eraseReason"] == "asked by the data subject"
            assert tombstone["erasedAt"] == "2026-11-30T12:05:00.000Z"
    assert len(erased_ids) == 2

    assert traces(dynamodb, versioned, texts) == []
    # what remains: the tombstones and their history without texts
    status, history = api.call("GET", f"/memories/{target['id']}/history", world.person)
    assert status == 200
    actions = [record["action"] for record in history["data"]]
    assert actions == ["create", "edit", "erase"]
    assert all(record["evidence"] is None for record in history["data"])
    assert history["data"][-1]["actorId"] == world.person.id
    # never recalled, never listed as live
    status, body = api.call("POST", "/memories/recall", world.agent, {"query": "payroll export"})
    assert status == 200
    assert not {item["memory"]["id"] for item in body["memories"]} & set(erased_ids)
    status, live = api.call(
        "GET", f"/memories?agentId={world.agent.id}&status=active&limit=100", world.person
    )
    assert status == 200 and not {m["id"] for m in live["data"]} & set(erased_ids)
    # erasing again: the same tombstone, no new record
    status, again = erase(api, world, target["id"], "a second request")
    assert status == 200 and again["eraseReason"] == "asked by the data subject"
    status, history = api.call("GET", f"/memories/{target['id']}/history", world.person)
    assert len(history["data"]) == 3
    # the other facts are still recalled from the rebuilt index
    status, body = api.call("POST", "/memories/recall", world.agent, {"query": "build cache"})
    assert status == 200 and body["memories"]


def test_only_a_person_erases_and_a_bad_reason_changes_nothing(
    api: Api, world: World, versioned: Any
) -> None:
    fact = save(api, world)
    status, body = api.call(
        "POST", f"/memories/{fact['id']}/erase", world.agent, {"reason": "mine"}
    )
    assert (status, body["error"]["code"]) == (403, "forbidden")
    for bad in ({}, {"reason": "  "}, {"reason": "x" * 501}, {"reason": "y", "extra": 1}):
        status, body = api.call("POST", f"/memories/{fact['id']}/erase", world.person, bad)
        assert (status, body["error"]["code"]) == (400, "invalid_request"), bad
    assert error_code(erase(api, world, "mem_01JDQZZZZZZZZZZZZZZZZZZZZZ")) == (
        404,
        "memory_not_found",
    )
    outsider = api.call("POST", f"/memories/{fact['id']}/erase", world.outsider, {"reason": "r"})
    assert error_code(outsider) == (404, "memory_not_found")
    status, unchanged = api.call("GET", f"/memories/{fact['id']}", world.person)
    assert unchanged == fact | {"expired": unchanged["expired"]}


def test_an_erased_memory_never_changes_or_comes_back(
    api: Api, world: World, versioned: Any
) -> None:
    fact = save(api, world)
    status, tombstone = erase(api, world, fact["id"])
    assert status == 200
    path = f"/memories/{fact['id']}"
    calls = [
        ("PATCH", path, world.person, {"text": "back again"}),
        ("POST", f"{path}/archive", world.person, {"reason": "old"}),
        ("POST", f"{path}/veto", world.person, {}),
        ("POST", f"{path}/unarchive", world.person, {}),
    ]
    for method, route, actor, body in calls:
        assert error_code(api.call(method, route, actor, body)) == (409, "memory_erased"), route
    status, shown = api.call("GET", path, world.person)
    assert shown == tombstone | {"expired": shown["expired"]}
    # the agent may save the same text again: an erasure is not a veto
    status, _ = api.call("POST", "/memories", world.agent, {"text": fact["text"]})
    assert status == 201


def test_a_review_undo_never_revives_an_erased_memory(
    api: Api, world: World, versioned: Any
) -> None:
    save(api, world, "Deploys need the VPN on")
    save(api, world, "deploys need the VPN on!")
    report = review(api, world)
    (action,) = report["plan"]["actions"]
    (loser,) = action["memoryIds"]
    status, _ = erase(api, world, loser)
    assert status == 200
    undo = f"/reviews/{report['id']}/actions/1/undo"
    assert error_code(api.call("POST", undo, world.person, {})) == (409, "memory_erased")
    assert api.call("GET", f"/memories/{loser}", world.person)[1]["status"] == "erased"
    kept = api.call("GET", f"/memories/{action['keepId']}", world.person)[1]
    assert kept["status"] == "active"


def test_erasing_in_a_supersede_chain_keeps_its_links(
    api: Api, world: World, versioned: Any
) -> None:
    first = save(api, world, "The on-call rota lives in PagerDuty")
    second = save(api, world, "The on-call rota lives in Opsgenie", supersedes=first["id"])
    third = save(api, world, "The on-call rota lives in incident.io", supersedes=second["id"])
    assert erase(api, world, second["id"])[0] == 200  # the middle
    assert erase(api, world, third["id"])[0] == 200  # the newest
    shown = {m["id"]: m for m in every_memory(api, world)}
    assert shown[first["id"]]["supersededBy"] == second["id"]
    assert shown[second["id"]]["supersedes"] == first["id"]
    assert shown[second["id"]]["supersededBy"] == third["id"]
    assert shown[third["id"]]["supersedes"] == second["id"]
    assert shown[third["id"]]["status"] == "erased"
    # the oldest stays superseded: erasing its successor does not bring it back
    assert shown[first["id"]]["status"] == "archived"
    status, body = api.call("POST", f"/memories/{first['id']}/unarchive", world.person, {})
    assert (status, body["error"]["code"]) == (409, "memory_superseded")


def test_an_erased_day_row_loses_every_line_and_frees_its_date(
    api: Api, world: World, dynamodb: Any, versioned: Any
) -> None:
    lines = ["met Dana about the acme-payroll-7731 bucket", "moved it to the cold tier"]
    status, row = api.call("POST", "/memories/day", world.agent, {"line": lines[0]})
    assert status == 201
    assert api.call("POST", "/memories/day", world.agent, {"line": lines[1]})[0] == 200
    status, tombstone = erase(api, world, row["id"])
    assert status == 200 and tombstone["kind"] == "day" and tombstone["text"] == ""
    assert traces(dynamodb, versioned, lines) == []
    status, again = api.call("POST", "/memories/day", world.agent, {"line": "a new start"})
    assert status == 201 and again["id"] != row["id"]
