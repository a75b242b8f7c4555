"""``pinework learning …`` against the real app (docs/reference.md#15-learnings): an agent
proposes, a person lists, approves (editing), rejects and retires; errors come out with
their codes. The CLI's HTTP goes through ``chalice.test.Client`` on moto."""

from __future__ import annotations

import json
from typing import Any

import httpx

from pinework import Client, cli
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
