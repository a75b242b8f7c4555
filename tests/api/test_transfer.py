"""Export and import (docs/reference.md#export-and-import, docs/issues.md#issue-24-item-5):
a workspace seeded through every route goes to a second stage and back unchanged,
idempotently, with its ids kept or remapped consistently; a newer or damaged file
writes nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib import wiring
from chalicelib.errors import InvalidRequest
from chalicelib.ids import FixedClock
from chalicelib.settings import Settings
from infra.tables import create_table
from tests.helpers import Api, World
from tests.lifecycle_seed import seed

SECOND = "pinework-second"


@pytest.fixture
def second(dynamodb: Any, s3: Any, clock: FixedClock) -> wiring.Services:
    """Another stage: its own table and bucket."""
    create_table(dynamodb, SECOND)
    s3.create_bucket(Bucket=SECOND)
    return wiring.build_services(
        Settings(table_name=SECOND, bucket_name=SECOND, read_concurrency=1),
        clock=clock,
        client=dynamodb,
        s3=s3,
    )


def exported(services: wiring.Services, kind: str, target: str) -> list[str]:
    lines: list[str] = []
    services.admin.export(kind, target, lines.append)
    return lines


def table_items(dynamodb: Any, table: str) -> list[dict[str, Any]]:
    pages = dynamodb.get_paginator("scan").paginate(TableName=table)
    return [item for page in pages for item in page["Items"]]


def test_a_workspace_round_trips_between_stages(
    api: Api,
    world: World,
    wired: wiring.Services,
    second: wiring.Services,
    dynamodb: Any,
    versioned: Any,
    clock: FixedClock,
) -> None:
    seed(api, world, wired, clock)
    first = exported(wired, "workspace", world.workspace_id)
    header = json.loads(first[0])
    assert (header["format"], header["version"], header["kind"]) == (
        "pinework-export",
        1,
        "workspace",
    )
    body = "\n".join(first)
    for secret in (world.agent.token, world.person.token, "IDEMPOTENCY#", "TOKEN#", "WEBSESSION#"):
        assert secret not in body
    kinds = {
        json.loads(line)["item"]["pk"]["S"].split("#")[0]
        for line in first[1:-1]
        if '"item"' in line
    }
    assert {
        "MEMORY",
        "DAYLOG",
        "RECALLS",
        "RECALLCOUNT",
        "ROUTINE",
        "REVIEWS",
        "PENDING",
        "KV",
    } <= kinds
    assert any(json.loads(line).get("type") == "object" for line in first)

    report = second.admin.import_file(lambda: iter(first))
    assert report.conflicts == 0 and report.already_there == 0
    assert sum(report.items.values()) == json.loads(first[-1])["items"]
    again = exported(second, "workspace", world.workspace_id)
    assert set(again[1:]) == set(first[1:]) and len(again) == len(first)
    # idempotent: a second import writes nothing
    twice = second.admin.import_file(lambda: iter(first))
    assert twice.items == {} and twice.already_there == sum(report.items.values())
    # the imported agent's recall index was rebuilt: complete, with its live facts
    index = [
        item
        for item in table_items(dynamodb, SECOND)
        if item["pk"]["S"] == f"RECALLINDEX#{world.agent.id}"
    ]
    assert "~BUILT" in {item["sk"]["S"] for item in index} and len(index) >= 2


def test_remapped_ids_keep_every_link(
    api: Api,
    world: World,
    wired: wiring.Services,
    second: wiring.Services,
    dynamodb: Any,
    versioned: Any,
    clock: FixedClock,
) -> None:
    seed(api, world, wired, clock)
    lines = exported(wired, "workspace", world.workspace_id)
    target = second.admin.create_workspace("Copy")
    report = second.admin.import_file(lambda: iter(lines), remap_into=target.id)
    assert report.conflicts == 1  # the target's own workspace item, kept as it was
    items = table_items(dynamodb, SECOND)
    text = json.dumps(items, default=lambda b: "")
    old_ids = {world.workspace_id, world.agent.id, world.person.id}
    assert not any(old in text for old in old_ids)
    memories = {
        item["pk"]["S"][7:]: item
        for item in items
        if item["pk"]["S"].startswith("MEMORY#") and item["sk"]["S"] == "MEMORY"
    }
    assert memories and all(m["workspaceId"]["S"] == target.id for m in memories.values())
    for memory in memories.values():
        for link in ("supersedes", "supersededBy"):
            if link in memory:
                assert memory[link]["S"] in memories  # the chain stays whole
    audits = {
        item["pk"]["S"][7:]
        for item in items
        if item["sk"]["S"].startswith("AUDIT#") and item["pk"]["S"].startswith("MEMORY#")
    }
    assert audits <= set(memories)
    learnings = {
        item["sk"]["S"].removeprefix("LEARNING#")
        for item in items
        if item["pk"]["S"] == f"LEARNINGS#{target.id}" and item["sk"]["S"].startswith("LEARNING#")
    }
    learning_audits = {
        item["pk"]["S"].removeprefix("LEARNING#")
        for item in items
        if item["pk"]["S"].startswith("LEARNING#")
    }
    assert learnings and learning_audits == learnings  # remapped together
    again = second.admin.import_file(lambda: iter(lines), remap_into=target.id)
    assert again.items == {} and again.conflicts == report.conflicts
    assert len(table_items(dynamodb, SECOND)) == len(items)


def test_a_newer_damaged_or_truncated_file_writes_nothing(
    api: Api,
    world: World,
    wired: wiring.Services,
    second: wiring.Services,
    dynamodb: Any,
    versioned: Any,
    clock: FixedClock,
) -> None:
    seed(api, world, wired, clock)
    lines = exported(wired, "agent", world.agent.id)
    before = len(table_items(dynamodb, SECOND))
    newer = [json.dumps({**json.loads(lines[0]), "version": 2}), *lines[1:]]
    bad_line = [*lines[:3], "{not json", *lines[3:]]
    cases = {
        "export_version_unsupported": newer,
        "Line 4 is not JSON": bad_line,
        "truncated": lines[:-1],
        "truncated ": lines[:-3] + lines[-1:],
        "not the header": lines[1:],
    }
    for expected, damaged in cases.items():
        with pytest.raises(InvalidRequest) as refused:
            second.admin.import_file(lambda damaged=damaged: iter(damaged))
        assert expected.strip() in refused.value.message, expected
    assert len(table_items(dynamodb, SECOND)) == before
