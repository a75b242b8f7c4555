"""Fan-out speed (docs/operations.md#deploy, docs/reference.md#9-review): how long the
04:00 UTC fan-out takes per agent with an active routine, on the embedded DynamoDB and
SQS (moto), so its Lambda timeout can be sized to a number of agents.

For each size N it writes N active routines straight into a fresh table
(BatchWriteItem of ``routine_to_item``, so the setup does not count), runs
``ReviewService.fan_out`` once (what ``app.review_fanout`` calls: the sparse
``byRoutineStatus`` index read 500 routines a page, ``SendMessageBatch`` ten bodies a
call) and prints seconds, milliseconds per agent, the requests made by operation and
the messages that reached the queue. The requests per agent are the figure that carries
to AWS (one Query per 500 agents, one SendMessageBatch per 10); the milliseconds are
moto's (its SQS grows slower per call as the queue fills: ~7 ms an agent at 100, ~50 ms
at 1,000), not AWS's (docs/DECISIONS.md "Deploy paths, limits and rollback").

Usage: ``.venv/bin/python bench/fanout_speed.py [--sizes 100 200 400]``
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import boto3

from chalicelib import wiring
from chalicelib.ids import FixedClock, IdFactory
from chalicelib.models.routine import Routine
from chalicelib.settings import Settings
from chalicelib.storage.dynamodb import to_attributes
from chalicelib.storage.routines import routine_to_item
from infra.local_dynamodb import embedded_for_bench, put_items
from infra.tables import create_table

NOW = datetime(2026, 12, 1, 4, 0, tzinfo=UTC)
"""The schedule's time: 04:00 UTC."""
BUCKET = "pinework-bench"


def load_routines(client: Any, table: str, count: int) -> None:
    """Write ``count`` active routines (agents in workspaces of 50) with BatchWriteItem."""
    ids = IdFactory(FixedClock(NOW))
    items = []
    workspace = ids.new("wsp")
    for number in range(count):
        if number % 50 == 0:
            workspace = ids.new("wsp")
        routine = Routine(
            id=ids.new("rtn"),
            workspace_id=workspace,
            agent_id=ids.new("agt"),
            created_at=NOW,
            updated_at=NOW,
        )
        items.append(to_attributes(routine_to_item(routine)))
    put_items(client, table, items)


def run_size(endpoint: str, size: int) -> None:
    """Fan out ``size`` agents on a fresh table and queue; print one line."""
    dynamodb = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
    sqs = boto3.client("sqs", endpoint_url=endpoint, region_name="us-east-1")
    table, queue = f"fanout-{size}", f"fanout-{size}-reviews"
    create_table(dynamodb, table)
    url = sqs.create_queue(QueueName=queue)["QueueUrl"]
    load_routines(dynamodb, table, size)
    requests: Counter[str] = Counter()

    def count(event_name: str, **_: Any) -> None:
        requests[event_name.removeprefix("before-call.")] += 1

    dynamodb.meta.events.register("before-call.dynamodb", count)
    sqs.meta.events.register("before-call.sqs", count)
    services = wiring.build_services(
        Settings(table_name=table, bucket_name=BUCKET, review_queue_name=queue),
        clock=FixedClock(NOW),
        client=dynamodb,
        sqs=sqs,
    )
    started = time.perf_counter()
    sent = services.reviews.fan_out(NOW)
    seconds = time.perf_counter() - started
    made = dict(sorted(requests.items()))
    queued = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
    in_queue = int(queued["Attributes"]["ApproximateNumberOfMessages"])
    print(
        f"{size:>7}  {seconds:8.2f}  {1000 * seconds / size:7.3f}  {sent:>7}  {in_queue:>7}  "
        f"{made}",
        flush=True,
    )


def main() -> None:
    """Run and print."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 200, 400])
    args = parser.parse_args()
    with embedded_for_bench() as endpoint:
        print(" agents   seconds  ms/agent     sent  queued  requests by operation")
        for size in args.sizes:
            run_size(endpoint, size)


if __name__ == "__main__":
    main()
