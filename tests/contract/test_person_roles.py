"""Person roles in storage (docs/reference.md#person-roles, docs/issues.md#issue-48-item-4):
``DirectoryRepository.set_person_role`` writes only under its checks, so two owners who
each read the other as an owner and demote themselves cannot both win; a removed person's
role cannot change; the workspace's persons are listed by key (moto DynamoDB)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

import pytest

from chalicelib import wiring
from chalicelib.errors import Conflict
from chalicelib.storage.directory import DynamoDBDirectoryRepository
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.protocols import RoleChange
from tests.helpers import TABLE

AT = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


@pytest.fixture
def directory(dynamodb: Any) -> DynamoDBDirectoryRepository:
    return DynamoDBDirectoryRepository(DynamoDBTable(dynamodb, TABLE))


def demote(person_id: str, workspace_id: str, other_owner: str) -> RoleChange:
    return RoleChange(
        person_id=person_id,
        workspace_id=workspace_id,
        before="owner",
        after="member",
        by=person_id,
        at=AT,
        other_owner=other_owner,
    )


def test_two_owners_demoting_themselves_at_once_leave_one_owner(
    wired: wiring.Services, directory: DynamoDBDirectoryRepository
) -> None:
    workspace = wired.admin.create_workspace("Acme")
    ana = wired.admin.create_person(workspace.id, "ana@example.com", "owner").id
    bo = wired.admin.create_person(workspace.id, "bo@example.com", "owner").id
    # both read "the other is an owner" before either writes
    first = directory.set_person_role(demote(ana, workspace.id, other_owner=bo))
    second = directory.set_person_role(demote(bo, workspace.id, other_owner=ana))
    assert first is not None and first.role == "member"
    assert second is None
    roles = {p.id: p.role for p in directory.list_persons(workspace.id)}
    assert roles == {ana: "member", bo: "owner"}


def test_the_last_owner_is_kept_and_a_removed_person_keeps_no_role(
    wired: wiring.Services, directory: DynamoDBDirectoryRepository
) -> None:
    workspace = wired.admin.create_workspace("Acme")
    ana = wired.admin.create_person(workspace.id, "ana@example.com", "owner").id
    bo = wired.admin.create_person(workspace.id, "bo@example.com", "owner").id
    wired.admin.remove_person(bo)
    with pytest.raises(Conflict) as refused:
        wired.admin.enrolment.set_role(ana, "member", by=ana, keep_an_owner=True)
    assert "last owner" in refused.value.message
    # a removed owner is no owner: the check on them fails even if named
    assert directory.set_person_role(demote(ana, workspace.id, other_owner=bo)) is None
    assert directory.set_person_role(demote(bo, workspace.id, other_owner=ana)) is None
    assert {p.id: p.role for p in directory.list_persons(workspace.id)}[ana] == "owner"


def test_every_change_writes_an_audit_line(
    wired: wiring.Services, caplog: pytest.LogCaptureFixture
) -> None:
    workspace = wired.admin.create_workspace("Acme")
    with caplog.at_level(logging.INFO):
        agent = wired.admin.create_agent(workspace.id, "builder")
        ana = wired.admin.create_person(workspace.id, "ana@example.com")
        wired.admin.set_role(ana.id, "owner")
    audits = [
        (
            record.__dict__["audit"],
            record.__dict__.get("agent_id") or record.__dict__.get("person_id"),
        )
        for record in caplog.records
        if hasattr(record, "audit")
    ]
    assert audits == [
        ("agent_created", agent.id),
        ("person_created", ana.id),
        ("role_set", ana.id),
    ]
