"""The "Memory dreaming" routine through the HTTP API (docs/reference.md#routes-routines,
docs/reference.md#9-review)."""

from __future__ import annotations

from datetime import timedelta

from chalicelib import wiring
from chalicelib.ids import FixedClock
from chalicelib.services.paging import encode_next_token
from tests.helpers import Api, World, error_code, pages, save


def routines_of(api: Api, world: World, agent_id: str) -> list[dict]:
    status, body = api.call("GET", f"/routines?agentId={agent_id}", world.person)
    assert status == 200, body
    return list(body["data"])


def test_first_save_creates_one_active_daily_routine(api: Api, world: World) -> None:
    assert routines_of(api, world, world.agent.id) == []
    save(api, world)
    (routine,) = routines_of(api, world, world.agent.id)
    assert routine["object"] == "routine"
    assert routine["id"] == "rtn_" + world.agent.id.removeprefix("agt_")
    assert routine["agentId"] == world.agent.id
    assert routine["name"] == "Memory dreaming"
    assert routine["schedule"] == "cron(0 4 * * ? *)"
    assert routine["status"] == "active"
    assert "workspaceId" not in routine and "version" not in routine


def test_later_saves_leave_the_routine_alone(
    api: Api, world: World, clock: FixedClock, wired: wiring.Services
) -> None:
    save(api, world)
    (first,) = routines_of(api, world, world.agent.id)
    clock.set(clock.now() + timedelta(hours=1))
    save(api, world, "Another fact about the build")
    (again,) = routines_of(api, world, world.agent.id)
    assert again == first
    assert wired.routines.ensure_routine(world.workspace_id, world.agent.id) is False


def test_person_saving_for_an_agent_creates_its_routine(api: Api, world: World) -> None:
    status, _ = api.call(
        "POST",
        "/memories",
        world.person,
        {"text": "Prod needs two approvals", "agentId": world.agent.id},
    )
    assert status == 201
    assert [r["agentId"] for r in routines_of(api, world, world.agent.id)] == [world.agent.id]


def test_person_lists_every_routine_of_the_workspace_only(api: Api, world: World) -> None:
    save(api, world)
    api.call("POST", "/memories", world.other_agent, {"text": "The reviewer fact"})
    api.call("POST", "/memories", world.outsider_agent, {"text": "Someone else's fact"})
    status, body = api.call("GET", "/routines", world.person)
    assert status == 200
    assert sorted(r["agentId"] for r in body["data"]) == sorted(
        [world.agent.id, world.other_agent.id]
    )
    status, body = api.call("GET", "/routines", world.outsider)
    assert [r["agentId"] for r in body["data"]] == [world.outsider_agent.id]


def test_owner_agent_reads_but_cannot_change_its_routine(api: Api, world: World) -> None:
    save(api, world)
    status, body = api.call("GET", "/routines", world.agent)
    assert status == 200 and [r["agentId"] for r in body["data"]] == [world.agent.id]
    routine_id = body["data"][0]["id"]
    assert api.call("GET", f"/routines/{routine_id}", world.agent)[0] == 200
    for action in ("pause", "resume"):
        assert error_code(api.call("POST", f"/routines/{routine_id}/{action}", world.agent)) == (
            403,
            "forbidden",
        )
    assert error_code(api.call("DELETE", f"/routines/{routine_id}", world.agent)) == (
        403,
        "forbidden",
    )
    assert error_code(
        api.call("GET", f"/routines?agentId={world.other_agent.id}", world.agent)
    ) == (
        403,
        "memory_not_own",
    )
    assert (
        error_code(api.call("GET", f"/routines/{world.other_agent.id}", world.other_agent))[0]
        == 404
    )
    (still,) = routines_of(api, world, world.agent.id)
    assert still["status"] == "active"


def test_person_pauses_and_resumes_by_routine_or_agent_id(api: Api, world: World) -> None:
    save(api, world)
    (routine,) = routines_of(api, world, world.agent.id)
    status, paused = api.call("POST", f"/routines/{routine['id']}/pause", world.person)
    assert status == 200 and paused["status"] == "paused"
    assert paused["updatedByPersonId"] == world.person.id
    assert (
        api.call("POST", f"/routines/{routine['id']}/pause", world.person)[1]["status"] == "paused"
    )
    status, resumed = api.call("POST", f"/routines/{world.agent.id}/resume", world.person)
    assert status == 200 and resumed["status"] == "active"
    assert api.call("GET", f"/routines/{world.agent.id}", world.person)[1]["status"] == "active"


def test_deleted_routine_is_not_recreated_by_saves_until_a_person_creates_it(
    api: Api, world: World
) -> None:
    save(api, world)
    (routine,) = routines_of(api, world, world.agent.id)
    status, deleted = api.call("DELETE", f"/routines/{routine['id']}", world.person)
    assert status == 200 and deleted["status"] == "deleted"
    save(api, world, "A later fact")
    assert routines_of(api, world, world.agent.id) == []
    assert error_code(api.call("GET", f"/routines/{routine['id']}", world.person)) == (
        404,
        "not_found",
    )
    assert error_code(api.call("POST", f"/routines/{routine['id']}/resume", world.person))[0] == 404
    status, created = api.call("POST", "/routines", world.person, {"agentId": world.agent.id})
    assert status == 201 and created["status"] == "active"
    status, again = api.call("POST", "/routines", world.person, {"agentId": world.agent.id})
    assert status == 200 and again["id"] == created["id"]


def test_bad_routine_requests_are_refused_without_changes(api: Api, world: World) -> None:
    save(api, world)
    assert error_code(api.call("GET", "/routines/rtn_nope", world.person)) == (404, "not_found")
    # A malformed or empty agentId answers like an unknown one, as on every list.
    for bad in ("bad", "", "usr_x"):
        status, body = api.call("GET", f"/routines?agentId={bad}", world.person)
        assert (status, body["error"]["code"]) == (403, "forbidden")
        assert f"agentId {bad!r} is not an agent of your workspace" in body["error"]["message"]
    # An agent naming another agent gets what every list answers it (memory_not_own).
    for named in ("", world.other_agent.id, "agt_x"):
        assert error_code(api.call("GET", f"/routines?agentId={named}", world.agent)) == (
            403,
            "memory_not_own",
        )
        status, body = api.call("GET", f"/memories?agentId={named}", world.agent)
        assert (status, body["error"]["code"]) == (403, "memory_not_own")
    assert error_code(api.call("GET", "/routines?color=red", world.person))[0] == 400
    assert error_code(
        api.call("POST", f"/routines/{world.agent.id}/pause", world.person, raw=b"{nope")
    ) == (400, "invalid_request")
    assert error_code(api.call("POST", "/routines", world.person, {})) == (400, "invalid_request")
    assert error_code(
        api.call("POST", "/routines", world.person, {"agentId": world.outsider_agent.id})
    ) == (403, "forbidden")
    assert error_code(api.call("GET", f"/routines/{world.agent.id}", world.outsider)) == (
        404,
        "not_found",
    )
    assert error_code(api.call("PATCH", "/routines", world.person)) == (405, "method_not_allowed")
    assert error_code(api.call("GET", "/routines", None)) == (401, "unauthorized")
    (routine,) = routines_of(api, world, world.agent.id)
    assert routine["status"] == "active"


def test_routines_page_by_agent_id_with_limit_and_next_token(
    api: Api, world: World, wired: wiring.Services
) -> None:
    """docs/reference.md#lists: ``limit`` and ``nextToken`` page through active and paused
    routines together, in agent id order, each exactly once."""
    agents = [wired.admin.create_agent(world.workspace_id, f"bot{n}").id for n in range(5)]
    for agent_id in agents:
        assert wired.routines.ensure_routine(world.workspace_id, agent_id) is True
    for agent_id in agents[1::2]:
        status, _ = api.call("POST", f"/routines/{agent_id}/pause", world.person, {})
        assert status == 200
    found = pages(api, world.person, "/routines?limit=2")
    assert [len(page) for page in found] == [2, 2, 1]
    assert [r["agentId"] for page in found for r in page] == sorted(agents)
    status, body = api.call("GET", "/routines", world.person)
    assert [r["agentId"] for r in body["data"]] == sorted(agents) and body["nextToken"] is None
    status, body = api.call("GET", "/routines?limit=99999", world.person)
    assert status == 200 and len(body["data"]) == 5
    # A token past the one agent named gives an empty page, not that agent again.
    after_last = encode_next_token(sorted(agents)[-1])
    status, body = api.call(
        "GET", f"/routines?agentId={agents[0]}&nextToken={after_last}", world.person
    )
    assert status == 200 and body["data"] == [] and body["nextToken"] is None
    for bad in ("limit=0", "limit=x", "nextToken=nope", f"nextToken={agents[0]}"):
        assert error_code(api.call("GET", f"/routines?{bad}", world.person)) == (
            400,
            "invalid_request",
        )
