"""Concurrent recalls of one agent (docs/issues.md#issue-23-item-2): threads against the
embedded DynamoDB server, with DynamoDB's transaction-conflict rule applied to their
client (``infra/transaction_conflicts.py``: the server alone serves one request at a
time and never conflicts). No recall fails and each is counted exactly once."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from chalicelib import wiring
from chalicelib.models.principal import Principal
from chalicelib.models.requests import RecallRequest, SaveFactRequest
from chalicelib.services.recall.relevance import Candidate
from chalicelib.services.recall.service import RecallResult
from chalicelib.services.run_context import RunContext
from chalicelib.settings import Settings
from infra.transaction_conflicts import TransactionConflicts
from tests.helpers import run_together

RECALLS = 20


class KeywordScorer:
    """Scores 0.9 for texts containing the query's first word, 0.1 otherwise (the
    embedding model is not what this test is about)."""

    def score(self, query: str, candidates: Sequence[Candidate], now: datetime) -> list[float]:
        word = query.split()[0].lower()
        return [0.9 if word in c.text.lower() else 0.1 for c in candidates]


def keyword_services(client: Any, wired: wiring.Services) -> wiring.Services:
    """Services on the embedded server's client, scoring by keyword."""
    return wiring.build_services(
        Settings(table_name=wired.settings.table_name), client=client, scorer=KeywordScorer()
    )


def recall_together(
    services: wiring.Services, client: Any, agent: Principal
) -> tuple[list[RecallResult | Exception], TransactionConflicts]:
    """``RECALLS`` on-demand recalls of ``agent`` released at once, under DynamoDB's
    conflict rule; their results and the conflict tally."""
    conflicts = TransactionConflicts(client, hold_seconds=0.05)
    barrier = threading.Barrier(RECALLS)

    def recall(_: int) -> RecallResult:
        barrier.wait()
        return services.recall.recall(agent, RecallRequest(query="deploy hosts"), RunContext())

    results = run_together(RECALLS, recall)
    conflicts.close()
    return results, conflicts


def test_twenty_concurrent_recalls_of_one_agent_all_succeed_and_count_once(
    client: Any, wired: wiring.Services, agent: Principal
) -> None:
    services = keyword_services(client, wired)
    saved = [
        services.memories.save(
            agent, SaveFactRequest(text=f"Deploy step {n} needs host {n}"), RunContext()
        )
        for n in range(40)
    ]
    services.memories.save(agent, SaveFactRequest(text="Lunch is at noon"), RunContext())
    # 41 loose index entries: the first read packs them (docs/issues.md#issue-23-item-1), so
    # what follows measures the recalls' own writes (compactions are the next test's).
    assert services.recall._index.entries(agent.id, services.clock.now()) is not None
    results, conflicts = recall_together(services, client, agent)
    failed = [r for r in results if not isinstance(r, RecallResult)]
    assert failed == []
    recalled = [r for r in results if isinstance(r, RecallResult)]
    returned = Counter(item.memory.id for r in recalled for item in r.memories)
    assert set(returned) == {m.id for m in saved}  # every deploy fact, the lunch one never
    log, _ = services.recall.log(agent, None, 100, None)
    assert sorted(e.id for e in log) == sorted(r.recall_id for r in recalled if r.recall_id)
    assert len(log) == RECALLS
    stored = {m.id: m.recall_count for m in (services.memories.get(agent, i) for i in returned)}
    assert stored == dict(returned)  # each memory counted once per recall that returned it
    assert set(returned.values()) == {RECALLS}
    assert (conflicts.cancelled, conflicts.refused) == (0, 0)
    assert conflicts.let_through >= RECALLS


def test_concurrent_recalls_that_all_find_loose_entries_still_all_succeed(
    client: Any, wired: wiring.Services, agent: Principal
) -> None:
    """Every recall finds more than 40 loose entries and tries to pack them: the
    compactions conflict with one another (one attempt each, no retry), the losers leave
    the packing to a later read, and no recall fails or reads a fact wrongly."""
    services = keyword_services(client, wired)
    saved = [
        services.memories.save(
            agent, SaveFactRequest(text=f"Deploy step {n} needs host {n}"), RunContext()
        )
        for n in range(45)
    ]
    results, _ = recall_together(services, client, agent)
    assert [r for r in results if not isinstance(r, RecallResult)] == []
    for result in results:
        assert isinstance(result, RecallResult)
        # at most 40 scored facts (docs/reference.md#scoring), each one of those saved
        recalled = {item.memory.id for item in result.memories}
        assert len(recalled) == 40 and recalled <= {m.id for m in saved}
    entries = services.recall._index.entries(agent.id, services.clock.now())
    assert entries is not None and {e.memory_id for e in entries} == {m.id for m in saved}
