"""What the dashboard reads besides the API's own answers (docs/issues.md#issue-13): a workspace's
agents, per-agent counts, pictures, day rows, lists by kind from the light index,
filtered and searched pages, the supersede chain, and a recall preview that counts
nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from chalicelib.errors import Forbidden, InvalidRequest
from chalicelib.ids import FixedClock, IdFactory
from chalicelib.models.principal import Principal
from chalicelib.services.memory.browse import BrowseFilters, MemoryBrowser
from chalicelib.services.memory.chain import supersede_chain
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.memory_index import DynamoDBMemoryIndexRepository
from chalicelib.wiring import Services
from tests.helpers import START, TABLE, Api, World

FULL_WIDTH = "\uff24\uff45\uff50\uff4c\uff4f\uff59 in full width"
""""Deploy" in full-width letters: NFKC makes it the ASCII word."""


def principal(wired: Services, token: str) -> Principal:
    return wired.auth.authenticate(f"Bearer {token}")


def save(api: Api, world: World, text: str, clock: FixedClock | None = None, **body: str) -> dict:
    """Save a fact as the agent; with ``clock``, one second after the previous save, so
    ids (ULIDs of the clock's time) sort in save order."""
    if clock is not None:
        clock.set(clock.now() + timedelta(seconds=1))
    status, memory = api.call("POST", "/memories", world.agent, {"text": text, **body})
    assert status == 201, memory
    return memory


def test_agents_of_a_workspace_are_listed_by_name_and_filtered(
    wired: Services, world: World
) -> None:
    person = principal(wired, world.person.token)
    agents = wired.dashboard.workspace.agents(person)
    assert [a.name for a in agents] == ["builder", "reviewer"]
    assert [a.name for a in wired.dashboard.workspace.agents(person, "REV")] == ["reviewer"]
    assert wired.dashboard.workspace.agents(person, world.agent.id)[0].id == world.agent.id
    outsider = principal(wired, world.outsider.token)
    assert [a.name for a in wired.dashboard.workspace.agents(outsider)] == ["spy"]
    with pytest.raises(Forbidden):
        wired.dashboard.workspace.agents(principal(wired, world.agent.token))


def test_another_workspaces_agent_answers_like_a_missing_one(wired: Services, world: World) -> None:
    person = principal(wired, world.person.token)
    with pytest.raises(Forbidden) as foreign:
        wired.dashboard.workspace.agent(person, world.outsider_agent.id)
    # A well-formed id from a year before: ids made at one fixed instant are monotonic
    # ULIDs, so changing a character of one can name another agent of the world.
    missing_id = IdFactory(FixedClock(START - timedelta(days=365))).new("agt")
    with pytest.raises(Forbidden) as missing:
        wired.dashboard.workspace.agent(person, missing_id)
    assert str(foreign.value).replace(world.outsider_agent.id, "ID") == str(missing.value).replace(
        missing_id, "ID"
    )


def test_overview_counts_live_expired_archived_and_todays_fill(
    api: Api, wired: Services, world: World, clock: FixedClock
) -> None:
    soon = save(api, world, "expires soon", expiresAt=(START + timedelta(days=1)).isoformat())
    kept = save(api, world, "stays")
    gone = save(api, world, "goes away")
    api.call("POST", f"/memories/{gone['id']}/archive", world.agent, {"reason": "noise"})
    save(api, world, "replacement", supersedes=kept["id"])
    status, _ = api.call("POST", "/memories/day", world.agent, {"line": "x" * 99})
    assert status == 201
    clock.set(START + timedelta(days=2))
    person = principal(wired, world.person.token)
    agents = wired.dashboard.workspace.agents(person)
    rows = {row.agent.name: row for row in wired.dashboard.overview.rows(person, agents)}
    counts = rows["builder"].counts
    assert (counts.live_facts, counts.expired_facts, counts.archived_facts) == (2, 1, 2)
    assert counts.today_fill == 0  # the day row was written two days ago
    assert rows["builder"].routine is not None and rows["reviewer"].routine is None
    assert soon["id"]
    clock.set(START)
    assert wired.dashboard.overview.counts(world.agent.id, START).today_fill == len(
        "12:00 " + "x" * 99
    )


def test_overview_refuses_another_workspaces_agents(wired: Services, world: World) -> None:
    person = principal(wired, world.person.token)
    outsider = principal(wired, world.outsider.token)
    foreign = wired.dashboard.workspace.agents(outsider)
    with pytest.raises(Forbidden):
        wired.dashboard.overview.rows(person, foreign)


def test_pictures_rebuild_facts_over_time_recalls_and_fill(
    api: Api, wired: Services, world: World, clock: FixedClock
) -> None:
    first = save(api, world, "day one fact")
    api.call("POST", "/memories/day", world.agent, {"line": "a" * 50})
    clock.set(START + timedelta(days=1))
    save(api, world, "day two fact")
    api.call("POST", f"/memories/{first['id']}/archive", world.agent, {"reason": "old"})
    api.call("POST", "/memories/recall", world.agent, {"query": "fact"})
    api.call("POST", "/memories/recall", world.agent, {"query": "day two"})
    clock.set(START + timedelta(days=2))
    person = principal(wired, world.person.token)
    pictures = wired.dashboard.pictures.pictures(person, world.agent.id, 7)
    assert [p.date for p in pictures.live_facts][-3:] == ["2026-11-30", "2026-12-01", "2026-12-02"]
    assert [p.value for p in pictures.live_facts][-3:] == [1, 1, 1]
    assert [p.value for p in pictures.archived_facts][-3:] == [0, 1, 1]
    assert [p.value for p in pictures.recalls][-3:] == [0, 2, 0]
    assert [p.value for p in pictures.day_fill][-3:] == [len("12:00 " + "a" * 50), 0, 0]
    assert len(pictures.live_facts) == 7
    with pytest.raises(InvalidRequest):
        wired.dashboard.pictures.pictures(person, world.agent.id, 12)


def test_day_rows_are_newest_date_first_live_before_archived(
    api: Api, wired: Services, world: World, clock: FixedClock
) -> None:
    _, first = api.call("POST", "/memories/day", world.agent, {"line": "one"})
    api.call("POST", f"/memories/{first['id']}/archive", world.agent, {"reason": "redo"})
    _, second = api.call("POST", "/memories/day", world.agent, {"line": "two two"})
    clock.set(START + timedelta(days=1))
    _, third = api.call("POST", "/memories/day", world.agent, {"line": "three"})
    person = principal(wired, world.person.token)
    rows = wired.dashboard.day_logs.day_rows(person, world.agent.id)
    assert [row.id for row in rows] == [third["id"], second["id"], first["id"]]
    assert rows[1].char_count == len("12:00 two two")


def test_list_by_kind_reads_the_index_and_pages(api: Api, world: World, clock: FixedClock) -> None:
    for number in range(7):
        save(api, world, f"fact {number}", clock)
    rows = []
    for _ in range(3):
        _, row = api.call("POST", "/memories/day", world.agent, {"line": "line"})
        rows.append(row)
    status, page = api.call(
        "GET", f"/memories?kind=day&limit=1&agentId={world.agent.id}", world.person
    )
    assert status == 200 and [m["kind"] for m in page["data"]] == ["day"]
    assert page["nextToken"] is None  # one live day row today
    status, page = api.call("GET", "/memories?kind=fact&limit=3", world.agent)
    seen = [m["text"] for m in page["data"]]
    while page["nextToken"]:
        _, page = api.call(
            "GET", f"/memories?kind=fact&limit=3&nextToken={page['nextToken']}", world.agent
        )
        seen += [m["text"] for m in page["data"]]
    assert seen == [f"fact {n}" for n in range(6, -1, -1)]
    archived = save(api, world, "to archive", clock)
    api.call("POST", f"/memories/{archived['id']}/archive", world.agent, {"reason": "x"})
    _, page = api.call("GET", "/memories?kind=fact&status=archived", world.agent)
    assert [m["id"] for m in page["data"]] == [archived["id"]]
    _, page = api.call("GET", "/memories?kind=fact&all=true&limit=2", world.agent)
    assert [m["text"] for m in page["data"]] == ["to archive", "fact 6"]
    assert page["data"][0]["status"] == "archived"


def test_browse_filters_search_and_bounded_scan(
    api: Api, wired: Services, world: World, clock: FixedClock, dynamodb: Any
) -> None:
    for number in range(12):
        save(api, world, f"Deploy note {number}" if number % 3 == 0 else f"Other note {number}")
    save(api, world, FULL_WIDTH, expiresAt=(START + timedelta(hours=1)).isoformat())
    clock.set(START + timedelta(hours=2))
    person = principal(wired, world.person.token)
    browser = wired.dashboard.browser
    page = browser.page(person, world.agent.id, BrowseFilters(text="deploy"), limit=3)
    assert [m.text for m in page.memories] == [
        FULL_WIDTH,
        "Deploy note 9",
        "Deploy note 6",
    ]
    rest = browser.page(
        person, world.agent.id, BrowseFilters(text="deploy"), limit=3, after_id=page.continue_after
    )
    assert [m.text for m in rest.memories] == ["Deploy note 3", "Deploy note 0"]
    assert rest.continue_after is None and not rest.stopped_early
    expired = browser.page(person, world.agent.id, BrowseFilters(expired=True), limit=10)
    assert [m.text for m in expired.memories] == [FULL_WIDTH]
    index = DynamoDBMemoryIndexRepository(DynamoDBTable(dynamodb, TABLE))
    small = MemoryBrowser(wired.memories, index, wired.clock, scan_max=4)
    bounded = small.page(person, world.agent.id, BrowseFilters(text="nowhere"), limit=5)
    assert bounded.memories == [] and bounded.stopped_early and bounded.scanned == 4
    assert bounded.continue_after is not None
    plain = browser.page(person, world.agent.id, BrowseFilters(kind="fact"), limit=5)
    assert len(plain.memories) == 5 and plain.continue_after is not None


def test_chain_walks_both_ways(api: Api, wired: Services, world: World) -> None:
    one = save(api, world, "v1")
    two = save(api, world, "v2", supersedes=one["id"])
    three = save(api, world, "v3", supersedes=two["id"])
    assert one["id"] != three["id"]
    person = principal(wired, world.person.token)
    middle = wired.memories.get(person, two["id"])
    chain = supersede_chain(wired.memories, person, middle)
    assert [m.id for m in chain.older] == [one["id"]]
    assert [m.id for m in chain.newer] == [three["id"]]
    oldest = supersede_chain(wired.memories, person, wired.memories.get(person, one["id"]))
    assert [m.id for m in oldest.newer] == [two["id"], three["id"]] and not oldest.older


def test_recall_preview_scores_without_counting_or_logging(
    api: Api, wired: Services, world: World
) -> None:
    save(api, world, "The staging deploy needs the VPN on")
    save(api, world, "Lunch is at noon on Fridays")
    person = principal(wired, world.person.token)
    preview = wired.dashboard.recall_preview.preview(
        person, world.agent.id, "how do I deploy to staging"
    )
    assert preview.considered == 2 and preview.lines
    best = preview.lines[0]
    assert best.memory.text == "The staging deploy needs the VPN on" and best.kept
    assert preview.kept == sum(line.kept for line in preview.lines)
    assert all(line.why_not for line in preview.lines if not line.kept)
    assert preview.block.startswith("--- MEMORY ---")
    _, log = api.call("GET", f"/recalls?agentId={world.agent.id}", world.person)
    assert log["data"] == []
    _, listed = api.call("GET", "/memories", world.agent)
    assert {m["recallCount"] for m in listed["data"]} == {0}
    with pytest.raises(InvalidRequest):
        wired.dashboard.recall_preview.preview(person, world.agent.id, "   ")
    with pytest.raises(InvalidRequest):
        wired.dashboard.recall_preview.preview(person, world.agent.id, "x" * 4001)
    with pytest.raises(Forbidden):
        wired.dashboard.recall_preview.preview(person, world.outsider_agent.id, "deploy")


def test_person_sets_the_review_approval_agents_cannot(wired: Services, world: World) -> None:
    person = principal(wired, world.person.token)
    assert wired.dashboard.workspace.set_review_approval(person, " Required ").review_approval == (
        "required"
    )
    assert wired.dashboard.workspace.workspace(person).review_approval == "required"
    with pytest.raises(InvalidRequest):
        wired.dashboard.workspace.set_review_approval(person, "sometimes")
    with pytest.raises(Forbidden):
        wired.dashboard.workspace.set_review_approval(principal(wired, world.agent.token), "none")
