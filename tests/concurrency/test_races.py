"""Atomic rules under real concurrency (docs/issues.md#issue-2): threads against the embedded
DynamoDB server, which handles each request atomically as DynamoDB does."""

from __future__ import annotations

import pytest

from chalicelib import wiring
from chalicelib.errors import MemoryDayExists, MemoryDayFull, MemorySupersedeArchived
from chalicelib.models.principal import Principal
from chalicelib.models.requests import ArchiveRequest, ListQuery, SaveFactRequest
from chalicelib.services.run_context import RunContext
from infra.tables import create_table
from tests.helpers import embedded_client, run_together


def test_two_concurrent_supersedes_one_wins(wired: wiring.Services, agent: Principal) -> None:
    for _ in range(5):
        old = wired.memories.save(agent, SaveFactRequest(text="v1"), RunContext())
        results = run_together(
            2,
            lambda n, old_id=old.id: wired.memories.save(
                agent, SaveFactRequest(text=f"v2-{n}", supersedes=old_id), RunContext()
            ),
        )
        winners = [r for r in results if not isinstance(r, Exception)]
        losers = [r for r in results if isinstance(r, Exception)]
        assert len(winners) == 1, results
        assert len(losers) == 1 and isinstance(losers[0], MemorySupersedeArchived)
        stored = wired.memories.get(agent, old.id)
        assert stored.superseded_by == winners[0].id
    live = wired.memories.list(agent, ListQuery.model_validate({"limit": "500"})).memories
    texts = sorted(m.text for m in live)
    assert len(texts) == 5 and all(t.startswith("v2-") for t in texts)  # no orphan


def test_concurrent_first_lines_make_one_row_holding_both(
    wired: wiring.Services, agent: Principal
) -> None:
    results = run_together(
        2, lambda n: wired.day_log.append_day_line(agent, f"line {n}", RunContext())
    )
    assert not any(isinstance(r, Exception) for r in results), results
    rows = {r.memory.id for r in results if not isinstance(r, Exception)}
    assert len(rows) == 1
    created = [r.created for r in results if not isinstance(r, Exception)]
    assert sorted(created) == [False, True]
    row = wired.memories.get(agent, rows.pop())
    assert sorted(line[6:] for line in row.text.split("\n")) == ["line 0", "line 1"]


def test_fifty_concurrent_appends_near_the_cap(wired: wiring.Services, agent: Principal) -> None:
    # 23 stored lines of 300 + 22 newlines = 6,922; a 71-char line adds 78 -> 7,000.
    # Then 50 appends of 106 stored characters each race for the last 1,000: 9 fit.
    for _ in range(23):
        wired.day_log.append_day_line(agent, "f" * 294, RunContext())
    seed = wired.day_log.append_day_line(agent, "g" * 71, RunContext())
    start = len(seed.memory.text)
    assert start == 7000
    results = run_together(
        50, lambda n: wired.day_log.append_day_line(agent, f"{n:03d}" + "h" * 96, RunContext())
    )
    accepted = {f"{n:03d}" for n, r in enumerate(results) if not isinstance(r, Exception)}
    rejected = [r for r in results if isinstance(r, Exception)]
    assert all(isinstance(r, MemoryDayFull) for r in rejected), rejected
    row = wired.memories.get(agent, seed.memory.id)
    assert len(row.text) <= 8000
    stored = {line[6:9] for line in row.text.split("\n")[24:]}
    assert stored == accepted
    assert len(accepted) == 9
    assert rejected


def test_concurrent_unarchives_of_two_rows_of_one_date(
    wired: wiring.Services, agent: Principal
) -> None:
    first = wired.day_log.append_day_line(agent, "one", RunContext()).memory
    wired.memories.archive(agent, first.id, ArchiveRequest(reason="noise"))
    second = wired.day_log.append_day_line(agent, "two", RunContext()).memory
    wired.memories.archive(agent, second.id, ArchiveRequest(reason="noise"))
    results = run_together(2, lambda n: wired.memories.unarchive(agent, (first.id, second.id)[n]))
    ok = [r for r in results if not isinstance(r, Exception)]
    failed = [r for r in results if isinstance(r, Exception)]
    assert len(ok) == 1 and len(failed) == 1 and isinstance(failed[0], MemoryDayExists)


def test_cancelled_transaction_on_the_embedded_server_writes_nothing(endpoint: str) -> None:
    client = embedded_client(endpoint)
    create_table(client, "tx-check")
    client.put_item(TableName="tx-check", Item={"pk": {"S": "b"}, "sk": {"S": "b"}})
    with pytest.raises(client.exceptions.TransactionCanceledException) as cancelled:
        client.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": "tx-check", "Item": {"pk": {"S": "a"}, "sk": {"S": "a"}}}},
                {
                    "Put": {
                        "TableName": "tx-check",
                        "Item": {"pk": {"S": "b"}, "sk": {"S": "b"}},
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
            ]
        )
    reasons = [r["Code"] for r in cancelled.value.response["CancellationReasons"]]
    assert reasons == ["None", "ConditionalCheckFailed"]
    assert "Item" not in client.get_item(
        TableName="tx-check", Key={"pk": {"S": "a"}, "sk": {"S": "a"}}
    )
