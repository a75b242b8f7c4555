"""``pinework learning …`` and the clients' learning methods against the real app
(docs/reference.md#15-learnings): an agent proposes, a person lists (by state and text,
page by page), edits, approves (editing, with ``--if-match``), rejects and retires; errors
come out with their codes (stderr, and the envelope on stdout with ``--json``). The HTTP
goes through ``chalice.test.Client`` on moto."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from pinework import AsyncClient, Client, PineworkAPIError, cli
from tests.client.fake_api import BASE_URL, FakeApi
from tests.helpers import Actor, InjectedCliRunner, World


def run(transport: httpx.MockTransport, actor: Actor, *args: str) -> Any:
    runner = InjectedCliRunner(cli.Connections(client=lambda: Client.from_env(transport=transport)))
    env = {"PINEWORK_API_URL": "http://pinework.test", "PINEWORK_TOKEN": actor.token}
    return runner.invoke(cli.app, ["learning", *args], env=env)


def test_an_agent_proposes_and_a_person_decides_through_the_cli(
    app_transport: httpx.MockTransport, world: World
) -> None:
    proposed = run(app_transport, world.agent, "propose", "Staging deploys need the VPN", "--json")
    assert proposed.exit_code == 0, proposed.output
    learning = json.loads(proposed.stdout)
    assert learning["state"] == "proposed" and learning["id"].startswith("lrn_")

    listed = run(app_transport, world.person, "list", "--state", "proposed")
    assert listed.exit_code == 0 and learning["id"] in listed.stdout
    assert "no learnings" in run(app_transport, world.person, "list", "--state", "active").stdout

    refused = run(app_transport, world.agent, "approve", learning["id"])
    assert refused.exit_code == 1 and "forbidden" in refused.output
    approved = run(
        app_transport,
        world.person,
        "approve",
        learning["id"],
        "--text",
        "Staging deploys need the VPN on",
    )
    assert approved.exit_code == 0, approved.output
    assert approved.stdout.startswith(f"approved {learning['id']}  active")
    again = run(app_transport, world.person, "approve", learning["id"])
    assert again.exit_code == 1 and "learning_decided" in again.output

    history = run(app_transport, world.agent, "history", learning["id"])
    assert [line.split()[2] for line in history.stdout.splitlines()] == ["propose", "approve"]
    retired = run(app_transport, world.person, "retire", learning["id"], "--reason", "VPN gone")
    assert retired.exit_code == 0 and "retired" in retired.stdout

    other = json.loads(
        run(app_transport, world.agent, "propose", "Fridays are freeze days", "--json").stdout
    )
    assert run(app_transport, world.person, "reject", other["id"], "--reason", "no").exit_code == 0
    repeat = run(app_transport, world.other_agent, "propose", "Fridays are freeze days")
    assert repeat.exit_code == 1 and "learning_rejected" in repeat.output
    shown = run(app_transport, world.person, "show", other["id"])
    assert "rejected" in shown.stdout and "reason: no" in shown.stdout


def propose(transport: httpx.MockTransport, actor: Actor, fact: str) -> dict[str, Any]:
    """Propose through the CLI with ``--json``; return the learning."""
    proposed = run(transport, actor, "propose", fact, "--json")
    assert proposed.exit_code == 0, proposed.output
    return dict(json.loads(proposed.stdout))


def test_list_filters_by_state_and_text(app_transport: httpx.MockTransport, world: World) -> None:
    waiting = propose(app_transport, world.agent, "Builds run on arm64 runners")
    kept = propose(app_transport, world.person, "Logs ship to Loki")
    assert (waiting["state"], kept["state"]) == ("proposed", "active")  # a person's: at once
    retired = propose(app_transport, world.person, "The wiki is on Confluence")
    assert run(app_transport, world.person, "retire", retired["id"]).exit_code == 0

    def listed(*options: str, actor: Actor = world.person) -> list[tuple[str, str]]:
        answer = run(app_transport, actor, "list", *options, "--json")
        assert answer.exit_code == 0, answer.output
        page = json.loads(answer.stdout)
        assert page["object"] == "list" and page["nextToken"] is None
        return [(found["id"], found["state"]) for found in page["data"]]

    assert listed() == [
        (retired["id"], "retired"),
        (kept["id"], "active"),
        (waiting["id"], "proposed"),
    ]
    assert listed("--state", "active") == [(kept["id"], "active")]
    assert listed("--state", "proposed") == [(waiting["id"], "proposed")]
    assert listed("--state", "retired") == [(retired["id"], "retired")]
    assert listed("--state", "rejected") == []
    assert listed("--q", "LOKI") == [(kept["id"], "active")]
    assert listed("--state", "proposed", "--q", "loki") == []
    # an agent lists the active learnings and its own proposals (docs/issues.md#issue-42-item-5)
    assert listed(actor=world.agent) == [(kept["id"], "active"), (waiting["id"], "proposed")]
    assert listed("--state", "retired", actor=world.agent) == []

    lines = run(app_transport, world.agent, "list", "--state", "active").stdout.splitlines()
    assert lines == [f"{kept['id']}  active    Logs ship to Loki"]
    bad = run(app_transport, world.agent, "list", "--state", "archived")
    assert bad.exit_code == 1 and "error: invalid_request" in bad.output
    too_many = run(app_transport, world.agent, "list", "--limit", "201")
    assert too_many.exit_code == 2  # a usage error, before any request


def test_list_pages_with_limit_and_next_token(
    app_transport: httpx.MockTransport, world: World
) -> None:
    first = propose(app_transport, world.person, "Logs ship to Loki")
    second = propose(app_transport, world.person, "Builds run on arm64")
    paged = run(app_transport, world.agent, "list", "--limit", "1")
    assert paged.exit_code == 0, paged.output
    assert paged.stdout.splitlines()[0].startswith(second["id"])
    assert paged.stdout.splitlines()[-1].startswith("more: --next-token ")
    token = paged.stdout.splitlines()[-1].split()[-1]
    rest = run(app_transport, world.agent, "list", "--limit", "1", "--next-token", token)
    assert rest.stdout.startswith(first["id"])
    with Client("http://pinework.test", token=world.agent.token, transport=app_transport) as me:
        assert [found.id for found in me.iter_learnings(page_size=1)] == [
            second["id"],
            first["id"],
        ]


def test_iter_learnings_follows_next_token_sync_and_async(fake_api: FakeApi) -> None:
    pages = {
        None: {"object": "list", "data": [learning_json("lrn_2")], "nextToken": "t1"},
        "t1": {"object": "list", "data": [learning_json("lrn_1")], "nextToken": None},
    }
    fake_api.routes[("GET", "/api/v1/learnings")] = lambda request: httpx.Response(
        200, json=pages[request.url.params.get("nextToken")]
    )
    with Client(BASE_URL, token="tok", transport=fake_api.transport) as client:
        found = list(client.iter_learnings(state="active", q="loki", page_size=1))
    assert [(learning.id, learning.state) for learning in found] == [
        ("lrn_2", "active"),
        ("lrn_1", "active"),
    ]

    async def iterate() -> list[str]:
        async with AsyncClient(BASE_URL, token="tok", transport=fake_api.transport) as client:
            return [learning.id async for learning in client.iter_learnings(page_size=1)]

    assert asyncio.run(iterate()) == ["lrn_2", "lrn_1"]
    sent = [dict(request.url.params) for request in fake_api.requests]
    assert sent == [
        {"state": "active", "q": "loki", "limit": "1"},
        {"state": "active", "q": "loki", "limit": "1", "nextToken": "t1"},
        {"limit": "1"},
        {"limit": "1", "nextToken": "t1"},
    ]


def learning_json(learning_id: str) -> dict[str, Any]:
    """A learning object as docs/reference.md#learning-object puts it on the wire."""
    return {
        "id": learning_id,
        "object": "learning",
        "workspaceId": "wsp_1",
        "text": "Logs ship to Loki",
        "state": "active",
        "proposedBy": "agt_1",
        "proposedByType": "agent",
        "runId": None,
        "taskKey": None,
        "proposedAt": "2026-11-30T12:00:00Z",
        "decidedBy": "usr_1",
        "decidedAt": "2026-11-30T13:00:00Z",
        "reason": None,
        "editedBy": None,
        "evidence": None,
        "updatedAt": "2026-11-30T13:00:00Z",
    }


def test_a_person_edits_and_decides_with_if_match_and_errors_keep_their_codes(
    app_transport: httpx.MockTransport, world: World
) -> None:
    learning = propose(app_transport, world.agent, "Deploys need a ticket")
    lrn = learning["id"]

    refused = run(app_transport, world.agent, "edit", lrn, "--text", "Deploys need two tickets")
    assert refused.exit_code == 1 and "error: forbidden" in refused.output
    edited = run(app_transport, world.person, "edit", lrn, "--text", "Deploys need a Jira ticket")
    assert edited.exit_code == 0, edited.output
    assert edited.stdout == f"edited {lrn}  proposed  Deploys need a Jira ticket\n"
    shown = run(app_transport, world.person, "show", lrn)
    assert f"edited by {world.person.id}" in shown.stdout
    assert f"proposed by {world.agent.id} (agent)" in shown.stdout

    # the edit made it v2: approving v1 fails, v2 succeeds
    stale = run(app_transport, world.person, "approve", lrn, "--if-match", f'"{lrn}.v1"', "--json")
    assert stale.exit_code == 1
    assert json.loads(stale.stdout)["error"]["code"] == "precondition_failed"
    fresh = run(app_transport, world.person, "approve", lrn, "--if-match", f'"{lrn}.v2"', "--json")
    assert fresh.exit_code == 0, fresh.output
    approved = json.loads(fresh.stdout)
    assert (approved["state"], approved["decidedBy"]) == ("active", world.person.id)

    for args in (("reject", lrn, "--reason", "late"), ("approve", lrn)):
        decided = run(app_transport, world.person, *args, "--json")
        assert decided.exit_code == 1, args
        assert json.loads(decided.stdout)["error"]["code"] == "learning_decided", args
        assert "error: learning_decided: " in decided.stderr
    assert run(app_transport, world.person, "retire", lrn).exit_code == 0
    gone = run(app_transport, world.person, "edit", lrn, "--text", "Deploys need nothing")
    assert gone.exit_code == 1 and "error: learning_decided" in gone.output
    history = json.loads(run(app_transport, world.agent, "history", lrn, "--json").stdout)
    assert [record["action"] for record in history["data"]] == [
        "propose",
        "edit",
        "approve",
        "retire",
    ]

    missing = "lrn_01JABCDEF0000000000000000"
    for args in (("show", missing), ("history", missing), ("approve", missing)):
        answer = run(app_transport, world.person, *args)
        assert answer.exit_code == 1 and "error: learning_not_found" in answer.output, args
    other = run(app_transport, world.outsider, "show", lrn)
    assert other.exit_code == 1 and "error: learning_not_found" in other.output
    usage = run(app_transport, world.person, "reject", lrn)
    assert usage.exit_code == 2 and "--reason" in usage.output


def test_the_clients_page_through_learnings_and_raise_their_codes(
    app_transport: httpx.MockTransport, world: World
) -> None:
    facts = ["Logs ship to Loki", "Builds run on arm64", "Tickets live in Jira"]
    with Client("http://pinework.test", token=world.person.token, transport=app_transport) as me:
        made = [me.propose_learning(fact) for fact in facts]
        assert made[0].etag == f'"{made[0].id}.v1"'
        assert [found.text for found in me.iter_learnings()] == facts[::-1]
        assert [found.id for found in me.iter_learnings(q="ARM64")] == [made[1].id]
        retired = me.retire_learning(made[1].id, reason="x86 again", if_match=made[1].etag)
        assert (retired.state, retired.reason) == ("retired", "x86 again")
        assert [found.id for found in me.iter_learnings(state="active")] == [
            made[2].id,
            made[0].id,
        ]
        history = me.learning_history(made[1].id)
        assert [record.action for record in history.data] == ["propose", "retire"]
        with pytest.raises(PineworkAPIError) as raised:
            me.approve_learning(made[1].id)
        assert (raised.value.code, raised.value.status) == ("learning_decided", 409)

    async def as_an_agent() -> tuple[list[str], str, str]:
        async with AsyncClient(
            "http://pinework.test", token=world.agent.token, transport=app_transport
        ) as agent:
            ids = [found.id async for found in agent.iter_learnings(state="active")]
            proposed = await agent.propose_learning("Pager duty rotates weekly")
            rejected = await AsyncClient(
                "http://pinework.test", token=world.person.token, transport=app_transport
            ).reject_learning(proposed.id, "monthly")
            with pytest.raises(PineworkAPIError) as again:
                await agent.propose_learning("pager duty rotates weekly")
            with pytest.raises(PineworkAPIError) as refused:
                await agent.retire_learning(made[0].id)
            return ids, f"{rejected.state}/{again.value.code}", refused.value.code

    ids, repeat, refused = asyncio.run(as_an_agent())
    assert ids == [made[2].id, made[0].id]
    assert (repeat, refused) == ("rejected/learning_rejected", "forbidden")


def test_a_person_lists_the_unreviewed_learnings_until_each_is_decided(
    app_transport: httpx.MockTransport, world: World, wired: Any
) -> None:
    waiting = propose(app_transport, world.agent, "Builds run on arm64 runners")
    wired.admin.set_learning_approval(world.workspace_id, "none", confirmed=True)
    live = propose(app_transport, world.agent, "Logs ship to Loki")
    also = propose(app_transport, world.agent, "Tickets close on Fridays")
    propose(app_transport, world.person, "Use UTC in every log")  # a person's: reviewed
    assert (waiting["state"], live["state"]) == ("proposed", "active")

    listed = run(app_transport, world.person, "list", "--unreviewed")
    assert listed.exit_code == 0, listed.output
    assert listed.stdout.splitlines() == [
        f"{also['id']}  active    Tickets close on Fridays",
        f"{live['id']}  active    Logs ship to Loki",
    ]
    as_json = json.loads(run(app_transport, world.person, "list", "--unreviewed", "--json").stdout)
    assert [found["id"] for found in as_json["data"]] == [also["id"], live["id"]]
    refused = run(app_transport, world.agent, "list", "--unreviewed")
    assert refused.exit_code == 1 and "forbidden" in refused.output
    bad = run(app_transport, world.person, "list", "--unreviewed", "--state", "retired")
    assert bad.exit_code == 1 and "error: invalid_request" in bad.output

    assert run(app_transport, world.person, "approve", live["id"]).exit_code == 0
    assert run(app_transport, world.person, "retire", also["id"]).exit_code == 0
    empty = run(app_transport, world.person, "list", "--unreviewed")
    assert empty.exit_code == 0 and empty.stdout.strip() == "no unreviewed learnings"
