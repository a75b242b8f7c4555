"""Concurrent first uses of one ``Idempotency-Key``, in process (docs/issues.md#issue-15-item-3):
threads run the same keyed save and the same keyed day line through the
idempotency layer against the embedded DynamoDB server, which handles each request
atomically as DynamoDB does. Exactly one of them writes."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from chalicelib import wiring
from chalicelib.errors import IdempotencyKeyInUse
from chalicelib.models.principal import Principal
from chalicelib.models.requests import ListQuery, SaveFactRequest
from chalicelib.services.idempotency import Outcome
from chalicelib.services.run_context import RunContext

THREADS = 8


def together(action: Callable[[], Outcome]) -> list[Outcome | Exception]:
    """Start ``THREADS`` calls of ``action`` at one barrier; their outcomes or errors."""
    barrier = threading.Barrier(THREADS)

    def one(_: int) -> Outcome | Exception:
        barrier.wait()
        try:
            return action()
        except Exception as error:
            return error

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        return list(pool.map(one, range(THREADS)))


def check_exactly_one_ran(results: list[Outcome | Exception]) -> dict[str, Any]:
    first = [r for r in results if isinstance(r, Outcome) and not r.replayed]
    replayed = [r for r in results if isinstance(r, Outcome) and r.replayed]
    busy = [r for r in results if isinstance(r, IdempotencyKeyInUse)]
    assert len(first) == 1, results
    assert len(first) + len(replayed) + len(busy) == THREADS, results
    assert all(r.answer == first[0].answer for r in replayed)
    return first[0].answer


def test_concurrent_keyed_saves_write_one_fact(wired: wiring.Services, agent: Principal) -> None:
    def save() -> Outcome:
        return wired.idempotency.run(
            f"{agent.id}#save-1",
            "same request",
            lambda: {
                "id": wired.memories.save(agent, SaveFactRequest(text="x y"), RunContext()).id
            },
            deadline_ms=30_000,
        )

    answer = check_exactly_one_ran(together(save))
    stored = wired.memories.list(agent, ListQuery.model_validate({})).memories
    assert [memory.id for memory in stored] == [answer["id"]]


def test_concurrent_keyed_day_lines_append_once(wired: wiring.Services, agent: Principal) -> None:
    wired.day_log.append_day_line(agent, "first line", RunContext())

    def append() -> Outcome:
        return wired.idempotency.run(
            f"{agent.id}#day-1",
            "same request",
            lambda: {
                "text": wired.day_log.append_day_line(
                    agent, "the retried line", RunContext()
                ).memory.text
            },
            deadline_ms=30_000,
        )

    check_exactly_one_ran(together(append))
    (row,) = wired.memories.list(agent, ListQuery.model_validate({"kind": "day"})).memories
    assert row.text.count("the retried line") == 1
    assert len(row.text.split("\n")) == 2
