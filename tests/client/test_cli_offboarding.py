"""``pinework admin end-sessions | remove-person`` (docs/reference.md#offboarding,
docs/issues.md#issue-21-item-4) against the wired service on moto: what they print, and
what the API and the dashboard's sessions do afterwards."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib import wiring
from pinework import cli
from tests.helpers import Actor, Api, InjectedCliRunner, World


@pytest.fixture
def admin(wired: wiring.Services) -> InjectedCliRunner:
    """The ``admin`` commands, calling the wired service (injected)."""
    return InjectedCliRunner(cli.Connections(admin=lambda: wired.admin))


def run(admin: InjectedCliRunner, *args: str) -> Any:
    return admin.invoke(cli.app, ["admin", *args])


def test_end_sessions_prints_and_ends_the_sessions(
    admin: InjectedCliRunner, wired: wiring.Services, world: World, api: Api
) -> None:
    issued = wired.dashboard.sessions.sign_in_with_token(world.person.token)
    result = run(admin, "end-sessions", "--person", world.person.id)
    assert result.exit_code == 0, result.output
    assert f"ended the dashboard sessions of {world.person.id} (ana@example.com)" in result.stdout
    assert wired.dashboard.sessions.resume(issued.secret) is None
    assert api.call("GET", "/memories", world.person)[0] == 200  # the token still works
    again = json.loads(run(admin, "end-sessions", "--person", world.person.id, "--json").stdout)
    assert again == {
        "id": world.person.id,
        "email": "ana@example.com",
        "workspaceId": world.workspace_id,
        "sessionsEpoch": 2,
    }


def test_remove_person_prints_and_offboards(
    admin: InjectedCliRunner, wired: wiring.Services, world: World, api: Api
) -> None:
    issued = wired.dashboard.sessions.sign_in_with_token(world.person.token)
    result = run(admin, "remove-person", "--person", world.person.id, "--json")
    assert result.exit_code == 0, result.output
    removed = json.loads(result.stdout)
    assert removed["id"] == world.person.id and removed["tokensRevoked"] == 1
    assert removed["removedAt"].endswith("Z")
    assert wired.dashboard.sessions.resume(issued.secret) is None
    assert api.call("GET", "/memories", world.person)[0] == 401
    created = run(
        admin, "create-person", "--workspace", world.workspace_id, "--email", "ana@example.com"
    )
    assert created.exit_code == 0, created.output
    token = created.stdout.split("token: ", 1)[1].split()[0]
    assert api.call("GET", "/memories", Actor("new", token))[0] == 200


@pytest.mark.parametrize("command", ["remove-person", "end-sessions"])
def test_an_unknown_or_removed_person_is_not_found(
    admin: InjectedCliRunner, world: World, command: str
) -> None:
    missing = run(admin, command, "--person", "usr_01NOBODY")
    assert missing.exit_code != 0 and "not_found" in missing.output
    assert run(admin, "remove-person", "--person", world.person.id).exit_code == 0
    again = run(admin, command, "--person", world.person.id, "--json")
    assert again.exit_code != 0
    assert json.loads(again.stdout or again.stderr)["error"]["code"] == "not_found"
