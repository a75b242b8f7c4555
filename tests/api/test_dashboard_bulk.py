"""Bulk actions on the dashboard's memory list (docs/reference.md#bulk-actions,
docs/issues.md#issue-46-item-3): a person ticks memories, archives or tags them in one
step, sees what changed and what did not, and undoes it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from chalice.test import Client

from chalicelib.wiring import Services
from tests.helpers import Api, World, save, text
from tests.helpers import DashboardPage as Browser

UNDO = re.compile(r'action="/agents/agt_[0-9A-Z]{26}/bulk/(blk_[0-9A-Z]{26})/undo"')


@pytest.fixture
def browser(wired: Services) -> Iterator[Browser]:
    from app import app

    with Client(app) as client:
        yield Browser(client)


def status_of(api: Api, world: World, memory_id: str) -> Any:
    status, memory = api.call("GET", f"/memories/{memory_id}", world.person)
    assert status == 200, memory
    return memory


def test_a_person_ticks_memories_archives_them_and_undoes_it(
    api: Api, world: World, browser: Browser
) -> None:
    facts = [save(api, world, f"Dashboard bulk fact {n}") for n in range(3)]
    assert browser.sign_in(world.person.token).status_code == 303
    listed = text(browser.get(f"/agents/{world.agent.id}"))
    assert 'id="bulk-form"' in listed
    for fact in facts:
        assert f'form="bulk-form" name="pick-{fact["id"]}"' in listed
    csrf = browser.csrf(f"/agents/{world.agent.id}")
    picked = {f"pick-{fact['id']}": "on" for fact in facts[:2]}
    answer = browser.post(
        f"/agents/{world.agent.id}/bulk",
        {"csrf": csrf, "action": "archive", "detail": "moved to the wiki", **picked},
    )
    page = text(answer)
    assert answer.status_code == 200, page
    assert "2 memories changed" in page
    assert [status_of(api, world, f["id"])["status"] for f in facts] == [
        "archived",
        "archived",
        "active",
    ]
    undo = UNDO.search(page)
    assert undo is not None
    undone = browser.post(f"/agents/{world.agent.id}/bulk/{undo.group(1)}/undo", {"csrf": csrf})
    assert undone.status_code == 200 and "2 memories put back" in text(undone)
    assert all(status_of(api, world, f["id"])["status"] == "active" for f in facts)
    again = browser.post(f"/agents/{world.agent.id}/bulk/{undo.group(1)}/undo", {"csrf": csrf})
    assert again.status_code == 409 and "undone already" in text(again)


def test_tagging_shows_what_was_left_and_a_bad_form_changes_nothing(
    api: Api, world: World, browser: Browser
) -> None:
    tagged = save(api, world, "Already tagged", tags=["ops"])
    plain = save(api, world, "Not tagged yet")
    browser.sign_in(world.person.token)
    csrf = browser.csrf(f"/agents/{world.agent.id}")
    picked = {f"pick-{tagged['id']}": "on", f"pick-{plain['id']}": "on"}
    page = text(
        browser.post(
            f"/agents/{world.agent.id}/bulk",
            {"csrf": csrf, "action": "tag", "detail": "ops", **picked},
        )
    )
    assert "1 memory changed" in page and "no_change" in page
    assert status_of(api, world, plain["id"])["tags"] == ["ops"]
    for form, code in (
        ({"action": "archive", "detail": "x"}, "invalid_request"),  # nothing ticked
        ({"action": "archive", "detail": "", **picked}, "invalid_request"),
        ({"action": "erase", "detail": "x", **picked}, "invalid_request"),
        ({"action": "tag", "detail": "not/a/tag", **picked}, "memory_tag_invalid"),
    ):
        refused = browser.post(f"/agents/{world.agent.id}/bulk", {"csrf": csrf, **form})
        assert refused.status_code == 400 and code in text(refused), form
    assert status_of(api, world, plain["id"])["status"] == "active"
    assert status_of(api, world, tagged["id"])["tags"] == ["ops"]
