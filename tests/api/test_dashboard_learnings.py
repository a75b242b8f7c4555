"""The dashboard's Learnings pages (docs/reference.md#15-learnings, docs/issues.md#issue-25-item-5):
an agent's proposal waits on the page and is counted on the agents overview; a person
approves it (editing first), rejects it with a reason, edits and retires; a stale form is
refused (412) with the learning as it stands; another workspace's learning is missing; an
agent cannot sign in to decide."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from chalice.test import Client

from chalicelib.ids import FixedClock
from chalicelib.wiring import Services
from tests.helpers import Api, World, text
from tests.helpers import DashboardPage as Page

LEARNING_LINK = re.compile(r'href="/learnings/(lrn_[0-9A-Z]{26})"')


@pytest.fixture
def browser(wired: Services) -> Iterator[Page]:
    from app import app

    with Client(app) as client:
        yield Page(client)


def propose(api: Api, world: World, fact: str, **headers: str) -> dict[str, Any]:
    """An agent's proposal through the API: it waits (the workspace's default approval)."""
    status, learning = api.call("POST", "/learnings", world.agent, {"text": fact}, headers=headers)
    assert status == 201 and learning["state"] == "proposed", learning
    return dict(learning)


def add(api: Api, world: World, fact: str) -> dict[str, Any]:
    """A person's learning through the API: active at once."""
    status, learning = api.call("POST", "/learnings", world.person, {"text": fact})
    assert status == 201 and learning["state"] == "active", learning
    return dict(learning)


def stored(api: Api, world: World, learning_id: str) -> dict[str, Any]:
    status, learning = api.call("GET", f"/learnings/{learning_id}", world.person)
    assert status == 200, learning
    return dict(learning)


def history(api: Api, world: World, learning_id: str) -> list[dict[str, Any]]:
    status, records = api.call("GET", f"/learnings/{learning_id}/history", world.person)
    assert status == 200, records
    return list(records["data"])


def version(page: str, verb: str) -> str:
    """The hidden ``version`` of the page's ``verb`` form."""
    found = re.search(
        rf'/{verb}">\s*<input type="hidden" name="csrf" value="[^"]+">'
        r'<input type="hidden" name="version" value="(\d+)">',
        page,
    )
    assert found is not None, verb
    return found.group(1)


def section(page: str, heading: str) -> str:
    """The ``<section>`` whose heading has the id ``heading``."""
    assert f'id="{heading}"' in page, heading
    return page.split(f'id="{heading}"', 1)[1].split("</section>", 1)[0]


def listed(page: str) -> list[str]:
    """The learning ids of the Learnings page, in the order shown."""
    return LEARNING_LINK.findall(section(page, "learnings-heading"))


def forms(page: str) -> set[str]:
    """The decisions the learning's page offers."""
    return set(re.findall(r'/learnings/lrn_[0-9A-Z]{26}/(approve|edit|reject|retire)"', page))


def test_an_agents_proposal_waits_under_proposed_and_is_counted_on_the_overview(
    api: Api, world: World, browser: Page, clock: FixedClock
) -> None:
    assert browser.sign_in(world.person.token).status_code == 303
    assert 'id="learnings-waiting"' not in text(browser.get("/"))
    run = {"X-Pinework-Run": "run-7", "X-Pinework-Task": "PIN-9"}
    first = propose(api, world, "Deploys need the VPN <b>on</b>", **run)
    clock.set(clock.now() + timedelta(minutes=5))
    second = propose(api, world, "Fridays are freeze days")

    overview = text(browser.get("/"))
    waiting = overview.split('id="learnings-waiting"', 1)[1].split("</p>", 1)[0]
    assert 'href="/learnings?state=proposed">2 proposed learnings</a>' in waiting

    proposed = text(browser.get("/learnings?state=proposed"))
    assert listed(proposed) == [first["id"], second["id"]]  # the longest waiting on top
    assert proposed.count('class="badge pending">proposed') == 2
    assert "&lt;b&gt;on&lt;/b&gt;" in proposed and "<b>on</b>" not in proposed
    assert 'aria-current="page">Learnings' in proposed
    assert listed(text(browser.get("/learnings?state=active"))) == []
    assert listed(text(browser.get("/learnings?q=FRIDAYS"))) == [second["id"]]
    assert browser.get("/learnings?state=maybe").status_code == 400

    page = text(browser.get(f"/learnings/{first['id']}"))
    about = section(page, "learning-heading")
    assert f'agent <a href="/agents/{world.agent.id}" title="{world.agent.id}">builder</a>' in about
    assert "run-7" in about and "PIN-9" in about and "Decided" not in about
    assert forms(page) == {"approve", "reject"}
    approve_box = section(page, "approve-heading")
    assert "Deploys need the VPN &lt;b&gt;on&lt;/b&gt;</textarea>" in approve_box


def test_the_list_puts_proposed_first_then_active_newest_first_then_rejected_and_retired(
    api: Api, world: World, browser: Page, clock: FixedClock
) -> None:
    made: list[str] = []
    for fact, maker in [
        ("Old proposal", propose),
        ("Old active", add),
        ("New proposal", propose),
        ("New active", add),
        ("To reject", propose),
        ("To retire", add),
    ]:
        clock.set(clock.now() + timedelta(minutes=1))
        made.append(maker(api, world, fact)["id"])
    old_proposal, old_active, new_proposal, new_active, rejected, retired = made
    assert api.call("POST", f"/learnings/{rejected}/reject", world.person, {"reason": "no"})[0]
    assert api.call("POST", f"/learnings/{retired}/retire", world.person, {})[0] == 200

    assert browser.sign_in(world.person.token).status_code == 303
    assert listed(text(browser.get("/learnings"))) == [
        old_proposal,
        new_proposal,
        new_active,
        old_active,
        rejected,
        retired,
    ]
    assert listed(text(browser.get("/learnings?state=retired"))) == [retired]


def test_many_decided_learnings_never_hide_an_old_proposal(
    api: Api, world: World, browser: Page, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chalicelib.web.views import learnings

    monkeypatch.setattr(learnings, "LEARNINGS_SHOWN", 2)
    waiting = propose(api, world, "The oldest proposal")["id"]
    retired = []
    for number in range(3):
        clock.set(clock.now() + timedelta(minutes=1))
        retired.append(add(api, world, f"Retired fact number {number}")["id"])
        assert api.call("POST", f"/learnings/{retired[-1]}/retire", world.person, {})[0] == 200

    assert browser.sign_in(world.person.token).status_code == 303
    page = text(browser.get("/learnings"))
    assert listed(page) == [waiting, retired[2], retired[1]]
    assert "Only the newest 2 retired learnings are shown" in page
    assert 'id="learnings-cut"' not in text(browser.get("/learnings?state=proposed"))


def test_a_person_approves_with_an_edited_text(api: Api, world: World, browser: Page) -> None:
    learning = propose(api, world, "Deploys need the VPN")
    path = f"/learnings/{learning['id']}"
    assert browser.sign_in(world.person.token).status_code == 303
    page = text(browser.get(path))
    approved = browser.post(
        f"{path}/approve",
        {
            "csrf": browser.csrf(path),
            "version": version(page, "approve"),
            "text": "Deploys need the VPN, turned on first",
        },
    )
    assert approved.status_code == 303
    assert approved.headers["Location"] == f"{path}?done=learning-approve"

    now = stored(api, world, learning["id"])
    assert now["state"] == "active" and now["text"] == "Deploys need the VPN, turned on first"
    assert now["decidedBy"] == world.person.id
    page = text(browser.get(f"{path}?done=learning-approve"))
    assert "Learning approved" in page and 'class="badge active">active' in page
    assert forms(page) == {"edit", "retire"}
    records = section(page, "history-heading")
    assert records.index("<strong>propose</strong>") < records.index("<strong>approve</strong>")
    assert "state: proposed → active" in records
    before = records.split('aria-label="Text before">', 1)[1].split("</div>", 1)[0]
    after = records.split('aria-label="Text after">', 1)[1].split("</div>", 1)[0]
    assert (before, after) == ("Deploys need the VPN", "Deploys need the VPN, turned on first")
    assert 'id="learnings-waiting"' not in text(browser.get("/"))


def test_rejecting_needs_a_reason(api: Api, world: World, browser: Page) -> None:
    learning = propose(api, world, "Fridays are freeze days")
    path = f"/learnings/{learning['id']}"
    assert browser.sign_in(world.person.token).status_code == 303
    page = text(browser.get(path))
    token = browser.csrf(path)
    refused = browser.post(
        f"{path}/reject", {"csrf": token, "version": version(page, "reject"), "reason": "   "}
    )
    assert refused.status_code == 400
    shown = text(refused)
    assert 'id="reject-error"' in section(shown, "reject-heading")
    assert "reason is blank" in section(shown, "reject-heading")
    assert 'role="alert"' not in section(shown, "approve-heading")
    assert stored(api, world, learning["id"])["state"] == "proposed"
    assert [record["action"] for record in history(api, world, learning["id"])] == ["propose"]

    rejected = browser.post(
        f"{path}/reject",
        {"csrf": token, "version": version(page, "reject"), "reason": "we ship on Fridays"},
    )
    assert rejected.status_code == 303
    now = stored(api, world, learning["id"])
    assert now["state"] == "rejected" and now["reason"] == "we ship on Fridays"
    page = text(browser.get(path))
    assert 'class="badge archived">rejected' in page and forms(page) == set()
    assert "we ship on Fridays" in section(page, "learning-heading")
    again = api.call("POST", "/learnings", world.agent, {"text": "Fridays are freeze days"})
    assert again[0] == 409 and again[1]["error"]["code"] == "learning_rejected"


def test_a_stale_form_answers_412_and_changes_nothing(
    api: Api, world: World, browser: Page
) -> None:
    learning = propose(api, world, "Deploys need the VPN")
    path = f"/learnings/{learning['id']}"
    assert browser.sign_in(world.person.token).status_code == 303
    opened = text(browser.get(path))
    token = browser.csrf(path)
    edited = api.call("PATCH", path, world.person, {"text": "Deploys need the office VPN"})
    assert edited[0] == 200  # another tab, another person: the form is now stale

    stale = browser.post(
        f"{path}/approve",
        {"csrf": token, "version": version(opened, "approve"), "text": "My own wording"},
    )
    assert stale.status_code == 412
    shown = text(stale)
    box = section(shown, "approve-heading")
    assert "<code>precondition_failed</code>" in box and "changed since you opened it" in box
    assert "My own wording</textarea>" in box  # what was typed is kept
    assert "Deploys need the office VPN" in section(shown, "learning-heading")
    assert version(shown, "approve") != version(opened, "approve")
    now = stored(api, world, learning["id"])
    assert (now["state"], now["text"]) == ("proposed", "Deploys need the office VPN")

    missing = browser.post(f"{path}/approve", {"csrf": token, "text": "x"})
    assert missing.status_code == 400 and "which version" in text(missing)
    assert stored(api, world, learning["id"])["state"] == "proposed"


def test_a_person_adds_edits_then_retires_a_learning(api: Api, world: World, browser: Page) -> None:
    assert browser.sign_in(world.person.token).status_code == 303
    token = browser.csrf("/learnings")
    blank = browser.post("/learnings", {"csrf": token, "text": " "})
    assert blank.status_code == 400 and 'id="propose-error"' in text(blank)
    assert listed(text(browser.get("/learnings"))) == []

    added = browser.post("/learnings", {"csrf": token, "text": "Use UTC in every log"})
    assert added.status_code == 303
    path, done = added.headers["Location"].split("?")
    assert done == "done=learning-proposed"
    learning_id = path.rsplit("/", 1)[1]
    now = stored(api, world, learning_id)
    assert now["state"] == "active" and now["proposedByType"] == "person"
    same = browser.post("/learnings", {"csrf": token, "text": "Use UTC in every log"})
    assert same.headers["Location"] == f"{path}?done=learning-exists"

    page = text(browser.get(path))
    assert forms(page) == {"edit", "retire"}
    edited = browser.post(
        f"{path}/edit",
        {"csrf": token, "version": version(page, "edit"), "text": "Use UTC in every log line"},
    )
    assert edited.status_code == 303
    assert stored(api, world, learning_id)["text"] == "Use UTC in every log line"

    stale = browser.post(f"{path}/retire", {"csrf": token, "version": version(page, "retire")})
    assert stale.status_code == 412 and stored(api, world, learning_id)["state"] == "active"
    page = text(browser.get(path))
    retired = browser.post(
        f"{path}/retire",
        {"csrf": token, "version": version(page, "retire"), "reason": "the logs moved"},
    )
    assert retired.status_code == 303
    now = stored(api, world, learning_id)
    assert now["state"] == "retired" and now["reason"] == "the logs moved"
    page = text(browser.get(path))
    assert 'class="badge archived">retired' in page and forms(page) == set()
    actions = [record["action"] for record in history(api, world, learning_id)]
    assert actions == ["propose", "edit", "retire"]
    records = section(page, "history-heading")
    assert [records.index(f"<strong>{action}</strong>") for action in actions] == sorted(
        records.index(f"<strong>{action}</strong>") for action in actions
    )
    assert "the logs moved" in records


def test_another_workspaces_learning_is_missing(api: Api, world: World, browser: Page) -> None:
    learning = propose(api, world, "Deploys need the VPN")
    path = f"/learnings/{learning['id']}"
    assert browser.sign_in(world.outsider.token).status_code == 303
    token = browser.csrf("/learnings")
    assert browser.get(path).status_code == 404
    for verb, form in [
        ("approve", {"text": "taken over"}),
        ("reject", {"reason": "not yours"}),
        ("edit", {"text": "taken over"}),
    ]:
        answer = browser.post(f"{path}/{verb}", {"csrf": token, "version": "1", **form})
        assert answer.status_code == 404, verb
    assert learning["id"] not in text(browser.get("/learnings"))
    assert 'id="learnings-waiting"' not in text(browser.get("/"))
    now = stored(api, world, learning["id"])
    assert (now["state"], now["text"]) == ("proposed", "Deploys need the VPN")


def test_agents_cannot_sign_in_to_decide(api: Api, world: World, browser: Page) -> None:
    learning = propose(api, world, "Deploys need the VPN")
    refused = browser.sign_in(world.agent.token)
    assert refused.status_code == 403 and "Set-Cookie" not in refused.headers
    assert browser.get("/learnings").status_code == 303  # to the sign-in page
    bearer = browser.get("/learnings", Authorization=f"Bearer {world.agent.token}")
    assert bearer.status_code != 200
    assert stored(api, world, learning["id"])["state"] == "proposed"


def test_the_page_lists_the_recalls_that_gave_it(api: Api, world: World, browser: Page) -> None:
    learning = add(api, world, "Deploys need the VPN")
    path = f"/learnings/{learning['id']}"
    assert browser.sign_in(world.person.token).status_code == 303
    assert "Not in the last" in section(text(browser.get(path)), "recalled-heading")
    status, recall = api.call(
        "POST", "/memories/recall", world.other_agent, {"query": "do deploys need the VPN?"}
    )
    assert status == 200 and recall["learnings"], recall
    recalled = section(text(browser.get(path)), "recalled-heading")
    assert world.other_agent.id in recalled and "on demand" in recalled


def test_the_settings_page_sets_the_learning_approval(
    api: Api, world: World, browser: Page
) -> None:
    assert browser.sign_in(world.person.token).status_code == 303
    token = browser.csrf("/settings")
    bad = browser.post("/settings/learning-approval", {"csrf": token, "approval": "maybe"})
    assert bad.status_code == 400 and "learningApproval must be" in text(bad)
    # "none" names the risk and asks for confirmation (docs/issues.md#issue-42-item-3)
    unconfirmed = browser.post("/settings/learning-approval", {"csrf": token, "approval": "none"})
    assert unconfirmed.status_code == 400 and "unread by a person" in text(unconfirmed)
    saved = browser.post(
        "/settings/learning-approval", {"csrf": token, "approval": "none", "confirm": "yes"}
    )
    assert saved.status_code == 303
    settings = text(browser.get("/settings"))
    assert "Set to <strong>none</strong> by" in settings and world.person.id in settings
    proposed = api.call("POST", "/learnings", world.agent, {"text": "Use UTC everywhere"})[1]
    assert proposed["state"] == "active"
    # listed as not reviewed until a person approves (confirms) it
    listed = text(browser.get("/learnings"))
    assert "not reviewed" in listed
    status, recall = api.call("POST", "/memories/recall", world.other_agent, {"query": "UTC"})
    assert (
        f"{proposed['id']} (" in recall["block"] and ", not reviewed) Use UTC" in (recall["block"])
    )
    status, confirmed = api.call("POST", f"/learnings/{proposed['id']}/approve", world.person, {})
    assert (status, confirmed["decidedBy"]) == (200, world.person.id), confirmed
    assert "not reviewed" not in text(browser.get("/learnings"))
    recall = api.call("POST", "/memories/recall", world.other_agent, {"query": "UTC"})[1]
    assert "not reviewed" not in recall["block"]


def test_the_learnings_page_lists_the_unreviewed_ones_until_each_is_decided(
    api: Api, world: World, wired: Services, browser: Page
) -> None:
    assert browser.sign_in(world.person.token).status_code == 303
    before = browser.get("/learnings")
    assert "Not reviewed (0)" in text(before)
    assert 'id="learnings-unreviewed-note"' not in before.body.decode()
    waiting = api.call("POST", "/learnings", world.agent, {"text": "Tickets close on Fridays"})[1]
    wired.admin.set_learning_approval(world.workspace_id, "none", confirmed=True)
    live = [
        api.call("POST", "/learnings", world.agent, {"text": said})[1]
        for said in ("Builds run on arm64", "Logs ship to Loki")
    ]
    mine = api.call("POST", "/learnings", world.person, {"text": "Use UTC in every log"})[1]

    page = browser.get("/learnings")
    note = page.body.decode().split('id="learnings-unreviewed-note"', 1)[1].split("</p>", 1)[0]
    assert "2 learnings went live without a person" in note and "Not reviewed (2)" in note
    assert "/learnings?unreviewed=true" in note
    only = browser.get("/learnings?unreviewed=true")
    listed = only.body.decode()
    assert all(found["id"] in listed for found in live)
    assert waiting["id"] not in listed and mine["id"] not in listed
    assert "2 learnings" in text(only) and 'name="unreviewed" value="true" checked' in listed
    assert browser.get("/learnings?unreviewed=true&state=proposed").status_code == 400
    # an unreviewed learning's page offers approve (to confirm), edit and retire, never
    # reject (only a proposal is rejected), and says no person decided it
    shown = browser.get(f"/learnings/{live[0]['id']}").body.decode()
    assert f"/learnings/{live[0]['id']}/approve" in shown
    assert f"/learnings/{live[0]['id']}/retire" in shown
    assert f"/learnings/{live[0]['id']}/reject" not in shown
    assert "went live without a person reading it" in shown
    proposal = browser.get(f"/learnings/{waiting['id']}").body.decode()
    assert f"/learnings/{waiting['id']}/reject" in proposal

    for found in live:
        path = f"/learnings/{found['id']}/approve"
        assert api.call("POST", path, world.person, {})[0] == 200
    after = browser.get("/learnings?unreviewed=true")
    assert "No learning is waiting for a review" in text(after)
    assert 'id="learnings-unreviewed-note"' not in after.body.decode()
    assert "Not reviewed (0)" in text(after)
