"""Dashboard speed (docs/issues.md#issue-13, docs/reference.md#13-dashboard): DynamoDB requests and
server time per page view, for an agent with 5,000 memories in a workspace of 20 agents, on the
embedded DynamoDB (moto).

The memories are loaded with BatchWriteItem (items built by the storage's own
``memory_to_item``, so they carry every index value): 4,820 facts over 90 days
(10 % archived, 5 % expired) and 180 day rows, plus a recall log. Each page is
asked through the app (``chalice.test.Client``) with a signed-in person's cookie,
three times; the script prints the median seconds, the part of them spent outside
DynamoDB calls ("app s": parsing, rules, templates; for the overview, whose agents
are read on 8 threads, the calls' summed time is subtracted, so it reads low), the
DynamoDB requests by operation (botocore ``before-call`` / ``after-call`` hooks) and
the page's size.

moto answers a Query by reading the whole table, so its seconds are far above
DynamoDB's; the request counts are what carries over. Run with
``OPENBLAS_NUM_THREADS=1`` on a busy machine.

Usage: ``.venv/bin/python bench/dashboard_speed.py [--memories 5000] [--agents 20]``
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3

from chalicelib import wiring
from chalicelib.ids import FixedClock, IdFactory
from chalicelib.models.memory import Memory, MemoryKind, MemoryStatus
from chalicelib.models.principal import Principal, PrincipalKind
from chalicelib.models.recall import RecalledMemory, RecallLogEntry
from chalicelib.settings import Settings
from chalicelib.storage.dynamodb import to_attributes
from chalicelib.storage.items import memory_to_item
from chalicelib.storage.recalls import log_entry_to_item
from infra.local_dynamodb import embedded_for_bench, put_items
from infra.tables import create_table

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
TABLE = "dashboard-bench"
BUCKET = "dashboard-bench"


def memories_for(agent: Principal, count: int, rng: random.Random) -> list[Any]:
    """``count`` memories of one agent over 90 days: day rows first, then facts."""
    clock = FixedClock(NOW)
    ids = IdFactory(clock)
    items: list[Any] = []
    days = min(180, count // 20)
    for offset in range(days):
        created = NOW - timedelta(days=offset, hours=1)
        clock.set(created)
        text = "\n".join(f"{h:02d}:00 [BENCH-{offset}] step {h}" for h in range(rng.randint(3, 60)))
        items.append(
            Memory(
                id=ids.new("mem"),
                workspace_id=agent.workspace_id,
                agent_id=agent.id,
                kind=MemoryKind.DAY,
                date=created.date().isoformat(),
                text=text,
                expires_at=created + timedelta(days=90),
                created_at=created,
                updated_at=created,
                saved_by_agent_id=agent.id,
            )
        )
    words = ["deploy", "staging", "bastion", "vpn", "runner", "schema", "owner", "flag"]
    for number in range(count - days):
        created = NOW - timedelta(minutes=rng.randint(1, 90 * 24 * 60))
        clock.set(created)
        archived = rng.random() < 0.10
        expires = created + (timedelta(days=1) if rng.random() < 0.05 else timedelta(days=90))
        text = f"Fact {number}: the {rng.choice(words)} {rng.choice(words)} note {rng.random():.6f}"
        items.append(
            Memory(
                id=ids.new("mem"),
                workspace_id=agent.workspace_id,
                agent_id=agent.id,
                kind=MemoryKind.FACT,
                text=text,
                expires_at=expires,
                status=MemoryStatus.ARCHIVED if archived else MemoryStatus.ACTIVE,
                archive_reason="stale" if archived else None,
                archived_at=created + timedelta(days=1) if archived else None,
                created_at=created,
                updated_at=created,
                saved_by_agent_id=agent.id,
                task_key=f"BENCH-{number % 97}",
            )
        )
    return items


def load(client: Any, items: list[dict[str, Any]]) -> None:
    """BatchWriteItem, 25 a call, retrying unprocessed items."""
    put_items(client, TABLE, (to_attributes(item) for item in items))


def recall_log(agent: Principal, memories: list[Memory], count: int) -> list[dict[str, Any]]:
    """``count`` recall log entries over 30 days, 10 memories each."""
    clock = FixedClock(NOW)
    ids = IdFactory(clock)
    facts = [m for m in memories if m.kind is MemoryKind.FACT]
    entries = []
    for number in range(count):
        clock.set(NOW - timedelta(minutes=number * 43))
        entry = RecallLogEntry(
            id=ids.new("rcl"),
            workspace_id=agent.workspace_id,
            agent_id=agent.id,
            kind="start",
            session_id=f"s{number}",
            task_key="BENCH-1",
            query="deploy staging",
            at=clock.now(),
            memories=[RecalledMemory(memory_id=m.id, score=0.9) for m in facts[:10]],
        )
        entries.append(log_entry_to_item(entry))
    return entries


def main() -> None:
    """Load, then time each page."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--memories", type=int, default=5000)
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with embedded_for_bench() as endpoint:
        run(endpoint, args.memories, args.agents, args.repeat)


@dataclass
class Bench:
    """A loaded workspace, signed in: what ``time_pages`` needs.

    Attributes:
        services: the services on the embedded AWS (installed for the app).
        client: the DynamoDB client (its calls are counted).
        cookie: the signed-in person's session cookie.
        person: the person (a principal, for changes made through the services).
        agent: the agent with ``size`` memories.
        memories: that agent's memories.
    """

    services: wiring.Services
    client: Any
    cookie: str
    person: Principal
    agent: Principal
    memories: list[Memory]


def build(endpoint: str, size: int, agent_count: int, read_concurrency: int = 8) -> Bench:
    """Create the table and bucket, a workspace of ``agent_count`` agents (the first with
    ``size`` memories and a recall log, the others 100 each) and a signed-in person.
    ``read_concurrency`` 1 reads the overview's agents one at a time, so its app time
    (wall time less DynamoDB time) can be told apart."""
    client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    s3.create_bucket(Bucket=BUCKET)
    create_table(client, TABLE)
    clock = FixedClock(NOW)
    services = wiring.build_services(
        Settings(table_name=TABLE, bucket_name=BUCKET, read_concurrency=read_concurrency),
        clock=clock,
        client=client,
        s3=s3,
    )
    workspace = services.admin.create_workspace("bench")
    agents = [
        services.admin.create_agent(workspace.id, f"agent-{n:02d}") for n in range(agent_count)
    ]
    person = services.admin.create_person(workspace.id, "ops@example.com")
    big = Principal(kind=PrincipalKind.AGENT, id=agents[0].id, workspace_id=workspace.id)
    rng = random.Random(13)
    started = time.perf_counter()
    memories = memories_for(big, size, rng)
    load(client, [memory_to_item(m) for m in memories] + recall_log(big, memories, 300))
    for other in agents[1:]:
        small = Principal(kind=PrincipalKind.AGENT, id=other.id, workspace_id=workspace.id)
        load(client, [memory_to_item(m) for m in memories_for(small, 100, rng)])
    print(
        f"loaded {size} memories (+{100 * (agent_count - 1)} for the other agents) "
        f"in {time.perf_counter() - started:.1f} s"
    )
    wiring.install(services)
    issued = services.dashboard.sessions.sign_in_with_token(person.token)
    return Bench(
        services=services,
        client=client,
        cookie=f"pinework_session={issued.secret}",
        person=services.auth.authenticate(f"Bearer {person.token}"),
        agent=big,
        memories=memories,
    )


def agent_pages(bench: Bench) -> list[tuple[str, str]]:
    """Every dashboard page of the loaded workspace (label, path)."""
    memories = bench.memories
    fact = next(m for m in memories if m.kind is MemoryKind.FACT)
    second_page = sorted((m.id for m in memories), reverse=True)[49]
    agent = bench.agent.id
    return [
        ("agents overview", "/"),
        ("agent memories, page 1", f"/agents/{agent}"),
        ("agent memories, page 2", f"/agents/{agent}?after={second_page}"),
        ("agent memories, all statuses", f"/agents/{agent}?status=all"),
        ("agent memories, day rows", f"/agents/{agent}?kind=day&status=all"),
        ("search 'bastion vpn'", f"/agents/{agent}?status=all&q=bastion+vpn"),
        ("search, no match (bounded)", f"/agents/{agent}?status=all&q=nowhere"),
        ("expired only", f"/agents/{agent}?expired=yes"),
        ("memory detail", f"/memories/{fact.id}"),
        ("day logs", f"/agents/{agent}/days"),
        ("recall log", f"/agents/{agent}/recall"),
        ("reviews and routine", f"/agents/{agent}/reviews"),
        ("pictures, 30 days", f"/agents/{agent}/pictures"),
        ("pictures, 90 days", f"/agents/{agent}/pictures?days=90"),
    ]


def time_pages(bench: Bench, pages: list[tuple[str, str]], repeat: int) -> None:
    """Ask each page ``repeat`` times through the app; print one line per page."""
    from chalice.test import Client

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from app import app

    requests: Counter[str] = Counter()
    waited = [0.0]
    local = threading.local()

    def count(event_name: str, **_: Any) -> None:
        requests[event_name.rsplit(".", 1)[-1]] += 1
        local.began = time.perf_counter()

    def done(**_: Any) -> None:
        waited[0] += time.perf_counter() - local.began

    bench.client.meta.events.register("before-call.dynamodb", count)
    bench.client.meta.events.register("after-call.dynamodb", done)
    print(
        f"{'page':<32} {'median s':>8} {'app s':>6} {'DDB req':>7} {'KB':>6}  requests by operation"
    )
    with Client(app) as http:
        for label, path in pages:
            seconds, own = [], []
            calls: dict[str, int] = {}
            size_kb = 0.0
            for _ in range(repeat):
                requests.clear()
                waited[0] = 0.0
                begun = time.perf_counter()
                response = http.http.get(path, headers={"Cookie": bench.cookie})
                seconds.append(time.perf_counter() - begun)
                own.append(max(0.0, seconds[-1] - waited[0]))
                assert response.status_code == 200, (path, response.body[:300])
                calls = dict(requests)
                size_kb = len(response.body) / 1024
            print(
                f"{label:<32} {statistics.median(seconds):8.3f} {statistics.median(own):6.3f} "
                f"{sum(calls.values()):>7} "
                f"{size_kb:6.1f}  {calls}",
                flush=True,
            )


def run(endpoint: str, size: int, agent_count: int, repeat: int) -> None:
    """Build the workspace, sign in, and print one line per page."""
    bench = build(endpoint, size, agent_count)
    try:
        time_pages(bench, agent_pages(bench), repeat)
    finally:
        wiring.install(None)


if __name__ == "__main__":
    main()
