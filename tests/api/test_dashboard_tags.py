"""Tags and metadata on the dashboard (docs/reference.md#tags, #metadata,
docs/issues.md#issue-46 item 1): shown on the list and the memory's page, edited with
the memory's other fields (only what the person changed is sent), and a tag filter on
the agent's list read through the tag index."""

from __future__ import annotations

import html
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


def save(api: Api, world: World, fact: str, **fields: object) -> dict[str, object]:
    status, memory = api.call("POST", "/memories", world.agent, {"text": fact, **fields})
    assert status == 201, memory
    return memory


def history(api: Api, world: World, memory: dict[str, object]) -> list[dict[str, object]]:
    """The memory's audit records."""
    return api.call("GET", f"/memories/{memory['id']}/history", world.person)[1]["data"]


def edit_form(browser: Page, memory: dict[str, object], **typed: str) -> dict[str, str]:
    """The memory page's edit form as a person sends it, with ``typed`` changed."""
    page = text(browser.get(f"/memories/{memory['id']}"))
    form = re.search(r'<form method="post" action="/memories/[^"]+/edit">(.*?)</form>', page, re.S)
    assert form is not None
    fields = {
        name: html.unescape(value)
        for name, value in re.findall(
            r'<input type="hidden" name="([a-z_]+)" value="([^"]*)"', form[1]
        )
    }
    fields["text"] = html.unescape(
        re.findall(r'name="text"[^>]*>(.*?)</textarea>', form[1], re.S)[0]
    )
    fields["tags"] = html.unescape(
        re.findall(r'id="edit-tags" name="tags" value="([^"]*)"', form[1])[0]
    )
    fields["metadata"] = html.unescape(
        re.findall(r'name="metadata"[^>]*>(.*?)</textarea>', form[1], re.S)[0]
    )
    fields["expires"] = fields["expires_was"]
    return {**fields, **typed}


def test_the_list_and_the_page_show_tags_and_metadata(
    api: Api, browser: Page, world: World
) -> None:
    memory = save(
        api,
        world,
        "Invoices are cut on the 1st",
        tags=["billing", "finance"],
        metadata={"project": "<b>ledger</b>", "priority": 2, "urgent": True},
    )
    browser.sign_in(world.person.token)
    listed = text(browser.get(f"/agents/{world.agent.id}"))
    assert f'href="/agents/{world.agent.id}?tag=billing"' in listed
    assert "&lt;b&gt;ledger&lt;/b&gt;" in listed and "<b>ledger" not in listed
    page = text(browser.get(f"/memories/{memory['id']}"))
    assert ">billing</a>" in page and ">finance</a>" in page
    assert "priority</span>: 2" in page and "urgent</span>: true" in page


def test_a_tag_filter_lists_only_the_facts_holding_every_tag(
    api: Api, browser: Page, world: World
) -> None:
    both = save(api, world, "Refunds need two approvals", tags=["billing", "policy"])
    one = save(api, world, "Invoices are cut on the 1st", tags=["billing"])
    none = save(api, world, "The build runs on Fridays")
    browser.sign_in(world.person.token)
    billing = text(browser.get(f"/agents/{world.agent.id}?tag=billing"))
    assert both["id"] in billing and one["id"] in billing and none["id"] not in billing
    narrowed = text(browser.get(f"/agents/{world.agent.id}?tag=billing,%20Policy"))
    assert both["id"] in narrowed and one["id"] not in narrowed
    empty = text(browser.get(f"/agents/{world.agent.id}?tag=nothing-here"))
    assert "tagged nothing-here" in empty and both["id"] not in empty
    bad = browser.get(f"/agents/{world.agent.id}?tag=no%20spaces%20allowed!")
    assert bad.status_code == 400 and "memory_tag_invalid" in text(bad)


def test_an_edit_of_tags_and_metadata_changes_only_them(
    api: Api, browser: Page, world: World
) -> None:
    memory = save(api, world, "Deploys go through bastion-2", tags=["ops"], metadata={"site": "eu"})
    browser.sign_in(world.person.token)
    form = edit_form(browser, memory, tags="ops, Network", metadata='{"site": "us", "rack": 4}')
    # Meanwhile the agent corrects the text: the person's tag edit must not undo it.
    status, _ = api.call(
        "PATCH", f"/memories/{memory['id']}", world.person, {"text": "Deploys go through bastion-3"}
    )
    assert status == 200
    form["version"] = "2"
    done = browser.post(f"/memories/{memory['id']}/edit", form)
    assert done.status_code == 303, text(done)
    after = api.call("GET", f"/memories/{memory['id']}", world.person)[1]
    assert after["text"] == "Deploys go through bastion-3"
    assert after["tags"] == ["network", "ops"]
    assert after["metadata"] == {"rack": 4, "site": "us"}


def test_an_untouched_field_is_not_sent_and_empty_metadata_removes_it(
    api: Api, browser: Page, world: World
) -> None:
    memory = save(api, world, "The rota is weekly", tags=["people"], metadata={"team": "sre"})
    browser.sign_in(world.person.token)
    unchanged = edit_form(browser, memory)
    same = browser.post(f"/memories/{memory['id']}/edit", unchanged)
    assert same.status_code == 303
    assert len(history(api, world, memory)) == 1  # the save only
    cleared = browser.post(f"/memories/{memory['id']}/edit", {**unchanged, "metadata": " "})
    assert cleared.status_code == 303
    after = api.call("GET", f"/memories/{memory['id']}", world.person)[1]
    assert after["metadata"] == {} and after["tags"] == ["people"]


@pytest.mark.parametrize(
    ("typed", "code"),
    [
        ('{"team": ', "memory_metadata_invalid"),
        ('["sre"]', "memory_metadata_invalid"),
        ('{"team": {"nested": 1}}', "memory_metadata_invalid"),
    ],
)
def test_bad_metadata_is_refused_on_the_form_and_changes_nothing(
    api: Api, browser: Page, world: World, typed: str, code: str
) -> None:
    memory = save(api, world, "The rota is weekly", metadata={"team": "sre"})
    browser.sign_in(world.person.token)
    refused = browser.post(
        f"/memories/{memory['id']}/edit", edit_form(browser, memory, metadata=typed)
    )
    assert refused.status_code == 400 and f"<code>{code}</code>" in text(refused)
    assert typed in html.unescape(text(refused))  # what was typed is kept
    after = api.call("GET", f"/memories/{memory['id']}", world.person)[1]
    assert after["metadata"] == {"team": "sre"} and len(history(api, world, memory)) == 1


def test_a_bad_tag_is_refused_and_changes_nothing(api: Api, browser: Page, world: World) -> None:
    memory = save(api, world, "The rota is weekly", tags=["people"])
    browser.sign_in(world.person.token)
    refused = browser.post(
        f"/memories/{memory['id']}/edit", edit_form(browser, memory, tags="people, not a tag!")
    )
    assert refused.status_code == 400 and "<code>memory_tag_invalid</code>" in text(refused)
    assert api.call("GET", f"/memories/{memory['id']}", world.person)[1]["tags"] == ["people"]
