"""The ``MemoryRepository`` tag filter contract (``list_memories`` with tags,
``tagged_fact_ids``; docs/reference.md#tags):
the tag index follows every change of a fact in the change's own transaction, and a
filtered list pages the matches only, newest first, against a random store checked by
a plain Python model of the same facts."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import pytest

from chalicelib.ids import FixedClock, IdFactory
from chalicelib.models.memory import Memory, MemoryStatus
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.memories import DynamoDBMemoryRepository
from chalicelib.storage.protocols import MemoryRepository
from tests.helpers import START, audit_of, filtered_pages, new_fact

IMPLEMENTATIONS: dict[str, Callable[[DynamoDBTable], MemoryRepository]] = {
    "dynamodb": DynamoDBMemoryRepository,
}
AGENT = "agt_01KAAAAAAAAAAAAAAAAAAAAAAA"
OTHER = "agt_01KBBBBBBBBBBBBBBBBBBBBBBB"
TAGS = ("billing", "support", "ops", "q3")


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def memories(request: pytest.FixtureRequest, table: DynamoDBTable) -> MemoryRepository:
    return IMPLEMENTATIONS[request.param](table)


def _every_page(
    memories: MemoryRepository,
    *,
    all_tags: Sequence[str] = (),
    any_tags: Sequence[str] = (),
    status: str | None = MemoryStatus.ACTIVE.value,
    limit: int = 3,
) -> list[list[str]]:
    return filtered_pages(
        memories, AGENT, status=status, limit=limit, all_tags=all_tags, any_tags=any_tags
    )


def _expected(
    facts: dict[str, Memory], all_tags: Sequence[str], any_tags: Sequence[str], status: str
) -> list[str]:
    return sorted(
        (
            memory.id
            for memory in facts.values()
            if memory.agent_id == AGENT
            and memory.status.value == status
            and set(all_tags) <= set(memory.tags)
            and (not any_tags or set(any_tags) & set(memory.tags))
        ),
        reverse=True,
    )


def test_filtered_pages_match_a_model_through_changes(memories: MemoryRepository) -> None:
    rng = random.Random(46)
    clock = FixedClock(START)
    ids = IdFactory(clock)
    facts: dict[str, Memory] = {}
    for number in range(60):
        agent = OTHER if number % 7 == 0 else AGENT
        tags = tuple(sorted(rng.sample(TAGS, rng.choice([0, 0, 0, 1, 2]))))
        fact = new_fact(ids, clock, agent, f"fact {number}").model_copy(update={"tags": tags})
        memories.create(fact, audit_of(ids, clock, "create", None, fact))
        facts[fact.id] = fact
    for fact in rng.sample([f for f in facts.values() if f.agent_id == AGENT], 20):
        change = rng.choice(["archive", "retag"])
        update: dict[str, object] = {"version": fact.version + 1}
        if change == "archive":
            update["status"] = MemoryStatus.ARCHIVED
        else:
            update["tags"] = tuple(sorted(rng.sample(TAGS, rng.choice([0, 1, 2, 3]))))
        after = fact.model_copy(update=update)
        memories.transition(fact, after, audit_of(ids, clock, change, fact, after))
        facts[fact.id] = after
    cases: list[tuple[tuple[str, ...], tuple[str, ...]]] = [
        (("billing",), ()),
        (("billing", "support"), ()),
        ((), ("ops", "q3")),
        (("support",), ("billing", "q3")),
        (("absent",), ()),
    ]
    for all_tags, any_tags in cases:
        for status in (MemoryStatus.ACTIVE.value, MemoryStatus.ARCHIVED.value):
            pages = _every_page(memories, all_tags=all_tags, any_tags=any_tags, status=status)
            expected = _expected(facts, all_tags, any_tags, status)
            assert [memory_id for page in pages for memory_id in page] == expected
            # Never an empty page while matches remain: only the last may be short.
            assert all(len(page) == 3 for page in pages[:-1])
        live = memories.tagged_fact_ids(AGENT, all_tags, any_tags)
        assert live == set(_expected(facts, all_tags, any_tags, "active"))
        both = _every_page(memories, all_tags=all_tags, any_tags=any_tags, status=None)
        flat = [memory_id for page in both for memory_id in page]
        assert flat == sorted(
            _expected(facts, all_tags, any_tags, "active")
            + _expected(facts, all_tags, any_tags, "archived"),
            reverse=True,
        )


def test_erased_and_superseded_facts_leave_the_index(memories: MemoryRepository) -> None:
    clock = FixedClock(START)
    ids = IdFactory(clock)
    old = new_fact(ids, clock, AGENT, "old").model_copy(update={"tags": ("billing",)})
    memories.create(old, audit_of(ids, clock, "create", None, old))
    new = new_fact(ids, clock, AGENT, "new").model_copy(update={"tags": ("billing",)})
    old_after = old.superseded(new.id, clock.now())
    memories.supersede(
        new,
        old,
        old_after,
        [
            audit_of(ids, clock, "create", None, new),
            audit_of(ids, clock, "supersede", old, old_after),
        ],
    )
    assert _every_page(memories, all_tags=["billing"]) == [[new.id]]
    assert _every_page(memories, all_tags=["billing"], status="archived") == [[old.id]]
    tombstone = new.erased("usr_1", "asked", clock.now())
    memories.transition(new, tombstone, audit_of(ids, clock, "erase", new, tombstone))
    assert _every_page(memories, any_tags=["billing"], status=None) == [[old.id]]
