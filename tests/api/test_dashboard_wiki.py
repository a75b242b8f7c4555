"""The dashboard's Wiki pages (docs/reference.md#wiki-on-the-dashboard, docs/issues.md#issue-45):
a person creates a page from the list, edits, publishes and archives it on its page; a
stale form is refused (412) with the page as it stands and nothing saved; hostile text is
shown as text; another workspace's page is missing."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from chalice.test import Client

from chalicelib.wiring import Services
from tests.helpers import Api, World, text
from tests.helpers import DashboardPage as Browser

PAGE_LINK = re.compile(r'href="/wiki/(pag_[0-9A-Z]{26})"')


@pytest.fixture
def browser(wired: Services) -> Iterator[Browser]:
    from app import app

    with Client(app) as client:
        yield Browser(client)


def version(page: str, verb: str) -> str:
    """The hidden ``version`` of the page's ``verb`` form."""
    found = re.search(
        rf'/{verb}">\s*<input type="hidden" name="csrf" value="[^"]+">'
        r'<input type="hidden" name="version" value="(\d+)">',
        page,
    )
    assert found is not None, verb
    return found.group(1)


def post(browser: Browser, path: str, form: dict[str, str]) -> Any:
    """Send a dashboard form with the session's CSRF token."""
    return browser.post(path, {"csrf": browser.csrf("/wiki"), **form})


def stored(api: Api, world: World, page_id: str) -> dict[str, Any]:
    status, page = api.call("GET", f"/pages/{page_id}", world.person)
    assert status == 200, page
    return dict(page)


def test_a_person_creates_edits_publishes_and_archives_on_the_dashboard(
    api: Api, world: World, browser: Browser
) -> None:
    assert browser.sign_in(world.person.token).status_code == 303
    empty = text(browser.get("/wiki"))
    assert 'aria-current="page">Wiki' in empty and PAGE_LINK.findall(empty) == []

    hostile = "# Runbook\n\n<script>alert(1)</script> and [x](javascript:alert(1))"
    created = post(
        browser,
        "/wiki",
        {"title": "On-call <b>runbook</b>", "tags": "ops, on-call", "text": hostile},
    )
    assert created.status_code == 303, text(created)
    location = created.headers["Location"]
    assert location.startswith("/wiki/pag_") and "done=page-created" in location
    page_id = location.split("/wiki/", 1)[1].split("?", 1)[0]
    page = stored(api, world, page_id)
    assert (page["slug"], page["tags"], page["state"]) == (
        "on-call-b-runbook-b",
        ["ops", "on-call"],
        "draft",
    )

    view = text(browser.get(f"/wiki/{page_id}"))
    assert "<script>alert(1)</script>" not in view and "&lt;script&gt;" in view
    assert "<b>runbook</b>" not in view
    assert PAGE_LINK.findall(text(browser.get("/wiki"))) == [page_id]
    assert PAGE_LINK.findall(text(browser.get("/wiki?state=published"))) == []
    assert browser.get("/wiki?state=gone").status_code == 400

    # an edit from the form, with the version it was made from
    form = {
        "version": version(view, "edit"),
        "title": "On-call runbook",
        "slug": "on-call",
        "tags": "ops",
        "text": "# Runbook\n\nPage the secondary after 10 minutes.",
    }
    edited = post(browser, f"/wiki/{page_id}/edit", form)
    assert edited.status_code == 303 and "done=page-edit" in edited.headers["Location"]
    page = stored(api, world, page_id)
    assert (page["title"], page["slug"], page["version"]) == ("On-call runbook", "on-call", 2)

    # the same (now stale) form again: 412, the page as it stands, what was typed kept
    stale = post(browser, f"/wiki/{page_id}/edit", {**form, "text": "A lost update"})
    assert stale.status_code == 412
    body = text(stale)
    assert "changed since you opened it" in body and "A lost update</textarea>" in body
    assert stored(api, world, page_id)["text"] == form["text"]

    # a refusal in the form: the error shown, nothing saved
    secret = "key AKIAIOSFODNN7EXAMPLE"
    current = version(text(browser.get(f"/wiki/{page_id}")), "edit")
    refused = post(browser, f"/wiki/{page_id}/edit", {**form, "version": current, "text": secret})
    assert refused.status_code == 400 and "secret_in_memory" in text(refused)
    assert stored(api, world, page_id)["version"] == 2

    view = text(browser.get("/wiki/on-call"))
    published = post(browser, f"/wiki/{page_id}/publish", {"version": version(view, "publish")})
    assert published.status_code == 303
    assert api.call("GET", "/pages/on-call", world.agent)[0] == 200
    view = text(browser.get(f"/wiki/{page_id}"))
    # a publish form made before that: stale
    assert post(browser, f"/wiki/{page_id}/publish", {"version": "2"}).status_code == 412
    archived = post(browser, f"/wiki/{page_id}/archive", {"version": version(view, "archive")})
    assert archived.status_code == 303
    assert stored(api, world, page_id)["state"] == "archived"
    assert api.call("GET", "/pages/on-call", world.agent)[0] == 404

    history = text(browser.get(f"/wiki/{page_id}")).split('id="history-heading"', 1)[1]
    assert [m for m in re.findall(r"<strong>(\w+)</strong>", history)] == [
        "create",
        "edit",
        "publish",
        "archive",
    ]
    assert "+Page the secondary after 10 minutes." in history
    assert post(browser, f"/wiki/{page_id}/edit", {**form, "version": "4"}).status_code == 409


def test_a_bad_create_form_keeps_what_was_typed_and_other_workspaces_pages_are_missing(
    api: Api, world: World, browser: Browser
) -> None:
    assert browser.sign_in(world.person.token).status_code == 303
    refused = post(browser, "/wiki", {"title": "", "text": "Kept text"})
    assert refused.status_code == 400 and "Kept text</textarea>" in text(refused)
    assert api.call("GET", "/pages", world.person)[1]["data"] == []
    status, theirs = api.call("POST", "/pages", world.outsider, {"title": "Theirs", "text": "x"})
    assert status == 201
    assert browser.get(f"/wiki/{theirs['id']}").status_code == 404
    assert browser.get("/wiki/theirs").status_code == 404
    assert post(browser, f"/wiki/{theirs['id']}/publish", {"version": "1"}).status_code == 404
    assert api.call("GET", f"/pages/{theirs['id']}", world.outsider)[1]["state"] == "draft"
