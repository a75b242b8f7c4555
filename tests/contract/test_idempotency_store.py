"""The ``IdempotencyStore`` contract (chalicelib/storage/protocols.py; docs/issues.md#issue-15): an
action runs once per record key; a second use with the same fingerprint gets the
kept answer back (flagged as replayed) without running; another fingerprint is
refused; a failed action keeps nothing, so the next use runs; a key is held while
its first use runs.

Runs against every implementation in the ``store`` fixture (today Powertools'
DynamoDB persistence layer on the single table, on moto)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from chalicelib.errors import IdempotencyKeyInUse, IdempotencyKeyReused
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.idempotency import DynamoDBIdempotencyStore
from chalicelib.storage.protocols import IdempotencyStore

IMPLEMENTATIONS: dict[str, Callable[[DynamoDBTable], IdempotencyStore]] = {
    "dynamodb": DynamoDBIdempotencyStore,
}
DAY = 24 * 60 * 60


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def store(request: pytest.FixtureRequest, table: DynamoDBTable) -> IdempotencyStore:
    return IMPLEMENTATIONS[request.param](table)


class Counting:
    """An action that counts its runs and answers with the count."""

    def __init__(self) -> None:
        self.runs = 0

    def __call__(self) -> dict[str, Any]:
        self.runs += 1
        return {"status": 201, "run": self.runs}


def use(store: IdempotencyStore, key: str, fingerprint: str, action: Any) -> Any:
    return store.run_once(key, fingerprint, action, deadline_ms=30_000, lifetime_seconds=DAY)


def test_a_retry_gets_the_kept_answer_and_runs_nothing(store: IdempotencyStore) -> None:
    action = Counting()
    first = use(store, "usr_1#k1", "f1", action)
    again = use(store, "usr_1#k1", "f1", action)
    assert first == ({"status": 201, "run": 1}, False)
    assert again == ({"status": 201, "run": 1}, True)
    assert action.runs == 1


def test_keys_are_separate(store: IdempotencyStore) -> None:
    action = Counting()
    use(store, "usr_1#k1", "f1", action)
    answer, replayed = use(store, "usr_2#k1", "f1", action)
    assert (answer["run"], replayed, action.runs) == (2, False, 2)


def test_the_same_key_with_another_fingerprint_is_refused(store: IdempotencyStore) -> None:
    action = Counting()
    use(store, "usr_1#k1", "f1", action)
    with pytest.raises(IdempotencyKeyReused):
        use(store, "usr_1#k1", "f2", action)
    assert action.runs == 1


def test_a_failed_action_keeps_nothing(store: IdempotencyStore) -> None:
    def failing() -> dict[str, Any]:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        use(store, "usr_1#k1", "f1", failing)
    action = Counting()
    assert use(store, "usr_1#k1", "f1", action) == ({"status": 201, "run": 1}, False)


def test_a_key_is_held_while_its_first_use_runs(store: IdempotencyStore) -> None:
    seen: list[type[Exception]] = []

    def first() -> dict[str, Any]:
        try:
            use(store, "usr_1#k1", "f1", Counting())
        except IdempotencyKeyInUse as error:
            seen.append(type(error))
        return {"status": 200}

    assert use(store, "usr_1#k1", "f1", first) == ({"status": 200}, False)
    assert seen == [IdempotencyKeyInUse]
