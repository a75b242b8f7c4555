"""The dashboard's People and agents page (docs/reference.md#people-and-agents,
docs/reference.md#person-roles, docs/issues.md#issue-48-item-4): an owner creates an agent
(its token shown once, and working), invites a person, changes roles (never the last
owner's), issues and revokes agents' tokens; a member is refused every action and nothing
is stored; bad input is shown next to its form and stores nothing."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from chalice.test import Client

from chalicelib.storage.directory import DynamoDBDirectoryRepository
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.wiring import Services
from tests.helpers import TABLE, Actor, Api, World, text
from tests.helpers import DashboardPage as Page

SHOWN_TOKEN = re.compile(r'id="shown-token-value">(pwk_[A-Za-z0-9_-]+)<')


@pytest.fixture
def owner(wired: Services, world: World) -> Actor:
    """An owner of the world's workspace (``ana``, the world's person, is a member)."""
    issued = wired.admin.create_person(world.workspace_id, "olga@example.com", "owner")
    return Actor(issued.id, issued.token)


@pytest.fixture
def client(wired: Services) -> Iterator[Client]:
    from app import app

    with Client(app) as test_client:
        yield test_client


@pytest.fixture
def browser(client: Client, owner: Actor) -> Page:
    """The owner, signed in."""
    page = Page(client)
    assert page.sign_in(owner.token).status_code == 303
    return page


@pytest.fixture
def member(client: Client, world: World) -> Page:
    """The member, signed in."""
    page = Page(client)
    assert page.sign_in(world.person.token).status_code == 303
    return page


@pytest.fixture
def directory(dynamodb: Any) -> DynamoDBDirectoryRepository:
    return DynamoDBDirectoryRepository(DynamoDBTable(dynamodb, TABLE))


def post(page: Page, path: str, form: dict[str, str]) -> Any:
    return page.post(path, {"csrf": page.csrf("/settings"), **form})


def shown_token(response: Any) -> str:
    found = SHOWN_TOKEN.search(text(response))
    assert found is not None, text(response)[:2000]
    return found.group(1)


def state(directory: DynamoDBDirectoryRepository, workspace_id: str) -> Any:
    """Everything the page can change: agents, persons with roles, each agent's tokens."""
    agents = sorted((agent.id, agent.name) for agent in directory.list_agents(workspace_id))
    persons = sorted((p.id, p.email, p.role) for p in directory.list_persons(workspace_id))
    tokens = sorted(
        (token.token_hash, token.record.expires_at)
        for agent_id, _ in agents
        for token in directory.list_tokens(agent_id)
    )
    return agents, persons, tokens


def outsider_workspace(directory: DynamoDBDirectoryRepository, world: World) -> str:
    outsider = directory.get_person(world.outsider.id)
    assert outsider is not None
    return outsider.workspace_id


def test_owner_sees_the_page_and_the_link_member_does_not(
    browser: Page, member: Page, world: World, owner: Actor
) -> None:
    page = text(browser.get("/people"))
    assert browser.get("/people").status_code == 200
    assert 'href="/people" aria-current="page">People and agents' in page
    assert "ana@example.com" in page and "olga@example.com" in page
    assert "builder" in page and "reviewer" in page and "spy" not in page
    assert "eve@example.com" not in page  # another workspace's person
    refused = member.get("/people")
    assert refused.status_code == 403 and "forbidden" in text(refused)
    assert "People and agents</a>" not in text(member.get("/"))


def test_owner_creates_an_agent_whose_token_is_shown_once_and_works(
    browser: Page, api: Api, world: World, directory: DynamoDBDirectoryRepository, owner: Actor
) -> None:
    answer = post(browser, "/people/agents", {"name": "  deployer  "})
    assert answer.status_code == 200
    token = shown_token(answer)
    created = [a for a in directory.list_agents(world.workspace_id) if a.name == "deployer"]
    assert len(created) == 1 and created[0].created_by == owner.id
    status, listing = api.call("GET", "/memories", Actor(created[0].id, token))
    assert status == 200, listing
    status, saved = api.call("POST", "/memories", Actor(created[0].id, token), {"text": "uses uv"})
    assert status == 201 and saved["agentId"] == created[0].id
    again = text(browser.get("/people"))
    assert token not in again and token[:8] in again  # listed by prefix only
    assert "shown-token-value" not in again


def test_owner_invites_a_person_who_signs_in_with_the_shown_token(
    browser: Page, client: Client, world: World, directory: DynamoDBDirectoryRepository
) -> None:
    answer = post(browser, "/people/persons", {"email": "bo@example.com", "role": "owner"})
    assert answer.status_code == 200
    assert "sign-in page" in text(answer)  # the page says how they sign in
    token = shown_token(answer)
    (bo,) = [p for p in directory.list_persons(world.workspace_id) if p.email == "bo@example.com"]
    assert bo.role == "owner"
    newcomer = Page(client)
    assert newcomer.sign_in(token).status_code == 303
    assert newcomer.get("/people").status_code == 200  # an owner from the start
    assert token not in text(browser.get("/people"))


def test_owner_changes_roles_and_the_last_owner_is_kept(
    browser: Page, world: World, owner: Actor, directory: DynamoDBDirectoryRepository
) -> None:
    def role(person_id: str) -> str:
        found = directory.get_person(person_id)
        assert found is not None
        return found.role

    refused = post(
        browser, f"/people/persons/{owner.id}/role", {"role": "member", "shown": "owner"}
    )
    assert refused.status_code == 409
    assert "last owner" in text(refused) and role(owner.id) == "owner"
    promoted = post(
        browser, f"/people/persons/{world.person.id}/role", {"role": "owner", "shown": "member"}
    )
    assert promoted.status_code == 303 and "done=role-set" in promoted.headers["Location"]
    stored = directory.get_person(world.person.id)
    assert stored is not None and stored.role == "owner" and stored.role_set_by == owner.id
    # a form shown before that change is stale: refused, nothing written
    stale = post(
        browser, f"/people/persons/{world.person.id}/role", {"role": "owner", "shown": "member"}
    )
    assert stale.status_code == 412 and "precondition_failed" in text(stale)
    # two owners now: the owner may step down, then the other one is the last
    demoted = post(
        browser, f"/people/persons/{owner.id}/role", {"role": "member", "shown": "owner"}
    )
    assert demoted.status_code == 303 and role(owner.id) == "member"
    assert demoted.headers["Location"].endswith("/?done=role-set")
    assert browser.get("/people").status_code == 403  # a member now


def test_owner_issues_and_revokes_an_agents_token(
    browser: Page, api: Api, world: World, directory: DynamoDBDirectoryRepository
) -> None:
    issued = post(browser, f"/people/agents/{world.agent.id}/tokens", {"label": "ci-runner"})
    assert issued.status_code == 200
    token = shown_token(issued)
    assert api.call("GET", "/memories", Actor(world.agent.id, token))[0] == 200
    record = next(
        stored.record
        for stored in directory.list_tokens(world.agent.id)
        if stored.record.label == "ci-runner"
    )
    unconfirmed = post(browser, f"/people/tokens/{record.id}/revoke", {})
    assert unconfirmed.status_code == 400 and "Tick the confirmation" in text(unconfirmed)
    assert api.call("GET", "/memories", Actor(world.agent.id, token))[0] == 200
    revoked = post(browser, f"/people/tokens/{record.id}/revoke", {"confirm": "yes"})
    assert revoked.status_code == 303 and "done=token-revoked" in revoked.headers["Location"]
    assert api.call("GET", "/memories", Actor(world.agent.id, token))[0] == 401
    assert api.call("GET", "/memories", world.agent)[0] == 200  # its first token still works
    twice = post(browser, f"/people/tokens/{record.id}/revoke", {"confirm": "yes"})
    assert twice.status_code == 404


@pytest.mark.parametrize(
    ("path", "form"),
    [
        ("/people/agents", {"name": "sneaky"}),
        ("/people/persons", {"email": "mallory@example.com", "role": "owner"}),
        ("/people/persons/{person}/role", {"role": "owner", "shown": "member"}),
        ("/people/persons/{owner}/role", {"role": "member", "shown": "owner"}),
        ("/people/agents/{agent}/tokens", {"label": "mine now"}),
        ("/people/tokens/{token}/revoke", {"confirm": "yes"}),
    ],
)
def test_a_member_is_refused_every_action_and_nothing_is_stored(
    member: Page,
    world: World,
    owner: Actor,
    directory: DynamoDBDirectoryRepository,
    path: str,
    form: dict[str, str],
) -> None:
    (token,) = directory.list_tokens(world.agent.id)
    before = state(directory, world.workspace_id)
    target = path.format(
        person=world.person.id, owner=owner.id, agent=world.agent.id, token=token.record.id
    )
    refused = post(member, target, form)
    assert refused.status_code == 403 and "forbidden" in text(refused)
    assert "shown-token-value" not in text(refused)
    assert state(directory, world.workspace_id) == before


@pytest.mark.parametrize(
    ("path", "form", "status", "code"),
    [
        ("/people/agents", {"name": "   "}, 400, "invalid_request"),
        ("/people/agents", {"name": "x" * 201}, 400, "invalid_request"),
        ("/people/agents", {"name": "bad\x01name"}, 400, "invalid_request"),
        ("/people/persons", {"email": "not-an-address", "role": "member"}, 400, "invalid_request"),
        ("/people/persons", {"email": "<b>@example.com", "role": "member"}, 400, "invalid_request"),
        (
            "/people/persons",
            {"email": "bo ana@example.com", "role": "member"},
            400,
            "invalid_request",
        ),
        ("/people/persons", {"email": "bo@example.com", "role": "admin"}, 400, "invalid_request"),
        ("/people/persons", {"email": "ANA@example.com", "role": "member"}, 409, "person_exists"),
        (
            "/people/persons/{person}/role",
            {"role": "boss", "shown": "member"},
            400,
            "invalid_request",
        ),
        ("/people/persons/{person}/role", {"role": "owner"}, 400, "invalid_request"),
        ("/people/persons/{outsider}/role", {"role": "owner", "shown": "member"}, 404, "not_found"),
        ("/people/agents/{outsider_agent}/tokens", {}, 404, "not_found"),
        ("/people/agents/{agent}/tokens", {"label": "x" * 101}, 400, "invalid_request"),
        ("/people/tokens/{outsider_token}/revoke", {"confirm": "yes"}, 404, "not_found"),
        ("/people/tokens/tok_nothing/revoke", {"confirm": "yes"}, 404, "not_found"),
    ],
)
def test_bad_input_is_shown_on_the_page_and_stores_nothing(
    browser: Page,
    world: World,
    directory: DynamoDBDirectoryRepository,
    path: str,
    form: dict[str, str],
    status: int,
    code: str,
) -> None:
    (foreign,) = directory.list_tokens(world.outsider_agent.id)
    before = state(directory, world.workspace_id)
    foreign_before = state(directory, outsider_workspace(directory, world))
    target = path.format(
        person=world.person.id,
        outsider=world.outsider.id,
        agent=world.agent.id,
        outsider_agent=world.outsider_agent.id,
        outsider_token=foreign.record.id,
    )
    answer = post(browser, target, form)
    assert answer.status_code == status
    page = text(answer)
    assert code in page and "People and agents" in page and "shown-token-value" not in page
    assert state(directory, world.workspace_id) == before
    assert state(directory, outsider_workspace(directory, world)) == foreign_before


def test_a_form_without_the_csrf_token_stores_nothing(
    browser: Page, world: World, directory: DynamoDBDirectoryRepository
) -> None:
    before = state(directory, world.workspace_id)
    refused = browser.post("/people/agents", {"name": "forged"})
    assert refused.status_code == 403
    cross_site = browser.post(
        "/people/agents",
        {"csrf": browser.csrf("/people"), "name": "forged"},
        Origin="https://evil.example",
    )
    assert cross_site.status_code == 403
    assert state(directory, world.workspace_id) == before
