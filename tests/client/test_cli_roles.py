"""``pinework admin create-person --role`` and ``pinework admin set-role``
(docs/reference.md#person-roles, docs/issues.md#issue-48-item-4) against the wired service
on moto: the role stored, a person stored without one read as a member, bad roles
refused with nothing stored."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib import wiring
from chalicelib.storage.directory import DynamoDBDirectoryRepository
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.keys import person_key
from pinework import cli
from tests.helpers import TABLE, InjectedCliRunner, World


@pytest.fixture
def admin(wired: wiring.Services) -> InjectedCliRunner:
    """The ``admin`` commands, calling the wired service (injected)."""
    return InjectedCliRunner(cli.Connections(admin=lambda: wired.admin))


def run(admin: InjectedCliRunner, *args: str) -> Any:
    return admin.invoke(cli.app, ["admin", *args])


@pytest.fixture
def directory(dynamodb: Any) -> DynamoDBDirectoryRepository:
    """The stored workspaces and persons, read directly."""
    return DynamoDBDirectoryRepository(DynamoDBTable(dynamodb, TABLE))


def _person(directory: DynamoDBDirectoryRepository, person_id: str) -> Any:
    person = directory.get_person(person_id)
    assert person is not None
    return person


def create_olga(admin: InjectedCliRunner, world: World, role: str) -> Any:
    """``create-person`` of olga@example.com with ``role``, as JSON."""
    email = "olga@example.com"
    return run(
        admin,
        "create-person",
        "--workspace",
        world.workspace_id,
        "--email",
        email,
        "--role",
        role,
        "--json",
    )


def test_create_person_stores_the_role(
    admin: InjectedCliRunner, directory: DynamoDBDirectoryRepository, world: World
) -> None:
    result = create_olga(admin, world, "owner")
    assert result.exit_code == 0, result.output
    created = json.loads(result.stdout)
    assert _person(directory, created["id"]).role == "owner"
    assert _person(directory, world.person.id).role == "member"  # the default


def test_a_bad_role_is_refused_and_nothing_is_stored(
    admin: InjectedCliRunner, directory: DynamoDBDirectoryRepository, world: World
) -> None:
    result = create_olga(admin, world, "admin")
    assert result.exit_code != 0
    assert json.loads(result.stdout or result.stderr)["error"]["code"] == "invalid_request"
    assert all(p.email != "olga@example.com" for p in directory.list_persons(world.workspace_id))
    bad = run(admin, "set-role", "--person", world.person.id, "--role", "boss", "--json")
    assert json.loads(bad.stdout or bad.stderr)["error"]["code"] == "invalid_request"
    assert _person(directory, world.person.id).role == "member"


def test_set_role_promotes_and_demotes(
    admin: InjectedCliRunner, directory: DynamoDBDirectoryRepository, world: World
) -> None:
    promoted = run(admin, "set-role", "--person", world.person.id, "--role", "OWNER")
    assert promoted.exit_code == 0, promoted.output
    assert f"{world.person.id} (ana@example.com) is now owner" in promoted.stdout
    person = _person(directory, world.person.id)
    assert person.role == "owner" and person.role_set_by == "operator"
    # the operator may demote a workspace's last owner (the dashboard never does)
    demoted = json.loads(
        run(admin, "set-role", "--person", world.person.id, "--role", "member", "--json").stdout
    )
    assert demoted["role"] == "member"
    assert _person(directory, world.person.id).role == "member"


def test_a_person_stored_without_a_role_reads_as_member(
    admin: InjectedCliRunner, directory: DynamoDBDirectoryRepository, world: World, dynamodb: Any
) -> None:
    dynamodb.update_item(
        TableName=TABLE,
        Key={name: {"S": value} for name, value in person_key(world.person.id).items()},
        UpdateExpression="REMOVE #role",
        ExpressionAttributeNames={"#role": "role"},
    )
    assert _person(directory, world.person.id).role == "member"
    assert run(admin, "set-role", "--person", world.person.id, "--role", "owner").exit_code == 0
    assert _person(directory, world.person.id).role == "owner"


def test_set_role_of_an_unknown_person_is_not_found(admin: InjectedCliRunner) -> None:
    missing = run(admin, "set-role", "--person", "usr_01NOBODY", "--role", "owner", "--json")
    assert missing.exit_code != 0
    assert json.loads(missing.stdout or missing.stderr)["error"]["code"] == "not_found"
