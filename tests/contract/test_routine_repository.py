"""The ``RoutineRepository`` contract (chalicelib/storage/protocols.py): one routine per
agent, tombstones, version-checked changes, workspace pages and the fan-out's walk.

Runs against every implementation in the ``routines`` fixture (today the DynamoDB
adapter on moto, with a page of 2 so the fan-out walks several pages)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from chalicelib.ids import FixedClock, IdFactory
from chalicelib.models.routine import Routine, RoutineStatus, routine_id_for
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.protocols import RoutineExists, RoutineRepository, WriteConflict
from chalicelib.storage.routines import DynamoDBRoutineRepository

IMPLEMENTATIONS: dict[str, Callable[[DynamoDBTable], RoutineRepository]] = {
    "dynamodb": lambda table: DynamoDBRoutineRepository(table, page_size=2),
}


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def routines(request: pytest.FixtureRequest, table: DynamoDBTable) -> RoutineRepository:
    return IMPLEMENTATIONS[request.param](table)


def routine(agent_id: str, clock: FixedClock, workspace_id: str = "wsp_1") -> Routine:
    return Routine(
        id=routine_id_for(agent_id),
        workspace_id=workspace_id,
        agent_id=agent_id,
        created_at=clock.now(),
        updated_at=clock.now(),
    )


def with_status(before: Routine, status: RoutineStatus) -> Routine:
    return before.model_copy(update={"status": status, "version": before.version + 1})


def test_one_routine_per_agent_and_a_tombstone_blocks_until_recreated(
    routines: RoutineRepository, ids: IdFactory, clock: FixedClock
) -> None:
    agent = ids.new("agt")
    first = routine(agent, clock)
    routines.create(first)
    with pytest.raises(RoutineExists):
        routines.create(routine(agent, clock))
    with pytest.raises(RoutineExists):  # a live routine is never overwritten
        routines.create(routine(agent, clock), over_tombstone=True)
    deleted = with_status(first, RoutineStatus.DELETED)
    routines.change(first, deleted)
    assert routines.get(agent) == deleted  # the tombstone is still read
    with pytest.raises(RoutineExists):
        routines.create(routine(agent, clock))
    again = routine(agent, clock)
    routines.create(again, over_tombstone=True)
    assert routines.get(agent) == again
    assert routines.get(ids.new("agt")) is None


def test_a_change_writes_only_over_the_version_it_read(
    routines: RoutineRepository, ids: IdFactory, clock: FixedClock
) -> None:
    stored = routine(ids.new("agt"), clock)
    routines.create(stored)
    paused = with_status(stored, RoutineStatus.PAUSED)
    routines.change(stored, paused)
    with pytest.raises(WriteConflict):
        routines.change(stored, with_status(stored, RoutineStatus.DELETED))
    assert routines.get(stored.agent_id) == paused


def test_workspace_pages_hold_live_routines_by_agent_id(
    routines: RoutineRepository, ids: IdFactory, clock: FixedClock
) -> None:
    agents = [ids.new("agt") for _ in range(5)]
    for agent in agents:
        routines.create(routine(agent, clock))
    routines.create(routine(ids.new("agt"), clock, workspace_id="wsp_12"))
    stored = routines.get(agents[1])
    assert stored is not None
    routines.change(stored, with_status(stored, RoutineStatus.PAUSED))
    stored = routines.get(agents[3])
    assert stored is not None
    routines.change(stored, with_status(stored, RoutineStatus.DELETED))
    first, after = routines.list_workspace("wsp_1", 2)
    second, end = routines.list_workspace("wsp_1", 2, after)
    assert [r.agent_id for r in first + second] == [agents[0], agents[1], agents[2], agents[4]]
    assert [r.status for r in first] == [RoutineStatus.ACTIVE, RoutineStatus.PAUSED]
    assert after == agents[1] and end is None


def test_the_fan_out_walks_every_active_routine_of_every_workspace(
    routines: RoutineRepository, ids: IdFactory, clock: FixedClock
) -> None:
    active = []
    for number in range(7):
        agent = ids.new("agt")
        routines.create(routine(agent, clock, workspace_id=f"wsp_{number % 3}"))
        active.append(agent)
    paused_routine = routine(ids.new("agt"), clock)
    routines.create(paused_routine)
    routines.change(paused_routine, with_status(paused_routine, RoutineStatus.PAUSED))
    assert sorted(r.agent_id for r in routines.iter_active()) == sorted(active)
