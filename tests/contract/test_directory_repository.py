"""The ``DirectoryRepository`` contract (chalicelib/storage/protocols.py): workspaces,
agents, persons and the token hashes that name them.

Runs against every implementation in the ``directory`` fixture (today the DynamoDB
adapter on moto)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from chalicelib.ids import FixedClock, IdFactory
from chalicelib.models.principal import Agent, Person, Principal, PrincipalKind, Workspace
from chalicelib.models.token import StoredToken, TokenRecord
from chalicelib.storage.directory import DynamoDBDirectoryRepository
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.protocols import DirectoryRepository, PersonEmailTaken

IMPLEMENTATIONS: dict[str, Callable[[DynamoDBTable], DirectoryRepository]] = {
    "dynamodb": DynamoDBDirectoryRepository,
}


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def directory(request: pytest.FixtureRequest, table: DynamoDBTable) -> DirectoryRepository:
    return IMPLEMENTATIONS[request.param](table)


def stored(
    token_hash: str, kind: PrincipalKind, principal_id: str, workspace_id: str
) -> StoredToken:
    """A token item for ``create_agent`` / ``create_person`` (``TokenService.mint``'s shape)."""
    record = TokenRecord(
        id="tok_" + token_hash[:26].upper(),
        principal_kind=kind,
        principal_id=principal_id,
        workspace_id=workspace_id,
    )
    return StoredToken(token_hash=token_hash, record=record)


def stored_person(token_hash: str, person: Person) -> StoredToken:
    """``stored`` for a person."""
    return stored(token_hash, PrincipalKind.PERSON, person.id, person.workspace_id)


def test_workspaces_agents_and_persons_read_back(
    directory: DirectoryRepository, ids: IdFactory, clock: FixedClock
) -> None:
    workspace = Workspace(id=ids.new("wsp"), name="Acme", created_at=clock.now())
    directory.create_workspace(workspace)
    agent = Agent(
        id=ids.new("agt"), workspace_id=workspace.id, name="builder", created_at=clock.now()
    )
    directory.create_agent(agent, stored("a" * 64, PrincipalKind.AGENT, agent.id, workspace.id))
    person = Person(
        id=ids.new("usr"),
        workspace_id=workspace.id,
        email="ana@example.com",
        created_at=clock.now(),
    )
    directory.create_person(person, stored_person("b" * 64, person), email_digests=["e" * 64])
    assert directory.get_workspace(workspace.id) == workspace
    assert directory.get_agent(agent.id) == agent
    assert directory.get_workspace(ids.new("wsp")) is None
    assert directory.get_agent(ids.new("agt")) is None
    assert directory.principal_for_token("a" * 64) == Principal(
        kind=PrincipalKind.AGENT, id=agent.id, workspace_id=workspace.id
    )
    assert directory.principal_for_token("b" * 64) == Principal(
        kind=PrincipalKind.PERSON, id=person.id, workspace_id=workspace.id
    )
    assert directory.principal_for_token("c" * 64) is None


def test_review_approval_is_set_only_on_a_stored_workspace(
    directory: DirectoryRepository, ids: IdFactory, clock: FixedClock
) -> None:
    workspace = Workspace(id=ids.new("wsp"), name="Acme", created_at=clock.now())
    directory.create_workspace(workspace)
    assert workspace.review_approval == "none"
    updated = directory.set_review_approval(workspace.id, "required")
    assert updated is not None and updated.review_approval == "required"
    assert directory.get_workspace(workspace.id) == updated
    missing = ids.new("wsp")
    assert directory.set_review_approval(missing, "required") is None
    assert directory.get_workspace(missing) is None  # no bare item was created


def test_a_claimed_email_refuses_a_second_person_and_writes_nothing(
    directory: DirectoryRepository, ids: IdFactory, clock: FixedClock
) -> None:
    workspace = Workspace(id=ids.new("wsp"), name="Acme", created_at=clock.now())
    directory.create_workspace(workspace)

    def person() -> Person:
        return Person(
            id=ids.new("usr"), workspace_id=workspace.id, email="a@b.c", created_at=clock.now()
        )

    first = person()
    directory.create_person(first, stored_person("a" * 64, first), email_digests=["e" * 64])
    second = person()
    with pytest.raises(PersonEmailTaken):
        directory.create_person(second, stored_person("b" * 64, second), email_digests=["e" * 64])
    assert directory.principal_for_token("b" * 64) is None  # the token was not written
    other = Workspace(id=ids.new("wsp"), name="Other", created_at=clock.now())
    directory.create_workspace(other)
    elsewhere = Person(
        id=ids.new("usr"), workspace_id=other.id, email="a@b.c", created_at=clock.now()
    )
    directory.create_person(
        elsewhere, stored_person("c" * 64, elsewhere), email_digests=["e" * 64]
    )  # claims are per workspace
    assert directory.principal_for_token("c" * 64) is not None


def test_agents_are_listed_by_workspace_and_persons_read_back(
    directory: DirectoryRepository, ids: IdFactory, clock: FixedClock
) -> None:
    ours = Workspace(id=ids.new("wsp"), name="Acme", created_at=clock.now())
    theirs = Workspace(id=ids.new("wsp"), name="Other", created_at=clock.now())
    directory.create_workspace(ours)
    directory.create_workspace(theirs)
    made = []
    for n, (name, workspace) in enumerate((("b-agent", ours), ("a-agent", ours), ("spy", theirs))):
        agent = Agent(
            id=ids.new("agt"), workspace_id=workspace.id, name=name, created_at=clock.now()
        )
        token_hash = str(n + 1) * 64
        directory.create_agent(
            agent, stored(token_hash, PrincipalKind.AGENT, agent.id, workspace.id)
        )
        made.append(agent)
    assert directory.list_agents(ours.id) == made[:2]  # by agent id
    assert directory.list_agents(theirs.id) == [made[2]]
    assert directory.list_agents(ids.new("wsp")) == []
    # Every workspace's, each once (not its listing item too), in no order.
    assert sorted(directory.all_agents(), key=lambda agent: agent.id) == made
    person = Person(
        id=ids.new("usr"), workspace_id=ours.id, email="eve@example.com", created_at=clock.now()
    )
    directory.create_person(person, stored_person("f" * 64, person), email_digests=["9" * 64])
    assert directory.get_person(person.id) == person
    assert directory.get_person(ids.new("usr")) is None


def test_ending_sessions_and_removing_a_person(
    directory: DirectoryRepository, ids: IdFactory, clock: FixedClock
) -> None:
    workspace = Workspace(id=ids.new("wsp"), name="Acme", created_at=clock.now())
    directory.create_workspace(workspace)
    person = Person(
        id=ids.new("usr"),
        workspace_id=workspace.id,
        email="ana@example.com",
        created_at=clock.now(),
    )
    directory.create_person(person, stored_person("1" * 64, person), email_digests=["d" * 64])
    ended = directory.end_person_sessions(person.id)
    assert ended is not None and ended.sessions_epoch == 1
    assert directory.end_person_sessions("usr_nobody") is None
    assert directory.remove_person(person, email_digests=["d" * 64], now=clock.now())
    read = directory.get_person(person.id)
    assert read is not None and read.removed_at == clock.now() and read.sessions_epoch == 2
    assert not directory.remove_person(person, email_digests=["d" * 64], now=clock.now())
    assert directory.end_person_sessions(person.id) is None  # removed: nothing written
    # The address is free again in that workspace.
    again = Person(
        id=ids.new("usr"),
        workspace_id=workspace.id,
        email="ana@example.com",
        created_at=clock.now(),
    )
    directory.create_person(again, stored_person("2" * 64, again), email_digests=["d" * 64])
    # Removing a person never releases another person's claim (nothing is written then).
    other = Person(
        id=ids.new("usr"), workspace_id=workspace.id, email="bo@example.com", created_at=clock.now()
    )
    directory.create_person(other, stored_person("3" * 64, other), email_digests=["e" * 64])
    assert not directory.remove_person(other, email_digests=["d" * 64], now=clock.now())
    kept = directory.get_person(other.id)
    assert kept is not None and kept.removed_at is None and kept.sessions_epoch == 0
    with pytest.raises(PersonEmailTaken):
        third = Person(
            id=ids.new("usr"),
            workspace_id=workspace.id,
            email="x@example.com",
            created_at=clock.now(),
        )
        directory.create_person(third, stored_person("4" * 64, third), email_digests=["d" * 64])
