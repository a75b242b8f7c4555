"""The MCP learnings tools, ``learning_propose`` and ``learning_list``
(docs/reference.md#11-mcp, docs/reference.md#15-learnings, docs/issues.md#issue-27-item-4):
their schemas and descriptions say when to use a learning; an agent proposes through the
tool, a person decides over HTTP, every agent of the workspace lists the active ones; the
service's refusals come back as tool errors with their codes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from chalice.test import Client

from chalicelib import wiring
from chalicelib.services import learnings as learning_rules
from tests.helpers import Api, Mcp, World

VPN = "Staging deploys need the VPN turned on first"


@pytest.fixture
def both(wired: wiring.Services) -> Iterator[tuple[Mcp, Api]]:
    """The MCP endpoint and the HTTP API of one in-process app."""
    from app import app

    with Client(app) as client:
        yield Mcp(client), Api(client)


def ids(listed: dict[str, Any]) -> list[str]:
    return [learning["id"] for learning in listed["data"]]


def test_the_tools_are_listed_with_schemas_that_say_when_to_use_them(
    both: tuple[Mcp, Api],
) -> None:
    mcp, _ = both
    tools = {tool["name"]: tool for tool in mcp.result("tools/list")["tools"]}
    propose, listing = tools["learning_propose"], tools["learning_list"]

    assert propose["inputSchema"]["required"] == ["text"]
    assert set(propose["inputSchema"]["properties"]) == {"text"}
    assert propose["inputSchema"]["properties"]["text"]["maxLength"] >= 500
    assert propose["annotations"]["readOnlyHint"] is False
    assert propose["annotations"]["destructiveHint"] is False
    # when a learning, rather than the agent's own fact or a key-value entry
    for said in ("every agent of the workspace", "memory_save", "remember", "approves"):
        assert said in propose["description"], said
    assert "propose a learning instead (learning_propose)" in tools["memory_save"]["description"]

    assert "required" not in listing["inputSchema"]
    assert set(listing["inputSchema"]["properties"]) == {"state", "q"}
    assert listing["inputSchema"]["properties"]["state"]["default"] == "active"
    assert listing["inputSchema"]["properties"]["state"]["enum"] == [
        "proposed",
        "active",
        "rejected",
        "retired",
    ]
    assert listing["annotations"]["readOnlyHint"] is True
    assert "active" in listing["description"]


def test_an_agent_proposes_through_the_tool_and_a_person_decides(
    both: tuple[Mcp, Api], world: World
) -> None:
    mcp, api = both
    run = {"X-Pinework-Run": "run-9", "X-Pinework-Task": "PIN-25"}
    proposed = mcp.ok("learning_propose", {"text": VPN}, actor=world.agent, headers=run)
    assert proposed["id"].startswith("lrn_") and proposed["object"] == "learning"
    assert (proposed["state"], proposed["proposedBy"], proposed["proposedByType"]) == (
        "proposed",
        world.agent.id,
        "agent",
    )
    assert (proposed["runId"], proposed["taskKey"], proposed["decidedBy"]) == (
        "run-9",
        "PIN-25",
        None,
    )
    # the same fact again, from another agent and in another case: the same learning
    again = mcp.ok("learning_propose", {"text": VPN.upper()}, actor=world.other_agent)
    assert again["id"] == proposed["id"] and again["text"] == VPN
    assert ids(mcp.ok("learning_list", {"state": "proposed"}, actor=world.agent)) == [
        proposed["id"]
    ]
    # not active yet: the default listing (what agents are told) has nothing
    assert mcp.ok("learning_list", {}, actor=world.other_agent) == {
        "object": "list",
        "data": [],
        "nextToken": None,
    }

    status, approved = api.call(
        "POST", f"/learnings/{proposed['id']}/approve", world.person, {"text": VPN + " (corp)"}
    )
    assert (status, approved["state"]) == (200, "active"), approved
    active = mcp.ok("learning_list", actor=world.other_agent)
    assert ids(active) == [proposed["id"]]
    assert active["data"][0]["text"] == VPN + " (corp)"
    assert active["data"][0]["decidedBy"] == world.person.id
    assert mcp.ok("learning_list", {"state": "proposed"}, actor=world.agent)["data"] == []
    # another workspace's agent sees none of it
    assert mcp.ok("learning_list", {"state": "active"}, actor=world.outsider_agent)["data"] == []

    # proposing what is now active answers the active learning, nothing new
    assert (
        mcp.ok("learning_propose", {"text": VPN + " (corp)"}, actor=world.agent)["id"]
        == (proposed["id"])
    )
    history = api.call("GET", f"/learnings/{proposed['id']}/history", world.person)[1]["data"]
    assert [record["action"] for record in history] == ["propose", "approve"]


def test_list_filters_by_state_and_text(both: tuple[Mcp, Api], world: World) -> None:
    mcp, api = both
    kept = mcp.ok("learning_propose", {"text": "Logs ship to Loki"}, actor=world.person)
    assert kept["state"] == "active" and kept["proposedByType"] == "person"
    waiting = mcp.ok("learning_propose", {"text": "Builds run on arm64"}, actor=world.agent)
    retired = mcp.ok("learning_propose", {"text": "The wiki is on Confluence"}, actor=world.person)
    api.call("POST", f"/learnings/{retired['id']}/retire", world.person, {"reason": "moved"})

    assert ids(mcp.ok("learning_list", actor=world.agent)) == [kept["id"]]
    assert ids(mcp.ok("learning_list", {"state": "proposed"}, actor=world.agent)) == [waiting["id"]]
    # a person's retirement and its reason are for persons (docs/issues.md#issue-42-item-5)
    assert mcp.ok("learning_list", {"state": "retired"}, actor=world.agent)["data"] == []
    gone = mcp.ok("learning_list", {"state": "retired"}, actor=world.person)["data"]
    assert [(found["id"], found["reason"]) for found in gone] == [(retired["id"], "moved")]
    assert ids(mcp.ok("learning_list", {"q": "LOKI"}, actor=world.agent)) == [kept["id"]]
    assert mcp.ok("learning_list", {"q": "arm64"}, actor=world.agent)["data"] == []
    assert ids(mcp.ok("learning_list", {"state": "proposed", "q": "arm"}, actor=world.agent)) == [
        waiting["id"]
    ]


def test_refusals_come_back_as_tool_errors_with_their_codes(
    both: tuple[Mcp, Api], world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    mcp, api = both
    rejected = mcp.ok("learning_propose", {"text": "Friday deploys skip review"}, actor=world.agent)
    api.call("POST", f"/learnings/{rejected['id']}/reject", world.person, {"reason": "never"})
    for text in ("Friday deploys skip review", "friday deploys skip review!"):
        assert mcp.tool_error("learning_propose", {"text": text}, actor=world.other_agent) == (
            "learning_rejected"
        ), text
    result = mcp.tool("learning_propose", {"text": "Friday deploys skip review"}, actor=world.agent)
    assert rejected["id"] in result["structuredContent"]["error"]["message"]

    secret = "the deploy key is ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    refusals: list[tuple[str, dict[str, Any], str]] = [
        ("learning_propose", {"text": "x" * 501}, "memory_text_too_long"),
        ("learning_propose", {"text": secret}, "secret_in_memory"),
        ("learning_propose", {}, "invalid_request"),
        ("learning_propose", {"text": "Logs ship to Loki", "state": "active"}, "invalid_request"),
        ("learning_list", {"state": "archived"}, "invalid_request"),
        ("learning_list", {"q": "x" * 201}, "invalid_request"),
    ]
    for name, arguments, code in refusals:
        assert mcp.tool_error(name, arguments, actor=world.agent) == code, arguments
    assert mcp.tool_error("learning_list", {}) == "unauthorized"
    assert mcp.tool_error("learning_propose", {"text": VPN}) == "unauthorized"
    listed = api.call("GET", "/learnings", world.person)[1]["data"]
    assert ids({"data": listed}) == [rejected["id"]]  # nothing refused was stored

    monkeypatch.setattr(learning_rules, "LEARNING_PROPOSALS_PER_DAY", 2)
    monkeypatch.setattr(learning_rules, "MAX_LIVE_LEARNINGS", 2)
    assert mcp.ok("learning_propose", {"text": "The CI runners are arm64"}, actor=world.agent)
    # the agent's proposals of the day: a throttled call (429, a JSON-RPC error), not a
    # tool's answer
    call = {"name": "learning_propose", "arguments": {"text": "Releases are cut on Tuesdays"}}
    message = {"jsonrpc": "2.0", "id": "t", "method": "tools/call", "params": call}
    status, headers, answer = mcp.post(message, actor=world.agent)
    assert (status, answer["error"]["data"]["code"]) == (429, "rate_limited"), answer
    assert "Retry-After" in headers
    assert mcp.ok("learning_propose", {"text": "Docs live in the handbook"}, actor=world.person)
    assert mcp.tool_error(
        "learning_propose", {"text": "Pager duty rotates weekly"}, actor=world.other_agent
    ) == ("learning_limit_reached")


def test_an_anonymous_learning_call_is_told_what_the_learning_tools_need(
    both: tuple[Mcp, Api],
) -> None:
    mcp, _ = both
    for name, arguments in (("learning_list", {}), ("learning_propose", {"text": VPN})):
        error = mcp.tool(name, arguments)["structuredContent"]["error"]
        assert error["code"] == "unauthorized"
        assert "learning_*" in error["message"] and "Bearer" in error["message"], error
