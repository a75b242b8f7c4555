"""A caller of the wrong kind is refused by the route's "who" (docs/reference.md#7-http-api) before
its body is read: the 403 does not depend on what the body holds (docs/reference.md#6-errors)."""

from __future__ import annotations

import pytest

from tests.helpers import Api, World

BODIES = [
    None,  # no body at all
    b"not json",
    b'{"agentId": "agt_x", "unknown": 1}',
]


def _fact_path(api: Api, world: World) -> str:
    status, fact = api.call("POST", "/memories", world.agent, {"text": "the deploy needs a VPN"})
    assert status == 201
    return f"/memories/{fact['id']}"


@pytest.mark.parametrize("raw", BODIES)
def test_a_person_on_the_day_route_gets_day_agent_only(api: Api, world: World, raw: bytes) -> None:
    status, body = api.call("POST", "/memories/day", world.person, raw=raw or b"")
    assert (status, body["error"]["code"]) == (403, "memory_day_agent_only")


@pytest.mark.parametrize("raw", BODIES)
@pytest.mark.parametrize(("method", "suffix"), [("PATCH", ""), ("POST", "/veto")])
def test_an_agent_editing_or_vetoing_is_forbidden_whatever_it_sends(
    api: Api, world: World, raw: bytes, method: str, suffix: str
) -> None:
    path = _fact_path(api, world)
    status, body = api.call(method, path + suffix, world.agent, raw=raw or b"")
    assert (status, body["error"]["code"]) == (403, "forbidden")
    status, fact = api.call("GET", path, world.person)
    assert status == 200 and fact["status"] == "active" and fact["editedByPersonId"] is None


@pytest.mark.parametrize("raw", BODIES)
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/reviews"),
        ("POST", "/reviews/rvw_x/actions/1/approve"),
        ("POST", "/reviews/rvw_x/actions/1/reject"),
        ("POST", "/routines"),
        ("POST", "/routines/rtn_x/pause"),
        ("POST", "/routines/rtn_x/resume"),
        ("DELETE", "/routines/rtn_x"),
    ],
)
def test_an_agent_on_a_person_route_is_forbidden_whatever_it_sends(
    api: Api, world: World, raw: bytes, method: str, path: str
) -> None:
    status, body = api.call(method, path, world.agent, raw=raw or b"")
    assert (status, body["error"]["code"]) == (403, "forbidden")
