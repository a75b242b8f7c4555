"""``pinework admin issue-token | list-tokens | revoke-token | rotate-token``
(docs/issues.md#issue-12) against the wired service on moto, and the API answering the tokens they
print."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import wiring
from chalicelib.ids import FixedClock
from pinework import cli
from tests.helpers import Actor, Api, InjectedCliRunner, World


@pytest.fixture
def admin(wired: wiring.Services) -> InjectedCliRunner:
    """The ``admin`` commands, calling the wired service (injected)."""
    return InjectedCliRunner(cli.Connections(admin=lambda: wired.admin))


def invoke(admin: InjectedCliRunner, *args: str) -> Any:
    return admin.invoke(cli.app, ["admin", *args])


def as_json(admin: InjectedCliRunner, *args: str) -> Any:
    result = invoke(admin, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def works(api: Api, token: str) -> bool:
    return api.call("GET", "/memories", Actor("x", token))[0] == 200


def test_issue_token_prints_the_token_once_and_it_works(
    admin: InjectedCliRunner, api: Api, world: World
) -> None:
    result = invoke(admin, "issue-token", world.agent.id, "--label", "ci-runner")
    assert result.exit_code == 0, result.output
    token = next(
        line.split(": ", 1)[1] for line in result.stdout.splitlines() if line.startswith("token:")
    )
    assert f"for {world.agent.id}" in result.stdout
    assert "cannot be shown again" in result.stderr
    assert works(api, token)
    issued = as_json(admin, "issue-token", world.person.id)
    assert set(issued) == {"id", "token", "principalKind", "principalId", "label"}
    assert works(api, issued["token"])


def test_create_agent_names_its_token(admin: InjectedCliRunner, world: World) -> None:
    created = as_json(admin, "create-agent", "--workspace", world.workspace_id, "--name", "bot")
    assert created["tokenId"].startswith("tok_")
    (listed,) = as_json(admin, "list-tokens", created["id"])["data"]
    assert listed["id"] == created["tokenId"] and listed["prefix"] == created["token"][:8]


def test_list_tokens_never_prints_a_token_or_its_hash(
    admin: InjectedCliRunner, api: Api, world: World
) -> None:
    issued = as_json(admin, "issue-token", world.agent.id, "--label", "ci")
    assert works(api, issued["token"])
    text = invoke(admin, "list-tokens", world.agent.id)
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert len(lines) == 2
    assert any(issued["id"] in line and "[ci]" in line and "active" in line for line in lines)
    assert any(issued["token"][:8] + "…" in line for line in lines)
    listing = as_json(admin, "list-tokens", world.agent.id)
    assert len(listing["data"]) == 2
    for output in (text.stdout, json.dumps(listing)):
        for token in (issued["token"], world.agent.token):
            assert token[8:] not in output
            assert hashlib.sha256(token.encode()).hexdigest() not in output


def test_revoke_token_refuses_the_token_at_once(
    admin: InjectedCliRunner, api: Api, world: World
) -> None:
    issued = as_json(admin, "issue-token", world.agent.id)
    result = invoke(admin, "revoke-token", issued["id"])
    assert result.exit_code == 0, result.output
    assert f"revoked token {issued['id']} of {world.agent.id}" in result.stdout
    assert not works(api, issued["token"])
    again = invoke(admin, "revoke-token", issued["id"])
    assert again.exit_code == 1 and "error: not_found:" in again.stderr


def test_rotate_token_keeps_the_old_one_for_the_grace_period(
    admin: InjectedCliRunner, api: Api, world: World, clock: FixedClock
) -> None:
    (old,) = as_json(admin, "list-tokens", world.agent.id)["data"]
    result = invoke(admin, "rotate-token", old["id"], "--grace-hours", "2")
    assert result.exit_code == 0, result.output
    assert f"rotated {old['id']} -> tok_" in result.stdout
    new_token = next(
        line.split(": ", 1)[1] for line in result.stdout.splitlines() if line.startswith("token:")
    )
    clock.set(clock.now() + timedelta(hours=1, minutes=59))
    assert works(api, world.agent.token) and works(api, new_token)
    clock.set(clock.now() + timedelta(minutes=1))
    assert not works(api, world.agent.token) and works(api, new_token)
    listed = {entry["id"]: entry for entry in as_json(admin, "list-tokens", world.agent.id)["data"]}
    assert listed[old["id"]]["status"] == "expired"
    bad = invoke(admin, "rotate-token", old["id"], "--json")
    assert bad.exit_code == 1
    assert json.loads(bad.stdout)["error"]["code"] == "invalid_request"


def test_list_tokens_of_an_unknown_principal_is_an_error(admin: InjectedCliRunner) -> None:
    result = invoke(admin, "list-tokens", "agt_01KAAAAAAAAAAAAAAAAAAAAAAA")
    assert result.exit_code == 1 and "error: invalid_request:" in result.stderr
