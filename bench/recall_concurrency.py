"""Concurrent recalls of one agent (docs/issues.md#issue-23-item-2,
docs/DECISIONS.md#recall-counters-off-the-transaction-issue-23-item-2): how many fail,
how many transactions DynamoDB would cancel for conflicting with one another, and
whether every recall was counted exactly once on every memory it returned.

Each round seeds a fresh agent of one table on the embedded DynamoDB (moto) with
``--facts`` facts, ``--returned`` of which match the query (a keyword scorer: the
figures are about writes, not about scoring), then fires ``--recalls`` on-demand
recalls of it at once (``RecallService.recall``, threads released by one barrier).
The embedded server serves one request at a time, so on its own it never conflicts
(the "as served" row); the other rows apply DynamoDB's transaction-conflict rule to the
client (``infra/transaction_conflicts.py``), a transaction being in progress on its
items for ``--hold-ms`` after it is sent. Printed per row, summed over ``--rounds``:
recalls that succeeded and that failed (409 ``conflict`` and others), transaction
attempts cancelled by a conflict (each sent again by ``DynamoDBTable.transact``, up to
3 attempts), single-item writes refused for meeting a transaction, recall log entries,
and whether each returned memory's ``recallCount`` grew by exactly the number of
recalls that returned it. Then, for one recall on its own, the write requests by
operation and the write units DynamoDB would charge (``infra/capacity.py``).

Usage: ``.venv/bin/python bench/recall_concurrency.py [--recalls 20] [--rounds 3]
[--facts 200] [--returned 20] [--hold-ms 10 25 50]``
"""

from __future__ import annotations

import argparse
import threading
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
from botocore.config import Config

from chalicelib import wiring
from chalicelib.ids import IdFactory, SystemClock
from chalicelib.models.memory import Memory, MemoryKind
from chalicelib.models.principal import Principal, PrincipalKind
from chalicelib.models.requests import RecallRequest
from chalicelib.services.recall.relevance import Candidate
from chalicelib.services.recall.service import RecallResult
from chalicelib.services.run_context import RunContext
from chalicelib.settings import Settings
from chalicelib.storage.dynamodb import to_attributes
from chalicelib.storage.items import memory_to_item
from infra.capacity import CapacityMeter
from infra.local_dynamodb import embedded_for_bench, put_items
from infra.tables import create_table
from infra.transaction_conflicts import TransactionConflicts

TABLE = "recall-concurrency"
KEYWORD = "deploy"
WRITES = ("PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems")


class KeywordScorer:
    """0.9 for a fact holding the query's first word, 0.1 (under the cut) otherwise."""

    def score(self, query: str, candidates: Sequence[Candidate], now: datetime) -> list[float]:
        """Score each candidate."""
        word = query.split()[0].lower()
        return [0.9 if word in c.text.lower() else 0.1 for c in candidates]


@dataclass
class Row:
    """One setting's figures, summed over its rounds."""

    label: str
    recalls: int = 0
    succeeded: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    cancelled: int = 0
    refused: int = 0
    logged: int = 0
    counted_once: bool = True
    off_by: Counter[str] = field(default_factory=Counter)


class ConflictTally:
    """Counts the conflict answers a client gets (from the server or the conflict rule)."""

    def __init__(self, client: Any) -> None:
        self.cancelled = 0
        self.refused = 0
        self._lock = threading.Lock()
        client.meta.events.register("after-call.dynamodb", self._after_call)

    def _after_call(self, parsed: dict[str, Any], **_: Any) -> None:
        code = parsed.get("Error", {}).get("Code")
        reasons = [r.get("Code") for r in parsed.get("CancellationReasons") or []]
        with self._lock:
            if code == "TransactionCanceledException" and "TransactionConflict" in reasons:
                self.cancelled += 1
            elif code == "TransactionConflictException":
                self.refused += 1


def client_of(endpoint: str) -> Any:
    """A DynamoDB client of the embedded server with room for every thread."""
    return boto3.client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name="us-east-1",
        config=Config(max_pool_connections=64, retries={"mode": "adaptive", "max_attempts": 5}),
    )


def seed_agent(services: wiring.Services, seed: Any, facts: int, returned: int) -> Principal:
    """A fresh agent holding ``facts`` facts, ``returned`` of them about the keyword."""
    workspace = services.admin.create_workspace("bench")
    agent = services.admin.create_agent(workspace.id, "bench")
    ids = IdFactory(SystemClock())
    now = datetime.now(UTC)
    items = []
    for number in range(facts):
        topic = KEYWORD if number < returned else "lunch"
        memory = Memory(
            id=ids.new("mem"),
            workspace_id=workspace.id,
            agent_id=agent.id,
            kind=MemoryKind.FACT,
            text=f"The {topic} step {number} needs host {number}",
            expires_at=now + timedelta(days=90),
            created_at=now,
            updated_at=now,
        )
        items.append(to_attributes(memory_to_item(memory)))
    put_items(seed, TABLE, items)
    return Principal(kind=PrincipalKind.AGENT, id=agent.id, workspace_id=workspace.id)


def recall_once(services: wiring.Services, agent: Principal) -> RecallResult:
    """One on-demand recall of the keyword."""
    return services.recall.recall(agent, RecallRequest(query=f"{KEYWORD} hosts"), RunContext())


def burst(services: wiring.Services, agent: Principal, recalls: int) -> list[Any]:
    """``recalls`` recalls of ``agent`` released together; results or exceptions."""
    barrier = threading.Barrier(recalls)

    def one(_: int) -> Any:
        barrier.wait()
        try:
            return recall_once(services, agent)
        except Exception as error:
            return error

    with ThreadPoolExecutor(max_workers=recalls) as pool:
        return list(pool.map(one, range(recalls)))


def check(row: Row, services: wiring.Services, agent: Principal, results: list[Any]) -> None:
    """Add one burst's outcome to ``row``."""
    done = [r for r in results if isinstance(r, RecallResult)]
    row.recalls += len(results)
    row.succeeded += len(done)
    row.errors.update(type(r).__name__ for r in results if not isinstance(r, RecallResult))
    row.logged += len(services.recall.log(agent, None, 100, None)[0])
    returned = Counter(item.memory.id for r in done for item in r.memories)
    for memory_id, times in returned.items():
        stored = services.memories.get(agent, memory_id).recall_count
        if stored != times:
            row.counted_once = False
            row.off_by["over" if stored > times else "under"] += 1


def run_row(endpoint: str, seed: Any, args: argparse.Namespace, hold_ms: float | None) -> Row:
    """Every round of one setting (``hold_ms`` None: the embedded server as served)."""
    client = client_of(endpoint)
    services = wiring.build_services(
        Settings(table_name=TABLE), client=client, scorer=KeywordScorer()
    )
    label = "as served" if hold_ms is None else f"rule, {hold_ms:g} ms"
    row = Row(label)
    tally = ConflictTally(client)
    for _ in range(args.rounds):
        agent = seed_agent(services, seed, args.facts, args.returned)
        rule = None if hold_ms is None else TransactionConflicts(client, hold_ms / 1000)
        results = burst(services, agent, args.recalls)
        if rule is not None:
            rule.close()
        check(row, services, agent, results)
    row.cancelled, row.refused = tally.cancelled, tally.refused
    return row


def units_of_one_recall(endpoint: str, seed: Any, args: argparse.Namespace) -> str:
    """Write requests and write units of one recall on its own."""
    client = client_of(endpoint)
    services = wiring.build_services(
        Settings(table_name=TABLE), client=client, scorer=KeywordScorer()
    )
    agent = seed_agent(services, seed, args.facts, args.returned)
    recall_once(services, agent)  # the counter pages exist from now on, as for a used agent
    meter = CapacityMeter(client, reader=seed)
    with meter.measure() as tally:
        result = recall_once(services, agent)
    meter.close()
    writes = {name: n for name, n in sorted(tally.requests.items()) if name in WRITES}
    return (
        f"one recall returning {len(result.memories)} memories: write requests {writes}, "
        f"{tally.write_units:g} write units"
    )


def main() -> None:
    """Run and print."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--recalls", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--facts", type=int, default=200)
    parser.add_argument("--returned", type=int, default=20)
    parser.add_argument("--hold-ms", type=float, nargs="*", default=[10.0, 25.0, 50.0])
    args = parser.parse_args()
    with embedded_for_bench() as endpoint:
        seed = client_of(endpoint)
        create_table(seed, TABLE)
        print(
            f"{args.recalls} concurrent recalls of one agent x {args.rounds} rounds "
            f"({args.facts} facts, {args.returned} returned)"
        )
        print(
            " conflict model   recalls  ok  failed          conflicts retried  "
            "single-write conflicts  log entries  counted once"
        )
        for hold in [None, *args.hold_ms]:
            row = run_row(endpoint, seed, args, hold)
            failed = sum(row.errors.values())
            kinds = ",".join(f"{n} {name}" for name, n in sorted(row.errors.items())) or "-"
            once = "yes" if row.counted_once else f"no {dict(row.off_by)}"
            print(
                f" {row.label:<15} {row.recalls:>8} {row.succeeded:>3}  {failed:>3} {kinds:<12}"
                f" {row.cancelled:>17}  {row.refused:>22}  {row.logged:>11}  {once}",
                flush=True,
            )
        print(units_of_one_recall(endpoint, seed, args))


if __name__ == "__main__":
    main()
