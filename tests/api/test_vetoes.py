"""Vetoes stick (docs/issues.md#issue-14-item-5, docs/reference.md#6-errors): an agent's save of a
text a person vetoed — the same text after normalisation, or a duplicate of it — is refused
with 409 ``memory_vetoed`` naming the vetoed memory; a person may still save it."""

from __future__ import annotations

from typing import Any

from chalicelib import wiring
from tests.helpers import TABLE, Api, World, every_memory, save

VETOED_TEXT = "Prod deploys skip the change board on Fridays"


def vetoed(api: Api, world: World, text: str = VETOED_TEXT) -> dict[str, Any]:
    fact = save(api, world, text)
    status, body = api.call("POST", f"/memories/{fact['id']}/veto", world.person, {})
    assert status == 200 and body["archiveReason"] == "vetoed"
    return fact


def test_an_agent_cannot_save_a_vetoed_text_again(api: Api, world: World) -> None:
    fact = vetoed(api, world)
    before = every_memory(api, world)
    for text in (
        VETOED_TEXT,
        "prod deploys skip the change board on fridays!",
        "Production deploys skip the change board on Fridays",
    ):
        status, body = api.call("POST", "/memories", world.agent, {"text": text})
        assert (status, body["error"]["code"]) == (409, "memory_vetoed"), text
        assert fact["id"] in body["error"]["message"]
    # With supersedes too: the check comes first, nothing changes.
    live = save(api, world, "Staging deploys need the VPN")
    status, body = api.call(
        "POST", "/memories", world.agent, {"text": VETOED_TEXT, "supersedes": live["id"]}
    )
    assert (status, body["error"]["code"]) == (409, "memory_vetoed")
    assert [m for m in every_memory(api, world) if m["id"] != live["id"]] == before


def test_a_different_detail_is_a_new_fact_and_may_be_saved(api: Api, world: World) -> None:
    vetoed(api, world)
    for text in (
        "Prod deploys skip the change board on Mondays",
        "Staging deploys skip the change board on Fridays",
        "Prod deploys never skip the change board on Fridays",
    ):
        assert api.call("POST", "/memories", world.agent, {"text": text})[0] == 201, text


def test_a_person_and_other_agents_may_save_it(api: Api, world: World) -> None:
    vetoed(api, world)
    status, body = api.call(
        "POST", "/memories", world.person, {"text": VETOED_TEXT, "agentId": world.agent.id}
    )
    assert status == 201 and body["editedByPersonId"] == world.person.id
    assert api.call("POST", "/memories", world.other_agent, {"text": VETOED_TEXT})[0] == 201


def test_a_veto_a_person_lifted_no_longer_refuses(api: Api, world: World) -> None:
    fact = vetoed(api, world)
    assert api.call("POST", f"/memories/{fact['id']}/unarchive", world.person, {})[0] == 200
    assert api.call("POST", "/memories", world.agent, {"text": VETOED_TEXT})[0] == 201


def test_the_mcp_save_is_refused_too(api: Api, world: World) -> None:
    vetoed(api, world)
    status, body = api.call(
        "POST",
        "/mcp",
        world.agent,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "memory_save", "arguments": {"text": VETOED_TEXT}},
        },
        headers={"Accept": "application/json, text/event-stream"},
    )
    assert status == 200, body
    assert body["result"]["isError"] is True
    assert "memory_vetoed" in body["result"]["content"][0]["text"]


def test_vetoes_from_before_the_index_are_found(
    api: Api, world: World, wired: wiring.Services, dynamodb: Any
) -> None:
    fact = vetoed(api, world)
    # As if vetoed before the index existed: drop every index item of the agent.
    found = dynamodb.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": f"VETO#{world.agent.id}"}},
    )["Items"]
    assert len(found) == 3  # TEXT#, SAME#, and the INDEXED marker of an earlier check
    for item in found:
        dynamodb.delete_item(TableName=TABLE, Key={"pk": item["pk"], "sk": item["sk"]})
    status, body = api.call("POST", "/memories", world.agent, {"text": VETOED_TEXT})
    assert (status, body["error"]["code"]) == (409, "memory_vetoed")
    assert fact["id"] in body["error"]["message"]
