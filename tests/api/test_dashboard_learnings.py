"""The dashboard's Learnings pages (docs/reference.md#15-learnings, docs/issues.md#issue-25-item-5):
an agent's proposal waits on the page and is counted on the agents overview; a person
approves it (editing first), rejects with a reason, retires; a stale form is refused with
the learning as it stands; another workspace's learning is missing."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from chalice.test import Client

from chalicelib.wiring import Services
from tests.helpers import Api, World, text
from tests.helpers import DashboardPage as Page


@pytest.fixture
def browser(wired: Services) -> Iterator[Page]:
    from app import app

    with Client(app) as client:
        yield Page(client)


def version(page: str, verb: str) -> str:
    found = re.search(
        rf'/{verb}">\s*<input type="hidden" name="csrf" value="[^"]+">'
        r'<input type="hidden" name="version" value="(\d+)">',
        page,
    )
    assert found is not None, verb
    return found.group(1)


def test_a_person_decides_learnings_on_the_dashboard(api: Api, world: World, browser: Page) -> None:
    first = api.call("POST", "/learnings", world.agent, {"text": "Deploys need the VPN"})[1]
    second = api.call("POST", "/learnings", world.agent, {"text": "Fridays are freeze days"})[1]
    assert browser.sign_in(world.person.token).status_code == 303
    overview = text(browser.get("/"))
    assert "2 proposed learnings" in overview and "/learnings?state=proposed" in overview
    listing = text(browser.get("/learnings"))
    assert listing.index(first["id"]) < listing.index(second["id"])  # oldest waiting first

    path = f"/learnings/{first['id']}"
    page = text(browser.get(path))
    token = browser.csrf(path)
    stale = browser.post(f"{path}/approve", {"csrf": token, "version": "99", "text": "x"})
    assert stale.status_code == 412 and "changed since you opened it" in text(stale)
    approved = browser.post(
        f"{path}/approve",
        {"csrf": token, "version": version(page, "approve"), "text": "Deploys need the VPN on"},
    )
    assert approved.status_code == 303
    page = text(browser.get(path))
    assert "Deploys need the VPN on" in page and 'class="badge active">active' in page
    assert "Not in the last" in page
    status, recall = api.call(
        "POST", "/memories/recall", world.other_agent, {"query": "do deploys need the VPN?"}
    )
    assert status == 200 and recall["learnings"], recall
    page = text(browser.get(path))
    recalled = page.split('id="recalled-heading"')[1].split("</section>")[0]
    assert world.other_agent.id in recalled and "on demand" in recalled
    assert "Retire" in page and "approve" in page  # the history names the decision

    other = f"/learnings/{second['id']}"
    page = text(browser.get(other))
    refused = browser.post(
        f"{other}/reject", {"csrf": token, "version": version(page, "reject"), "reason": " "}
    )
    assert refused.status_code == 400 and "blank" in text(refused)
    assert api.call("GET", other, world.person)[1]["state"] == "proposed"
    rejected = browser.post(
        f"{other}/reject", {"csrf": token, "version": version(page, "reject"), "reason": "no"}
    )
    assert rejected.status_code == 303
    assert "proposed learning" not in text(browser.get("/"))

    page = text(browser.get(path))
    retired = browser.post(f"{path}/retire", {"csrf": token, "version": version(page, "retire")})
    assert retired.status_code == 303
    assert api.call("GET", path, world.person)[1]["state"] == "retired"
    added = browser.post("/learnings", {"csrf": token, "text": "Use UTC in every log"})
    assert added.status_code == 303
    assert "Use UTC in every log" in text(browser.get("/learnings?state=active"))

    outsider = Page(browser.client)
    outsider.cookie = None
    assert outsider.sign_in(world.outsider.token).status_code == 303
    assert outsider.get(path).status_code == 404


def test_the_settings_page_sets_the_learning_approval(
    api: Api, world: World, browser: Page
) -> None:
    assert browser.sign_in(world.person.token).status_code == 303
    token = browser.csrf("/settings")
    bad = browser.post("/settings/learning-approval", {"csrf": token, "approval": "maybe"})
    assert bad.status_code == 400 and "learningApproval must be" in text(bad)
    saved = browser.post("/settings/learning-approval", {"csrf": token, "approval": "none"})
    assert saved.status_code == 303
    proposed = api.call("POST", "/learnings", world.agent, {"text": "Use UTC everywhere"})[1]
    assert proposed["state"] == "active"
