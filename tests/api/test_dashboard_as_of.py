"""The dashboard's "As of" picker on an agent's memory list (docs/issues.md#issue-46-item-4,
docs/reference.md#as-of-a-moment): the list as it was then, read-only, with a banner and a
way back to now."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from datetime import timedelta
from urllib.parse import quote

import pytest
from chalice.test import Client

from chalicelib.ids import FixedClock
from chalicelib.wiring import Services
from tests.helpers import START, Api, World, save, text
from tests.helpers import DashboardPage as Page


@pytest.fixture
def browser(wired: Services) -> Iterator[Page]:
    from app import app

    with Client(app) as client:
        yield Page(client)


def rows(page: str) -> list[str]:
    return re.findall(r'<tr id="row-(mem_[0-9A-Z]+)"', page)


def test_the_list_as_of_a_moment_is_read_only_with_a_way_back(
    api: Api, browser: Page, world: World, clock: FixedClock
) -> None:
    clock.set(START + timedelta(minutes=1))
    first = save(api, world, "The staging deploy needs the VPN on")
    clock.set(START + timedelta(minutes=2))
    edit = {"text": "The staging deploy needs the office VPN on"}
    assert api.call("PATCH", f"/memories/{first['id']}", world.person, edit)[0] == 200
    clock.set(START + timedelta(minutes=3))
    second = save(api, world, "Deploys go through the bastion", supersedes=first["id"])
    clock.set(START + timedelta(minutes=4))
    browser.sign_in(world.person.token)

    today = text(browser.get(f"/agents/{world.agent.id}"))
    assert 'type="datetime-local"' in today and 'name="asOf"' in today

    # The picker sends a zoneless local time, read as UTC.
    then = text(browser.get(f"/agents/{world.agent.id}?asOf=2026-11-30T12:01:30"))
    assert "As of 2026-11-30T12:01:30.000Z, read-only." in then
    assert f'href="/agents/{world.agent.id}"' in then and "Back to now" in then
    assert rows(then) == [first["id"]]
    assert "The staging deploy needs the VPN on" in html.unescape(then)
    assert "office VPN" not in then and "bastion" not in then
    assert 'method="post"' not in then.split('id="memory-list"')[1]  # no actions
    assert 'value="2026-11-30T12:01:30"' in then  # the picker keeps the time

    edited = text(browser.get(f"/agents/{world.agent.id}?asOf=2026-11-30T12:02"))
    assert rows(edited) == [first["id"]] and "office VPN" in edited
    replaced = text(browser.get(f"/agents/{world.agent.id}?asOf=2026-11-30T12:03:30"))
    assert rows(replaced) == [second["id"]]
    every = text(browser.get(f"/agents/{world.agent.id}?asOf=2026-11-30T12:03:30&status=all"))
    assert rows(every) == [second["id"], first["id"]] and "superseded" in every


def test_bad_times_answer_their_codes(browser: Page, world: World) -> None:
    browser.sign_in(world.person.token)
    for value, code in (
        ("not a time", "as_of_invalid"),
        ("2026-12-30T12:00", "as_of_in_future"),
        ("2026-11-29T12:00", "as_of_before_workspace"),
    ):
        response = browser.get(f"/agents/{world.agent.id}?asOf={quote(value)}")
        assert response.status_code == 400, value
        assert code in text(response)


def test_another_workspaces_agent_is_not_found(
    api: Api, browser: Page, world: World, clock: FixedClock
) -> None:
    save(api, world, "The staging deploy needs the VPN on")
    clock.set(START + timedelta(minutes=1))
    browser.sign_in(world.outsider.token)
    response = browser.get(f"/agents/{world.agent.id}?asOf=2026-11-30T12:00:30")
    assert response.status_code == 404
    assert "staging deploy" not in text(response) and "read-only" not in text(response)


def test_the_recall_log_links_each_run_to_what_it_saw(
    api: Api, browser: Page, world: World
) -> None:
    memory = save(api, world, "The staging deploy needs the <b>VPN</b> on")
    status, given = api.call("POST", "/memories/recall", world.agent, {"query": "staging deploy"})
    assert status == 200 and given["memories"], given
    browser.sign_in(world.person.token)
    log = text(browser.get(f"/agents/{world.agent.id}/recall"))
    link = f"/agents/{world.agent.id}/recalls/{given['recallId']}"
    assert f'href="{link}"' in log
    erased = {"reason": "personal data"}
    assert api.call("POST", f"/memories/{memory['id']}/erase", world.person, erased)[0] == 200
    seen = text(browser.get(link))
    assert "Rebuilt, not stored" in seen and "erased since" in seen and memory["id"] in seen
    assert "VPN" not in seen
    other = browser.get(f"/agents/{world.other_agent.id}/recalls/{given['recallId']}")
    assert other.status_code == 404 and "recall_not_found" in text(other)
