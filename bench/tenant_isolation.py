"""An export's and an erasure's cost follow the target, not the table
(docs/reference.md#erasing-an-agent-a-person-or-a-workspace,
docs/issues.md#issue-41-item-1): time, read units and requests of one workspace's
export and of its erasure, alone in the table and beside ten times as much data of
other workspaces.

Each case is a fresh in-process moto (DynamoDB, versioned S3, SQS), or with ``--server``
a fresh in-memory embedded server (``make serve``'s DynamoDB: base-table and index
Queries read only their partition, ``infra/moto_transactions.py``), and the services as
``pinework admin export|erase`` runs them. The workspace has two agents and a person;
its agents hold ``--facts`` facts each (with their audit records), a day row and a few
recall log entries; each of the ``--others`` other workspaces holds as much. Items are
seeded with BatchWriteItem through a client the meter does not watch; the units are
what DynamoDB would charge (``infra/capacity.py``'s rules). The target for both
figures: the "beside" run at most 1.2 times the "alone" run. Times on a shared machine
are noisy; the read units are exact.

Usage: ``.venv/bin/python bench/tenant_isolation.py [--facts 200] [--others 10] [--server]``
"""

from __future__ import annotations

import argparse
import contextlib
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import _offline  # noqa: F401  (first: the environment moto and numpy read)
import boto3
from moto import mock_aws

from bench.capacity_units import fact_text
from chalicelib import wiring
from chalicelib.ids import IdFactory, SystemClock
from chalicelib.models.memory import Memory, MemoryKind
from chalicelib.settings import REVIEW_QUEUE_NAME, Settings
from infra.capacity import CapacityMeter
from infra.local_dynamodb import embedded_for_bench, memory_items, put_items
from infra.tables import create_table

TABLE = "pinework-isolation"
BUCKET = "pinework-isolation"


@dataclass
class Figures:
    """One measured call: seconds, read units, write units, requests."""

    seconds: float
    read_units: float
    write_units: float
    requests: int


def seed_workspace(services: wiring.Services, seed: Any, facts: int, number: int) -> str:
    """A workspace of two agents (``facts`` facts and a day row each) and a person,
    with each agent's recall log; returns its id."""
    workspace = services.admin.create_workspace(f"bench {number}")
    services.admin.create_person(workspace.id, f"person{number}@example.com")
    ids = IdFactory(SystemClock())
    now = datetime.now(UTC)
    memories: list[Memory] = []
    for agent_number in range(2):
        agent = services.admin.create_agent(workspace.id, f"agent {agent_number}")
        for fact in range(facts):
            memories.append(
                Memory(
                    id=ids.new("mem"),
                    workspace_id=workspace.id,
                    agent_id=agent.id,
                    kind=MemoryKind.FACT,
                    text=fact_text(number * 100_000 + agent_number * 10_000 + fact),
                    expires_at=now + timedelta(days=90),
                    created_at=now,
                    updated_at=now,
                )
            )
    put_items(seed, TABLE, memory_items(memories))
    return workspace.id


def measure(meter: CapacityMeter, action: Any) -> Figures:
    """Run ``action`` once under the meter."""
    started = time.perf_counter()
    with meter.measure() as tally:
        action()
    return Figures(
        time.perf_counter() - started,
        tally.read_units,
        tally.write_units,
        sum(tally.requests.values()),
    )


@contextlib.contextmanager
def aws(server: bool) -> Iterator[Callable[[str], Any]]:
    """A maker of clients (by service name) of a fresh in-process moto, or of a fresh
    in-memory embedded server (``server``; moto's state reset first)."""
    if not server:
        with mock_aws():
            yield lambda service: boto3.client(service, region_name="us-east-1")
        return
    with embedded_for_bench() as endpoint:
        # The server's moto state is the process's: start each case from nothing.
        urllib.request.urlopen(urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST"))
        yield lambda service: boto3.client(service, endpoint_url=endpoint, region_name="us-east-1")


def one_case(facts: int, others: int, server: bool) -> tuple[Figures, Figures, int]:
    """The export and the erasure of one workspace beside ``others`` workspaces of the
    same size; also the table's item count before the erasure."""
    with aws(server) as make:
        client = make("dynamodb")
        seed = make("dynamodb")
        s3 = make("s3")
        sqs = make("sqs")
        create_table(seed, TABLE)
        s3.create_bucket(Bucket=BUCKET)
        s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
        sqs.create_queue(QueueName=REVIEW_QUEUE_NAME)
        services = wiring.build_services(
            Settings(table_name=TABLE, bucket_name=BUCKET), client=client, s3=s3, sqs=sqs
        )
        target = seed_workspace(services, seed, facts, 0)
        for number in range(1, others + 1):
            seed_workspace(services, seed, facts, number)
        items = sum(page["Count"] for page in seed.get_paginator("scan").paginate(TableName=TABLE))
        meter = CapacityMeter(client, reader=seed)
        lines: list[str] = []
        export = measure(meter, lambda: services.admin.export("workspace", target, lines.append))
        erasure = measure(meter, lambda: services.admin.erase("workspace", target, by="bench"))
        meter.close()
        return export, erasure, items


def main() -> None:
    """Print each case's figures and the ratios."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--facts", type=int, default=200, help="facts per agent")
    parser.add_argument("--others", type=int, default=10, help="other workspaces")
    parser.add_argument("--server", action="store_true", help="an embedded server's DynamoDB")
    args = parser.parse_args()
    alone = one_case(args.facts, 0, args.server)
    beside = one_case(args.facts, args.others, args.server)
    print(f"{'case':<8} {'items':>7} {'job':<8} {'seconds':>8} {'read units':>11} {'requests':>9}")
    for name, (export, erasure, items) in (("alone", alone), ("beside", beside)):
        for job, figures in (("export", export), ("erasure", erasure)):
            print(
                f"{name:<8} {items:>7} {job:<8} {figures.seconds:>8.2f} "
                f"{figures.read_units:>11.1f} {figures.requests:>9}"
            )
    for index, job in enumerate(("export", "erasure")):
        first, second = alone[index], beside[index]  # type: ignore[index]
        print(
            f"{job}: beside/alone time {second.seconds / first.seconds:.2f}x, "
            f"read units {second.read_units / first.read_units:.2f}x "
            f"(table {beside[2] / alone[2]:.1f}x the items)"
        )


if __name__ == "__main__":
    main()
