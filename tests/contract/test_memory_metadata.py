"""The ``MemoryRepository`` metadata filter contract (``list_memories`` with ``meta``,
``tagged_fact_ids``; docs/reference.md#metadata-filters): the metadata index follows
every change of a fact in the change's own transaction, a filtered list pages the
matches only, newest first, against a random store checked by plain Python predicates;
a page re-checks what the memory holds, and the table upgrade files the index again
after a rollback."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from chalicelib.ids import FixedClock, IdFactory
from chalicelib.models.memory import Memory, MemoryStatus
from chalicelib.models.metadata_filter import MetaCondition, index_text
from chalicelib.services.memory.metadata_filter import meta_filter
from chalicelib.storage.dynamodb import DynamoDBTable, to_attributes
from chalicelib.storage.keys import memory_key, memory_meta_partition
from chalicelib.storage.memories import DynamoDBMemoryRepository
from chalicelib.storage.upgrade import TableUpgrade
from tests.helpers import START, audit_of, filtered_pages, new_fact

AGENT = "agt_01KAAAAAAAAAAAAAAAAAAAAAAA"
OTHER = "agt_01KBBBBBBBBBBBBBBBBBBBBBBB"
VALUES: list[Any] = [-12.5, -3, -0.25, 0, 0.5, 2, 7, 100, "2", "acme", "globex", True]
DATES = ["2026-11-30", "2026-12-01", "2026-12-01T10:00:00+02:00", "2026-12-05T10:00:00Z"]


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _moment(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value.startswith("2026-"):
        return None
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


FIRST = datetime(2026, 12, 1, tzinfo=UTC)
CASES: dict[str, Callable[[Any], bool]] = {
    "v:gte:-3": lambda v: _number(v) and v >= -3,
    "v:lt:0.5": lambda v: _number(v) and v < 0.5,
    "v:gt:-0.25": lambda v: _number(v) and v > -0.25,
    "v:in:2|7|acme": lambda v: v in ("2", "acme") or (_number(v) and v in (2, 7)),
    "v:true": lambda v: v is True,
    "v:globex": lambda v: v == "globex",
    "day:gte:2026-12-01": lambda v: (m := _moment(v)) is not None and m >= FIRST,
    "day:lt:2026-12-01T08:00:00Z": lambda v: (m := _moment(v)) is not None and m.hour < 8,
}


def _labels(rng: random.Random) -> dict[str, Any]:
    labels: dict[str, Any] = {}
    if rng.random() < 0.8:
        labels["v"] = rng.choice(VALUES)
    if rng.random() < 0.6:
        labels["day"] = rng.choice(DATES)
    return labels


def _every_page(
    memories: DynamoDBMemoryRepository,
    meta: Sequence[MetaCondition],
    status: str | None = MemoryStatus.ACTIVE.value,
) -> list[list[str]]:
    return filtered_pages(memories, AGENT, status=status, meta=meta)


def _expected(facts: dict[str, Memory], conditions: Sequence[str], status: str) -> list[str]:
    return sorted(
        (
            memory.id
            for memory in facts.values()
            if memory.agent_id == AGENT
            and memory.status.value == status
            and not memory.is_erased
            and all(
                (key := condition.split(":")[0]) in memory.metadata
                and CASES[condition](memory.metadata[key])
                for condition in conditions
            )
        ),
        reverse=True,
    )


def test_filtered_pages_match_a_model_through_changes(table: DynamoDBTable) -> None:
    memories = DynamoDBMemoryRepository(table)
    rng = random.Random(462)
    clock = FixedClock(START)
    ids = IdFactory(clock)
    facts: dict[str, Memory] = {}
    for number in range(60):
        agent = OTHER if number % 7 == 0 else AGENT
        fact = new_fact(ids, clock, agent, f"fact {number}")
        fact = fact.model_copy(update={"metadata": _labels(rng)})
        memories.create(fact, audit_of(ids, clock, "create", None, fact))
        facts[fact.id] = fact
    for fact in rng.sample([f for f in facts.values() if f.agent_id == AGENT], 25):
        change = rng.choice(["archive", "relabel", "relabel", "erase"])
        if change == "erase":
            after = fact.erased("usr_1", "asked", clock.now())
        else:
            update: dict[str, object] = {"version": fact.version + 1}
            if change == "archive":
                update["status"] = MemoryStatus.ARCHIVED
            else:
                update["metadata"] = _labels(rng)
            after = fact.model_copy(update=update)
        memories.transition(fact, after, audit_of(ids, clock, change, fact, after))
        facts[fact.id] = after
    names = sorted(CASES)
    chosen = [[name] for name in names] + [rng.sample(names, 2) for _ in range(6)]
    for conditions in chosen:
        meta = meta_filter(conditions)
        for status in (MemoryStatus.ACTIVE.value, MemoryStatus.ARCHIVED.value):
            pages = _every_page(memories, meta, status)
            assert [one for page in pages for one in page] == _expected(
                facts, conditions, status
            ), conditions
            assert all(len(page) == 3 for page in pages[:-1])
        live = memories.tagged_fact_ids(AGENT, [], [], meta)
        assert live == set(_expected(facts, conditions, "active"))


def _entries(table: DynamoDBTable) -> list[dict[str, Any]]:
    return list(
        table.query(
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues=to_attributes({":pk": memory_meta_partition(AGENT)}),
        )
    )


def test_a_page_rechecks_and_the_upgrade_refiles_after_a_rollback(table: DynamoDBTable) -> None:
    memories = DynamoDBMemoryRepository(table)
    clock = FixedClock(START)
    ids = IdFactory(clock)
    fact = new_fact(ids, clock, AGENT, "billing rule")
    fact = fact.model_copy(update={"metadata": {"project": "billing", "n": -1.5}})
    memories.create(fact, audit_of(ids, clock, "create", None, fact))
    billing, ops = meta_filter(["project:billing"]), meta_filter(["project:ops"])
    assert _every_page(memories, billing) == [[fact.id]]
    # A release without the index (rolled back to) edits the metadata alone.
    table.client.update_item(
        TableName=table.name,
        Key=to_attributes(memory_key(fact.id)),
        UpdateExpression="SET metadata = :metadata, version = :version",
        ExpressionAttributeValues=to_attributes(
            {":metadata": json.dumps({"project": "ops", "n": -1.5}), ":version": 2}
        ),
    )
    assert _every_page(memories, billing) == [[]]  # the stale entry is not shown
    assert _every_page(memories, ops) == [[]]  # not filed yet
    assert len(_entries(table)) == 2
    report = TableUpgrade(table).run(START)
    assert report.tags_refiled >= 1 and report.stale_tags_dropped >= 1
    assert _every_page(memories, ops) == [[fact.id]]
    assert _every_page(memories, billing) == [[]]
    assert _every_page(memories, meta_filter(["n:lt:-1"])) == [[fact.id]]
    assert sorted(entry["value"] for entry in _entries(table)) == [index_text(-1.5), "s:ops"]
