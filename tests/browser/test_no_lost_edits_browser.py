"""No lost edits, in a real browser (docs/reference.md#stale-forms): two persons of one workspace
edit the same memory, and an agent appends a day line while a person's edit form is open. The
later save is refused with the conflict page; what the person typed stays in its form, and the
agent's line stays stored."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from chalicelib.wiring import build_services
from tests.browser.seed import local_settings
from tests.browser.support import Server, axe_violations, screenshot, sign_in


@pytest.fixture
def second_person(server: Server, monkeypatch: pytest.MonkeyPatch) -> str:
    """A token of a second person of the demo workspace, made by the admin service
    against the local server's embedded AWS (as an operator would)."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "local")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    admin = build_services(local_settings(server.endpoint)).admin
    return admin.create_person(server.demo["workspaceId"], "bo@example.com").token


@pytest.fixture
def other_page(chromium: Any) -> Iterator[Any]:
    """A second browser (its own cookies), for the second person."""
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    yield context.new_page()
    context.close()


def agent_call(server: Server, method: str, path: str, body: Any = None) -> Any:
    """The demo agent calling the API (``/api/v1``) with its bearer token."""
    response = httpx.request(
        method,
        f"{server.url}/api/v1{path}",
        json=body,
        headers={"Authorization": f"Bearer {server.demo['agentToken']}"},
        timeout=30,
    )
    assert response.status_code < 300, response.text
    return response.json()


def test_two_persons_edit_one_memory_and_the_second_keeps_their_text(
    page: Any, other_page: Any, server: Server, second_person: str
) -> None:
    sign_in(page, server)
    sign_in(other_page, server, second_person)
    page.goto(f"{server.url}/agents/{server.agent('researcher')}")
    memory_id = page.locator("#memory-list tbody tr").first.get_attribute("id").removeprefix("row-")
    page.goto(f"{server.url}/memories/{memory_id}")
    other_page.goto(f"{server.url}/memories/{memory_id}")
    page.get_by_label("Text", exact=True).fill("Retrieval beats fine-tuning, said Ana")
    page.get_by_role("button", name="Save changes").click()
    page.get_by_text("Memory edited.").wait_for()
    mine = "Retrieval <b>ties</b> fine-tuning, said Bo"
    other_page.get_by_label("Text", exact=True).fill(mine)
    other_page.get_by_role("button", name="Save changes").click()
    other_page.get_by_role(
        "heading", name="Not saved: this memory changed since you opened it"
    ).wait_for()
    assert (
        other_page.locator("#stored-text").inner_text() == "Retrieval beats fine-tuning, said Ana"
    )
    assert other_page.locator("#conflict-text").input_value() == mine
    assert other_page.locator("#conflict-error code").inner_text() == "precondition_failed"
    assert axe_violations(other_page) == []
    screenshot(other_page, "edit-conflict")
    page.reload()
    assert page.locator(".memory-text").inner_text() == "Retrieval beats fine-tuning, said Ana"
    other_page.locator("#conflict-text").fill(mine + " and Ana")
    other_page.get_by_role("button", name="Save my version").click()
    other_page.get_by_text("Memory edited.").wait_for()
    assert other_page.locator(".memory-text").inner_text() == mine + " and Ana"


def test_an_agents_day_line_survives_a_persons_open_edit(page: Any, server: Server) -> None:
    first = agent_call(server, "POST", "/memories/day", {"line": "opened the migration PR"})
    memory_id = first["id"]
    sign_in(page, server)
    page.goto(f"{server.url}/memories/{memory_id}")
    field = page.get_by_label("Text", exact=True)
    field.fill(field.input_value().replace("opened", "merged"))
    agent_call(server, "POST", "/memories/day", {"line": "rolled the migration back"})
    page.get_by_role("button", name="Save changes").click()
    page.get_by_role(
        "heading", name="Not saved: this memory changed since you opened it"
    ).wait_for()
    assert "rolled the migration back" in page.locator("#stored-text").inner_text()
    assert "merged the migration PR" in page.locator("#conflict-text").input_value()
    stored = agent_call(server, "GET", f"/memories/{memory_id}")["text"]
    assert "opened the migration PR" in stored and "rolled the migration back" in stored
    # The person merges by hand: the stored lines with their correction.
    page.locator("#conflict-text").fill(stored.replace("opened", "merged"))
    page.get_by_role("button", name="Save my version").click()
    page.get_by_text("Memory edited.").wait_for()
    final = agent_call(server, "GET", f"/memories/{memory_id}")["text"]
    assert "merged the migration PR" in final and "rolled the migration back" in final
