"""Learnings read only what is live (docs/issues.md#issue-41-item-4,
docs/reference.md#learning-limits): a recall, an agent's proposal and a person's list
(``limit=1``, unfiltered and ``state=active``) in a workspace with 10 active learnings
and 0, then 3,000 retired ones, on the embedded DynamoDB.

The retired learnings are seeded with BatchWriteItem as the store writes them (the
learning's item and its copy filed by state, ``learning_to_item``), so the setup does
not dominate. Each call is timed (best of ``--repeat``) and its DynamoDB requests and
the learning items they returned are counted; the target is at most 1.2x between the
two sizes.

Usage: ``.venv/bin/python bench/learnings_retired.py [--retired 0 3000] [--repeat 5]``
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import boto3

from chalicelib import wiring
from chalicelib.ids import IdFactory, SystemClock
from chalicelib.models.learning import Learning, LearningState
from chalicelib.models.principal import Principal, PrincipalKind
from chalicelib.models.requests import RecallRequest
from chalicelib.services.run_context import RunContext
from chalicelib.settings import Settings
from chalicelib.storage.dynamodb import to_attributes
from chalicelib.storage.keys import learning_state_key, learning_states_marker_key
from chalicelib.storage.learnings import learning_to_item
from infra.local_dynamodb import embedded_for_bench, put_items
from infra.tables import create_table

BUCKET = "pinework-bench"


def retired_items(workspace_id: str, person_id: str, count: int) -> list[dict[str, Any]]:
    """``count`` retired learnings as stored: each item and its state copy."""
    ids = IdFactory(SystemClock())
    now = SystemClock().now() - timedelta(days=30)
    items: list[dict[str, Any]] = []
    for number in range(count):
        learning = Learning(
            id=ids.new("lrn"),
            workspace_id=workspace_id,
            text=f"Retired practice number {number}: the old build farm ran job {number}",
            state=LearningState.RETIRED,
            proposed_by=person_id,
            proposed_by_type="person",
            proposed_at=now,
            decided_by=person_id,
            decided_at=now,
            reason="obsolete",
            updated_at=now,
        )
        item = learning_to_item(learning)
        copy = {**item, **learning_state_key(workspace_id, "retired", learning.id)}
        items.extend([to_attributes(item), to_attributes(copy)])
    items.append(to_attributes(learning_states_marker_key(workspace_id)))
    return items


def seed(services: wiring.Services, client: Any, retired: int) -> tuple[Principal, Principal]:
    """A workspace with 10 active and ``retired`` retired learnings; its agent and person."""
    workspace = services.admin.create_workspace(f"bench-{retired}")
    issued = services.admin.create_agent(workspace.id, "bench")
    person_issued = services.admin.create_person(workspace.id, f"ops{retired}@example.com")
    agent = Principal(kind=PrincipalKind.AGENT, id=issued.id, workspace_id=workspace.id)
    person = Principal(kind=PrincipalKind.PERSON, id=person_issued.id, workspace_id=workspace.id)
    put_items(client, services.settings.table_name, retired_items(workspace.id, person.id, retired))
    for number in range(10):
        services.learnings.propose(person, f"Deploy rule {number}: tag the image", RunContext())
    return agent, person


def measure(
    services: wiring.Services,
    requests: Counter[str],
    retired: int,
    principals: tuple[Principal, Principal],
    repeat: int,
) -> None:
    """Time each call in one workspace and print its figures."""
    agent, person = principals
    proposals = iter(range(10_000))
    calls: dict[str, Callable[[], object]] = {
        "recall": lambda: services.recall.recall(
            agent, RecallRequest(query="how do we deploy?"), RunContext()
        ),
        "propose": lambda: services.learnings.propose(
            agent, f"Bench proposal {next(proposals)} about caching", RunContext()
        ),
        "list limit=1": lambda: services.learnings.list_learnings(
            person, state=None, query=None, limit=1, after=None
        ),
        "list active": lambda: services.learnings.list_learnings(
            person, state=LearningState.ACTIVE, query=None, limit=50, after=None
        ),
    }
    for name, call in calls.items():
        call()  # warm
        best = float("inf")
        for _ in range(repeat):
            requests.clear()
            started = time.perf_counter()
            call()
            best = min(best, time.perf_counter() - started)
        print(
            f"{retired:>7}  {name:<13} {best * 1000:9.1f}  "
            f"{sum(requests.values()) - requests['items']:>5}  "
            f"{requests['items']:>6}",
            flush=True,
        )


def main() -> None:
    """Run and print."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--retired", type=int, nargs="+", default=[0, 3000])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with embedded_for_bench() as endpoint:
        client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
        s3.create_bucket(Bucket=BUCKET)
        requests: Counter[str] = Counter()

        def count(event_name: str, **_: Any) -> None:
            requests[event_name.rsplit(".", 1)[-1]] += 1

        def returned(parsed: dict[str, Any], **_: Any) -> None:
            requests["items"] += len(parsed.get("Items", []))
            for found in parsed.get("Responses", {}).values():
                requests["items"] += len(found)

        client.meta.events.register("before-call.dynamodb", count)
        client.meta.events.register("after-call.dynamodb", returned)
        # one table for every size, seeded before any is measured: the embedded
        # server's index queries read the whole table, so each size meets the same one
        create_table(client, "learnings-retired")
        services = wiring.build_services(
            Settings(table_name="learnings-retired", bucket_name=BUCKET), client=client, s3=s3
        )
        seeded = {size: seed(services, client, size) for size in args.retired}
        print("retired  call          best ms  DDB-req  items-read")
        for size, principals in seeded.items():
            measure(services, requests, size, principals, args.repeat)


if __name__ == "__main__":
    main()
