"""Wiki pages (docs/reference.md#17-wiki-pages, docs/issues.md#issue-45): a person creates,
edits, publishes and archives pages, every edit a history record with a diff; ``ETag``
and ``If-Match`` on changes; slugs unique in a workspace; an agent reads published pages
only; bad input is a 400 that stores nothing."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib import wiring
from chalicelib.limits import PAGE_TEXT_MAX_CHARS
from chalicelib.services.wiki import pages as page_rules
from chalicelib.storage.dynamodb import DynamoDBTable
from chalicelib.storage.wiki_pages import DynamoDBPageRepository, PageVersionChanged
from tests.helpers import TABLE, Api, World

RUNBOOK = "# On-call runbook\n\n## Paging\n\nAcknowledge within 5 minutes.\n"


def create(api: Api, world: World, **body: Any) -> tuple[int, dict[str, str], Any]:
    sent = {"title": "On-call runbook", "text": RUNBOOK, **body}
    return api.send("POST", "/pages", world.person, sent)


def every_page(api: Api, world: World) -> list[dict[str, Any]]:
    status, listed = api.call("GET", "/pages", world.person)
    assert status == 200, listed
    return list(listed["data"])


def test_a_person_creates_edits_publishes_and_archives_a_page(api: Api, world: World) -> None:
    status, headers, page = create(api, world, tags=["ops", "on-call", "ops"])
    assert status == 201, page
    assert page["id"].startswith("pag_") and page["object"] == "page"
    assert (page["slug"], page["state"], page["tags"], page["text"]) == (
        "on-call-runbook",
        "draft",
        ["ops", "on-call"],
        RUNBOOK,
    )
    assert headers["ETag"] == f'"{page["id"]}.v1"'

    # read by id and by slug: the same page
    assert api.call("GET", f"/pages/{page['id']}", world.person)[1] == page
    assert api.call("GET", "/pages/on-call-runbook", world.person)[1] == page

    edited = RUNBOOK.replace("5 minutes", "10 minutes")
    status, _, changed = api.send(
        "PATCH",
        "/pages/on-call-runbook",
        world.person,
        {"text": edited, "title": "On-call"},
        headers={"If-Match": headers["ETag"]},
    )
    assert status == 200, changed
    assert (changed["text"], changed["title"], changed["version"]) == (edited, "On-call", 2)
    # the old ETag is stale now: 412, nothing changes
    status, stale = api.call(
        "PATCH",
        f"/pages/{page['id']}",
        world.person,
        {"text": "lost update"},
        headers={"If-Match": headers["ETag"]},
    )
    assert (status, stale["error"]["code"]) == (412, "precondition_failed")
    assert api.call("GET", f"/pages/{page['id']}", world.person)[1]["text"] == edited

    path = f"/pages/{page['id']}"
    status, published = api.call("POST", f"{path}/publish", world.person, {})
    assert (status, published["state"]) == (200, "published") and published["publishedAt"]
    assert api.call("POST", f"{path}/publish", world.person, {})[1]["error"]["code"] == (
        "page_state_conflict"
    )
    status, archived = api.call("POST", f"{path}/archive", world.person)
    assert (status, archived["state"]) == (200, "archived")
    status, refused = api.call("PATCH", path, world.person, {"text": "x"})
    assert (status, refused["error"]["code"]) == (409, "page_state_conflict")
    status, again = api.call("POST", f"{path}/publish", world.person, {})
    assert (status, again["state"]) == (200, "published")

    status, history = api.call("GET", f"{path}/history", world.person)
    assert status == 200
    records = history["data"]
    assert [record["action"] for record in records] == [
        "create",
        "edit",
        "publish",
        "archive",
        "publish",
    ]
    assert [record["version"] for record in records] == [1, 2, 3, 4, 5]
    assert {record["actorId"] for record in records} == {world.person.id}
    diff = records[1]["diff"]
    assert "-Acknowledge within 5 minutes." in diff and "+Acknowledge within 10 minutes." in diff
    assert records[1]["before"]["title"] == "On-call runbook"
    assert records[1]["after"]["title"] == "On-call"
    assert records[2]["diff"] == "" and records[2]["after"]["state"] == "published"
    assert "+Acknowledge within 5 minutes." in records[0]["diff"]


def test_a_slug_is_unique_in_its_workspace_and_claimed_once(api: Api, world: World) -> None:
    assert create(api, world)[0] == 201
    status, _, taken = create(api, world, title="Another", slug="on-call-runbook")
    assert (status, taken["error"]["code"]) == (409, "page_slug_taken")
    # another workspace may use it
    status, elsewhere = api.call(
        "POST", "/pages", world.outsider, {"title": "On-call runbook", "text": "theirs"}
    )
    assert (status, elsewhere["slug"]) == (201, "on-call-runbook")
    # renaming onto a taken slug is refused; renaming frees the old slug
    status, _, second = create(api, world, title="Style guide", text="Use British spelling.")
    assert status == 201
    path = f"/pages/{second['id']}"
    status, refused = api.call("PATCH", path, world.person, {"slug": "on-call-runbook"})
    assert (status, refused["error"]["code"]) == (409, "page_slug_taken")
    status, renamed = api.call("PATCH", path, world.person, {"slug": "writing"})
    assert (status, renamed["slug"]) == (200, "writing")
    assert api.call("GET", "/pages/style-guide", world.person)[0] == 404
    assert create(api, world, title="Style guide")[0] == 201
    assert sorted(p["slug"] for p in every_page(api, world)) == [
        "on-call-runbook",
        "style-guide",
        "writing",
    ]


def test_bad_input_is_a_400_that_stores_nothing(api: Api, world: World) -> None:
    secret = "The deploy key is AKIAIOSFODNN7EXAMPLE with ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2
    cases: list[tuple[dict[str, Any], int, str]] = [
        ({"title": "", "text": "x"}, 400, "invalid_request"),
        ({"title": "   ", "text": "x"}, 400, "invalid_request"),
        ({"title": "T", "text": "\u200b "}, 400, "invalid_request"),
        ({"title": "T", "text": "bell \x07"}, 400, "invalid_request"),
        ({"title": "Two\nlines", "text": "x"}, 400, "invalid_request"),
        ({"title": "T" * 201, "text": "x"}, 400, "memory_text_too_long"),
        ({"title": "T", "text": "x" * (PAGE_TEXT_MAX_CHARS + 1)}, 400, "memory_text_too_long"),
        ({"title": "T", "text": secret}, 400, "secret_in_memory"),
        ({"title": secret, "text": "x"}, 400, "secret_in_memory"),
        ({"title": "T", "text": "x", "slug": "Bad Slug"}, 400, "invalid_request"),
        ({"title": "T", "text": "x", "slug": "a--b"}, 400, "invalid_request"),
        ({"title": "T", "text": "x", "slug": "a" * 81}, 400, "invalid_request"),
        ({"title": "T", "text": "x", "tags": ["Ops"]}, 400, "invalid_request"),
        ({"title": "T", "text": "x", "tags": [f"t{n}" for n in range(11)]}, 400, "invalid_request"),
        ({"title": "T", "text": "x", "tags": "ops"}, 400, "invalid_request"),
        ({"title": "日本語", "text": "x"}, 400, "invalid_request"),
        ({"title": "T", "text": 5}, 400, "invalid_request"),
        ({"title": "T", "text": "x", "state": "published"}, 400, "invalid_request"),
        ({"text": "x"}, 400, "invalid_request"),
    ]
    for body, status, code in cases:
        answer = api.call("POST", "/pages", world.person, body)
        assert (answer[0], answer[1]["error"]["code"]) == (status, code), body
    assert api.call("POST", "/pages", world.person, raw=b"{not json")[0] == 400
    assert every_page(api, world) == []

    # a page at the limit is fine; an edit that breaks a rule changes nothing
    status, _, page = create(api, world, text="y" * PAGE_TEXT_MAX_CHARS, slug="big")
    assert status == 201, page
    path = f"/pages/{page['id']}"
    for body, code in [
        ({}, "invalid_request"),
        ({"text": secret}, "secret_in_memory"),
        ({"title": "x" * 201}, "memory_text_too_long"),
        ({"slug": "-x"}, "invalid_request"),
        ({"text": None, "bogus": 1}, "invalid_request"),
    ]:
        status, refused = api.call("PATCH", path, world.person, body)
        assert (status, refused["error"]["code"]) == (400, code), body
    status, bad = api.call("PATCH", path, world.person, {"text": "z"}, headers={"If-Match": "v1"})
    assert (status, bad["error"]["code"]) == (400, "invalid_request")
    after = api.call("GET", path, world.person)[1]
    assert after == page
    history = api.call("GET", f"{path}/history", world.person)[1]["data"]
    assert [record["action"] for record in history] == ["create"]
    # unknown and malformed references: 404, never 500
    for reference in ("pag_01JD0000000000000000000000", "no-such-page", "Bad_Ref", "pag_x"):
        status, missing = api.call("GET", f"/pages/{reference}", world.person)
        assert (status, missing["error"]["code"]) == (404, "page_not_found"), reference
    bad_token = api.call("GET", "/pages?nextToken=zzz", world.person)
    assert bad_token[0] == 400
    assert api.call("GET", "/pages?state=deleted", world.person)[0] == 400


def test_an_agent_reads_published_pages_only_and_writes_none(api: Api, world: World) -> None:
    _, _, draft = create(api, world, title="Draft notes", text="Not ready.")
    _, _, live = create(api, world, title="Deploys", text="Deploy on Tuesdays only.")
    _, _, gone = create(api, world, title="Old", text="Retired procedure.")
    for page in (live, gone):
        assert api.call("POST", f"/pages/{page['id']}/publish", world.person)[0] == 200
    assert api.call("POST", f"/pages/{gone['id']}/archive", world.person)[0] == 200

    status, listed = api.call("GET", "/pages", world.agent)
    assert status == 200
    assert [page["id"] for page in listed["data"]] == [live["id"]]
    assert "text" not in listed["data"][0] and listed["data"][0]["characters"] == 24
    assert api.call("GET", "/pages?state=published", world.agent)[1]["data"] == listed["data"]
    for state in ("draft", "archived"):
        status, refused = api.call("GET", f"/pages?state={state}", world.agent)
        assert (status, refused["error"]["code"]) == (403, "forbidden")
    assert api.call("GET", "/pages/deploys", world.agent)[1]["text"] == "Deploy on Tuesdays only."
    for page in (draft, gone):
        for reference in (page["id"], page["slug"]):
            status, hidden = api.call("GET", f"/pages/{reference}", world.agent)
            assert (status, hidden["error"]["code"]) == (404, "page_not_found")
    # writes and history are for persons
    path = f"/pages/{live['id']}"
    for method, route, body in [
        ("POST", "/pages", {"title": "Mine", "text": "x"}),
        ("PATCH", path, {"text": "x"}),
        ("POST", f"{path}/archive", {}),
        ("POST", f"/pages/{draft['id']}/publish", {}),
        ("GET", f"{path}/history", None),
    ]:
        status, refused = api.call(method, route, world.agent, body)
        assert (status, refused["error"]["code"]) == (403, "forbidden"), route
    # another workspace sees nothing of this one
    assert api.call("GET", "/pages", world.outsider_agent)[1]["data"] == []
    assert api.call("GET", "/pages", world.outsider)[1]["data"] == []
    assert api.call("GET", path, world.outsider)[0] == 404
    assert api.call("GET", path, world.person)[1]["state"] == "published"


def test_lists_page_by_state_newest_first(api: Api, world: World) -> None:
    made = []
    for number in range(7):
        status, _, page = create(api, world, title=f"Page {number}", text=f"Text {number}")
        assert status == 201
        made.append(page["id"])
    for page_id in made[::2]:
        api.call("POST", f"/pages/{page_id}/publish", world.person)
    seen: list[str] = []
    token = None
    while True:
        suffix = "" if token is None else f"&nextToken={token}"
        status, listed = api.call("GET", f"/pages?limit=2{suffix}", world.person)
        assert status == 200 and len(listed["data"]) <= 2
        seen.extend(page["id"] for page in listed["data"])
        token = listed["nextToken"]
        if token is None:
            break
    assert seen == made[::-1]
    published = api.call("GET", "/pages?state=published&limit=200", world.person)[1]["data"]
    assert [page["id"] for page in published] == made[::2][::-1]
    drafts = api.call("GET", "/pages?state=draft", world.person)[1]["data"]
    assert [page["id"] for page in drafts] == made[1::2][::-1]


def test_the_live_count_bounds_drafts_and_published_pages_only(
    api: Api, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(page_rules, "MAX_LIVE_PAGES", 2)
    first = create(api, world, title="Première étape")[2]
    assert first["slug"] == "premiere-etape"
    assert create(api, world, title="Two")[0] == 201
    status, _, full = create(api, world, title="Three")
    assert (status, full["error"]["code"]) == (409, "page_limit_reached")
    # archiving frees a place; publishing the archived page again needs one
    assert api.call("POST", f"/pages/{first['id']}/archive", world.person)[0] == 200
    assert create(api, world, title="Three")[0] == 201
    status, refused = api.call("POST", f"/pages/{first['id']}/publish", world.person)
    assert (status, refused["error"]["code"]) == (409, "page_limit_reached")
    assert api.call("GET", f"/pages/{first['id']}", world.person)[1]["state"] == "archived"
    assert len(every_page(api, world)) == 3


def test_an_edit_from_a_version_that_moved_on_is_refused_without_if_match(
    api: Api, world: World, wired: wiring.Services, dynamodb: Any
) -> None:
    page = create(api, world)[2]
    person = wired.auth.authenticate(f"Bearer {world.person.token}")
    stale = wired.pages.get(person, page["id"])
    assert api.call("PATCH", f"/pages/{page['id']}", world.person, {"text": "first"})[0] == 200
    # the read-then-write race: the write is conditional on the version that was read
    store = DynamoDBPageRepository(DynamoDBTable(dynamodb, TABLE))
    after = stale.model_copy(update={"text": "second", "version": stale.version + 1})
    with pytest.raises(PageVersionChanged):
        store.change(stale, after, store.history(page["id"])[0], max_live=10)
    assert api.call("GET", f"/pages/{page['id']}", world.person)[1]["text"] == "first"
