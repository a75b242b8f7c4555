"""Dashboard sign-in and sessions (docs/reference.md#13-dashboard, docs/issues.md#issue-13): tokens
and one-time links, agents refused, sliding expiry written at most every 15 minutes, hard expiry,
sign-out, CSRF tokens."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from chalicelib.errors import Forbidden, InvalidRequest, Unauthorized
from chalicelib.ids import FixedClock
from chalicelib.services.access.sessions import secret_hash
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.keys import sign_in_code_key, web_session_key
from chalicelib.wiring import Services
from tests.helpers import TABLE, World


def stored(dynamodb: Any, key: dict[str, str]) -> dict[str, Any] | None:
    """The raw item under ``key`` (what an attacker with a table dump would see)."""
    return DynamoDBTable(dynamodb, TABLE).get(key)


def test_person_token_signs_in_and_only_the_hash_is_stored(
    wired: Services, world: World, dynamodb: Any
) -> None:
    sessions = wired.dashboard.sessions
    issued = sessions.sign_in_with_token(f"  {world.person.token}  ")
    assert issued.session.person_id == world.person.id
    assert issued.session.workspace_id == world.workspace_id
    assert stored(dynamodb, web_session_key(issued.secret)) is None
    item = stored(dynamodb, web_session_key(secret_hash(issued.secret)))
    assert item is not None and item["personId"] == world.person.id
    assert issued.secret not in str(item)
    resumed = sessions.resume(issued.secret)
    assert resumed is not None and resumed.person.email == "ana@example.com"


def test_agent_unknown_and_blank_tokens_cannot_sign_in(
    wired: Services, world: World, dynamodb: Any
) -> None:
    sessions = wired.dashboard.sessions
    with pytest.raises(Forbidden, match="agents cannot sign in"):
        sessions.sign_in_with_token(world.agent.token)
    with pytest.raises(Unauthorized):
        sessions.sign_in_with_token("pwk_not-a-token")
    with pytest.raises(Unauthorized):
        sessions.sign_in_with_token("pwk_" + "x" * 500)
    with pytest.raises(InvalidRequest):
        sessions.sign_in_with_token("   ")


def test_a_link_works_once_and_is_stored_hashed(
    wired: Services, world: World, dynamodb: Any
) -> None:
    sessions = wired.dashboard.sessions
    person = wired.auth.authenticate(f"Bearer {world.person.token}")
    link = sessions.create_link(person, token_hash=None)
    code = link.path.split("code=", 1)[1]
    assert link.path.startswith("/sign-in/link?code=")
    assert stored(dynamodb, sign_in_code_key(code)) is None
    assert stored(dynamodb, sign_in_code_key(secret_hash(code))) is not None
    issued = sessions.sign_in_with_link(code)
    assert issued.session.person_id == world.person.id and issued.session.via == "link"
    assert stored(dynamodb, sign_in_code_key(secret_hash(code))) is None
    with pytest.raises(Unauthorized, match="used already or has expired"):
        sessions.sign_in_with_link(code)


def test_an_expired_link_is_refused_and_consumed(
    wired: Services, world: World, dynamodb: Any, clock: FixedClock
) -> None:
    sessions = wired.dashboard.sessions
    person = wired.auth.authenticate(f"Bearer {world.person.token}")
    code = sessions.create_link(person, token_hash=None).path.split("code=", 1)[1]
    clock.set(clock.now() + timedelta(minutes=10))
    with pytest.raises(Unauthorized):
        sessions.sign_in_with_link(code)
    assert stored(dynamodb, sign_in_code_key(secret_hash(code))) is None
    with pytest.raises(Unauthorized):
        sessions.sign_in_with_link("")


def test_agents_cannot_make_links(wired: Services, world: World, dynamodb: Any) -> None:
    agent = wired.auth.authenticate(f"Bearer {world.agent.token}")
    with pytest.raises(Forbidden):
        wired.dashboard.sessions.create_link(agent, token_hash=None)


def test_sliding_expiry_writes_at_most_every_15_minutes(
    wired: Services, world: World, dynamodb: Any, clock: FixedClock
) -> None:
    sessions = wired.dashboard.sessions
    issued = sessions.sign_in_with_token(world.person.token)
    start = clock.now()
    clock.set(start + timedelta(minutes=14))
    again = sessions.resume(issued.secret)
    assert again is not None and again.session.last_seen_at == start  # nothing written
    item = stored(dynamodb, web_session_key(secret_hash(issued.secret)))
    assert (
        item is not None
        and item["lastSeenAt"]
        == issued.session.model_dump(mode="json", by_alias=True)["lastSeenAt"]
    )
    clock.set(start + timedelta(minutes=16))
    slid = sessions.resume(issued.secret)
    assert slid is not None
    assert slid.session.expires_at == start + timedelta(minutes=16, hours=12)
    # Idle for 12 hours after the last push: ended.
    clock.set(start + timedelta(minutes=16, hours=12))
    assert sessions.resume(issued.secret) is None


def test_an_active_session_still_ends_after_seven_days(
    wired: Services, world: World, dynamodb: Any, clock: FixedClock
) -> None:
    sessions = wired.dashboard.sessions
    issued = sessions.sign_in_with_token(world.person.token)
    start = clock.now()
    for hours in range(6, 7 * 24, 6):
        clock.set(start + timedelta(hours=hours))
        assert sessions.resume(issued.secret) is not None, hours
    clock.set(start + timedelta(days=7))
    assert sessions.resume(issued.secret) is None


def test_sign_out_deletes_the_record(wired: Services, world: World, dynamodb: Any) -> None:
    sessions = wired.dashboard.sessions
    issued = sessions.sign_in_with_token(world.person.token)
    sessions.sign_out(issued.secret)
    assert stored(dynamodb, web_session_key(secret_hash(issued.secret))) is None
    assert sessions.resume(issued.secret) is None
    assert sessions.resume(None) is None and sessions.resume("x" * 1000) is None


def test_csrf_token_is_the_sessions_own(wired: Services, world: World, dynamodb: Any) -> None:
    sessions = wired.dashboard.sessions
    first = sessions.sign_in_with_token(world.person.token).session
    second = sessions.sign_in_with_token(world.person.token).session
    assert first.csrf_token != second.csrf_token
    sessions.check_csrf(first, first.csrf_token)
    for sent in (None, "", second.csrf_token, first.csrf_token + "x", "é"):
        with pytest.raises(Forbidden):
            sessions.check_csrf(first, sent)


def test_a_rotated_token_past_its_grace_or_a_revoked_one_cannot_sign_in(
    wired: Services, world: World, clock: FixedClock
) -> None:
    # The dashboard resolves a pasted token by the API's rules (AuthService),
    # docs/issues.md#issue-12.
    sessions, tokens = wired.dashboard.sessions, wired.admin.tokens
    (first,) = tokens.list(world.person.id)
    assert first.id is not None
    rotated = tokens.rotate(first.id, timedelta(hours=1))
    assert sessions.sign_in_with_token(world.person.token).session.person_id == world.person.id
    clock.set(clock.now() + timedelta(hours=1, seconds=1))
    with pytest.raises(Unauthorized, match="rotated"):
        sessions.sign_in_with_token(world.person.token)
    replacement = rotated.issued
    assert sessions.sign_in_with_token(replacement.token).session.person_id == world.person.id
    tokens.revoke(replacement.id)
    with pytest.raises(Unauthorized, match="unknown or revoked"):
        sessions.sign_in_with_token(replacement.token)
