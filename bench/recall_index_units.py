"""Recall read units at scale (docs/issues.md#issue-23-item-2): DynamoDB's read and write units per
on-demand recall (``infra/capacity.py``'s rules: item sizes, 4 KB rounding, eventual
reads at half), the bytes read and the wall time, for one agent holding 1,000, 10,000
and 100,000 live facts, through the recall index and, for comparison, as every recall
read before it: every fact item from the first release's ``byAgentStatus`` index (every
attribute projected), which the bench's table keeps for the purpose
(``infra.tables.ADDED_LEVEL``) and the seeded facts carry, so it is measured, not
modelled.

Facts are seeded with BatchWriteItem through a second client the meter does not watch,
as the service stores them (``infra.local_dynamodb.memory_items``: the memory item and
its index packed in segments). Texts are distinct (``capacity_units.fact_text``); the first 2,000
are embedded by the process's MiniLM and their embeddings reused in turn for the rest
(sizes and scoring work as for real ones; only the 2,000 are semantically right). Each
figure is the mean of ``--calls`` recalls of different questions (the time: the
median), on the embedded DynamoDB that ``make serve`` runs (moto behind a local endpoint).

Usage: ``.venv/bin/python bench/recall_index_units.py [--sizes 1000 10000 100000]
[--calls 3] [--before-up-to 10000]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import _offline

REPO_ROOT = _offline.REPO_ROOT

import boto3  # noqa: E402

from bench.capacity_units import fact_text, question  # noqa: E402
from chalicelib import wiring  # noqa: E402
from chalicelib.ids import IdFactory, SystemClock  # noqa: E402
from chalicelib.models.memory import Memory, MemoryKind  # noqa: E402
from chalicelib.models.principal import Principal, PrincipalKind  # noqa: E402
from chalicelib.models.requests import RecallRequest  # noqa: E402
from chalicelib.services.run_context import RunContext  # noqa: E402
from chalicelib.settings import Settings  # noqa: E402
from chalicelib.storage.dynamodb import DynamoDBTable, to_attributes  # noqa: E402
from chalicelib.storage.items import memory_from_item  # noqa: E402
from chalicelib.storage.keys import recall_index_marker_key  # noqa: E402
from chalicelib.storage.memories import DynamoDBMemoryRepository  # noqa: E402
from infra.capacity import CapacityMeter, item_size  # noqa: E402
from infra.local_dynamodb import embedded_for_bench, memory_items, put_items  # noqa: E402
from infra.tables import ADDED_LEVEL, table_definition  # noqa: E402

EMBEDDED = 2000
BUDGET_MS = 20_000
"""The scorer's time budget here (the service's default is 2 s): the bench measures what
each path reads and how long it takes, and a shared 2-core machine can push the scorer
past 2 s at 100,000 facts, which would measure the newest-facts fallback instead."""
OLD_STATUS_INDEX = ("byAgentStatus", "gsiAgentStatus")
"""The first release's status index and its key (docs/issues.md#issue-23-item-2 retired it)."""
PRICE_PER_MILLION_READ_UNITS = 0.125
"""On-demand read request units, USD per million (us-east-1, docs/operations.md#cost)."""
PRICE_PER_MILLION_GETS = 0.4
"""S3 Standard GET requests, USD per million (us-east-1): a volume read."""
BUCKET = "recall-units"


@dataclass
class Figures:
    """Mean figures per recall."""

    read_units: float
    write_units: float
    requests: float
    seconds: float
    kept: float
    object_reads: float


def seed(client: Any, table: str, agent: Principal, count: int) -> tuple[float, float]:
    """Seed ``count`` live facts; the mean bytes a fact takes in its memory item and in
    the index's segments (marker included)."""
    ids = IdFactory(SystemClock())
    now = datetime.now(UTC)
    embedder = wiring.default_embedder()
    first = [fact_text(number) for number in range(min(count, EMBEDDED))]
    vectors = [v for start in range(0, len(first), 64) for v in embedder.embed(first[start:][:64])]
    memory_bytes = index_bytes = 0
    for start in range(0, count, 5000):
        facts = [
            Memory(
                embedding=vectors[number % len(vectors)],
                id=ids.new("mem"),
                workspace_id=agent.workspace_id,
                agent_id=agent.id,
                kind=MemoryKind.FACT,
                text=fact_text(number),
                expires_at=now + timedelta(days=90),
                created_at=now,
                updated_at=now,
            )
            for number in range(start, min(start + 5000, count))
        ]
        stored = memory_items(facts)
        memory_bytes += sum(item_size(item) for item in stored[: len(facts)])
        index_bytes += sum(item_size(item) for item in stored[len(facts) :])
        for item in stored[: len(facts)]:
            # The key of the first release's index that the "before" path reads.
            item[OLD_STATUS_INDEX[1]] = {"S": f"{agent.id}#active"}
        put_items(client, table, stored)
    return memory_bytes / count, index_bytes / count


class BeforeMemories(DynamoDBMemoryRepository):
    """The memory storage as the release before the recall index read an agent's live
    facts: one Query of ``byAgentStatus``, whole items, every page."""

    def live_facts(self, agent_id: str, *, recall_counts: bool = True) -> list[Memory]:
        """Every active fact of the agent, newest first, from the old status index."""
        items = self._table.query(
            IndexName=OLD_STATUS_INDEX[0],
            KeyConditionExpression="#partition = :partition",
            FilterExpression="#kind = :fact",
            ExpressionAttributeNames={"#partition": OLD_STATUS_INDEX[1], "#kind": "kind"},
            ExpressionAttributeValues=to_attributes(
                {":partition": f"{agent_id}#active", ":fact": MemoryKind.FACT.value}
            ),
            ScanIndexForward=False,
        )
        facts = [memory_from_item(item) for item in items]
        return self.with_recall_counts(facts) if recall_counts else facts


def measure(
    services: wiring.Services,
    meter: CapacityMeter,
    agent: Principal,
    calls: int,
    gets: list[int],
) -> Figures:
    """Mean units, requests, wall time, memories kept and S3 GETs (counted in ``gets``)
    of ``calls`` recalls."""
    read = write = requests = kept = 0.0
    times = []
    before = gets[0]
    for number in range(calls):
        request = RecallRequest(query=question(number * 7919 % EMBEDDED))
        started = time.perf_counter()
        with meter.measure() as tally:
            result = services.recall.recall(agent, request, RunContext())
        times.append(time.perf_counter() - started)
        read += tally.read_units
        write += tally.write_units
        requests += sum(tally.requests.values())
        kept += len(result.memories)
    return Figures(
        read / calls,
        write / calls,
        requests / calls,
        statistics.median(times),
        kept / calls,
        (gets[0] - before) / calls,
    )


def settle(
    services: wiring.Services, meter: CapacityMeter, agent: Principal, gets: list[int]
) -> str:
    """Read the index until its compactions are done (the seeded segments merged into
    volumes, as the reads of a living store leave them); what that cost, once."""
    started = time.perf_counter()
    reads = 0
    before = gets[0]
    with meter.measure() as tally:
        while reads < 40:
            reads += 1
            compactions = tally.requests.get("TransactWriteItems", 0)
            services.recall._index.entries(agent.id, datetime.now(UTC))
            if tally.requests.get("TransactWriteItems", 0) == compactions:
                break
    return (
        f"settled in {reads} reads, {time.perf_counter() - started:.1f} s: "
        f"{tally.read_units:.0f} RRU, {tally.write_units:.0f} WRU, "
        f"{gets[0] - before} S3 requests"
    )


def run_size(size: int, calls: int, before: bool, aws: tuple[Any, Any, Any]) -> None:
    """Seed one table with ``size`` facts; print the index's figures and, with ``before``,
    the figures of reading every fact."""
    client, seeder, s3 = aws
    table = f"recall-units-{size}"
    seeder.create_table(**table_definition(table, ADDED_LEVEL))
    services = wiring.build_services(
        Settings(
            table_name=table,
            bucket_name=BUCKET,
            read_concurrency=1,
            recall_time_budget_ms=BUDGET_MS,
        ),
        client=client,
        s3=s3,
    )
    workspace = services.admin.create_workspace("bench")
    issued = services.admin.create_agent(workspace.id, "bench")
    agent = Principal(kind=PrincipalKind.AGENT, id=issued.id, workspace_id=workspace.id)
    started = time.perf_counter()
    memory_size, entry_size = seed(seeder, table, agent, size)
    print(
        f"\n{size:,} live facts (mean memory item {memory_size:.0f} B, index "
        f"{entry_size:.0f} B a fact; seeded in {time.perf_counter() - started:.0f} s); per recall:",
        flush=True,
    )
    meter = CapacityMeter(client, reader=seeder)
    gets = [0]
    s3.meta.events.register("before-call.s3", lambda **_: gets.__setitem__(0, gets[0] + 1))
    print(settle(services, meter, agent, gets), flush=True)
    rows = [("through the recall index", measure(services, meter, agent, calls, gets))]
    if before:
        # Without the marker the agent's recalls read every fact, as before the index,
        # and from the index they read then.
        seeder.delete_item(TableName=table, Key=to_attributes(recall_index_marker_key(agent.id)))
        services.recall._memories = BeforeMemories(DynamoDBTable(client, table))
        rows.append(("reading every fact (before)", measure(services, meter, agent, calls, gets)))
    meter.close()
    print(
        f"{'path':<30} {'RRU':>9} {'WRU':>6} {'req':>5} {'S3 GET':>6} {'$/M recalls':>11} "
        f"{'s':>7} {'kept':>5}"
    )
    for name, figures in rows:
        dollars = (
            figures.read_units * PRICE_PER_MILLION_READ_UNITS
            + figures.object_reads * PRICE_PER_MILLION_GETS
        )
        print(
            f"{name:<30} {figures.read_units:>9.1f} {figures.write_units:>6.1f} "
            f"{figures.requests:>5.0f} {figures.object_reads:>6.1f} {dollars:>11.2f} "
            f"{figures.seconds:>7.2f} {figures.kept:>5.1f}",
            flush=True,
        )
    if before:
        ratio = rows[0][1].read_units / rows[1][1].read_units
        print(f"index / before: {ratio:.3f} of the read units", flush=True)


def main() -> int:
    """Measure and print."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument(
        "--before-up-to", type=int, default=10000, help="measure the old path up to this size"
    )
    args = parser.parse_args()
    with embedded_for_bench() as endpoint:
        client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
        seeder = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
        s3.create_bucket(Bucket=BUCKET)
        for size in args.sizes:
            run_size(size, args.calls, size <= args.before_up_to, (client, seeder, s3))
    return 0


if __name__ == "__main__":
    sys.exit(main())
