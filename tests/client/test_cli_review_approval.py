"""``pinework admin set-review-approval`` and ``pinework review approve|reject``
against the real app (docs/issues.md#issue-4-item-6): the CLI's HTTP goes through
``chalice.test.Client`` on moto, the admin command through the wired service."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from chalicelib import wiring
from chalicelib.models.principal import Principal, PrincipalKind
from chalicelib.models.requests import SaveFactRequest
from chalicelib.services.run_context import RunContext
from pinework import Client, cli
from tests.helpers import InjectedCliRunner, World


@dataclass(frozen=True)
class CliCaller:
    """Who runs the CLI: a runner (its connections injected) and an environment."""

    runner: InjectedCliRunner
    env: dict[str, str]


@pytest.fixture
def cli_env(app_transport: httpx.MockTransport, wired: wiring.Services, world: World) -> CliCaller:
    """The CLI talks to the app as the world's person; admin uses the wired service."""
    connections = cli.Connections(
        client=lambda: Client.from_env(transport=app_transport), admin=lambda: wired.admin
    )
    return CliCaller(
        InjectedCliRunner(connections),
        {"PINEWORK_API_URL": "http://pinework.test", "PINEWORK_TOKEN": world.person.token},
    )


def invoke(caller: CliCaller, *args: str) -> Any:
    return caller.runner.invoke(cli.app, list(args), env=caller.env)


def duplicates(wired: wiring.Services, world: World) -> None:
    agent = Principal(kind=PrincipalKind.AGENT, id=world.agent.id, workspace_id=world.workspace_id)
    for text in ("Deploys need the VPN on", "deploys need the VPN on!", "Use pnpm", "use pnpm"):
        wired.memories.save(agent, SaveFactRequest(text=text), RunContext())


def test_admin_sets_the_review_approval(cli_env: CliCaller, world: World) -> None:
    result = invoke(
        cli_env, "admin", "set-review-approval", "--workspace", world.workspace_id, "required"
    )
    assert result.exit_code == 0, result.output
    assert f"workspace {world.workspace_id}: reviewApproval required" in result.stdout
    result = invoke(
        cli_env,
        "admin",
        "set-review-approval",
        "--workspace",
        world.workspace_id,
        "none",
        "--json",
    )
    assert json.loads(result.stdout) == {"id": world.workspace_id, "reviewApproval": "none"}
    bad = invoke(
        cli_env, "admin", "set-review-approval", "--workspace", world.workspace_id, "maybe"
    )
    assert bad.exit_code == 1 and "invalid_request" in bad.output


def test_review_approve_and_reject_through_the_cli(
    cli_env: CliCaller, wired: wiring.Services, world: World
) -> None:
    duplicates(wired, world)
    invoke(cli_env, "admin", "set-review-approval", "--workspace", world.workspace_id, "required")
    ran = invoke(cli_env, "review", "run", "--agent", world.agent.id, "--json")
    assert ran.exit_code == 0, ran.output
    report = json.loads(ran.stdout)
    assert report["status"] == "pending" and len(report["decisions"]) == 2
    shown = invoke(cli_env, "review", "show", report["id"])
    assert "approval required" in shown.stdout and "[pending]" in shown.stdout
    approved = invoke(cli_env, "review", "approve", report["id"], "1", "--json")
    assert approved.exit_code == 0, approved.output
    assert [d["state"] for d in json.loads(approved.stdout)["decisions"]] == ["applied", "pending"]
    rejected = invoke(cli_env, "review", "reject", report["id"], "a2")
    assert rejected.exit_code == 0, rejected.output
    assert f"[rejected by {world.person.id}]" in rejected.stdout
    assert "applied 1, skipped 0, rejected 1, pending 0, undone 0" in rejected.stdout
    again = invoke(cli_env, "review", "approve", report["id"], "1", "--json")
    assert again.exit_code == 1
    assert json.loads(again.stdout)["error"]["code"] == "conflict"
    listed = invoke(cli_env, "review", "list", "--agent", world.agent.id)
    assert "done    planned 2, applied 1, skipped 0, pending 0, rejected 1, undone 0" in (
        listed.stdout
    )
    blank = invoke(cli_env, "review", "approve", report["id"], "")
    assert blank.exit_code == 2 and "not an action: ''" in blank.output


def test_review_pending_approve_keep_and_undo_through_the_cli(
    cli_env: CliCaller, wired: wiring.Services, world: World
) -> None:
    """docs/issues.md#issue-14: a conflict waits for a person in every mode; the CLI lists it, a
    person keeps the other side, then undoes that."""
    agent = Principal(kind=PrincipalKind.AGENT, id=world.agent.id, workspace_id=world.workspace_id)
    older = wired.memories.save(
        agent,
        SaveFactRequest(text="The orders API listens on port 8080 behind nginx"),
        RunContext(),
    )
    wired.memories.save(
        agent,
        SaveFactRequest(text="The orders API listens on port 8443 behind nginx"),
        RunContext(),
    )
    ran = invoke(cli_env, "review", "run", "--agent", world.agent.id, "--json")
    report = json.loads(ran.stdout)
    assert report["plan"]["actions"][0]["waitsForPerson"] is True
    listed = invoke(cli_env, "review", "pending")
    assert listed.exit_code == 0, listed.output
    assert f"{report['id']} a1  {world.agent.id}  resolve_conflict" in listed.stdout
    waiting = invoke(cli_env, "review", "list", "--agent", world.agent.id).stdout
    assert "pending planned 1, applied 0, skipped 0, pending 1, rejected 0, undone 0" in waiting
    kept = invoke(cli_env, "review", "approve", report["id"], "a1", "--keep", older.id)
    assert kept.exit_code == 0, kept.output
    assert invoke(cli_env, "review", "pending").stdout.strip() == "nothing waits for a person"
    undone = invoke(cli_env, "review", "undo", report["id"], "a1")
    assert undone.exit_code == 0, undone.output
    assert f"[undone by {world.person.id}]" in undone.stdout
    assert undone.stdout.rstrip().endswith("applied 1, skipped 0, rejected 0, pending 0, undone 1")
    listed = invoke(cli_env, "review", "list", "--agent", world.agent.id).stdout
    assert "done    planned 1, applied 1, skipped 0, undone 1" in listed
    again = invoke(cli_env, "review", "approve", report["id"], "a1")
    assert again.exit_code == 1 and "conflict" in again.output
    assert "undone by" in again.output and "undo it instead" not in again.output
    as_agent = CliCaller(cli_env.runner, {**cli_env.env, "PINEWORK_TOKEN": world.agent.token})
    refused = invoke(as_agent, "review", "undo", report["id"], "a1", "--json")
    assert refused.exit_code == 1 and json.loads(refused.stdout)["error"]["code"] == "forbidden"
