"""A tag filter costs what it matches, not what the agent holds (docs/reference.md#tags,
docs/issues.md#issue-46 item 2): the time of listing the facts of one tag at 10,000 facts
against an agent holding only those facts, on the embedded DynamoDB (moto).

One workspace, two agents. The big agent holds ``--facts`` facts: ``--tagged`` of them
tagged ``billing`` (every other one also ``q3``), a fifth of the rest tagged ``support``
or ``ops`` (so the tag index is not only the wanted tag), the rest untagged. The small
agent holds only the ``--tagged`` billing facts. The tagged facts are saved through the
service (``MemoryService.save``: the real transaction and its tag entries); the others
are loaded with BatchWriteItem as the storage writes them (``memory_to_item`` and
``memory_tags.tag_writes``). Each case lists every match through ``MemoryService.list``
(pages of ``--limit``), median of ``--repeat`` runs. The target: the big agent within
1.5 times the small one. Times on a shared machine are noisy.

Usage: ``.venv/bin/python bench/tag_filter_scale.py [--facts 10000] [--tagged 50]``
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import _offline  # noqa: F401  (first: one BLAS thread, credentials, sys.path)
import boto3

from chalicelib import wiring
from chalicelib.ids import FixedClock, IdFactory
from chalicelib.models.memory import Memory, MemoryKind
from chalicelib.models.principal import Principal, PrincipalKind
from chalicelib.models.requests import ListQuery, SaveFactRequest
from chalicelib.services.paging import encode_next_token
from chalicelib.services.run_context import RunContext
from chalicelib.settings import Settings
from chalicelib.storage.dynamodb import to_attributes
from chalicelib.storage.items import memory_to_item
from chalicelib.storage.memory_metadata import metadata_writes
from chalicelib.storage.memory_tags import tag_writes
from infra.local_dynamodb import embedded_for_bench, put_items
from infra.tables import create_table

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
TABLE = "tag-filter-bench"
BUCKET = "tag-filter-bench"


def tag_labels(number: int) -> dict[str, Any]:
    """The labels of the ``number``-th other fact: every fifth tagged ``support`` or
    ``ops``, never ``billing``."""
    return {"tags": (("support",) if number % 10 == 0 else ("ops",)) if number % 5 == 0 else ()}


def other_facts(
    agent: Principal,
    count: int,
    labels: Callable[[int], dict[str, Any]] = tag_labels,
    embedding: bytes | None = None,
) -> list[dict[str, Any]]:
    """The items (attribute-value form) of ``count`` facts labelled by ``labels`` (tags
    and metadata of the ``number``-th), with their tag and metadata index entries, as the
    storage writes them; each with ``embedding`` when given."""
    clock = FixedClock(NOW - timedelta(days=30))
    ids = IdFactory(clock)
    items: list[dict[str, Any]] = []
    for number in range(count):
        clock.set(NOW - timedelta(days=30) + timedelta(seconds=number))
        fact = Memory(
            id=ids.new("mem"),
            workspace_id=agent.workspace_id,
            agent_id=agent.id,
            kind=MemoryKind.FACT,
            text=f"Fact {number}: the staging runner note",
            expires_at=NOW + timedelta(days=60),
            created_at=clock.now(),
            updated_at=clock.now(),
            saved_by_agent_id=agent.id,
            embedding=embedding,
            **labels(number),
        )
        items.append(to_attributes(memory_to_item(fact)))
        writes = [*tag_writes(None, fact), *metadata_writes(None, fact)]
        items.extend(write["Put"]["Item"] for write in writes)
    return items


def save_tagged(services: wiring.Services, agent: Principal, count: int) -> None:
    """``count`` facts tagged ``billing`` (every other one also ``q3``), saved through
    the service."""
    for number in range(count):
        tags = ["billing", "q3"] if number % 2 else ["billing"]
        request = SaveFactRequest.model_validate({"text": f"Invoice rule {number}", "tags": tags})
        services.memories.save(agent, request, RunContext())


def list_all(services: wiring.Services, person: Principal, query: dict[str, Any]) -> int:
    """Every page of one filtered list; the number of facts listed."""
    found, token = 0, None
    while True:
        page = services.memories.list(
            person, ListQuery.model_validate({**query, **({"nextToken": token} if token else {})})
        )
        found += len(page.memories)
        if page.continue_after is None:
            return found
        token = encode_next_token(page.continue_after)


def timed(run: Any, repeat: int) -> tuple[float, Any]:
    """Median seconds of ``repeat`` calls of ``run``, and its last answer."""
    times, answer = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        answer = run()
        times.append(time.perf_counter() - started)
    return statistics.median(times), answer


@dataclass
class BenchWorld:
    """A workspace on the embedded DynamoDB: the client, the services, the big and the
    small agent, and a person who lists their facts."""

    client: Any
    services: wiring.Services
    big: Principal
    small: Principal
    person: Principal


@contextmanager
def bench_world() -> Iterator[BenchWorld]:
    """The table and bucket on the embedded DynamoDB, one workspace, two agents and a
    person (the service clock at ``NOW``)."""
    with embedded_for_bench() as endpoint:
        client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1")
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
        s3.create_bucket(Bucket=BUCKET)
        create_table(client, TABLE)
        services = wiring.build_services(
            Settings(table_name=TABLE, bucket_name=BUCKET),
            clock=FixedClock(NOW),
            client=client,
            s3=s3,
        )
        workspace = services.admin.create_workspace("bench")
        big, small = (
            Principal(
                kind=PrincipalKind.AGENT,
                id=services.admin.create_agent(workspace.id, name).id,
                workspace_id=workspace.id,
            )
            for name in ("big", "small")
        )
        created = services.admin.create_person(workspace.id, "ops@example.com")
        person = services.auth.authenticate(f"Bearer {created.token}")
        yield BenchWorld(client, services, big, small, person)


def compare(
    label: str, expected: int, run: Callable[[Principal], int], world: BenchWorld, repeat: int
) -> None:
    """Time ``run`` (the number of facts it found, which must be ``expected``) on the big
    and the small agent, median of ``repeat``, and print one row of the table."""
    seconds = []
    for agent in (world.big, world.small):
        median, found = timed(lambda agent=agent: run(agent), repeat)
        assert found == expected, (label, found, expected)
        seconds.append(median)
    ratio = seconds[0] / seconds[1]
    print(f"{label:<36} {expected:>7} {seconds[0]:>8.4f} {seconds[1]:>8.4f} {ratio:>8.2f}x")


HEADER = f"{'filter':<36} {'matches':>7} {'big s':>8} {'small s':>8} {'big/small':>9}"
"""The first row of the table ``compare`` prints."""


def main() -> None:
    """Load both agents, then time each filter on each."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--tagged", type=int, default=50)
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    with bench_world() as world:
        started = time.perf_counter()
        put_items(world.client, TABLE, other_facts(world.big, args.facts - args.tagged))
        save_tagged(world.services, world.big, args.tagged)
        save_tagged(world.services, world.small, args.tagged)
        print(f"loaded {args.facts} + {args.tagged} facts in {time.perf_counter() - started:.1f} s")
        cases = [
            ("tag=billing", {"tag": "billing"}, args.tagged),
            ("tag=billing&tag=q3", {"tag": "billing,q3"}, args.tagged // 2),
            ("anyTag=billing,absent", {"anyTag": "billing,absent"}, args.tagged),
        ]
        print(HEADER)
        for label, query, expected in cases:
            compare(
                label,
                expected,
                lambda agent, query=query: list_all(
                    world.services,
                    world.person,
                    {"agentId": agent.id, "limit": str(args.limit), **query},
                ),
                world,
                args.repeat,
            )


if __name__ == "__main__":
    main()
