"""``pinework admin backfill-recall-index`` (docs/issues.md#issue-23-item-4): agents from
before the recall index (no marker, no entries) get one entry per active fact and their
marker, resumably and idempotently, with the same recalls before and after; on moto
through the wired admin service, as the CLI runs it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from chalicelib import wiring
from chalicelib.errors import InvalidRequest
from chalicelib.ids import FixedClock, IdFactory, SystemClock
from chalicelib.models.memory import Memory
from chalicelib.models.principal import Principal, PrincipalKind
from chalicelib.models.requests import (
    ArchiveRequest,
    EditRequest,
    RecallRequest,
    SaveFactRequest,
)
from chalicelib.services.recall.index_backfill import (
    PUT_ATTEMPTS,
    IndexProgress,
    RecallIndexBackfill,
)
from chalicelib.services.run_context import RunContext
from chalicelib.settings import Settings
from chalicelib.storage import recall_index
from chalicelib.storage.directory import DynamoDBDirectoryRepository
from chalicelib.storage.dynamodb import DynamoDBTable, to_attributes
from chalicelib.storage.items import recall_loose_item
from chalicelib.storage.keys import RECALL_INDEX_OBJECT_PREFIX
from chalicelib.storage.memories import DynamoDBMemoryRepository
from chalicelib.storage.protocols import MemoryPage
from chalicelib.storage.recall_index import DynamoDBRecallIndex, resolve
from infra.local_server import _index_recall
from pinework import cli
from tests.helpers import BUCKET, START, TABLE, InjectedCliRunner, World

QUERY = "how do I deploy to staging"


def table(dynamodb: Any) -> DynamoDBTable:
    return DynamoDBTable(dynamodb, TABLE)


def agent_of(dynamodb: Any, agent_id: str) -> Principal:
    agent = DynamoDBDirectoryRepository(table(dynamodb)).get_agent(agent_id)
    assert agent is not None
    return Principal(kind=PrincipalKind.AGENT, id=agent.id, workspace_id=agent.workspace_id)


def person_of(world: World) -> Principal:
    return Principal(kind=PrincipalKind.PERSON, id=world.person.id, workspace_id=world.workspace_id)


def save(wired: wiring.Services, agent: Principal, text: str, **extra: Any) -> str:
    return wired.memories.save(
        agent, SaveFactRequest.model_validate({"text": text, **extra}), RunContext()
    ).id


def every_agent(world: World) -> list[str]:
    return [world.agent.id, world.other_agent.id, world.outsider_agent.id]


def seed_before_the_index(
    wired: wiring.Services, world: World, dynamodb: Any, clock: FixedClock
) -> dict[str, str]:
    """Facts of three agents (one in another workspace) as a release before the index
    left them: saved, archived, vetoed, a day row, one expired; then every agent's
    marker and entries dropped (``clear``). Returns the ids of the facts that matter."""
    builder = agent_of(dynamodb, world.agent.id)
    reviewer = agent_of(dynamodb, world.other_agent.id)
    outsider = agent_of(dynamodb, world.outsider_agent.id)
    ids = {
        "vpn": save(wired, builder, "The staging deploy needs the VPN on"),
        "make": save(wired, builder, "Deploy to staging with make deploy STAGE=staging"),
        "archived": save(wired, builder, "Deploys go through the old Jenkins job"),
        "vetoed": save(wired, builder, "Deploy to production on Fridays"),
        "expired": save(
            wired, builder, "Staging deploys are frozen this week", expiresAt="2026-12-01"
        ),
        "pnpm": save(wired, builder, "The web app builds with pnpm"),
    }
    wired.day_log.append_day_line(builder, "deployed staging twice today", RunContext())
    wired.memories.archive(builder, ids["archived"], ArchiveRequest(reason="Jenkins is gone"))
    wired.memories.veto(person_of(world), ids["vetoed"], "never on Fridays")
    save(wired, reviewer, "The reviewer agent runs at noon")
    save(wired, reviewer, "Reviews of staging deploys need two approvals")
    save(wired, outsider, "The other workspace deploys with Terraform")
    clock.set(START + timedelta(days=3))  # "expired" is expired now, still active
    index = index_of(dynamodb)
    for agent_id in every_agent(world):
        index.clear(agent_id)
        assert not index.is_built(agent_id)
    return ids


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
"""Resolving the index as of this time leaves no fact out as expired."""


def index_of(dynamodb: Any) -> DynamoDBRecallIndex:
    return DynamoDBRecallIndex(table(dynamodb), IdFactory(SystemClock()))


def index_partition(dynamodb: Any, agent_id: str) -> tuple[dict[str, tuple[str, int]], bool]:
    """The facts the agent's index holds (expired ones included) as id -> (text, memory
    version), resolved from its loose entries, segments and tombstones; and whether
    its marker exists."""
    state = index_of(dynamodb).read(agent_id, EPOCH)
    held = {key: (entry.text, entry.version) for key, entry in resolve(state, EPOCH).items()}
    return held, state.built


def due_entries(dynamodb: Any, agent_id: str) -> dict[str, tuple[str, int]]:
    """What the index must hold: every active fact of the agent (expired ones too)."""
    facts = DynamoDBMemoryRepository(table(dynamodb)).live_facts(agent_id, recall_counts=False)
    return {fact.id: (fact.text, fact.version) for fact in facts}


def assert_indexed(dynamodb: Any, agent_id: str) -> None:
    entries, built = index_partition(dynamodb, agent_id)
    assert built
    assert entries == due_entries(dynamodb, agent_id)


def recalled(
    wired: wiring.Services, dynamodb: Any, agent_id: str
) -> list[tuple[str, float | None]]:
    """An on-demand recall's memories and scores (never a fallback)."""
    result = wired.recall.recall(
        agent_of(dynamodb, agent_id), RecallRequest(query=QUERY), RunContext()
    )
    assert result.fallback is None
    return [(item.memory.id, item.score) for item in result.memories]


def test_backfill_indexes_each_scope_and_recall_is_unchanged(
    wired: wiring.Services, world: World, dynamodb: Any, clock: FixedClock
) -> None:
    ids = seed_before_the_index(wired, world, dynamodb, clock)
    before = recalled(wired, dynamodb, world.agent.id)  # the facts themselves: no marker
    assert {ids["vpn"], ids["make"]} <= {memory_id for memory_id, _ in before}
    steps: list[IndexProgress] = []
    # One agent, then the rest of its workspace, then the rest of the table.
    report = wired.admin.backfill_recall_index(
        world.workspace_id, world.agent.id, progress=steps.append
    )
    assert report.to_wire() == {
        "agentsSeen": 1,
        "agentsAlreadyIndexed": 0,
        "agentsIndexed": 1,
        "factsIndexed": 4,  # vpn, make, expired, pnpm: not the archived, vetoed or day row
        "changedMeanwhile": 0,
    }
    assert steps == [IndexProgress(world.agent.id, 4, False, 1, 1)]
    assert_indexed(dynamodb, world.agent.id)
    entries, _ = index_partition(dynamodb, world.agent.id)
    assert {ids["archived"], ids["vetoed"]}.isdisjoint(entries)
    assert not index_partition(dynamodb, world.other_agent.id)[1]
    assert (
        recalled(wired, dynamodb, world.agent.id) == before
    )  # the index now, the same memories and scores
    report = wired.admin.backfill_recall_index(world.workspace_id, None)
    assert report.to_wire() == {
        "agentsSeen": 2,
        "agentsAlreadyIndexed": 1,
        "agentsIndexed": 1,
        "factsIndexed": 2,
        "changedMeanwhile": 0,
    }
    assert_indexed(dynamodb, world.other_agent.id)
    assert not index_partition(dynamodb, world.outsider_agent.id)[1]
    steps.clear()
    report = wired.admin.backfill_recall_index(None, None, progress=steps.append)
    assert report.to_wire() == {
        "agentsSeen": 3,
        "agentsAlreadyIndexed": 2,
        "agentsIndexed": 1,
        "factsIndexed": 1,
        "changedMeanwhile": 0,
    }
    assert [(step.done, step.total) for step in steps] == [(1, 3), (2, 3), (3, 3)]
    assert {step.agent_id for step in steps if not step.skipped} == {world.outsider_agent.id}
    for agent_id in every_agent(world):
        assert_indexed(dynamodb, agent_id)
    assert recalled(wired, dynamodb, world.agent.id) == before


class WatchedIndex(DynamoDBRecallIndex):
    """The recall index, recording its writes; with ``fail_on`` (the n-th agent it is
    asked about), its ``put_entries`` for that agent raises, as a run cut short."""

    def __init__(self, dynamodb: Any, fail_on: int | None = None) -> None:
        super().__init__(table(dynamodb), IdFactory(SystemClock()))
        self.writes: list[str] = []
        self.asked: list[str] = []
        self._fail_on = fail_on

    def is_built(self, agent_id: str) -> bool:
        self.asked.append(agent_id)
        return super().is_built(agent_id)

    def put_entries(self, memories: list[Memory]) -> list[str]:
        if self._fail_on is not None and len(self.asked) == self._fail_on:
            raise ConnectionError("the operator's laptop went to sleep")
        self.writes.append("put_entries")
        return super().put_entries(memories)

    def mark_built(self, agent_id: str, now: Any) -> None:
        self.writes.append("mark_built")
        super().mark_built(agent_id, now)

    def clear(self, agent_id: str) -> int:
        self.writes.append("clear")
        return super().clear(agent_id)


def backfill_with(
    dynamodb: Any,
    clock: FixedClock,
    index: DynamoDBRecallIndex,
    memories: DynamoDBMemoryRepository | None = None,
) -> RecallIndexBackfill:
    return RecallIndexBackfill(
        memories or DynamoDBMemoryRepository(table(dynamodb)),
        index,
        DynamoDBDirectoryRepository(table(dynamodb)),
        clock,
    )


def test_a_rerun_skips_every_agent_and_writes_nothing(
    wired: wiring.Services, world: World, dynamodb: Any, clock: FixedClock
) -> None:
    seed_before_the_index(wired, world, dynamodb, clock)
    wired.admin.backfill_recall_index(None, None)
    stored = {agent_id: index_partition(dynamodb, agent_id) for agent_id in every_agent(world)}
    clock.set(START + timedelta(days=3, hours=1))  # a marker written again would show it
    watched = WatchedIndex(dynamodb)
    report = backfill_with(dynamodb, clock, watched).run(None, None)
    assert report.to_wire() == {
        "agentsSeen": 3,
        "agentsAlreadyIndexed": 3,
        "agentsIndexed": 0,
        "factsIndexed": 0,
        "changedMeanwhile": 0,
    }
    assert watched.writes == []
    assert sorted(watched.asked) == sorted(every_agent(world))
    assert {agent_id: index_partition(dynamodb, agent_id) for agent_id in stored} == stored


def test_an_interrupted_run_is_finished_by_a_rerun(
    wired: wiring.Services, world: World, dynamodb: Any, clock: FixedClock
) -> None:
    seed_before_the_index(wired, world, dynamodb, clock)
    cut_short = WatchedIndex(dynamodb, fail_on=2)
    with pytest.raises(ConnectionError):
        backfill_with(dynamodb, clock, cut_short).run(None, None)
    first, second = cut_short.asked
    assert_indexed(dynamodb, first)  # finished before the cut: marked
    assert not index_partition(dynamodb, second)[1]
    report = wired.admin.backfill_recall_index(None, None)
    assert report.to_wire()["agentsAlreadyIndexed"] == 1
    assert report.to_wire()["agentsIndexed"] == 2
    for agent_id in every_agent(world):
        assert_indexed(dynamodb, agent_id)


class ChangingMemories(DynamoDBMemoryRepository):
    """Memory storage where another request may change one fact right after each read
    the backfill makes of it (``change(n)`` after its n-th read), before the backfill
    writes its entry."""

    def __init__(self, dynamodb: Any, memory_id: str, change: Any) -> None:
        super().__init__(table(dynamodb))
        self._memory_id = memory_id
        self._change = change
        self.changes = 0

    def _changed(self, memories: list[Memory]) -> None:
        if any(memory.id == self._memory_id for memory in memories):
            self.changes += 1
            self._change(self.changes)

    def list_memories(self, **query: Any) -> MemoryPage:
        page = super().list_memories(**query)
        self._changed(page.memories)
        return page

    def get_many(self, memory_ids: Any) -> list[Memory]:
        found = super().get_many(memory_ids)
        self._changed(found)
        return found


def test_a_fact_archived_between_read_and_write_gets_no_entry(
    wired: wiring.Services, world: World, dynamodb: Any, clock: FixedClock
) -> None:
    ids = seed_before_the_index(wired, world, dynamodb, clock)
    builder = agent_of(dynamodb, world.agent.id)

    def archive(read: int) -> None:
        if read == 1:  # after the page's read; read again (archived) it is left out
            wired.memories.archive(builder, ids["pnpm"], ArchiveRequest(reason="we use npm"))

    memories = ChangingMemories(dynamodb, ids["pnpm"], archive)
    report = backfill_with(dynamodb, clock, index_of(dynamodb), memories).run(
        world.workspace_id, world.agent.id
    )
    assert memories.changes == 2  # the page, then the refused group read again
    assert report.to_wire()["factsIndexed"] == 3
    assert report.to_wire()["changedMeanwhile"] == 1
    assert_indexed(dynamodb, world.agent.id)
    entries, _ = index_partition(dynamodb, world.agent.id)
    assert ids["pnpm"] not in entries


def test_a_fact_that_keeps_changing_is_counted_and_keeps_its_own_entry(
    wired: wiring.Services, world: World, dynamodb: Any, clock: FixedClock
) -> None:
    ids = seed_before_the_index(wired, world, dynamodb, clock)
    person = person_of(world)

    def edit(number: int) -> None:
        text = f"Deploy to staging with make deploy STAGE=staging (edit {number})"
        wired.memories.edit(person, ids["make"], EditRequest(text=text))

    memories = ChangingMemories(dynamodb, ids["make"], edit)
    report = backfill_with(dynamodb, clock, index_of(dynamodb), memories).run(
        world.workspace_id, world.agent.id
    )
    assert memories.changes == PUT_ATTEMPTS
    # The page's other facts were refused with it once (one transaction), then
    # written one by one; it alone is counted.
    assert report.to_wire()["factsIndexed"] == 3
    assert report.to_wire()["changedMeanwhile"] == 1
    assert_indexed(dynamodb, world.agent.id)  # its last edit wrote its entry


def test_rebuild_removes_an_entry_that_should_not_be_there(
    wired: wiring.Services, world: World, dynamodb: Any, clock: FixedClock
) -> None:
    ids = seed_before_the_index(wired, world, dynamodb, clock)
    wired.admin.backfill_recall_index(None, None)
    archived = DynamoDBMemoryRepository(table(dynamodb)).get(ids["archived"])
    assert archived is not None and archived.status.value == "archived"
    # What an earlier release's archive would leave after a rollback: no delete.
    dynamodb.put_item(TableName=TABLE, Item=to_attributes(recall_loose_item(archived)))
    entries, _ = index_partition(dynamodb, world.agent.id)
    assert len(entries) == len(due_entries(dynamodb, world.agent.id)) + 1
    skipped = wired.admin.backfill_recall_index(world.workspace_id, world.agent.id)
    assert skipped.to_wire()["agentsAlreadyIndexed"] == 1  # without --rebuild: left alone
    runner = InjectedCliRunner(cli.Connections(admin=lambda: wired.admin))
    result = runner.invoke(cli.app, ["admin", "backfill-recall-index", "--rebuild", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "agentsSeen": 3,
        "agentsAlreadyIndexed": 0,
        "agentsIndexed": 3,
        "factsIndexed": 7,
        "changedMeanwhile": 0,
    }
    for agent_id in every_agent(world):
        assert_indexed(dynamodb, agent_id)


def test_backfill_refuses_unknown_workspaces_and_agents(
    wired: wiring.Services, world: World
) -> None:
    admin = wired.admin
    with pytest.raises(InvalidRequest, match="Create it first"):
        admin.backfill_recall_index("wsp_01M8P570G06PPAN665ZFVS7TJ0", None)
    with pytest.raises(InvalidRequest, match="is not a workspace id"):
        admin.backfill_recall_index(world.agent.id, None)
    with pytest.raises(InvalidRequest, match="in workspace"):
        admin.backfill_recall_index(world.workspace_id, world.outsider_agent.id)
    for unknown in ("agt_nope", "agt_01M8P570G06PPAN665ZFVS7TJ0", world.workspace_id):
        with pytest.raises(InvalidRequest, match="No agent"):
            admin.backfill_recall_index(None, unknown)
    # An agent alone, wherever it is: found.
    report = admin.backfill_recall_index(None, world.outsider_agent.id)
    assert report.to_wire()["agentsSeen"] == 1


def test_the_cli_prints_a_line_per_agent_and_a_summary(
    wired: wiring.Services, world: World, dynamodb: Any, clock: FixedClock
) -> None:
    seed_before_the_index(wired, world, dynamodb, clock)
    runner = InjectedCliRunner(cli.Connections(admin=lambda: wired.admin))
    args = ["admin", "backfill-recall-index", "--workspace", world.workspace_id]
    result = runner.invoke(cli.app, args)
    assert result.exit_code == 0, result.output
    first, second = sorted((world.agent.id, world.other_agent.id))  # by agent id
    facts = {world.agent.id: 4, world.other_agent.id: 2}
    assert result.stdout.splitlines() == [
        f"[1/2] {first} {facts[first]} facts indexed",
        f"[2/2] {second} {facts[second]} facts indexed",
        "2 agents: 0 already indexed, 2 indexed now; 6 facts indexed, 0 changed meanwhile "
        "(their change wrote their entry)",
    ]
    result = runner.invoke(cli.app, ["admin", "backfill-recall-index"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 4  # the table's three agents (a Scan: in no order), the summary
    assert [line.split()[0] for line in lines[:3]] == ["[1/3]", "[2/3]", "[3/3]"]
    assert sorted(line.split(maxsplit=1)[1] for line in lines[:3]) == sorted(
        [
            f"{world.agent.id} already indexed",
            f"{world.other_agent.id} already indexed",
            f"{world.outsider_agent.id} 1 fact indexed",
        ]
    )
    assert lines[3].startswith("3 agents: 2 already indexed, 1 indexed now; 1 fact indexed")
    result = runner.invoke(cli.app, ["admin", "backfill-recall-index", "--json"])
    assert json.loads(result.stdout) == {
        "agentsSeen": 3,
        "agentsAlreadyIndexed": 3,
        "agentsIndexed": 0,
        "factsIndexed": 0,
        "changedMeanwhile": 0,
    }
    bad = runner.invoke(cli.app, [*args, "--agent", world.outsider_agent.id, "--json"])
    assert bad.exit_code == 1
    assert json.loads(bad.stdout)["error"]["code"] == "invalid_request"


def test_the_local_server_indexes_an_earlier_store_at_start(
    wired: wiring.Services,
    world: World,
    dynamodb: Any,
    clock: FixedClock,
    capsys: pytest.CaptureFixture[str],
) -> None:
    seed_before_the_index(wired, world, dynamodb, clock)
    settings = Settings(table_name=TABLE, bucket_name=BUCKET)
    _index_recall(settings)
    assert capsys.readouterr().out == (
        "Built the recall index of 3 agents from an earlier version: 7 facts indexed.\n"
    )
    for agent_id in every_agent(world):
        assert_indexed(dynamodb, agent_id)
    _index_recall(settings)  # every later start: quiet
    assert capsys.readouterr().out == ""


def test_a_rebuild_replaces_an_index_kept_in_volumes(
    wired: wiring.Services,
    world: World,
    dynamodb: Any,
    s3: Any,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """docs/issues.md#issue-23-item-2: an index whose entries a merge moved into volumes
    in the bucket is cleared with its objects and built again, then settled into new
    volumes before any recall; recalls are the same before and after."""
    monkeypatch.setattr(recall_index, "INLINE_SEGMENT_LIMIT", 1)
    monkeypatch.setattr(recall_index, "SEGMENT_BYTES", 2_000)
    monkeypatch.setattr(recall_index, "VOLUME_BYTES", 8_000)
    builder = agent_of(dynamodb, world.agent.id)
    for number in range(recall_index.LOOSE_LIMIT + 20):
        save(wired, builder, f"Staging deploy step {number} needs the VPN and ticket {number}")
    before = recalled(wired, dynamodb, world.agent.id)  # this recall packs and merges

    def objects() -> set[str]:
        listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=RECALL_INDEX_OBJECT_PREFIX)
        return {str(found["Key"]) for found in listed.get("Contents", [])}

    merged = objects()
    assert merged
    runner = InjectedCliRunner(cli.Connections(admin=lambda: wired.admin))
    args = ["admin", "backfill-recall-index", "--workspace", world.workspace_id]
    args += ["--agent", world.agent.id, "--rebuild", "--json"]
    result = runner.invoke(cli.app, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["agentsIndexed"] == 1
    rebuilt = objects()
    assert rebuilt and not rebuilt & merged  # the old volumes went with their index
    state = wired.recall._index.read(world.agent.id, EPOCH)
    assert state.built
    assert {key: (e.text, e.version) for key, e in resolve(state, EPOCH).items()} == (
        due_entries(dynamodb, world.agent.id)
    )
    assert recalled(wired, dynamodb, world.agent.id) == before
