"""The one-time table upgrade for the dashboard (docs/issues.md#issue-13): agents created before
workspace listings get one; memories written before the ``byAgentKind`` index get
its value; a second run reads nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from chalicelib.ids import FixedClock
from chalicelib.storage.dynamodb import DynamoDBTable, from_attributes, to_attributes
from chalicelib.storage.keys import (
    AGENT_KIND_INDEX_PARTITION,
    BY_WORKSPACE_SHARD,
    BY_WORKSPACE_STATUS_SHARD,
    WORKSPACE_INDEXES,
    memory_key,
    section_index_partition,
    section_key,
    section_page_key,
    workspace_agent_key,
)
from chalicelib.storage.kv import S3ObjectStore
from chalicelib.storage.wiki_sections import DynamoDBSectionIndex
from chalicelib.wiring import Services
from tests.helpers import BUCKET, TABLE, Api, World


def forget_new_attributes(dynamodb: Any, world: World, memory_id: str) -> None:
    """Make the table look as an older version left it."""
    for agent_id in (world.agent.id, world.other_agent.id):
        key = workspace_agent_key(world.workspace_id, agent_id)
        dynamodb.delete_item(TableName=TABLE, Key={"pk": {"S": key["pk"]}, "sk": {"S": key["sk"]}})
    key = memory_key(memory_id)
    dynamodb.update_item(
        TableName=TABLE,
        Key={"pk": {"S": key["pk"]}, "sk": {"S": key["sk"]}},
        UpdateExpression="REMOVE #index",
        ExpressionAttributeNames={"#index": AGENT_KIND_INDEX_PARTITION},
    )


def test_upgrade_lists_agents_and_indexes_memories_once(
    api: Api, wired: Services, world: World, dynamodb: Any
) -> None:
    _, memory = api.call("POST", "/memories", world.agent, {"text": "an old fact"})
    forget_new_attributes(dynamodb, world, memory["id"])
    person = wired.auth.authenticate(f"Bearer {world.person.token}")
    assert wired.dashboard.workspace.agents(person) == []
    report = wired.admin.upgrade_table()
    assert (report.agents_listed, report.memories_indexed) == (2, 1)
    assert not report.done_before and report.scanned > 0
    assert [a.name for a in wired.dashboard.workspace.agents(person)] == ["builder", "reviewer"]
    item = DynamoDBTable(dynamodb, TABLE).get(memory_key(memory["id"]))
    assert item is not None and item[AGENT_KIND_INDEX_PARTITION].endswith("#fact#active")
    assert wired.dashboard.overview.counts(world.agent.id, wired.clock.now()).live_facts == 1
    again = wired.admin.upgrade_table()
    assert again.done_before and again.scanned == 0
    assert again.to_wire()["doneBefore"] is True


def test_an_archived_memory_gets_its_status_in_the_index(
    api: Api, wired: Services, world: World, dynamodb: Any
) -> None:
    _, memory = api.call("POST", "/memories", world.agent, {"text": "gone"})
    api.call("POST", f"/memories/{memory['id']}/archive", world.agent, {"reason": "old"})
    forget_new_attributes(dynamodb, world, memory["id"])
    wired.admin.upgrade_table()
    key = memory_key(memory["id"])
    found = dynamodb.get_item(TableName=TABLE, Key={"pk": {"S": key["pk"]}, "sk": {"S": key["sk"]}})
    assert from_attributes(found["Item"])[AGENT_KIND_INDEX_PARTITION] == (
        f"{world.agent.id}#fact#archived"
    )


def test_memories_from_before_the_workspace_shards_are_listed_after_the_upgrade(
    api: Api, wired: Services, world: World, dynamodb: Any
) -> None:
    """docs/issues.md#issue-23-item-2: a memory written by a release without the sharded
    workspace indexes is missing from workspace lists until the upgrade gives it its
    shard keys; the first release's index keys it still carries are left alone."""
    saved = [api.call("POST", "/memories", world.agent, {"text": f"fact {n}"})[1] for n in range(3)]
    api.call("POST", f"/memories/{saved[1]['id']}/archive", world.agent, {"reason": "old"})
    for memory in saved:
        key = memory_key(memory["id"])
        dynamodb.update_item(
            TableName=TABLE,
            Key={"pk": {"S": key["pk"]}, "sk": {"S": key["sk"]}},
            UpdateExpression="REMOVE #shard, #status_shard SET #old = :agent",
            ExpressionAttributeNames={
                "#shard": WORKSPACE_INDEXES[BY_WORKSPACE_SHARD],
                "#status_shard": WORKSPACE_INDEXES[BY_WORKSPACE_STATUS_SHARD],
                "#old": "gsiAgent",
            },
            ExpressionAttributeValues={":agent": {"S": world.agent.id}},
        )
    person = world.person

    def listed(query: str) -> list[str]:
        status, body = api.call("GET", f"/memories{query}", person)
        assert status == 200, body
        return [memory["id"] for memory in body["data"]]

    assert listed("?all=true") == [] and listed("?status=archived") == []
    report = wired.admin.upgrade_table()
    assert report.memories_indexed == 3
    newest_first = [memory["id"] for memory in reversed(saved)]
    assert listed("?all=true") == newest_first
    assert listed("?status=archived") == [saved[1]["id"]]
    assert listed("?status=active") == [saved[2]["id"], saved[0]["id"]]
    item = DynamoDBTable(dynamodb, TABLE).get(memory_key(saved[0]["id"]))
    assert item is not None and item["gsiAgent"] == world.agent.id
    assert item[WORKSPACE_INDEXES[BY_WORKSPACE_STATUS_SHARD]].startswith(
        f"{world.workspace_id}#active#"
    )


def test_upgrade_lists_the_erasures_made_before_the_listing(
    api: Api, wired: Services, world: World, dynamodb: Any, clock: FixedClock
) -> None:
    fact = api.call("POST", "/memories", world.agent, {"text": "the old vault alias"})[1]
    api.call("POST", f"/memories/{fact['id']}/erase", world.person, {"reason": "leaked"})
    clock.set(clock.now() + timedelta(minutes=1))
    wired.admin.erase("agent", world.other_agent.id, by="ops")
    listing = {
        "pk": f"ERASURE#{world.workspace_id}",
        "sk": "LIST#",
    }
    before = dynamodb.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :pk AND begins_with(sk, :sk)",
        ExpressionAttributeValues={":pk": {"S": listing["pk"]}, ":sk": {"S": listing["sk"]}},
    )["Items"]
    assert len(before) == 2
    for item in before:  # as an older release left the table: no listing
        dynamodb.delete_item(TableName=TABLE, Key={"pk": item["pk"], "sk": item["sk"]})
    person = wired.auth.authenticate(f"Bearer {world.person.token}")
    assert wired.lifecycle.erasures(person, 10, None) == ([], None)

    report = wired.admin.upgrade_table()
    assert report.erasures_listed == 2 and report.to_wire()["erasuresListed"] == 2
    listed, _ = wired.lifecycle.erasures(person, 10, None)
    assert [(entry["kind"], entry["id"]) for entry in listed] == [
        ("agent", world.other_agent.id),
        ("memory", fact["id"]),
    ]
    assert listed[1]["reason"] == "leaked" and listed[0]["requestedBy"] == "ops"
    # the same entries the erasures wrote, so listing again writes the same items
    after = dynamodb.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :pk AND begins_with(sk, :sk)",
        ExpressionAttributeValues={":pk": {"S": listing["pk"]}, ":sk": {"S": listing["sk"]}},
    )["Items"]
    assert sorted(after, key=lambda item: item["sk"]["S"]) == sorted(
        before, key=lambda item: item["sk"]["S"]
    )


def _tag_entries(dynamodb: Any, agent_id: str) -> list[str]:
    items = dynamodb.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": f"MEMORYTAGS#{agent_id}"}},
    )["Items"]
    return sorted(item["sk"]["S"] for item in items)


def _tagged(api: Api, world: World, query: str) -> list[str]:
    status, body = api.call("GET", f"/memories?agentId={world.agent.id}&{query}", world.person)
    assert status == 200, body
    return [memory["id"] for memory in body["data"]]


def test_upgrade_files_the_tag_index_again_after_a_release_without_tags(
    api: Api, wired: Services, world: World, dynamodb: Any
) -> None:
    """docs/operations.md#rollback: a release without tags (0.2.0) archives and edits
    facts without moving their tag index entries. Until the upgrade a filtered list
    shows no fact that lacks the filter's tags or state; the upgrade drops the stale
    entries and files the missing ones, each in a transaction checked on the memory."""
    first = api.call("POST", "/memories", world.agent, {"text": "a", "tags": ["alpha", "beta"]})[1]
    second = api.call("POST", "/memories", world.agent, {"text": "b", "tags": ["alpha"]})[1]
    # as 0.2.0 writes: the memory item alone, one version on
    for memory_id, update in (
        (first["id"], "SET #status = :archived, version = version + :one"),
        (second["id"], "REMOVE tags SET version = version + :one"),
    ):
        key = memory_key(memory_id)
        names = {"#status": "status"} if "#status" in update else None
        values = {":one": {"N": "1"}, **({":archived": {"S": "archived"}} if names else {})}
        dynamodb.update_item(
            TableName=TABLE,
            Key={"pk": {"S": key["pk"]}, "sk": {"S": key["sk"]}},
            UpdateExpression=update,
            ExpressionAttributeValues=values,
            **({"ExpressionAttributeNames": names} if names else {}),
        )
    assert _tagged(api, world, "tag=alpha") == []
    assert _tagged(api, world, "tag=alpha&status=archived") == []  # its entry is missing

    report = wired.admin.upgrade_table()
    assert (report.tags_refiled, report.stale_tags_dropped) == (1, 3)
    assert report.to_wire()["staleTagsDropped"] == 3
    assert _tag_entries(dynamodb, world.agent.id) == [
        f"alpha#archived#{first['id']}",
        f"beta#archived#{first['id']}",
    ]
    assert _tagged(api, world, "tag=alpha&status=archived") == [first["id"]]
    assert _tagged(api, world, "anyTag=alpha,beta") == []


def test_the_wiki_index_of_one_item_a_section_is_rebuilt_as_page_records(
    api: Api, wired: Services, world: World, dynamodb: Any, s3: Any
) -> None:
    """Sections a release before docs/issues.md#issue-45-item-3 stored one item each become one
    packed record a page, embeddings kept (nothing embedded again), the old items deleted;
    a recall then finds the page."""
    text = "On call: the rota.\n\n## Restart the billing worker\n\nRun the rollout restart.\n"
    status, _, page = api.send("POST", "/pages", world.person, {"title": "Runbook", "text": text})
    assert status == 201
    published = api.call("POST", f"/pages/{page['id']}/publish", world.person, {})[1]
    table = DynamoDBTable(dynamodb, TABLE)
    index = DynamoDBSectionIndex(table, S3ObjectStore(lambda: s3, BUCKET))
    sections = index.sections(world.workspace_id)
    assert len(sections) == 2
    # as the earlier release left it: one item a section, no page record
    record = section_page_key(world.workspace_id, page["id"])
    dynamodb.delete_item(TableName=TABLE, Key=to_attributes(record))
    for section in sections:
        item = {
            **section_key(section.workspace_id, section.page_id, section.index),
            "workspaceId": section.workspace_id,
            "pageId": section.page_id,
            "version": section.version,
            "index": section.index,
            "anchor": section.anchor,
            "headingPath": list(section.heading_path),
            "slug": section.slug,
            "text": section.text,
            "embedding": section.embedding,
        }
        dynamodb.put_item(TableName=TABLE, Item=to_attributes(item))
    assert index.sections(world.workspace_id) == []

    report = wired.admin.upgrade_table()
    assert report.section_pages_rebuilt == 1
    assert index.sections(world.workspace_id) == sections  # embeddings kept
    left = dynamodb.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": section_index_partition(world.workspace_id)}},
    )["Items"]
    assert [item["sk"]["S"] for item in left] == [record["sk"]]
    assert published["version"] == sections[0].version
    status, recalled = api.call(
        "POST", "/memories/recall", world.agent, {"query": "restart the billing worker"}
    )
    assert status == 200
    assert [s["pageId"] for s in recalled["sections"]][:1] == [page["id"]]
