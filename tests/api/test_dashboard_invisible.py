"""Control and format characters in stored text show on the dashboard as visible
markers naming their code point, still HTML-escaped, and what is stored does not
change (docs/issues.md#issue-21-item-7, docs/reference.md#13-dashboard)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Any

import pytest
from chalice.test import Client

from chalicelib.wiring import Services
from tests.helpers import TABLE, Api, World, text
from tests.helpers import DashboardPage as Page

SPOOFS = [
    "invoice_\u202egnp.exe",  # right-to-left override
    "build \u2067log\u2069 ok",  # right-to-left isolate
    "deploy\u200b script",  # zero-width space
    "the \u00adrunbook\ufeff",  # soft hyphen, BOM
]
"""Taken on write (docs/reference.md#stored-text) and marked wherever shown."""
MARKER = re.compile(r'<span class="codepoint">⟨U\+[0-9A-F]{4,6}⟩</span>')
FORM_FIELDS = re.compile(r"<textarea[^>]*>.*?</textarea>|<input[^>]*>", re.DOTALL)


@pytest.fixture
def browser(wired: Services) -> Iterator[Page]:
    from app import app

    with Client(app) as client:
        yield Page(client)


def live_invisible(page: str) -> list[str]:
    """The control and format characters a page renders outside its form fields."""
    shown = FORM_FIELDS.sub("", page)
    return [
        f"U+{ord(ch):04X}"
        for ch in shown
        if ch not in "\n\t" and unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")
    ]


@pytest.mark.parametrize("spoof", SPOOFS)
def test_a_fact_with_invisible_characters_shows_markers(
    api: Api, browser: Page, world: World, spoof: str
) -> None:
    _, memory = api.call(
        "POST", "/memories", world.agent, {"text": spoof, "evidence": f"{spoof}\n<b>x</b>"}
    )
    api.call("POST", "/memories/day", world.agent, {"line": spoof})
    api.call("POST", "/memories/recall", world.agent, {"query": spoof})
    browser.sign_in(world.person.token)
    for path in [
        f"/agents/{world.agent.id}?status=all",
        f"/memories/{memory['id']}",
        f"/agents/{world.agent.id}/days",
        f"/agents/{world.agent.id}/recall",
    ]:
        page = text(browser.get(path))
        assert live_invisible(page) == [], path
        assert MARKER.search(page), path
    page = text(browser.get(f"/memories/{memory['id']}"))
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page
    assert api.call("GET", f"/memories/{memory['id']}", world.agent)[1]["text"] == spoof


def test_the_override_is_named_and_the_rest_of_the_text_escaped(
    api: Api, browser: Page, world: World
) -> None:
    fact = "<i>invoice</i>_\u202egnp.exe"
    _, memory = api.call("POST", "/memories", world.agent, {"text": fact})
    browser.sign_in(world.person.token)
    page = text(browser.get(f"/memories/{memory['id']}"))
    assert '&lt;i&gt;invoice&lt;/i&gt;_<span class="codepoint">⟨U+202E⟩</span>gnp.exe' in page
    # the edit form keeps the stored text, so saving the expiry alone changes no text
    assert f">{fact.replace('<', '&lt;').replace('>', '&gt;')}</textarea>" in page


@pytest.mark.parametrize("legacy", ["tagged\U000e0041\U000e0042 note", "csi\x9b31m nel\x85"])
def test_text_stored_before_the_character_rule_shows_markers(
    api: Api, browser: Page, world: World, dynamodb: Any, legacy: str
) -> None:
    # Refused on write now: written into the table as an item stored before the rule.
    _, memory = api.call("POST", "/memories", world.agent, {"text": "placeholder"})
    dynamodb.update_item(
        TableName=TABLE,
        Key={"pk": {"S": f"MEMORY#{memory['id']}"}, "sk": {"S": "MEMORY"}},
        UpdateExpression="SET #t = :t",
        ExpressionAttributeNames={"#t": "text"},
        ExpressionAttributeValues={":t": {"S": legacy}},
    )
    browser.sign_in(world.person.token)
    for path in [f"/agents/{world.agent.id}?status=all", f"/memories/{memory['id']}"]:
        page = text(browser.get(path))
        assert live_invisible(page) == [], path
        assert MARKER.search(page), path
