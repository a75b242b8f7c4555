"""A metadata filter costs what it matches, not what the agent holds
(docs/reference.md#metadata-filters, docs/issues.md#issue-46-item-2): listing and
recalling the facts one metadata filter keeps at 10,000 facts against an agent holding
only those facts, on the embedded DynamoDB (moto).

The set-up is the tag bench's (``tag_filter_scale.bench_world``, ``other_facts``): the
big agent holds ``--facts`` facts, ``--matching`` of them saved through the service
with ``project=billing``, an ``amount`` from 10,000 up and a ``due`` date in 2027; the
others are loaded as the storage writes them, with ``project`` ``support`` or ``ops``,
an ``amount`` from -500 to 499.5 and a ``due`` date in 2026 (so every key's index holds
them all), and one shared embedding; the recall index of both agents is built
(``backfill_recall_index``). The small agent holds only the matching facts. Each list
case lists every match (pages of ``--limit``); each recall case is a preview
(``count: false``) whose filter keeps only the matches (its "matches" column is 1: every
fact it returned matched); median of ``--repeat`` runs.
The target: the big agent within 1.5 times the small one. Times on a shared machine
are noisy, and the embedded DynamoDB reads a whole partition for each Query (its cost
grows with the partition, DynamoDB's with the items the key condition names), so each
case also prints the items its Queries read as DynamoDB counts them (``ScannedCount``,
what a Query is billed and timed by).

Usage: ``.venv/bin/python bench/metadata_filter_scale.py [--facts 10000] [--matching 50]``
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

import _offline  # noqa: F401  (first: one BLAS thread, credentials, sys.path)
from tag_filter_scale import HEADER, TABLE, BenchWorld, bench_world, compare, list_all, other_facts

from chalicelib.models.principal import Principal
from chalicelib.models.requests import RecallRequest, SaveFactRequest
from chalicelib.services.run_context import RunContext
from infra.local_dynamodb import put_items

QUERY = "Which invoice rule applies to the staging runner?"


def other_labels(number: int) -> dict[str, Any]:
    """The metadata of the ``number``-th other fact (never ``project=billing``)."""
    due = date(2026, 1, 1) + timedelta(days=number % 365)
    project = "support" if number % 2 else "ops"
    return {"metadata": {"project": project, "amount": number % 2000 / 2 - 500, "due": str(due)}}


def save_matching(world: BenchWorld, agent: Principal, count: int) -> bytes | None:
    """``count`` facts with ``project=billing`` saved through the service; the last
    one's embedding."""
    embedding = None
    for number in range(count):
        metadata = {
            "project": "billing",
            "amount": 10_000 + number * 1.5,
            "due": str(date(2027, 1, 1) + timedelta(days=number)),
        }
        request = SaveFactRequest.model_validate(
            {"text": f"Invoice rule {number} for the staging runner", "metadata": metadata}
        )
        embedding = world.services.memories.save(agent, request, RunContext()).embedding
    return embedding


def recalled(world: BenchWorld, agent: Principal, meta: list[str]) -> int:
    """1 when one filtered recall preview returns facts and each is a matching one (an
    ``Invoice rule``)
    (how many it returns varies: a scorer past its time budget on a loaded machine
    falls back to the newest matching facts), else 0."""
    request = RecallRequest.model_validate({"query": QUERY, "count": False, "meta": meta})
    memories = world.services.recall.recall(agent, request, RunContext()).memories
    return int(bool(memories) and all(m.memory.text.startswith("Invoice rule") for m in memories))


def items_read(world: BenchWorld, run: Callable[[Principal], int]) -> tuple[int, int]:
    """The items the Queries of one ``run`` read (the sum of their ``ScannedCount``), on
    the big and on the small agent."""
    counted = [0]

    def count(parsed: dict[str, Any], **_: Any) -> None:
        counted[0] += int(parsed.get("ScannedCount", 0))

    world.client.meta.events.register("after-call.dynamodb.Query", count)
    found = []
    for agent in (world.big, world.small):
        counted[0] = 0
        run(agent)
        found.append(counted[0])
    world.client.meta.events.unregister("after-call.dynamodb.Query", count)
    return found[0], found[1]


def main() -> None:
    """Load both agents, then time each filter on each."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--matching", type=int, default=50)
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    with bench_world() as world:
        started = time.perf_counter()
        embedding = save_matching(world, world.big, args.matching)
        save_matching(world, world.small, args.matching)
        others = other_facts(world.big, args.facts - args.matching, other_labels, embedding)
        put_items(world.client, TABLE, others)
        for agent in (world.big, world.small):
            world.services.admin.backfill_recall_index(agent.workspace_id, agent.id)
        print(
            f"loaded {args.facts} + {args.matching} facts in {time.perf_counter() - started:.1f} s"
        )
        lists = [
            ("list project:billing", ["project:billing"]),
            ("list project:in:billing|absent", ["project:in:billing|absent"]),
            ("list amount:gte:10000", ["amount:gte:10000"]),
            ("list due:gte:2027-01-01 + project", ["due:gte:2027-01-01", "project:billing"]),
        ]

        def lister(meta: list[str]) -> Callable[[Principal], int]:
            return lambda agent: list_all(
                world.services,
                world.person,
                {"agentId": agent.id, "limit": str(args.limit), "meta": meta},
            )

        def recaller(meta: list[str]) -> Callable[[Principal], int]:
            return lambda agent: recalled(world, agent, meta)

        runs = [(label, args.matching, lister(meta)) for label, meta in lists]
        runs.extend(
            (label, 1, recaller(meta))
            for label, meta in [
                ("recall project:billing", ["project:billing"]),
                ("recall amount:gte:10000", ["amount:gte:10000"]),
            ]
        )
        print(f"{'filter':<36} {'items read by Query: big':>25} {'small':>6}")
        for label, _, run in runs:
            big, small = items_read(world, run)
            print(f"{label:<36} {big:>25} {small:>6}")
        print(HEADER)
        for label, expected, run in runs:
            compare(label, expected, run, world, args.repeat)


if __name__ == "__main__":
    main()
