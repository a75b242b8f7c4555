"""The dashboard in a real browser (docs/reference.md#13-dashboard, docs/issues.md#issue-13):
Debian's Chromium through Playwright against the local server. Sign-in by link and by token, finding
an agent, filters and paging, edit, veto and Undo (by keyboard), approving, undoing and
rejecting review actions, hostile agent text, CSRF refusal, sign-out, an expired
session, axe-core, and phone width. Every page is saved under build/screenshots/.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from chalicelib.storage.keys import web_session_key
from tests.browser.seed import HOSTILE
from tests.browser.support import (
    Server,
    axe_violations,
    screenshot,
    session_hash,
    sign_in,
)


def no_script_ran(page: Any) -> None:
    """Nothing agent-written ran or became an element, and the CSP saw no attempt."""
    assert page.evaluate("window.__pwned") is None
    assert page.dialogs == [] and page.errors == []
    assert page.evaluate("window.__csp") == []
    assert page.locator("#injected").count() == 0
    assert page.locator("[onerror], [onload], [onclick]").count() == 0
    assert (
        page.locator('a[href^="javascript:"], img[src="x"], body style, main svg[onload]').count()
        == 0
    )
    assert page.evaluate("getComputedStyle(document.body).display") != "none"


def test_one_time_link_signs_in_once_and_leaves_no_usable_code(
    page: Any, server: Server, chromium: Any
) -> None:
    page.goto(server.link)
    # Opening the link signs nobody in: a confirmation page names who and where.
    assert page.get_by_text("Continue as demo@example.com in workspace").is_visible()
    screenshot(page, "sign-in-link")
    page.get_by_role("button", name="Continue").click()
    page.wait_for_url(server.url + "/")
    assert "code=" not in page.url
    assert page.get_by_role("heading", name="Agents", exact=True).is_visible()
    assert page.get_by_text("Signed in as demo@example.com").is_visible()
    screenshot(page, "agents")
    other = chromium.new_context().new_page()
    other.goto(server.link)
    assert "/sign-in" in other.url
    assert other.get_by_text("used already or has expired").is_visible()
    other.context.close()


def test_a_session_ends_at_its_next_request_once_its_token_is_revoked(
    page: Any, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    admin = server.admin(monkeypatch)
    issued = admin.issue_token(server.demo["personId"], "browser-test")
    sign_in(page, server, issued["token"])
    assert page.get_by_role("heading", name="Agents", exact=True).is_visible()
    admin.revoke_token(issued["id"])
    page.reload()
    assert "/sign-in" in page.url
    assert page.get_by_text("Your session has ended").is_visible()
    page.goto(server.url + "/")
    assert "/sign-in" in page.url


def test_sign_in_find_an_agent_and_page_through_its_memories(page: Any, server: Server) -> None:
    sign_in(page, server)
    page.get_by_label("Find an agent").fill("ops")
    page.get_by_role("button", name="Find").click()
    rows = page.locator("table tbody tr")
    assert rows.count() == 1
    page.get_by_role("link", name="ops-bot").click()
    page.wait_for_url(re.compile(r"/agents/agt_"))
    assert page.locator("tbody tr").count() == 50
    assert page.get_by_text("Runbook step 59").is_visible()
    page.get_by_role("link", name="Older →").click()
    page.wait_for_url(re.compile(r"after=mem_"))
    assert page.locator("tbody tr").count() == 10
    assert page.get_by_text("Runbook step 0:").is_visible()
    screenshot(page, "memories-older-page")
    no_script_ran(page)


def test_filters_and_search_update_the_list_in_place(page: Any, server: Server) -> None:
    sign_in(page, server)
    page.goto(f"{server.url}/agents/{server.agent('builder')}")
    page.get_by_label("Kind").select_option("day")  # htmx: swaps the list, keeps the page
    page.wait_for_url(re.compile(r"kind=day"))
    assert page.locator("#memory-list tbody tr").count() > 0
    assert (
        page.locator("#memory-list .badge.kind").count()
        == page.locator("#memory-list tbody tr").count()
    )
    page.get_by_label("Kind").select_option("")
    page.get_by_label("Status", exact=True).select_option("all")
    page.wait_for_url(re.compile(r"status=all"))
    page.get_by_label("Search text").fill("bastion")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url(re.compile(r"q=bastion"))
    texts = page.locator("#memory-list tbody tr .pre").all_inner_texts()
    assert texts and all("bastion" in text.lower() for text in texts)
    assert page.locator("#memory-list .badge.superseded").count() == 1
    screenshot(page, "memories")
    page.get_by_label("Expired").select_option("yes")
    page.wait_for_url(re.compile(r"expired=yes"))
    assert page.get_by_text("No memories match").is_visible()


def test_veto_and_undo_by_keyboard_then_edit(page: Any, server: Server) -> None:
    sign_in(page, server)
    page.goto(f"{server.url}/agents/{server.agent('builder')}?q=on-call")
    row = page.locator("#memory-list tbody tr").first
    memory_id = row.get_attribute("id").removeprefix("row-")
    row.locator("summary").focus()
    page.keyboard.press("Enter")  # opens "Veto, archive…"
    row.get_by_label("Veto note (optional)").focus()
    page.keyboard.type("rotation moved to Tuesdays")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # the Veto button
    row = page.locator(f"#row-{memory_id}")
    row.get_by_text("Vetoed.").wait_for()
    assert row.locator(".badge.vetoed").is_visible()
    # Focus moves to the outcome once htmx has settled the new row (keyboard users).
    page.wait_for_function("document.activeElement.textContent.trim() === 'Vetoed.'")
    screenshot(page, "veto-undo")
    row.get_by_role("button", name=re.compile("^Undo")).click()
    page.locator(f"#row-{memory_id}").get_by_text("Brought back.").wait_for()
    assert page.locator(f"#row-{memory_id} .badge.active").is_visible()
    page.goto(f"{server.url}/memories/{memory_id}")
    history = page.locator("ol.timeline > li")
    assert [item.inner_text().split(" by ")[0] for item in history.all()][-2:] == [
        "veto",
        "unarchive",
    ]
    page.get_by_label("Text", exact=True).fill(
        "The on-call rotation changes on Tuesdays at 09:00 UTC"
    )
    page.get_by_role("button", name="Save changes").click()
    page.get_by_text("Memory edited.").wait_for()
    assert page.locator(".timeline del").first.inner_text() == "Mondays"
    assert page.locator(".timeline ins").first.inner_text() == "Tuesdays"
    screenshot(page, "memory")
    no_script_ran(page)


def test_archive_errors_show_next_to_the_row(page: Any, server: Server) -> None:
    sign_in(page, server)
    page.goto(f"{server.url}/agents/{server.agent('researcher')}")
    row = page.locator("#memory-list tbody tr").first
    row.locator("summary").click()
    row.get_by_role("button", name="Archive").click()  # no reason given
    error = page.locator("#memory-list .row-status.error").first
    error.wait_for()
    assert error.inner_text().startswith("invalid_request: An archive needs a reason")


def test_approve_and_reject_review_actions(page: Any, server: Server) -> None:
    sign_in(page, server)
    page.goto(f"{server.url}/agents/{server.agent('builder')}/reviews")
    page.get_by_role("link", name=re.compile(r"\d{4}-\d{2}-\d{2}")).first.click()
    page.wait_for_url(re.compile(r"/reviews/rvw_"))
    page.goto(re.split("[?#]", page.url)[0] + "?done=reviewed")  # as after "Run review"
    assert page.locator("#page-notice").inner_text() == "Review finished."
    pending = page.locator("article.action:has(.badge.pending)")
    assert pending.count() >= 2
    waiting = pending.count()
    assert f"{waiting} pending · 0 undone" in page.locator("#review-counts").inner_text()
    first_id = pending.nth(0).get_attribute("id")
    second_id = pending.nth(1).get_attribute("id")
    screenshot(page, "review")
    page.locator(f"#{first_id}").get_by_role("button", name=re.compile("^Approve")).click()
    page.locator(f"#{first_id}").get_by_text("Approved.").wait_for()
    assert page.locator(f"#{first_id} .badge").first.inner_text() == "applied"
    # The header and the summary follow the card; the stale banner goes.
    counts = page.locator("#review-counts")
    assert f"{waiting - 1} pending · 0 undone" in counts.inner_text()
    assert page.locator("#page-notice").inner_text() == "" and "done=" not in page.url
    page.locator(f"#{first_id}").get_by_role("button", name=re.compile("^Undo")).click()
    page.locator(f"#{first_id}").get_by_text("Undone: what it changed is restored.").wait_for()
    assert page.locator(f"#{first_id}").get_by_role("button").count() == 0
    assert "1 undone" in counts.inner_text()
    page.locator(f"#{second_id}").get_by_role("button", name=re.compile("^Reject")).click()
    page.locator(f"#{second_id}").get_by_text("Rejected.").wait_for()
    assert f"1 rejected · {waiting - 2} pending · 1 undone" in counts.inner_text()
    status = "pending" if waiting > 2 else "done"
    assert page.locator("#review-status").inner_text() == status
    assert page.locator(f"#{second_id} .badge").first.inner_text() == "rejected"
    page.reload()
    assert page.locator("#page-notice").inner_text() == ""  # no "Review finished." again
    assert page.locator(f"#{second_id} .badge").first.inner_text() == "rejected"
    assert page.locator(f"#{second_id}").get_by_role("button").count() == 0
    no_script_ran(page)


def test_hostile_agent_text_stays_text(page: Any, server: Server) -> None:
    sign_in(page, server)
    agent = server.agent("hostile")
    assert page.get_by_text("onerror=\"window.__pwned='name'\">bot").first.is_visible()
    no_script_ran(page)
    for path in [
        f"/agents/{agent}?status=all",
        f"/agents/{agent}?q=script",
        f"/agents/{agent}/days",
        f"/agents/{agent}/recall",
        f"/agents/{agent}/reviews",
        f"/agents/{agent}/pictures",
    ]:
        page.goto(server.url + path)
        no_script_ran(page)
    page.goto(f"{server.url}/agents/{agent}?status=all")
    assert page.get_by_text("<script>window.__pwned = 'script'</script>").first.is_visible()
    hrefs = [link.get_attribute("href") for link in page.locator("#memory-list a.mono").all()]
    assert len(hrefs) >= len(HOSTILE)
    for href in hrefs:
        page.goto(server.url + href)
        no_script_ran(page)
    page.goto(f"{server.url}/agents/{agent}?status=all")
    screenshot(page, "hostile")
    page.goto(f"{server.url}/agents/{agent}/recall")
    page.get_by_label("Task or question").fill("<script>window.__pwned='task'</script> deploy")
    page.get_by_role("button", name="Preview recall").click()
    page.get_by_text("The block the agent would see").wait_for()
    no_script_ran(page)


def test_forged_requests_are_refused(page: Any, server: Server, chromium: Any) -> None:
    sign_in(page, server)
    page.goto(f"{server.url}/agents/{server.agent('researcher')}")
    memory_id = page.locator("#memory-list tbody tr").first.get_attribute("id").removeprefix("row-")
    status = page.evaluate(
        """async (id) => (await fetch('/memories/' + id + '/veto', {method: 'POST',
             headers: {'Content-Type': 'application/x-www-form-urlencoded'},
             body: 'note=forged'})).status""",
        memory_id,
    )
    assert status == 403
    # Another site's page posting to the dashboard: the SameSite=Strict cookie stays home.
    attacker = page.context.new_page()
    attacker.set_content(
        f'<form method="post" action="{server.url}/memories/{memory_id}/veto">'
        '<input name="note" value="forged"></form>'
    )
    with attacker.expect_navigation():
        attacker.evaluate("document.forms[0].submit()")
    assert "/sign-in" in attacker.url
    page.reload()
    assert page.locator(f"#row-{memory_id} .badge.active").is_visible()


def test_sign_out_then_an_expired_session(page: Any, server: Server) -> None:
    sign_in(page, server)
    page.get_by_role("button", name="Sign out").click()
    page.get_by_text("You are signed out.").wait_for()
    page.goto(server.url + "/settings")
    assert "/sign-in" in page.url
    sign_in(page, server)
    key = web_session_key(session_hash(page))
    server.table().update_item(
        TableName="pinework-local",
        Key={"pk": {"S": key["pk"]}, "sk": {"S": key["sk"]}},
        UpdateExpression="SET expiresAt = :past",
        ExpressionAttributeValues={":past": {"S": "2000-01-01T00:00:00.000Z"}},
    )
    page.goto(f"{server.url}/agents/{server.agent('builder')}/days")
    page.get_by_text("Your session has ended").wait_for()
    assert "next=" in page.url
    screenshot(page, "sign-in")


MAIN_PAGES = [
    ("agents", "/"),
    ("agent-memories", "/agents/{builder}"),
    ("agent-days", "/agents/{builder}/days"),
    ("agent-recall", "/agents/{builder}/recall"),
    ("agent-reviews", "/agents/{builder}/reviews"),
    ("agent-pictures", "/agents/{builder}/pictures"),
    ("agent-data", "/agents/{builder}/data"),
    ("learnings", "/learnings"),
    ("settings", "/settings"),
    ("people", "/people"),  # the demo person is an owner
]


def test_axe_finds_nothing_serious_and_phone_width_works(
    page: Any, server: Server, chromium: Any
) -> None:
    sign_in(page, server)
    pages = [(name, path.format(builder=server.agent("builder"))) for name, path in MAIN_PAGES]
    memory = page.goto(f"{server.url}/agents/{server.agent('builder')}")
    assert memory is not None
    first = page.locator("#memory-list a.mono").first.get_attribute("href")
    pages += [("memory-detail", first), ("review-detail", f"/reviews/{server.seeded['review_id']}")]
    for name, path in pages:
        page.goto(server.url + path)
        assert axe_violations(page) == [], name
        screenshot(page, name)
    phone = chromium.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    small = phone.new_page()
    sign_in(small, server)
    for name, path in pages:
        small.goto(server.url + path)
        overflow = small.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, (name, overflow)
        screenshot(small, f"{name}-390")
    small.goto(server.url + "/sign-in")
    phone.close()


def test_keyboard_reaches_the_content_first(page: Any, server: Server) -> None:
    sign_in(page, server)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"


def test_a_person_exports_then_erases_an_agent_in_the_browser(
    page: Any, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/reference.md#a-person-erases-an-agent, docs/reference.md#exports-for-a-person:
    the local server's lifecycle worker runs both; the pages reload until they are done."""
    admin = server.admin(monkeypatch)
    issued = admin.create_agent(server.demo["workspaceId"], "short-lived")
    agent_id = issued.id
    saved = httpx.post(
        f"{server.url}/api/v1/memories",
        headers={"Authorization": f"Bearer {issued.token}"},
        json={"text": "The short-lived cache is memcached-ephemeral-7"},
    )
    assert saved.status_code == 201, saved.text
    sign_in(page, server)
    page.goto(f"{server.url}/agents/{agent_id}/data")
    assert axe_violations(page) == []
    screenshot(page, "agent-data")
    page.get_by_role("button", name="Export this agent").click()
    page.get_by_role("link", name="Download the file").wait_for(timeout=60_000)
    assert axe_violations(page) == []
    screenshot(page, "export")
    href = page.get_by_role("link", name="Download the file").get_attribute("href")
    assert href is not None and "X-Amz-Expires=900" in href
    file = page.request.get(href)
    assert file.ok and "memcached-ephemeral-7" in file.text()

    page.goto(f"{server.url}/agents/{agent_id}/data")
    page.get_by_label("Reason for erasing").fill("a test agent, no longer needed")
    page.get_by_label("Type the agent's name").fill("short-lived")
    page.get_by_role("button", name="Erase this agent").click()
    page.get_by_role("heading", name="Erased").wait_for(timeout=60_000)
    assert page.get_by_text("a test agent, no longer needed").is_visible()
    assert axe_violations(page) == []
    screenshot(page, "erasure")
    gone = httpx.get(
        f"{server.url}/api/v1/memories", headers={"Authorization": f"Bearer {issued.token}"}
    )
    assert gone.status_code == 401
    no_script_ran(page)
