"""Listing memories: filters, newest first, limits and pagination (docs/reference.md#5-limits,
docs/reference.md#7-http-api)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from chalicelib.ids import FixedClock
from tests.helpers import START, Api, World


def save_many(api: Api, world: World, clock: FixedClock, count: int) -> list[str]:
    ids = []
    for number in range(count):
        clock.set(START + timedelta(seconds=number))
        status, body = api.call("POST", "/memories", world.agent, {"text": f"fact {number}"})
        assert status == 201
        ids.append(body["id"])
    return ids


def test_list_is_newest_first_and_paginates_exactly(
    api: Api, world: World, clock: FixedClock
) -> None:
    ids = save_many(api, world, clock, 7)
    seen: list[str] = []
    token = None
    pages = 0
    while True:
        query = "?limit=3" + (f"&nextToken={token}" if token else "")
        status, body = api.call("GET", "/memories" + query, world.agent)
        assert status == 200 and body["object"] == "list"
        seen += [m["id"] for m in body["data"]]
        pages += 1
        token = body["nextToken"]
        if token is None:
            break
    assert seen == list(reversed(ids))
    assert pages == 3


def test_filters_by_kind_and_status_keep_pages_full(
    api: Api, world: World, clock: FixedClock
) -> None:
    ids = save_many(api, world, clock, 6)
    for memory_id in ids[:4]:
        api.call("POST", f"/memories/{memory_id}/archive", world.agent, {"reason": "old"})
    api.call("POST", "/memories/day", world.agent, {"line": "worked"})
    active = api.call("GET", "/memories?kind=fact&limit=2", world.agent)[1]
    assert [m["id"] for m in active["data"]] == [ids[5], ids[4]]
    archived = api.call("GET", "/memories?status=archived&limit=10", world.agent)[1]
    assert [m["id"] for m in archived["data"]] == list(reversed(ids[:4]))
    everything = api.call("GET", "/memories?all=true&limit=500", world.agent)[1]
    assert len(everything["data"]) == 7
    days = api.call("GET", "/memories?kind=day&all=true", world.agent)[1]
    assert [m["kind"] for m in days["data"]] == ["day"]


def test_person_lists_every_agent_or_one(api: Api, world: World) -> None:
    api.call("POST", "/memories", world.agent, {"text": "a"})
    api.call("POST", "/memories", world.other_agent, {"text": "b"})
    api.call("POST", "/memories", world.outsider_agent, {"text": "c"})
    everyone = api.call("GET", "/memories", world.person)[1]["data"]
    assert sorted(m["text"] for m in everyone) == ["a", "b"]
    one = api.call("GET", f"/memories?agentId={world.other_agent.id}", world.person)[1]["data"]
    assert [m["text"] for m in one] == ["b"]
    mine = api.call("GET", "/memories", world.agent)[1]["data"]
    assert [m["text"] for m in mine] == ["a"]


def test_person_lists_every_agents_memories_of_every_status(api: Api, world: World) -> None:
    # The whole workspace, archived included (the byWorkspace index; docs/issues.md#issue-12's IAM
    # check holds the API's role to the indexes the tests reach).
    kept = api.call("POST", "/memories", world.agent, {"text": "kept"})[1]["id"]
    gone = api.call("POST", "/memories", world.other_agent, {"text": "gone"})[1]["id"]
    api.call("POST", f"/memories/{gone}/archive", world.person, {"reason": "wrong"})
    listed = api.call("GET", "/memories?all=true", world.person)[1]["data"]
    assert {m["id"]: m["status"] for m in listed} == {kept: "active", gone: "archived"}


def test_agent_cannot_list_another_agent(api: Api, world: World) -> None:
    status, body = api.call("GET", f"/memories?agentId={world.other_agent.id}", world.agent)
    assert (status, body["error"]["code"]) == (403, "memory_not_own")


def test_person_cannot_list_an_agent_of_another_workspace(api: Api, world: World) -> None:
    api.call("POST", "/memories", world.outsider_agent, {"text": "secret plans"})
    status, body = api.call("GET", f"/memories?agentId={world.outsider_agent.id}", world.person)
    assert (status, body["error"]["code"]) == (403, "forbidden")


def test_limit_is_clamped_to_500(api: Api, world: World, clock: FixedClock) -> None:
    status, body = api.call("GET", "/memories?limit=100000", world.agent)
    assert status == 200 and body["data"] == []


def test_any_large_limit_is_clamped_and_leading_zeros_are_read(api: Api, world: World) -> None:
    for text in ("one", "two", "three"):
        assert api.call("POST", "/memories", world.agent, {"text": f"fact {text}"})[0] == 201
    for limit in ("99999999999999999999", "9" * 5000, "0000000500", "501"):
        status, body = api.call("GET", f"/memories?limit={limit}", world.agent)
        assert status == 200 and len(body["data"]) == 3 and body["nextToken"] is None
    status, body = api.call("GET", "/memories?limit=0000002", world.agent)
    assert status == 200 and len(body["data"]) == 2 and body["nextToken"] is not None
    assert api.call("GET", "/memories?limit=000", world.agent)[0] == 400


@pytest.mark.parametrize(
    "query",
    [
        "?limit=0",
        "?limit=-1",
        "?limit=ten",
        "?kind=note",
        "?status=deleted",
        "?all=maybe",
        "?nextToken=garbage!",
        "?colour=red",
        "?limit=1&limit=2",
        "?limit=1_0",
        "?limit=%2B3",
        "?limit=%205",
    ],
)
def test_bad_list_queries_are_invalid(api: Api, world: World, query: str) -> None:
    status, body = api.call("GET", "/memories" + query, world.agent)
    assert (status, body["error"]["code"]) == (400, "invalid_request")


def test_every_bad_limit_gets_one_message(api: Api, world: World) -> None:
    """``0``, ``-1`` and ``ten`` are refused alike (fresh-user finding: ``-1`` was "not a
    whole number" and ``0`` a pydantic bound message)."""
    messages = set()
    for limit in ("0", "-1", "ten", "000"):
        status, body = api.call("GET", f"/memories?limit={limit}", world.agent)
        assert status == 400
        messages.add(body["error"]["message"])
    (message,) = messages
    assert "limit must be a whole number from 1" in message


def test_every_list_query_defaults_to_100_and_clamps_to_500() -> None:
    """docs/reference.md#5-limits holds for each list's query model (reviews defaulted to 20
    before)."""
    from chalicelib.models.requests import ListQuery, RecallLogQuery
    from chalicelib.models.review_requests import ReviewListQuery
    from chalicelib.models.routine import RoutineQuery

    for model in (ListQuery, RecallLogQuery, ReviewListQuery, RoutineQuery):
        assert model.model_validate({}).limit == 100, model
        assert model.model_validate({"limit": "9999"}).limit == 500, model
