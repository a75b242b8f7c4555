"""Erasing a memory from the dashboard (docs/reference.md#erasing-a-memory): a reason and a
ticked confirmation are required, a stale form changes nothing, and the page then shows
the tombstone. Through the app (chalice.test.Client)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from chalice.test import Client

from chalicelib.wiring import Services
from tests.helpers import Api, World, text
from tests.helpers import DashboardPage as Page

FACT = "The billing export goes to bucket acme-bill-5512"


@pytest.fixture
def browser(wired: Services) -> Iterator[Page]:
    from app import app

    with Client(app) as client:
        yield Page(client)


def erase_form(page: Page, memory_id: str) -> dict[str, str]:
    body = text(page.get(f"/memories/{memory_id}"))
    form = body[body.index(f'action="/memories/{memory_id}/erase"') :]
    return dict(re.findall(r'name="(csrf|version)" value="([^"]*)"', form)[:2])


def test_a_person_erases_a_memory_after_confirming(
    api: Api, browser: Page, world: World, s3: object
) -> None:
    _, memory = api.call("POST", "/memories", world.agent, {"text": FACT})
    browser.sign_in(world.person.token)
    form = erase_form(browser, memory["id"])
    path = f"/memories/{memory['id']}/erase"
    unconfirmed = browser.post(path, {**form, "reason": "a customer asked"})
    assert unconfirmed.status_code == 400
    assert "Tick the box" in text(unconfirmed) and 'value="a customer asked"' in text(unconfirmed)
    blank = browser.post(path, {**form, "reason": " ", "confirm": "erase"})
    assert blank.status_code == 400
    assert api.call("GET", f"/memories/{memory['id']}", world.person)[1]["text"] == FACT

    done = browser.post(path, {**form, "reason": "a customer asked", "confirm": "erase"})
    assert done.status_code == 303 and "done=erased" in done.headers["Location"]
    page = text(browser.get(f"/memories/{memory['id']}"))
    assert FACT not in page
    assert "a customer asked" in page and ">erased</span>" in page
    assert f'action="/memories/{memory["id"]}/erase"' not in page  # no second erase form
    assert f'action="/memories/{memory["id"]}/edit"' not in page


def test_a_stale_erase_form_changes_nothing(api: Api, browser: Page, world: World) -> None:
    _, memory = api.call("POST", "/memories", world.agent, {"text": FACT})
    browser.sign_in(world.person.token)
    form = erase_form(browser, memory["id"])
    api.call("PATCH", f"/memories/{memory['id']}", world.person, {"text": FACT + " now"})
    sent = {**form, "reason": "asked", "confirm": "erase"}
    refused = browser.post(f"/memories/{memory['id']}/erase", sent)
    assert refused.status_code == 412
    assert "<code>precondition_failed</code>" in text(refused)
    shown = api.call("GET", f"/memories/{memory['id']}", world.person)[1]
    assert shown["status"] == "active" and shown["text"] == FACT + " now"
