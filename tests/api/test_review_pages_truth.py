"""Review pages tell the truth (docs/issues.md#issue-26-item-3): a done review's header still
counts rejected and pending (the counts add up to planned); a memory a review merged says
that review's Undo brings it back, with a link; an undone action's badge says undone."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from chalice.test import Client

from chalicelib.wiring import Services
from tests.helpers import Api, World, review, save, text
from tests.helpers import DashboardPage as Page


@pytest.fixture
def browser(wired: Services) -> Iterator[Page]:
    from app import app

    with Client(app) as client:
        yield Page(client)


def test_a_merged_memory_points_to_its_review_and_undone_says_undone(
    api: Api, world: World, browser: Page
) -> None:
    older = save(api, world, "Use pnpm in the web repo")
    save(api, world, "use pnpm in the web repo")
    report = review(api, world)
    (merge,) = [action for action in report["applied"] if action["action"] == "merge"]
    assert browser.sign_in(world.person.token).status_code == 303
    page = text(browser.get(f"/reviews/{report['id']}"))
    counts = re.search(r'id="review-counts">([^<]*)<', page)
    assert counts is not None
    numbers = dict(
        (name, int(count)) for count, name in re.findall(r"(\d+) (\w+)", counts.group(1))
    )
    assert set(numbers) == {"planned", "applied", "skipped", "rejected", "pending", "undone"}
    assert numbers["planned"] == (
        numbers["applied"] + numbers["skipped"] + numbers["rejected"] + numbers["pending"]
    )

    merged = [m for m in merge["memoryIds"] if m != merge.get("keepId")]
    memory_page = text(browser.get(f"/memories/{merged[0]}"))
    assert f'href="/reviews/{report["id"]}"' in memory_page
    assert "Undo brings it back" in memory_page
    assert "a superseded memory never comes back" not in memory_page
    assert older["id"] in merge["memoryIds"]

    action = merge["actionId"]
    undo = api.call("POST", f"/reviews/{report['id']}/actions/{action}/undo", world.person, {})
    assert undo[0] == 200, undo
    card = text(browser.get(f"/reviews/{report['id']}")).split(f'id="action-{action}"')[1]
    assert re.search(r'class="badge [a-z]+">undone<', card.split("</div>")[0])


def test_the_kept_fact_shows_what_it_absorbed_in_its_page_and_history_and_undo_still_works(
    api: Api, world: World, browser: Page
) -> None:
    save(api, world, "Deploys to prod need two approvals")
    save(api, world, "deploys to prod need two approvals")
    report = review(api, world)
    (merge,) = [action for action in report["applied"] if action["action"] == "merge"]
    kept = report["plan"]["actions"][int(merge["actionId"].removeprefix("a")) - 1]["keepId"]
    (absorbed,) = [m for m in merge["memoryIds"] if m != kept]
    # the API history of the kept fact records the merge, by the review, naming the fact
    history = api.call("GET", f"/memories/{kept}/history", world.person)[1]["data"]
    (record,) = [r for r in history if r["action"] == "absorb"]
    assert record["actorType"] == "system" and record["actorId"] == report["id"]
    assert record["reason"].startswith(absorbed) and record["before"] == record["after"]
    assert browser.sign_in(world.person.token).status_code == 303
    page = text(browser.get(f"/memories/{kept}"))
    card = page.split('id="absorbed-heading"')[1].split("</section>")[0]
    assert f'href="/memories/{absorbed}"' in card and f'href="/reviews/{report["id"]}"' in card
    assert "Undo brings it back" in card and "merged into this memory as a duplicate" in card
    assert "replaced none and none replaced it" not in page
    timeline = page.split('id="history-heading"')[1]
    assert "<strong>absorb</strong>" in timeline and f'href="/memories/{absorbed}"' in timeline
    # Undo brings the absorbed fact back; the kept fact's absorb record does not block it
    action = merge["actionId"]
    undo = api.call("POST", f"/reviews/{report['id']}/actions/{action}/undo", world.person, {})
    assert undo[0] == 200, undo
    assert api.call("GET", f"/memories/{absorbed}", world.person)[1]["status"] == "active"
    after = text(browser.get(f"/memories/{kept}")).split('id="absorbed-heading"')[1]
    assert "brought back since (Undo)" in after.split("</section>")[0]


def test_a_conflict_names_what_contradicts_and_its_buttons_name_the_kept_text(
    api: Api, world: World, browser: Page
) -> None:
    older = save(api, world, "The staging API listens on port 8080")
    newer = save(api, world, "The staging API listens on port 8443")
    report = review(api, world)
    (conflict,) = [
        action for action in report["plan"]["actions"] if action["action"] == "resolve_conflict"
    ]
    assert browser.sign_in(world.person.token).status_code == 303
    page = text(browser.get(f"/reviews/{report['id']}"))
    card = page.split(f'id="action-{conflict["id"]}"')[1].split("</article>")[0]
    assert "What contradicts:" in card and ("8443 ≠ 8080" in card or "8080 ≠ 8443" in card)
    for memory in (older, newer):
        assert memory["text"] in card  # both facts' texts
        assert f"Keep “{memory['text']}”" in card  # each button says which text stays


def test_two_attributes_of_one_subject_are_neither_merged_nor_a_conflict(
    api: Api, world: World
) -> None:
    save(api, world, "The staging database is db-stg-2 in eu-west-1")
    save(api, world, "The staging database listens on port 5432")
    report = review(api, world)
    assert report["plan"]["actions"] == []
