"""``pinework admin backfill-embeddings`` (docs/issues.md#issue-3-item-3): facts stored without a
current recall embedding get one, once, with a version-conditioned write; on moto
through the wired admin service, as the CLI runs it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib import wiring
from chalicelib.errors import InvalidRequest
from chalicelib.models.principal import Principal, PrincipalKind
from chalicelib.models.requests import EditRequest, SaveFactRequest
from chalicelib.services.recall.embedding import SENTENCE_BYTES, MiniLMEmbedder, is_current
from chalicelib.services.run_context import RunContext
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.memories import DynamoDBMemoryRepository
from pinework import cli
from tests.helpers import TABLE, InjectedCliRunner, World


def agent_of(world: World, agent_id: str) -> Principal:
    return Principal(kind=PrincipalKind.AGENT, id=agent_id, workspace_id=world.workspace_id)


def save(wired: wiring.Services, agent: Principal, text: str) -> str:
    return wired.memories.save(agent, SaveFactRequest(text=text), RunContext()).id


def stored_embedding(dynamodb: Any, memory_id: str) -> bytes | None:
    key = {"pk": {"S": f"MEMORY#{memory_id}"}, "sk": {"S": "MEMORY"}}
    item = dynamodb.get_item(TableName=TABLE, Key=key, ConsistentRead=True)["Item"]
    return bytes(item["embedding"]["B"]) if "embedding" in item else None


def make_stale(dynamodb: Any, missing: str, format_one: str) -> bytes:
    """Drop one fact's embedding and cut another's to format 1 (the sentence part)."""
    key = {"pk": {"S": f"MEMORY#{missing}"}, "sk": {"S": "MEMORY"}}
    dynamodb.update_item(TableName=TABLE, Key=key, UpdateExpression="REMOVE embedding")
    full = stored_embedding(dynamodb, format_one)
    assert full is not None and is_current(full)
    old = bytes([1]) + full[1:SENTENCE_BYTES]
    key = {"pk": {"S": f"MEMORY#{format_one}"}, "sk": {"S": "MEMORY"}}
    dynamodb.update_item(
        TableName=TABLE,
        Key=key,
        UpdateExpression="SET embedding = :e",
        ExpressionAttributeValues={":e": {"B": old}},
    )
    assert not is_current(stored_embedding(dynamodb, format_one))
    return full


def test_backfill_embeds_exactly_the_stale_facts_once(
    wired: wiring.Services, world: World, dynamodb: Any
) -> None:
    agent = agent_of(world, world.agent.id)
    other = agent_of(world, world.other_agent.id)
    ids = [save(wired, agent, f"The staging deploy step {n} needs the VPN") for n in range(3)]
    theirs = save(wired, other, "The reviewer agent runs at noon")
    full = make_stale(dynamodb, ids[0], ids[1])
    make_stale(dynamodb, theirs, ids[2])
    # One agent first: only its two stale facts are written.
    report = wired.admin.backfill_embeddings(world.workspace_id, world.agent.id).to_wire()
    assert report == {"scanned": 3, "current": 0, "embedded": 3, "changed": 0}
    assert stored_embedding(dynamodb, ids[1]) == full  # what the save computed
    assert all(is_current(stored_embedding(dynamodb, i)) for i in ids)
    assert stored_embedding(dynamodb, theirs) is None
    # The whole workspace: the other agent's fact now; a rerun writes nothing.
    report = wired.admin.backfill_embeddings(world.workspace_id, None).to_wire()
    assert report == {"scanned": 4, "current": 3, "embedded": 1, "changed": 0}
    assert is_current(stored_embedding(dynamodb, theirs))
    again = wired.admin.backfill_embeddings(world.workspace_id, None).to_wire()
    assert again == {"scanned": 4, "current": 4, "embedded": 0, "changed": 0}
    # The backfill is derived data: no history record, no version change.
    history, _ = wired.memories.history(agent, ids[0])
    assert [record.action for record in history] == ["create"]


def test_backfill_rewrites_format_2_from_the_tokenizer_before_its_fix(
    wired: wiring.Services, world: World, dynamodb: Any
) -> None:
    agent = agent_of(world, world.agent.id)
    text = "Deploy steps:\n1. tag the release\n2. run make deploy"
    memory_id = save(wired, agent, text)
    full = stored_embedding(dynamodb, memory_id)
    assert full is not None and full[0] == 3 and is_current(full)
    # What the tokenizer before its fix stored: line feeds deleted ("steps:1."), tag 2.
    before_fix = MiniLMEmbedder().embed([text.replace("\n", "")])[0]
    format_2 = bytes([2]) + before_fix[1:]
    assert format_2[1:] != full[1:]
    key = {"pk": {"S": f"MEMORY#{memory_id}"}, "sk": {"S": "MEMORY"}}
    dynamodb.update_item(
        TableName=TABLE,
        Key=key,
        UpdateExpression="SET embedding = :e",
        ExpressionAttributeValues={":e": {"B": format_2}},
    )
    report = wired.admin.backfill_embeddings(world.workspace_id, None).to_wire()
    assert report == {"scanned": 1, "current": 0, "embedded": 1, "changed": 0}
    assert stored_embedding(dynamodb, memory_id) == full  # format 3, the text as saved
    again = wired.admin.backfill_embeddings(world.workspace_id, None).to_wire()
    assert again == {"scanned": 1, "current": 1, "embedded": 0, "changed": 0}


def test_a_fact_edited_after_it_was_read_keeps_its_own_embedding(
    wired: wiring.Services, world: World, dynamodb: Any
) -> None:
    agent = agent_of(world, world.agent.id)
    memory_id = save(wired, agent, "The deploy window is Tuesday")
    repository = DynamoDBMemoryRepository(DynamoDBTable(dynamodb, TABLE))
    read = repository.get(memory_id)
    assert read is not None
    person = Principal(
        kind=PrincipalKind.PERSON, id=world.person.id, workspace_id=world.workspace_id
    )
    wired.memories.edit(person, memory_id, EditRequest(text="The deploy window is Friday"))
    edited = stored_embedding(dynamodb, memory_id)
    assert edited is not None and is_current(edited)
    assert not repository.set_embedding(read, b"stale")  # read before the edit: refused
    assert stored_embedding(dynamodb, memory_id) == edited
    fresh = repository.get(memory_id)
    assert fresh is not None and repository.set_embedding(fresh, edited)


def test_backfill_refuses_unknown_workspaces_and_foreign_agents(
    wired: wiring.Services, world: World
) -> None:
    with pytest.raises(InvalidRequest, match="Create it first"):
        wired.admin.backfill_embeddings("wsp_01M8P570G06PPAN665ZFVS7TJ0", None)
    with pytest.raises(InvalidRequest, match="is not a workspace id"):
        wired.admin.backfill_embeddings(world.agent.id, None)
    with pytest.raises(InvalidRequest):
        wired.admin.backfill_embeddings(world.workspace_id, world.outsider_agent.id)
    with pytest.raises(InvalidRequest):
        wired.admin.backfill_embeddings(world.workspace_id, "agt_nope")


def test_the_cli_prints_the_counts(wired: wiring.Services, world: World, dynamodb: Any) -> None:
    agent = agent_of(world, world.agent.id)
    first, second = (save(wired, agent, text) for text in ("Use pnpm", "CI runs on arm64"))
    make_stale(dynamodb, first, second)
    runner = InjectedCliRunner(cli.Connections(admin=lambda: wired.admin))
    args = ["admin", "backfill-embeddings", "--workspace", world.workspace_id]
    result = runner.invoke(cli.app, [*args, "--agent", world.agent.id])
    assert result.exit_code == 0, result.output
    assert "scanned 2 live facts: 0 already current, 2 embedded, 0 changed" in result.stdout
    result = runner.invoke(cli.app, [*args, "--json"])
    assert json.loads(result.stdout) == {"scanned": 2, "current": 2, "embedded": 0, "changed": 0}
    bad = runner.invoke(cli.app, [*args, "--agent", world.outsider_agent.id, "--json"])
    assert bad.exit_code == 1
    assert json.loads(bad.stdout)["error"]["code"] == "invalid_request"
