"""The ``WebSessionRepository`` contract (chalicelib/storage/dashboard_protocols.py):
dashboard sessions and one-time sign-in codes, stored under their secrets' hashes.

Runs against every implementation in the ``store`` fixture (today the DynamoDB
adapter on moto)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest

from chalicelib.ids import FixedClock
from chalicelib.models.session import SignInCode, WebSession
from chalicelib.storage.dashboard_protocols import WebSessionRepository
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.web_sessions import DynamoDBWebSessionRepository

IMPLEMENTATIONS: dict[str, Callable[[DynamoDBTable], WebSessionRepository]] = {
    "dynamodb": DynamoDBWebSessionRepository,
}


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def store(request: pytest.FixtureRequest, table: DynamoDBTable) -> WebSessionRepository:
    return IMPLEMENTATIONS[request.param](table)


def session(clock: FixedClock, secret_hash: str = "a" * 64) -> WebSession:
    now = clock.now()
    return WebSession(
        secret_hash=secret_hash,
        person_id="usr_01",
        workspace_id="wsp_01",
        csrf_token="csrf",
        created_at=now,
        last_seen_at=now,
        expires_at=now + timedelta(hours=12),
        absolute_expires_at=now + timedelta(days=7),
        via="token",
    )


def test_a_session_reads_back_and_is_deleted(
    store: WebSessionRepository, clock: FixedClock
) -> None:
    made = session(clock)
    store.create_session(made)
    assert store.get_session(made.secret_hash) == made
    assert store.get_session("b" * 64) is None
    store.delete_session(made.secret_hash)
    assert store.get_session(made.secret_hash) is None
    store.delete_session(made.secret_hash)  # a missing one is fine


def test_extending_needs_a_live_stored_session(
    store: WebSessionRepository, clock: FixedClock
) -> None:
    made = session(clock)
    store.create_session(made)
    later = clock.now() + timedelta(hours=1)
    assert store.extend_session(made, later, later + timedelta(hours=12))
    read = store.get_session(made.secret_hash)
    assert read is not None and read.last_seen_at == later
    assert read.expires_at == later + timedelta(hours=12)
    # Past its idle expiry: refused, nothing written.
    too_late = later + timedelta(hours=13)
    assert not store.extend_session(made, too_late, too_late + timedelta(hours=12))
    assert store.get_session(made.secret_hash) == read
    store.delete_session(made.secret_hash)
    assert not store.extend_session(made, later, later + timedelta(hours=12))
    assert store.get_session(made.secret_hash) is None  # a sign-out is never undone


def test_a_code_is_consumed_exactly_once(store: WebSessionRepository, clock: FixedClock) -> None:
    code = SignInCode(
        code_hash="c" * 64,
        person_id="usr_01",
        workspace_id="wsp_01",
        created_at=clock.now(),
        expires_at=clock.now() + timedelta(minutes=10),
    )
    store.create_code(code)
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: store.consume_code(code.code_hash), range(4)))
    assert [found for found in results if found is not None] == [code]
    assert store.consume_code(code.code_hash) is None
    assert store.consume_code("d" * 64) is None


def test_a_code_is_read_without_being_used_and_keeps_its_token(
    store: WebSessionRepository, clock: FixedClock
) -> None:
    code = SignInCode(
        code_hash="e" * 64,
        person_id="usr_01",
        workspace_id="wsp_01",
        created_at=clock.now(),
        expires_at=clock.now() + timedelta(minutes=10),
        token_hash="f" * 64,
    )
    store.create_code(code)
    assert store.get_code(code.code_hash) == code
    assert store.get_code(code.code_hash) == code  # reading uses nothing
    assert store.consume_code(code.code_hash) == code
    assert store.get_code(code.code_hash) is None


def test_a_session_keeps_its_token_and_person_epoch(
    store: WebSessionRepository, clock: FixedClock
) -> None:
    made = session(clock, "b" * 64).model_copy(update={"token_hash": "9" * 64, "person_epoch": 3})
    store.create_session(made)
    assert store.get_session(made.secret_hash) == made
