"""Offboarding (docs/reference.md#offboarding, docs/issues.md#issue-21-item-4): a dashboard
session ends at its next request once the token it was signed in with is revoked or past its
rotation grace, once the person's sessions are ended, or once the person is removed; a removed
person's tokens are 401, their e-mail address is free again, and their past edits still name
them."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from chalice.test import Client

from chalicelib.errors import InvalidRequest, NotFound, Unauthorized
from chalicelib.ids import FixedClock
from chalicelib.services.access.sessions import secret_hash
from chalicelib.storage.directory import DynamoDBDirectoryRepository
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.keys import web_session_key
from chalicelib.wiring import Services
from tests.helpers import TABLE, Actor, Api, World, save
from tests.helpers import DashboardPage as Page


@pytest.fixture
def browser(wired: Services) -> Iterator[Page]:
    from app import app

    with Client(app) as client:
        yield Page(client)


def signed_out(browser: Page) -> bool:
    """The next page request finds no session: to sign-in, the cookie cleared."""
    response = browser.get("/")
    if response.status_code != 303:
        return False
    assert "ended=1" in response.headers["Location"], response.headers
    return "Max-Age=0" in response.headers["Set-Cookie"]


def token_id(wired: Services, person_id: str) -> str:
    (record,) = wired.admin.tokens.list(person_id)
    assert record.id is not None
    return record.id


def test_a_revoked_tokens_session_ends_at_its_next_request(
    wired: Services, world: World, browser: Page, dynamodb: Any
) -> None:
    second = wired.admin.tokens.issue(world.person.id, "laptop")
    browser.sign_in(world.person.token)
    other = Page(browser.client)
    other.sign_in(second.token)
    assert browser.get("/").status_code == 200
    wired.admin.tokens.revoke(token_id_of_first(wired, world))
    assert signed_out(browser)
    assert other.get("/").status_code == 200  # signed in with the other token
    stored = DynamoDBTable(dynamodb, TABLE)
    assert stored.get(web_session_key(secret_hash(browser_secret(browser)))) is None


def token_id_of_first(wired: Services, world: World) -> str:
    records = wired.admin.tokens.list(world.person.id)
    first = min(records, key=lambda record: record.created_at or 0)  # type: ignore[arg-type,return-value]
    assert first.id is not None and first.label is None
    return first.id


def browser_secret(browser: Page) -> str:
    assert browser.cookie is not None
    return browser.cookie.split("=", 1)[1]


def test_a_rotated_tokens_session_ends_when_its_grace_does(
    wired: Services, world: World, browser: Page, clock: FixedClock
) -> None:
    browser.sign_in(world.person.token)
    wired.admin.tokens.rotate(token_id(wired, world.person.id), timedelta(hours=2))
    clock.set(clock.now() + timedelta(hours=1, minutes=59))
    assert browser.get("/").status_code == 200  # within the grace
    clock.set(clock.now() + timedelta(minutes=2))
    assert signed_out(browser)


def test_a_link_session_is_tied_to_the_token_that_made_the_link(
    wired: Services, world: World, browser: Page, api: Api
) -> None:
    status, link = api.call("POST", "/sign-in-links", world.person)
    assert status == 201
    code = link["path"].split("code=", 1)[1]
    assert browser.post("/sign-in/link", {"code": code}).status_code == 303
    assert browser.get("/").status_code == 200
    wired.admin.tokens.revoke(token_id(wired, world.person.id))
    assert signed_out(browser)


def test_a_link_made_by_a_token_revoked_since_is_unusable(
    wired: Services, world: World, browser: Page, api: Api
) -> None:
    _, link = api.call("POST", "/sign-in-links", world.person)
    wired.admin.tokens.revoke(token_id(wired, world.person.id))
    page = browser.get(link["path"])
    assert page.headers["Location"] == "/sign-in?link=unusable"
    code = link["path"].split("code=", 1)[1]
    refused = browser.post("/sign-in/link", {"code": code})
    assert refused.headers["Location"] == "/sign-in?link=unusable"
    assert "Set-Cookie" not in refused.headers


def test_end_sessions_ends_every_session_of_the_person_and_only_theirs(
    wired: Services, world: World, browser: Page, api: Api
) -> None:
    browser.sign_in(world.person.token)
    laptop = Page(browser.client)
    laptop.sign_in(world.person.token)
    colleague = wired.admin.create_person(world.workspace_id, "bo@example.com")
    theirs = Page(browser.client)
    theirs.sign_in(colleague.token)
    ended = wired.admin.end_sessions(world.person.id)
    assert ended["id"] == world.person.id and ended["sessionsEpoch"] == 1
    assert signed_out(browser) and signed_out(laptop)
    assert theirs.get("/").status_code == 200
    # The token still works, and signs in again.
    assert api.call("GET", "/memories", world.person)[0] == 200
    browser.sign_in(world.person.token)
    assert browser.get("/").status_code == 200
    with pytest.raises(NotFound):
        wired.admin.end_sessions("usr_nobody")


def test_remove_person_revokes_ends_releases_and_keeps_the_audit(
    wired: Services, world: World, browser: Page, api: Api
) -> None:
    fact = save(api, world)
    status, _ = api.call("POST", f"/memories/{fact['id']}/veto", world.person, {})
    assert status == 200
    extra = wired.admin.tokens.issue(world.person.id, "ci")
    browser.sign_in(world.person.token)
    removed = wired.admin.remove_person(world.person.id)
    assert removed["tokensRevoked"] == 2 and removed["email"] == "ana@example.com"
    for token in (world.person.token, extra.token):
        status, body = api.call("GET", "/memories", Actor(world.person.id, token))
        assert (status, body["error"]["code"]) == (401, "unauthorized")
    assert signed_out(browser)
    refused = browser.sign_in(world.person.token)
    assert refused.status_code == 401 and "Set-Cookie" not in refused.headers
    # Their past edits still name them.
    status, history = api.call("GET", f"/memories/{fact['id']}/history", world.agent)
    assert status == 200 and world.person.id in str(history)
    # The address can be given to someone new, who gets a new id.
    again = wired.admin.create_person(world.workspace_id, " Ana@Example.com ")
    assert again.id != world.person.id
    assert api.call("GET", "/memories", Actor(again.id, again.token))[0] == 200
    with pytest.raises(NotFound):
        wired.admin.remove_person(world.person.id)


def test_a_token_the_index_had_not_listed_is_refused_after_removal(
    wired: Services, world: World, dynamodb: Any
) -> None:
    # Mint a token and store it without remove-person seeing it (as if the token index
    # lagged): the person check in AuthService refuses it anyway.
    principal = wired.auth.authenticate(f"Bearer {world.person.token}")
    token, stored = wired.admin.tokens.mint(principal)
    wired.admin.remove_person(world.person.id)
    DynamoDBDirectoryRepository(DynamoDBTable(dynamodb, TABLE)).add_token(stored)
    with pytest.raises(Unauthorized, match="removed"):
        wired.auth.authenticate(f"Bearer {token}")
    with pytest.raises(InvalidRequest, match="removed"):
        wired.admin.tokens.issue(world.person.id)


def test_a_session_recorded_before_sessions_were_tied_to_tokens_has_ended(
    wired: Services, world: World, browser: Page, dynamodb: Any
) -> None:
    browser.sign_in(world.person.token)
    key = web_session_key(secret_hash(browser_secret(browser)))
    dynamodb.update_item(
        TableName=TABLE,
        Key={name: {"S": value} for name, value in key.items()},
        UpdateExpression="REMOVE tokenHash, personEpoch",
    )
    assert signed_out(browser)
