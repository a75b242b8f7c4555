"""No lost edits in the dashboard (docs/reference.md#stale-forms): every
form that changes a memory carries the version it was shown at, and a stale one is refused with
412 ``precondition_failed`` and a conflict page that keeps what the person typed; the history's
word diff is bounded (docs/reference.md#history-diff). Through the app (chalice.test.Client)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from chalice.test import Client

from chalicelib.wiring import Services
from tests.helpers import Actor, Api, World, text
from tests.helpers import DashboardPage as Page


@pytest.fixture
def browser(wired: Services) -> Iterator[Page]:
    from app import app

    with Client(app) as client:
        yield Page(client)


@pytest.fixture
def second(wired: Services, world: World) -> Actor:
    """A second person of the world's workspace."""
    issued = wired.admin.create_person(world.workspace_id, "bo@example.com")
    return Actor(issued.id, issued.token)


@pytest.fixture
def other(browser: Page) -> Page:
    """A second visitor (its own cookies) on the same app."""
    return Page(browser.client)


def opened(page: Page, memory_id: str) -> dict[str, str]:
    """The edit form of a memory's page as the browser would send it back."""
    body = text(page.get(f"/memories/{memory_id}"))
    edit = body[body.index(f'action="/memories/{memory_id}/edit"') :]
    found = re.findall(r'name="(csrf|version|expires_was|text_was)" value="([^"]*)"', edit)
    fields = {name: unescape(value) for name, value in found}
    textarea = re.search(r'name="text"[^>]*>(.*?)</textarea>', edit, re.S)
    assert textarea is not None
    expires = re.search(r'name="expires" value="([^"]*)"', edit)
    assert expires is not None
    return {**fields, "text": unescape(textarea.group(1)), "expires": expires.group(1)}


def day_row_opened(api: Api, page: Page, world: World, line: str) -> tuple[str, dict[str, str]]:
    """The agent's day row after its first ``line``, and its edit form as the person
    (signed in on ``page``) opened it."""
    api.call("POST", "/memories/day", world.agent, {"line": line})
    day = api.call("GET", f"/memories?agentId={world.agent.id}&kind=day", world.person)[1]
    memory_id = day["data"][0]["id"]
    page.sign_in(world.person.token)
    return memory_id, opened(page, memory_id)


def unescape(html: str) -> str:
    from html import unescape as unescaped

    return unescaped(html)


def stored(api: Api, world: World, memory_id: str) -> dict[str, Any]:
    """The memory as stored, with its version (from its ETag)."""
    _, headers, body = api.send("GET", f"/memories/{memory_id}", world.person)
    etag = {key.lower(): value for key, value in headers.items()}["etag"]
    return {**body, "version": int(etag.strip('"').rsplit(".v", 1)[1])}


def test_the_second_of_two_persons_is_refused_and_keeps_their_text(
    api: Api, browser: Page, other: Page, world: World, second: Actor
) -> None:
    _, memory = api.call("POST", "/memories", world.agent, {"text": "Deploys go via bastion-2"})
    browser.sign_in(world.person.token)
    other.sign_in(second.token)
    first, late = opened(browser, memory["id"]), opened(other, memory["id"])
    assert first["version"] == late["version"] == "1"
    done = browser.post(f"/memories/{memory['id']}/edit", {**first, "text": "Via bastion-3"})
    assert done.status_code == 303
    mine = "Via bastion-4 <b>since</b> Monday"
    refused = other.post(f"/memories/{memory['id']}/edit", {**late, "text": mine})
    assert refused.status_code == 412
    page = text(refused)
    assert "<code>precondition_failed</code>" in page and "changed since you opened" in page
    assert "Via bastion-3" in page  # the stored text, beside…
    retry = re.search(r'<textarea id="conflict-text" name="text"[^>]*>(.*?)</textarea>', page, re.S)
    assert retry is not None and unescape(retry.group(1)) == mine  # …the person's, to edit
    assert "<b>since</b>" not in page
    assert 'name="version" value="2"' in page
    assert stored(api, world, memory["id"])["text"] == "Via bastion-3"
    again = dict(re.findall(r'name="(\w+)" value="([^"]*)"', page[page.index("conflict-form") :]))
    saved = other.post(f"/memories/{memory['id']}/edit", {**again, "text": mine})
    assert saved.status_code == 303
    assert stored(api, world, memory["id"])["text"] == mine


def test_a_stale_expiry_only_change_overwrites_nothing(
    api: Api, browser: Page, other: Page, world: World, second: Actor
) -> None:
    _, memory = api.call("POST", "/memories", world.agent, {"text": "The runner is ubuntu-24"})
    browser.sign_in(world.person.token)
    other.sign_in(second.token)
    first, late = opened(browser, memory["id"]), opened(other, memory["id"])
    browser.post(f"/memories/{memory['id']}/edit", {**first, "text": "The runner is ubuntu-26"})
    refused = other.post(f"/memories/{memory['id']}/edit", {**late, "expires": "2027-06-30"})
    assert refused.status_code == 412
    assert 'name="expires" value="2027-06-30"' in text(refused)  # the date they chose
    after = stored(api, world, memory["id"])
    assert after["text"] == "The runner is ubuntu-26"
    assert after["expiresAt"] == memory["expiresAt"] and after["version"] == 2


def test_an_agents_day_line_survives_a_persons_stale_edit(
    api: Api, browser: Page, world: World
) -> None:
    memory_id, form = day_row_opened(api, browser, world, "started the migration")
    status, _ = api.call("POST", "/memories/day", world.agent, {"line": "rolled it back"})
    assert status in (200, 201)
    edited = form["text"].replace("started", "finished")
    refused = browser.post(f"/memories/{memory_id}/edit", {**form, "text": edited})
    assert refused.status_code == 412
    assert "rolled it back" in text(refused)  # the line that came in meanwhile is shown
    after = stored(api, world, memory_id)
    assert "rolled it back" in after["text"] and "started the migration" in after["text"]


def conflict_form(page: str) -> dict[str, str]:
    """The conflict page's form as the browser would send it back."""
    form = page[page.index('id="conflict-form"') :]
    fields = {
        name: unescape(value) for name, value in re.findall(r'name="(\w+)" value="([^"]*)"', form)
    }
    textarea = re.search(
        r'<textarea id="conflict-text" name="text"[^>]*>(.*?)</textarea>', form, re.S
    )
    assert textarea is not None
    return {**fields, "text": unescape(textarea.group(1))}


def test_an_expiry_only_change_from_the_conflict_page_keeps_the_newer_text(
    api: Api, browser: Page, other: Page, world: World, second: Actor
) -> None:
    _, memory = api.call("POST", "/memories", world.agent, {"text": "Builds run on runner-a"})
    browser.sign_in(world.person.token)
    other.sign_in(second.token)
    first, late = opened(browser, memory["id"]), opened(other, memory["id"])
    assert late["text_was"] == "Builds run on runner-a"
    browser.post(f"/memories/{memory['id']}/edit", {**first, "text": "Builds run on runner-b"})
    refused = other.post(f"/memories/{memory['id']}/edit", {**late, "expires": "2027-06-30"})
    assert refused.status_code == 412
    again = conflict_form(text(refused))
    # They changed only the date: the form starts from the stored text, with their date.
    assert again["text"] == "Builds run on runner-b" and again["expires"] == "2027-06-30"
    assert 'id="kept-note"' in text(refused)
    saved = other.post(f"/memories/{memory['id']}/edit", again)
    assert saved.status_code == 303
    after = stored(api, world, memory["id"])
    assert after["text"] == "Builds run on runner-b"
    assert after["expiresAt"].startswith("2027-06-30")


def test_an_expiry_only_save_does_not_send_the_text(api: Api, browser: Page, world: World) -> None:
    _, memory = api.call("POST", "/memories", world.agent, {"text": "Logs go to Loki\nand Tempo"})
    browser.sign_in(world.person.token)
    form = opened(browser, memory["id"])
    sent = {**form, "text": form["text"].replace("\n", "\r\n"), "expires": "2027-01-15"}
    done = browser.post(f"/memories/{memory['id']}/edit", sent)  # CRLF, as browsers send
    assert done.status_code == 303
    after = stored(api, world, memory["id"])
    assert after["text"] == "Logs go to Loki\nand Tempo"  # not the form's copy of it
    assert after["expiresAt"].startswith("2027-01-15")


def test_a_stale_day_row_form_starts_again_with_the_agents_new_lines(
    api: Api, browser: Page, world: World
) -> None:
    memory_id, form = day_row_opened(api, browser, world, "opened the incident")
    api.call("POST", "/memories/day", world.agent, {"line": "paged the database team"})
    api.call("POST", "/memories/day", world.agent, {"line": "closed the incident"})
    mine = form["text"].replace("\n", "\r\n") + "\r\nnote from a person"  # as browsers send
    refused = browser.post(f"/memories/{memory_id}/edit", {**form, "text": mine})
    assert refused.status_code == 412
    again = conflict_form(text(refused))
    lines = again["text"].split("\n")
    assert lines[-3].endswith("note from a person")
    assert lines[-2].endswith("paged the database team")
    assert lines[-1].endswith("closed the incident")
    saved = browser.post(f"/memories/{memory_id}/edit", again)
    assert saved.status_code == 303
    after = stored(api, world, memory_id)["text"]
    for line in ("opened the incident", "note from a person", "paged the database", "closed the"):
        assert line in after


def test_an_edit_box_names_the_invisible_characters_it_holds(
    api: Api, browser: Page, world: World
) -> None:
    spoof = "Run the report in \u202egpj.exe\u202c then \u200bmail it"
    _, memory = api.call("POST", "/memories", world.agent, {"text": spoof})
    browser.sign_in(world.person.token)
    page = text(browser.get(f"/memories/{memory['id']}"))
    warning = re.search(r'<p class="hint warning" id="edit-invisible">(.*?)</p>', page, re.S)
    assert warning is not None
    assert all(mark in warning.group(1) for mark in ("⟨U+200B⟩", "⟨U+202C⟩", "⟨U+202E⟩"))
    assert opened(browser, memory["id"])["text"] == spoof  # the box keeps the text as stored
    _, plain = api.call("POST", "/memories", world.agent, {"text": "Nothing hidden here"})
    assert 'id="edit-invisible"' not in text(browser.get(f"/memories/{plain['id']}"))


@pytest.mark.parametrize(
    ("action", "field", "typed"),
    [("veto", "note", "wrong team"), ("archive", "reason", "replaced <i>by</i> flagctl")],
)
def test_a_stale_veto_or_archive_changes_nothing_and_keeps_the_note(
    api: Api, browser: Page, world: World, action: str, field: str, typed: str
) -> None:
    _, memory = api.call("POST", "/memories", world.agent, {"text": "Flags live in flagd"})
    browser.sign_in(world.person.token)
    form = opened(browser, memory["id"])
    api.call("PATCH", f"/memories/{memory['id']}", world.person, {"text": "Flags live in flagctl"})
    sent = {"csrf": form["csrf"], "version": form["version"], field: typed}
    refused = browser.post(f"/memories/{memory['id']}/{action}", sent)
    assert refused.status_code == 412
    page = text(refused)
    assert "<code>precondition_failed</code>" in page and "Flags live in flagctl" in page
    assert f'name="{field}" value="{typed.replace("<", "&lt;").replace(">", "&gt;")}"' in page
    assert page.count('name="version" value="2"') >= 3  # every form now carries version 2
    assert stored(api, world, memory["id"])["status"] == "active"
    row = {**sent, "from": "row"}
    htmx = browser.post(f"/memories/{memory['id']}/{action}", row, **{"HX-Request": "true"})
    assert htmx.status_code == 412
    fragment = text(htmx)
    assert fragment.startswith("<tr") and "<code>precondition_failed</code>" in fragment
    assert f">{typed.replace('<', '&lt;').replace('>', '&gt;')}<" not in fragment  # no raw
    assert f'value="{typed.replace("<", "&lt;").replace(">", "&gt;")}"' in fragment
    assert 'name="version" value="2"' in fragment and '<details class="actions" open' in fragment
    assert stored(api, world, memory["id"])["status"] == "active"


def test_a_stale_undo_changes_nothing(api: Api, browser: Page, world: World) -> None:
    _, memory = api.call("POST", "/memories", world.agent, {"text": "Use pnpm"})
    api.call("POST", f"/memories/{memory['id']}/archive", world.agent, {"reason": "npm now"})
    browser.sign_in(world.person.token)
    form = opened(browser, memory["id"])
    api.call("POST", f"/memories/{memory['id']}/veto", world.person, {"reason": "really npm"})
    sent = {"csrf": form["csrf"], "version": form["version"]}
    refused = browser.post(f"/memories/{memory['id']}/unarchive", sent)
    assert refused.status_code == 412 and "<code>precondition_failed</code>" in text(refused)
    row = browser.post(
        f"/memories/{memory['id']}/unarchive", {**sent, "from": "row"}, **{"HX-Request": "true"}
    )
    assert row.status_code == 412 and "badge vetoed" in text(row)
    assert stored(api, world, memory["id"])["archiveReason"] == "vetoed"


@pytest.mark.parametrize("version", [None, "", "two", "-1", "0", "1" * 30])
def test_a_form_without_a_good_version_is_a_bad_request(
    api: Api, browser: Page, world: World, version: str | None
) -> None:
    _, memory = api.call("POST", "/memories", world.agent, {"text": "Keep as is"})
    browser.sign_in(world.person.token)
    form = opened(browser, memory["id"])
    form = {key: value for key, value in form.items() if key != "version"}
    if version is not None:
        form["version"] = version
    for action in ("edit", "veto", "archive"):
        sent = {**form, "text": "Changed", "reason": "old", "note": "x"}
        refused = browser.post(f"/memories/{memory['id']}/{action}", sent)
        assert refused.status_code == 400, action
        assert "<code>invalid_request</code>" in text(refused)
    assert stored(api, world, memory["id"])["version"] == 1


def test_every_memory_form_carries_the_version(api: Api, browser: Page, world: World) -> None:
    _, live = api.call("POST", "/memories", world.agent, {"text": "Live one"})
    _, gone = api.call("POST", "/memories", world.agent, {"text": "Archived one"})
    api.call("POST", f"/memories/{gone['id']}/archive", world.agent, {"reason": "old"})
    browser.sign_in(world.person.token)
    pages = [f"/memories/{live['id']}", f"/memories/{gone['id']}"]
    pages.append(f"/agents/{world.agent.id}?status=all")
    for path in pages:
        body = text(browser.get(path))
        forms = re.findall(r"<form[^>]*/memories/[^>]*>.*?</form>", body, re.S)
        assert forms, path
        for form in forms:
            assert re.search(r'name="version" value="[1-9][0-9]*"', form), (path, form[:200])


def test_a_large_edit_shows_plain_before_and_after(api: Api, browser: Page, world: World) -> None:
    for number in range(24):
        line = f"line {number}: " + " ".join(f"w{number * 31 + k}" for k in range(50))
        api.call("POST", "/memories/day", world.agent, {"line": line[:290]})
    day = api.call("GET", f"/memories?agentId={world.agent.id}&kind=day", world.person)[1]
    row = stored(api, world, day["data"][0]["id"])
    assert len(row["text"]) > 6000
    rewritten = " ".join(f"v{k}" for k in range(len(row["text"]) // 5))[: len(row["text"])]
    status, _ = api.call("PATCH", f"/memories/{row['id']}", world.person, {"text": rewritten})
    assert status == 200
    browser.sign_in(world.person.token)
    page = text(browser.get(f"/memories/{row['id']}"))
    assert "too long to compare word by word" in page
    assert page.count('class="diff plain"') == 2 and "<del>" not in page
