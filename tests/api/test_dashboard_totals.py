"""Totals when paging through the dashboard's lists (docs/reference.md#list-totals,
docs/issues.md#issue-48-item-4): a page says which items it shows of how many ("51–100 of
120 memories"), the total follows the filters, and a count that stopped at its cap
says so ("of 5+")."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from chalice.test import Client

from chalicelib import wiring
from chalicelib.ids import FixedClock, IdFactory
from chalicelib.models.recall import RecallLogEntry
from chalicelib.models.review import PendingAction, ReviewAction
from chalicelib.models.totals import ListTotal
from chalicelib.services.memory.browse import MemoryBrowser
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.memories import DynamoDBMemoryRepository
from chalicelib.storage.memory_index import DynamoDBMemoryIndexRepository
from chalicelib.storage.recalls import DynamoDBRecallRepository
from chalicelib.storage.review_actions import DynamoDBPendingRepository
from chalicelib.web.render import range_of
from chalicelib.wiring import Services
from tests.helpers import TABLE, Api, World, audit_of, new_fact, text
from tests.helpers import DashboardPage as Page

OLDER = re.compile(r'href="(/agents/agt_[0-9A-Z]+\?[^"]*after=mem_[0-9A-Z]+)" rel="next"')
TOTAL = re.compile(r'id="list-total">\s*(.*?)\s*</p>', re.S)


@pytest.fixture
def browser(wired: Services) -> Iterator[Page]:
    from app import app

    with Client(app) as client:
        yield Page(client)


def save_facts(
    dynamodb: Any, clock: FixedClock, world: World, count: int, expired: int = 0
) -> list[str]:
    """``count`` facts of the agent, written as a save writes them (the memory, its
    audit record, its index values; without the save's checks, which take long); the
    last ``expired`` of them past their expiry. Their ids, oldest first."""
    memories = DynamoDBMemoryRepository(DynamoDBTable(dynamodb, TABLE))
    ids = IdFactory(clock)
    saved = []
    for number in range(count):
        memory = new_fact(ids, clock, world.agent.id, f"Runbook step {number}", world.workspace_id)
        if number >= count - expired:
            memory = memory.model_copy(update={"expires_at": clock.now() - timedelta(days=1)})
        memories.create(memory, audit_of(ids, clock, "create", None, memory))
        saved.append(memory.id)
    return saved


def ranged(line: str) -> str:
    """``line`` as a page writes it: an en dash between a range's numbers (``1-50``)."""
    return re.sub(r"(\d)-(\d)", "\\1\u2013\\2", line)


def total_line(page: str) -> str:
    """The memory list's status line, tags removed."""
    found = TOTAL.search(page)
    assert found is not None
    return re.sub(r"<[^>]+>", "", found.group(1))


def older_link(page: str) -> str:
    found = OLDER.search(page)
    assert found is not None
    return found.group(1).replace("&amp;", "&")


def test_memory_pages_say_which_memories_they_show_of_how_many(
    browser: Page, world: World, dynamodb: Any, clock: FixedClock
) -> None:
    save_facts(dynamodb, clock, world, 57)
    browser.sign_in(world.person.token)
    first = text(browser.get(f"/agents/{world.agent.id}"))
    assert total_line(first) == ranged("1-50 of 57 memories")
    second = text(browser.get(older_link(first)))
    assert total_line(second).startswith(ranged("51-57 of 57 memories · older than"))


def test_the_total_follows_the_filters(
    api: Api, browser: Page, world: World, dynamodb: Any, clock: FixedClock
) -> None:
    facts = save_facts(dynamodb, clock, world, 8, expired=2)
    api.call("POST", "/memories/day", world.agent, {"line": "Deployed the uploader"})
    for memory_id in facts[:2]:
        status, _ = api.call(
            "POST", f"/memories/{memory_id}/archive", world.person, {"reason": "old"}
        )
        assert status == 200
    browser.sign_in(world.person.token)
    path = f"/agents/{world.agent.id}"
    assert total_line(text(browser.get(path))) == ranged(
        "1-7 of 7 memories"
    )  # active: 6 facts, 1 day
    assert total_line(text(browser.get(path + "?status=all"))) == ranged("1-9 of 9 memories")
    assert total_line(text(browser.get(path + "?kind=fact&status=archived"))) == ranged(
        "1-2 of 2 memories"
    )
    assert total_line(text(browser.get(path + "?kind=day"))) == "1 of 1 memory"
    assert total_line(text(browser.get(path + "?expired=yes"))) == ranged("1-2 of 2 memories")
    assert total_line(text(browser.get(path + "?expired=no&kind=fact"))) == ranged(
        "1-4 of 4 memories"
    )
    searched = total_line(text(browser.get(path + "?q=uploader")))
    assert searched == ranged("1 match shown · searched 1-7 of 7 memories")


def test_a_count_past_its_cap_says_so(
    browser: Page, world: World, wired: Services, dynamodb: Any, clock: FixedClock
) -> None:
    ids = save_facts(dynamodb, clock, world, 60)
    index = DynamoDBMemoryIndexRepository(DynamoDBTable(dynamodb, wired.settings.table_name))
    capped = MemoryBrowser(wired.memories, index, wired.clock, count_max=20)
    wiring.install(replace(wired, dashboard=replace(wired.dashboard, browser=capped)))
    browser.sign_in(world.person.token)
    first = text(browser.get(f"/agents/{world.agent.id}"))
    assert total_line(first) == ranged("1-50 of 20+ memories")
    second = text(browser.get(older_link(first)))
    assert total_line(second).startswith("10 past the first 20 of 20+ memories")
    assert len(ids) == 60


def test_the_range_reads_as_a_person_expects() -> None:
    assert range_of(ListTotal.whole(1234, before=50), 50, "memory", "memories") == (
        ranged("51-100 of 1,234 memories")
    )
    assert range_of(ListTotal(before=0, total=1000, capped=True), 50, "entry", "entries") == (
        ranged("1-50 of 1,000+ entries")
    )
    assert range_of(ListTotal(before=None, total=1000, capped=True), 20, "action") == (
        "20 past the first 1,000 of 1,000+ actions"
    )
    assert range_of(ListTotal.whole(1), 1, "agent") == "1 of 1 agent"
    assert range_of(ListTotal.whole(0), 0, "agent") == "0 agents"
    # The count's index lags a write by a moment: never fewer in all than shown.
    assert range_of(ListTotal.whole(49), 50, "memory", "memories") == ranged("1-50 of 50 memories")
    assert range_of(None, 3, "memory") == ""


def status_line(page: str, element_id: str, tag: str = "p") -> str:
    """The text of the page's element ``element_id`` (a total line)."""
    found = re.search(rf'id="{element_id}">(.*?)</{tag}>', page, re.S)
    assert found is not None, element_id
    return found.group(1).strip()


def wait_for_person(
    dynamodb: Any, clock: FixedClock, world: World, agent_id: str, count: int, days_ago: int = 0
) -> None:
    """``count`` actions of one review of ``agent_id`` waiting for a person, planned
    ``days_ago`` days ago."""
    planned = clock.now() - timedelta(days=days_ago)
    review_id = IdFactory(FixedClock(planned)).new("rvw")
    waiting = [
        PendingAction(
            review_id=review_id,
            agent_id=agent_id,
            date="2026-11-29",
            approval="required",
            waiting_since=planned,
            action=ReviewAction(id=f"a{number}", action="archive", reason="stale: unused"),
        )
        for number in range(1, count + 1)
    ]
    pending = DynamoDBPendingRepository(DynamoDBTable(dynamodb, TABLE), clock)
    pending.put_pending(world.workspace_id, waiting, {})


def test_the_waiting_list_counts_every_agents_actions_inside_their_retention(
    browser: Page, world: World, dynamodb: Any, clock: FixedClock
) -> None:
    wait_for_person(dynamodb, clock, world, world.agent.id, 40)
    wait_for_person(dynamodb, clock, world, world.other_agent.id, 13)
    wait_for_person(dynamodb, clock, world, world.agent.id, 3, days_ago=400)  # past retention
    browser.sign_in(world.person.token)
    first = text(browser.get("/pending"))
    assert status_line(first, "pending-total") == ranged("1-50 of 53 actions")
    more = re.search(r'href="(/pending\?after=[^"]+)">More', first)
    assert more is not None
    second = text(browser.get(more.group(1).replace("&amp;", "&")))
    assert status_line(second, "pending-total") == ranged("51-53 of 53 actions")
    reviews_tab = text(browser.get(f"/agents/{world.agent.id}/reviews"))
    assert status_line(reviews_tab, "waiting-total").startswith(ranged("1-20 of 40 actions"))
    assert '<span class="badge pending">40</span>' in reviews_tab
    pending = DynamoDBPendingRepository(DynamoDBTable(dynamodb, TABLE), clock)
    _, cursor = pending.list_pending(world.workspace_id, world.agent.id, 30, None)
    assert pending.count_pending(world.workspace_id, world.agent.id, cursor, 100) == (
        ListTotal.whole(40, before=30)
    )
    # 46 read (the cap and one), of which the 3 past retention do not count: "43+".
    assert pending.count_pending(world.workspace_id, None, None, 45) == ListTotal(
        before=0, total=43, capped=True
    )


def test_the_recall_log_counts_its_entries_inside_their_retention(
    browser: Page, world: World, dynamodb: Any, clock: FixedClock
) -> None:
    recalls = DynamoDBRecallRepository(DynamoDBTable(dynamodb, TABLE), clock)
    for days_ago, count in ((0, 23), (100, 2)):  # the log keeps 90 days
        at = clock.now() - timedelta(days=days_ago)
        ids = IdFactory(FixedClock(at))
        for _ in range(count):
            entry = RecallLogEntry(
                id=ids.new("rcl"),
                workspace_id=world.workspace_id,
                agent_id=world.agent.id,
                kind="on_demand",
                query="uploader retries",
                at=at,
                memories=[],
            )
            recalls.commit_recall([], entry, at)
    browser.sign_in(world.person.token)
    path = f"/agents/{world.agent.id}/recall"
    first = text(browser.get(path))
    assert status_line(first, "log-total") == ranged("1-20 of 23 recalls")
    older = re.search(rf'href="({path}\?after=rcl_[0-9A-Z]+)"', first)
    assert older is not None
    second = text(browser.get(older.group(1)))
    assert status_line(second, "log-total") == ranged("21-23 of 23 recalls")


def test_the_reports_and_day_rows_say_how_many(api: Api, browser: Page, world: World) -> None:
    api.call("POST", "/memories/day", world.agent, {"line": "Deployed the uploader"})
    status, _ = api.call("POST", "/reviews", world.person, {"agentId": world.agent.id})
    assert status == 200
    browser.sign_in(world.person.token)
    reports = text(browser.get(f"/agents/{world.agent.id}/reviews"))
    assert status_line(reports, "reports-total") == "1 of 1 report"
    days = text(browser.get(f"/agents/{world.agent.id}/days"))
    assert status_line(days, "days-total") == "1 day row"


def test_the_agents_overview_pages_say_which_agents_they_show(
    browser: Page, world: World, wired: Services
) -> None:
    for number in range(24):  # with builder and reviewer: 26, two pages of 25
        wired.admin.create_agent(world.workspace_id, f"helper-{number:02d}")
    browser.sign_in(world.person.token)
    first = text(browser.get("/"))
    assert status_line(first, "agents-total", "span") == ranged("1-25 of 26 agents")
    second = text(browser.get("/?page=2"))
    assert status_line(second, "agents-total", "span") == "26 of 26 agents"
