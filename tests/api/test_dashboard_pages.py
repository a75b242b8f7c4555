"""The dashboard's pages through the app (chalice.test.Client): sign-in, sessions,
CSRF and origin checks, the workspace boundary, inert agent text, headers
(docs/reference.md#13-dashboard, docs/issues.md#issue-13). The real browser runs in
tests/browser."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from urllib.parse import quote

import pytest
from chalice.test import Client

from chalicelib import wiring
from chalicelib.ids import FixedClock
from chalicelib.settings import Settings
from chalicelib.wiring import Services
from tests.helpers import FORM, START, Api, World, text
from tests.helpers import DashboardPage as Page


@pytest.fixture
def browser(wired: Services) -> Iterator[Page]:
    from app import app

    with Client(app) as client:
        yield Page(client)


def test_signed_out_pages_go_to_sign_in_and_come_back(browser: Page, world: World) -> None:
    response = browser.get(f"/agents/{world.agent.id}?kind=day")
    assert response.status_code == 303
    assert response.headers["Location"] == "/sign-in?next=" + quote(
        f"/agents/{world.agent.id}?kind=day", safe=""
    )
    page = browser.get("/sign-in?next=" + quote(f"/agents/{world.agent.id}", safe=""))
    assert page.status_code == 200 and 'name="token"' in text(page)
    signed = browser.post(
        "/sign-in", {"token": world.person.token, "next": f"/agents/{world.agent.id}"}
    )
    assert signed.status_code == 303 and signed.headers["Location"] == f"/agents/{world.agent.id}"
    cookie = signed.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert browser.get(f"/agents/{world.agent.id}").status_code == 200


def test_sign_in_refuses_agents_and_unknown_tokens_on_the_page(browser: Page, world: World) -> None:
    agent = browser.sign_in(world.agent.token)
    assert agent.status_code == 403 and "agents cannot sign in" in text(agent)
    assert "Set-Cookie" not in agent.headers
    unknown = browser.sign_in("pwk_wrong")
    assert unknown.status_code == 401 and "<code>unauthorized</code>" in text(unknown)
    assert world.person.token not in text(browser.get("/sign-in"))


def test_sign_in_from_another_site_is_refused(browser: Page, world: World) -> None:
    response = browser.post("/sign-in", {"token": world.person.token}, Origin="http://evil.example")
    assert response.status_code == 403 and "Set-Cookie" not in response.headers


def test_one_time_link_signs_in_then_is_used(api: Api, browser: Page, world: World) -> None:
    status, link = api.call("POST", "/sign-in-links", world.person)
    assert status == 201 and link["object"] == "sign_in_link"
    code = link["path"].split("code=", 1)[1]
    page = browser.get(link["path"])
    assert page.status_code == 200 and "Set-Cookie" not in page.headers
    assert (
        "Continue as <strong>ana@example.com</strong> in workspace <strong>Acme</strong>"
        in text(page)
    )
    first = browser.post("/sign-in/link", {"code": code})
    assert first.status_code == 303 and first.headers["Location"] == "/"
    assert browser.cookie is not None
    assert browser.get("/").status_code == 200
    other = Page(browser.client)
    assert other.get(link["path"]).headers["Location"] == "/sign-in?link=unusable"
    again = other.post("/sign-in/link", {"code": code})
    assert again.status_code == 303 and again.headers["Location"] == "/sign-in?link=unusable"
    assert "Set-Cookie" not in again.headers
    assert "used already or has expired" in text(other.get("/sign-in?link=unusable"))
    status, body = api.call("POST", "/sign-in-links", world.agent)
    assert (status, body["error"]["code"]) == (403, "forbidden")
    status, body = api.call("POST", "/sign-in-links")
    assert (status, body["error"]["code"]) == (401, "unauthorized")


def test_expired_session_goes_back_to_sign_in(
    browser: Page, world: World, clock: FixedClock
) -> None:
    browser.sign_in(world.person.token)
    clock.set(START + timedelta(hours=12, minutes=1))
    response = browser.get("/")
    assert response.status_code == 303 and "ended=1" in response.headers["Location"]
    assert "Max-Age=0" in response.headers["Set-Cookie"]
    htmx = browser.get("/", **{"HX-Request": "true"})
    assert htmx.headers["HX-Redirect"].startswith("/sign-in?next=")
    assert "session has ended" in text(browser.get("/sign-in?ended=1"))


def test_sign_out_needs_the_csrf_token_and_deletes_the_session(browser: Page, world: World) -> None:
    browser.sign_in(world.person.token)
    cookie = browser.cookie
    token = browser.csrf()
    refused = browser.post("/sign-out", {"csrf": "forged"})
    assert refused.status_code == 403
    assert browser.get("/").status_code == 200
    done = browser.post("/sign-out", {"csrf": token})
    assert done.status_code == 303 and done.headers["Location"] == "/sign-in?done=signed-out"
    browser.cookie = cookie  # a copy of the old cookie no longer works
    assert browser.get("/").status_code == 303


def test_changes_without_csrf_or_from_another_origin_are_refused(
    api: Api, browser: Page, world: World
) -> None:
    _, memory = api.call("POST", "/memories", world.agent, {"text": "keep me"})
    browser.sign_in(world.person.token)
    token = browser.csrf()
    path = f"/memories/{memory['id']}/veto"
    assert browser.post(path, {"note": "x"}).status_code == 403
    assert browser.post(path, {"note": "x", "csrf": token + "x"}).status_code == 403
    foreign = browser.post(path, {"csrf": token}, Origin="http://evil.example")
    assert foreign.status_code == 403
    no_origin = browser.client.http.post(
        path, headers={"Content-Type": FORM, "Cookie": browser.cookie or ""}, body=f"csrf={token}"
    )
    assert no_origin.status_code == 403
    assert api.call("GET", f"/memories/{memory['id']}", world.person)[1]["status"] == "active"
    done = browser.post(
        path,
        {"csrf": token, "note": "wrong", "version": "1"},
        Origin="null",
        **{"Sec-Fetch-Site": "same-origin"},
    )
    assert done.status_code == 303
    assert (
        api.call("GET", f"/memories/{memory['id']}", world.person)[1]["archiveReason"] == "vetoed"
    )


def test_veto_undo_and_errors_next_to_the_row(api: Api, browser: Page, world: World) -> None:
    _, memory = api.call("POST", "/memories", world.agent, {"text": "The VPN is needed"})
    browser.sign_in(world.person.token)
    token = browser.csrf()
    row = {"csrf": token, "from": "row", "version": "1"}
    htmx = {"HX-Request": "true"}
    vetoed = browser.post(f"/memories/{memory['id']}/veto", {**row, "note": "wrong"}, **htmx)
    assert vetoed.status_code == 200
    assert f'id="row-{memory["id"]}"' in text(vetoed) and "Vetoed." in text(vetoed)
    assert f"/memories/{memory['id']}/unarchive" in text(vetoed)  # the Undo button
    again = browser.post(f"/memories/{memory['id']}/veto", {**row, "version": "2"}, **htmx)
    assert again.status_code == 409 and "<code>memory_already_archived</code>" in text(again)
    undone = browser.post(f"/memories/{memory['id']}/unarchive", {**row, "version": "2"}, **htmx)
    assert undone.status_code == 200 and "Brought back." in text(undone)
    blank = browser.post(
        f"/memories/{memory['id']}/archive", {**row, "reason": " ", "version": "3"}, **htmx
    )
    assert blank.status_code == 400 and "<code>invalid_request</code>" in text(blank)
    _, newer = api.call(
        "POST",
        "/memories",
        world.agent,
        {"text": "The VPN is not needed", "supersedes": memory["id"]},
    )
    page = text(browser.get(f"/memories/{memory['id']}"))
    assert "never comes back" in page and f"/memories/{memory['id']}/unarchive" not in page
    assert f"<title>{memory['id']} · Pinework dashboard</title>" in page  # plain text only
    assert page.count('id="fields-heading"') == 1
    superseded = browser.post(
        f"/memories/{memory['id']}/unarchive", {"csrf": token, "version": "4"}
    )
    assert superseded.status_code == 409 and "<code>memory_superseded</code>" in text(superseded)
    assert newer["supersedes"] == memory["id"]


def test_edit_from_the_memory_page(api: Api, browser: Page, world: World) -> None:
    _, memory = api.call("POST", "/memories", world.agent, {"text": "Deploys go through bastion-2"})
    browser.sign_in(world.person.token)
    token = browser.csrf()
    shown = memory["expiresAt"][:10]
    form = {
        "csrf": token,
        "text": "Deploys go through bastion-3",
        "expires": shown,
        "expires_was": shown,
        "version": "1",
    }
    done = browser.post(f"/memories/{memory['id']}/edit", form)
    assert done.status_code == 303 and done.headers["Location"].endswith("?done=edited")
    after = api.call("GET", f"/memories/{memory['id']}", world.person)[1]
    assert after["text"] == "Deploys go through bastion-3"
    assert after["expiresAt"] == memory["expiresAt"]  # the date shown was not changed
    assert after["editedByPersonId"] == world.person.id
    page = text(browser.get(f"/memories/{memory['id']}"))
    assert "<del>bastion-2</del><ins>bastion-3</ins>" in page
    too_long = browser.post(
        f"/memories/{memory['id']}/edit", {**form, "text": "x" * 501, "version": "2"}
    )
    assert too_long.status_code == 400 and "<code>memory_text_too_long</code>" in text(too_long)


def test_another_workspace_looks_missing(api: Api, browser: Page, world: World) -> None:
    _, theirs = api.call("POST", "/memories", world.outsider_agent, {"text": "secret plan"})
    browser.sign_in(world.person.token)
    token = browser.csrf()
    foreign = browser.get(f"/memories/{theirs['id']}")
    missing = browser.get("/memories/mem_01M8P570G0QJRZ8T2NSWNPVZ62")
    assert foreign.status_code == missing.status_code == 404
    assert "secret plan" not in text(foreign)
    assert text(foreign).replace(theirs["id"], "ID") == text(missing).replace(
        "mem_01M8P570G0QJRZ8T2NSWNPVZ62", "ID"
    )
    agent_page = browser.get(f"/agents/{world.outsider_agent.id}")
    unknown_agent = browser.get("/agents/agt_01M8P570G0QJRZ8T2NSWNPVZ62")
    assert agent_page.status_code == unknown_agent.status_code == 404
    assert "spy" not in text(agent_page) and "not_found" in text(agent_page)
    assert text(agent_page).replace(world.outsider_agent.id, "ID") == text(unknown_agent).replace(
        "agt_01M8P570G0QJRZ8T2NSWNPVZ62", "ID"
    )
    # The error page keeps the navigation of a signed-in person.
    assert 'aria-label="Main"' in text(agent_page) and "Sign out" in text(agent_page)
    veto = browser.post(f"/memories/{theirs['id']}/veto", {"csrf": token})
    assert veto.status_code == 404
    assert api.call("GET", f"/memories/{theirs['id']}", world.outsider)[1]["status"] == "active"
    assert "spy" not in text(browser.get("/"))


def test_the_not_found_page_keeps_the_navigation_when_signed_in(
    browser: Page, world: World
) -> None:
    signed_out = browser.get("/not-found")
    assert signed_out.status_code == 404 and 'href="/sign-in"' in text(signed_out)
    assert 'aria-label="Main"' not in text(signed_out)
    browser.sign_in(world.person.token)
    signed_in = browser.get("/not-found")
    assert signed_in.status_code == 404 and "no dashboard page at this address" in text(signed_in)
    assert 'aria-label="Main"' in text(signed_in) and "ana@example.com" in text(signed_in)


HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>\"'><svg onload=alert(3)>"


def test_agent_text_is_escaped_everywhere(api: Api, browser: Page, world: World) -> None:
    headers = {"X-Pinework-Task": "<b>PIN-1</b>"}
    _, memory = api.call(
        "POST", "/memories", world.agent, {"text": HOSTILE, "evidence": HOSTILE}, headers=headers
    )
    api.call("POST", "/memories/day", world.agent, {"line": HOSTILE}, headers=headers)
    api.call("POST", f"/memories/{memory['id']}/archive", world.agent, {"reason": HOSTILE})
    api.call("POST", "/memories/recall", world.agent, {"query": HOSTILE})
    browser.sign_in(world.person.token)
    for path in [
        f"/agents/{world.agent.id}?status=all",
        f"/agents/{world.agent.id}?status=all&q=script",
        f"/memories/{memory['id']}",
        f"/agents/{world.agent.id}/days",
        f"/agents/{world.agent.id}/recall",
    ]:
        page = text(browser.get(path))
        assert "<script>alert" not in page and "<img src=x" not in page, path
        assert "<svg onload" not in page and "<b>PIN-1</b>" not in page, path
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page, path


def test_pages_carry_the_security_headers(browser: Page, world: World) -> None:
    browser.sign_in(world.person.token)
    for path in ["/", "/sign-in", f"/agents/{world.agent.id}", "/settings"]:
        headers = browser.get(path).headers
        assert "frame-ancestors 'none'" in headers["Content-Security-Policy"], path
        assert "unsafe-inline" not in headers["Content-Security-Policy"]
        assert headers["Cache-Control"] == "no-store"
        assert headers["Referrer-Policy"] == "no-referrer"
        assert headers["X-Content-Type-Options"] == "nosniff"
    css = browser.get("/static/dashboard.css")
    assert css.status_code == 200 and css.headers["Content-Type"].startswith("text/css")
    assert browser.get("/static/app.py").status_code == 404
    assert browser.get("/static/..%2Fapp.py").status_code == 404


def test_every_page_opens_for_a_person(api: Api, browser: Page, world: World) -> None:
    _, memory = api.call("POST", "/memories", world.agent, {"text": "A fact"})
    api.call("POST", "/memories/day", world.agent, {"line": "did things"})
    browser.sign_in(world.person.token)
    agent = world.agent.id
    for path in [
        "/",
        "/?q=build",
        f"/agents/{agent}",
        f"/agents/{agent}?kind=day&status=all&expired=no",
        f"/agents/{agent}/days",
        f"/agents/{agent}/recall",
        f"/agents/{agent}/reviews",
        f"/agents/{agent}/pictures?days=7",
        f"/memories/{memory['id']}",
        "/settings",
        "/pending",
    ]:
        response = browser.get(path)
        assert response.status_code == 200, (path, text(response)[:300])
    assert browser.get(f"/agents/{agent}?kind=everything").status_code == 400
    assert browser.get(f"/agents/{agent}/pictures?days=11").status_code == 400


def test_review_approval_and_decisions_from_the_pages(
    api: Api, browser: Page, world: World, clock: FixedClock
) -> None:
    api.call("POST", "/memories", world.agent, {"text": "Use pnpm in the web monorepo"})
    api.call("POST", "/memories", world.agent, {"text": "Use pnpm in the web monorepo."})
    clock.set(START + timedelta(days=1))
    browser.sign_in(world.person.token)
    token = browser.csrf("/settings")
    saved = browser.post("/settings/review-approval", {"csrf": token, "approval": "required"})
    assert saved.status_code == 303
    bad = browser.post("/settings/review-approval", {"csrf": token, "approval": "maybe"})
    assert bad.status_code == 400 and "<code>invalid_request</code>" in text(bad)
    ran = browser.post(f"/agents/{world.agent.id}/reviews", {"csrf": token, "dry_run": "no"})
    assert ran.status_code == 303
    review_id = ran.headers["Location"].split("/reviews/")[1].split("?")[0]
    report = text(browser.get(f"/reviews/{review_id}"))
    assert "merge" in report and "/actions/a1/approve" in report
    htmx = {"HX-Request": "true"}
    approved = browser.post(f"/reviews/{review_id}/actions/a1/approve", {"csrf": token}, **htmx)
    assert approved.status_code == 200 and 'class="badge applied"' in text(approved)
    twice = browser.post(f"/reviews/{review_id}/actions/a1/reject", {"csrf": token}, **htmx)
    assert twice.status_code == 409 and "<code>conflict</code>" in text(twice)
    _, body = api.call("GET", f"/reviews/{review_id}", world.person)
    assert body["decisions"][0]["state"] == "applied"
    assert body["decisions"][0]["decidedBy"] == world.person.id


def test_routine_pause_resume_delete_create(browser: Page, api: Api, world: World) -> None:
    api.call("POST", "/memories", world.agent, {"text": "A fact"})
    browser.sign_in(world.person.token)
    token = browser.csrf()
    base = f"/agents/{world.agent.id}/routine"
    for verb, status in [("pause", "paused"), ("resume", "active"), ("delete", None)]:
        assert browser.post(f"{base}/{verb}", {"csrf": token}).status_code == 303
        code, body = api.call("GET", f"/routines/{world.agent.id}", world.person)
        assert (body.get("status") if code == 200 else None) == status
    again = browser.post(f"{base}/pause", {"csrf": token})
    assert again.status_code == 404 and "<code>not_found</code>" in text(again)
    assert browser.post(f"{base}/create", {"csrf": token}).status_code == 303
    assert api.call("GET", f"/routines/{world.agent.id}", world.person)[1]["status"] == "active"


def test_save_a_fact_for_the_agent(api: Api, browser: Page, world: World) -> None:
    browser.sign_in(world.person.token)
    token = browser.csrf()
    path = f"/agents/{world.agent.id}/facts"
    done = browser.post(path, {"csrf": token, "text": "Prod needs two approvals"})
    assert done.status_code == 303 and "/memories/mem_" in done.headers["Location"]
    _, listed = api.call("GET", f"/memories?agentId={world.agent.id}", world.person)
    assert listed["data"][0]["editedByPersonId"] == world.person.id
    secret = browser.post(path, {"csrf": token, "text": "password: hunter2hunter2hunter2"})
    assert secret.status_code == 400 and "<code>secret_in_memory</code>" in text(secret)
    assert "hunter2hunter2hunter2" in text(secret)  # kept in the form to fix, escaped
    missing = browser.post(path, {"csrf": token, "text": "x", "supersedes": "mem_nope"})
    assert missing.status_code == 404 and "<code>memory_not_found</code>" in text(missing)


def test_agents_cannot_use_the_dashboard_with_a_bearer_token(browser: Page, world: World) -> None:
    response = browser.client.http.get(
        "/", headers={"Authorization": f"Bearer {world.agent.token}"}
    )
    assert response.status_code == 303  # a bearer token is not a session


def test_signing_in_again_ends_the_browsers_previous_session(browser: Page, world: World) -> None:
    browser.sign_in(world.person.token)
    first = browser.cookie
    browser.sign_in(world.person.token)  # the browser sends its old cookie along
    assert browser.cookie != first and browser.get("/").status_code == 200
    browser.cookie = first
    assert browser.get("/").status_code == 303


CONFLICT = (
    "Production database runs PostgreSQL on port 5432 in region us-east-1 behind the "
    "pgbouncer connection pool with nightly backups to the archive bucket",
    "Production database runs PostgreSQL on port 6432 in region us-east-1 behind the "
    "pgbouncer connection pool with nightly backups to the archive bucket",
)


def test_a_conflict_waits_and_a_person_keeps_either_side_then_undoes(
    api: Api, browser: Page, world: World
) -> None:
    _, older = api.call("POST", "/memories", world.agent, {"text": CONFLICT[0]})
    _, newer = api.call("POST", "/memories", world.agent, {"text": CONFLICT[1]})
    browser.sign_in(world.person.token)
    token = browser.csrf()
    ran = browser.post(f"/agents/{world.agent.id}/reviews", {"csrf": token, "dry_run": "no"})
    review_id = ran.headers["Location"].split("/reviews/")[1].split("?")[0]
    listing = text(browser.get(f"/agents/{world.agent.id}/reviews"))
    assert "Waiting for a person" in listing and f"/reviews/{review_id}#action-a1" in listing
    report = text(browser.get(f"/reviews/{review_id}"))
    assert f'name="keep" value="{older["id"]}"' in report
    assert f'name="keep" value="{newer["id"]}"' in report
    htmx = {"HX-Request": "true"}
    path = f"/reviews/{review_id}/actions/a1"
    kept = browser.post(f"{path}/approve", {"csrf": token, "keep": older["id"]}, **htmx)
    assert kept.status_code == 200 and 'class="badge applied"' in text(kept)
    assert f"{path}/undo" in text(kept)  # Undo is offered on the applied action
    memories = {m["id"]: m for m in api.call("GET", "/memories?all=true", world.agent)[1]["data"]}
    assert memories[newer["id"]]["supersededBy"] == older["id"]
    # the kept side's page says a conflict was resolved for it, by whom: not a merge
    kept_page = text(browser.get(f"/memories/{older['id']}"))
    folded = kept_page.split('id="absorbed-heading"')[1].split("</section>")[0]
    assert "the conflict was resolved for this one" in folded and "duplicate" not in folded
    assert "approved by" in folded
    undone = browser.post(f"{path}/undo", {"csrf": token}, **htmx)
    assert (
        undone.status_code == 200
        and "Undone" in text(undone)
        and 'badge archived">undone' in text(undone)
    )
    assert f"{path}/undo" not in text(undone)
    # the card no longer states the applied outcome as the present state
    assert "<strong>Outcome:</strong>" in text(kept)
    assert "<strong>Outcome:</strong>" not in text(undone)
    assert "Outcome when applied</strong> (undone since)" in text(undone)
    memories = {m["id"]: m for m in api.call("GET", "/memories?all=true", world.agent)[1]["data"]}
    assert memories[older["id"]]["status"] == memories[newer["id"]]["status"] == "active"
    twice = browser.post(f"{path}/undo", {"csrf": token}, **htmx)  # the service's answer:
    assert twice.status_code == 200 and text(twice).count('badge archived">undone') == 1
    _, body = api.call("GET", f"/reviews/{review_id}", world.person)
    assert [undo["actionId"] for undo in body["undone"]] == ["a1"]
    assert "Waiting for a person" not in text(browser.get(f"/agents/{world.agent.id}/reviews"))


def test_a_decision_updates_the_header_counts_and_drops_the_stale_banner(
    api: Api, browser: Page, world: World, clock: FixedClock
) -> None:
    api.call("POST", "/memories", world.agent, {"text": "Use pnpm in the web monorepo"})
    api.call("POST", "/memories", world.agent, {"text": "Use pnpm in the web monorepo."})
    clock.set(START + timedelta(days=1))
    browser.sign_in(world.person.token)
    token = browser.csrf("/settings")
    browser.post("/settings/review-approval", {"csrf": token, "approval": "required"})
    ran = browser.post(f"/agents/{world.agent.id}/reviews", {"csrf": token, "dry_run": "no"})
    review_id = ran.headers["Location"].split("/reviews/")[1].split("?")[0]
    page = text(browser.get(f"/reviews/{review_id}?done=reviewed"))
    assert '<span id="review-status" class="badge pending">pending</span>' in page
    assert "1 applied" not in page and "1 pending · 0 undone" in page
    assert "Review finished." in page
    htmx = {"HX-Request": "true"}
    path = f"/reviews/{review_id}/actions/a1"
    approved = browser.post(f"{path}/approve", {"csrf": token}, **htmx)
    body = text(approved)
    assert approved.status_code == 200
    assert 'id="review-status" class="badge done" hx-swap-oob="true">done<' in body
    assert 'id="review-counts" hx-swap-oob="true">1 planned · 1 applied · 0 skipped' in body
    assert "0 pending · 0 undone" in body
    assert '<div id="page-notice" hx-swap-oob="true"></div>' in body  # the banner goes
    assert approved.headers["HX-Replace-Url"] == f"/reviews/{review_id}"  # no ?done= left
    undone = text(browser.post(f"{path}/undo", {"csrf": token}, **htmx))
    assert "1 applied · 0 skipped · 0 rejected · 0 pending · 1 undone" in undone
    assert 'id="page-notice" hx-swap-oob="true"></div>' in undone
    reloaded = text(browser.get(f"/reviews/{review_id}"))
    assert "Review finished." not in reloaded and "1 undone" in reloaded
    listing = text(browser.get(f"/agents/{world.agent.id}/reviews"))
    assert '<td class="num" data-label="Undone">1</td>' in listing


def test_an_impossible_day_log_date_is_a_bad_request(browser: Page, world: World) -> None:
    browser.sign_in(world.person.token)
    for wanted in ["2026-13-45", "2026-02-30", "2026-1-5"]:
        page = browser.get(f"/agents/{world.agent.id}/days?date={wanted}")
        assert page.status_code == 400, wanted
        assert "<code>invalid_request</code>" in text(page) and "No day log" not in text(page)
    assert browser.get(f"/agents/{world.agent.id}/days?date=2026-02-28").status_code == 200


def test_the_pictures_page_marks_the_chosen_period(browser: Page, world: World) -> None:
    browser.sign_in(world.person.token)
    base = f"/agents/{world.agent.id}/pictures"
    for days in (7, 30, 90):
        page = text(browser.get(f"{base}?days={days}"))
        marked = re.findall(r'<a href="[^"]*pictures\?days=(\d+)" aria-current="page"', page)
        assert marked == [str(days)]
    default = text(browser.get(base))  # 30 days unless asked
    assert re.findall(r'pictures\?days=(\d+)" aria-current="page"', default) == ["30"]
    css = text(browser.get("/static/dashboard.css"))
    assert '.pager a[aria-current="page"]' in css  # a visible mark, not only for readers


def test_sign_in_names_the_local_demo_file_only_where_there_is_one(
    browser: Page, wired: Services
) -> None:
    assert "demo.json" not in text(browser.get("/sign-in"))  # on AWS: no demo, no hint
    elsewhere = "/srv/pinework-data/demo.json"
    local = replace(wired, settings=wired.settings.model_copy(update={"demo_file": elsewhere}))
    wiring.install(local)
    page = text(browser.get("/sign-in"))
    assert f"<code>{elsewhere}</code>" in page and ".pinework-local" not in page


def test_settings_read_the_demo_file_from_the_environment() -> None:
    assert Settings.from_env({"PINEWORK_DEMO_FILE": "/d/demo.json"}).demo_file == "/d/demo.json"
    assert Settings.from_env({}).demo_file is None


def test_a_review_is_titled_by_the_day_it_ran_and_names_the_day_log_it_read(
    api: Api, browser: Page, world: World
) -> None:
    """A review run on 2026-11-30 of facts saved that day was titled "Review of 2026-11-29"
    (the day log it reads): the title is the day it ran, the day log is named apart."""
    api.call("POST", "/memories", world.agent, {"text": "The uploader retries 5 times"})
    _, report = api.call("POST", "/reviews", world.person, {"agentId": world.agent.id})
    browser.sign_in(world.person.token)
    page = text(browser.get(f"/reviews/{report['id']}"))
    assert f"Review on {START.date().isoformat()}" in page
    yesterday = (START - timedelta(days=1)).date().isoformat()
    assert f"Review of {yesterday}" not in page
    assert f"<dt>Day log read</dt><dd>{yesterday} " in page


def test_counts_take_the_noun_in_the_right_number() -> None:
    from chalicelib.web.render import counted

    assert [counted(1, "object"), counted(2, "object"), counted(0, "byte")] == [
        "1 object",
        "2 objects",
        "0 bytes",
    ]
    assert counted(1204, "entry", "entries") == "1,204 entries"


def test_an_erased_memorys_history_says_text_erased_never_none(
    api: Api, browser: Page, world: World
) -> None:
    _, memory = api.call("POST", "/memories", world.agent, {"text": "Dana's phone is 555-0142"})
    path = f"/memories/{memory['id']}"
    api.call("PATCH", path, world.person, {"text": "Dana's phone is 555-0143"})
    status, _ = api.call("POST", f"{path}/erase", world.person, {"reason": "asked"})
    assert status == 200
    browser.sign_in(world.person.token)
    page = text(browser.get(path))
    history = page[page.index('id="history-heading"') : page.index('id="fields-heading"')]
    assert "None" not in history
    assert '<div class="diff"></div>' not in history
    assert history.count("text erased") == 3  # create, edit and the erasure's own record
    # names where a person reads, the id on hover
    agent = world.agent.id
    assert f'agent <a href="/agents/{agent}" title="{agent}">builder</a>' in history
    assert f'<span title="{world.person.id}">you</span>' in history
    assert f"({world.person.id})" not in history
    assert 'id="erase-heading"' not in page  # nothing left to erase


def test_the_erase_form_comes_below_the_edit_form(api: Api, browser: Page, world: World) -> None:
    _, memory = api.call("POST", "/memories", world.agent, {"text": "A fact to keep"})
    browser.sign_in(world.person.token)
    page = text(browser.get(f"/memories/{memory['id']}"))
    assert page.index('id="edit-heading"') < page.index('id="erase-heading"')


def test_the_recall_log_folds_long_queries(api: Api, browser: Page, world: World) -> None:
    api.call("POST", "/memories", world.agent, {"text": "The uploader retries 5 times"})
    long_query = "why does the uploader retry " + "and what else happens then " * 20
    api.call("POST", "/memories/recall", world.agent, {"query": long_query})
    api.call("POST", "/memories/recall", world.agent, {"query": "uploader retries"})
    browser.sign_in(world.person.token)
    page = text(browser.get(f"/agents/{world.agent.id}/recall"))
    assert page.count('<details class="query">') == 1  # the long one only
    assert f"({len(long_query):,} characters: show all)" in page
    assert "uploader retries</td>" in page


def test_display_names_stay_inside_the_workspace(wired: Services, world: World) -> None:
    person = wired.auth.authenticate(f"Bearer {world.person.token}")
    names = wired.dashboard.workspace
    assert names.display_name(person, world.agent.id) == "builder"
    assert names.display_name(person, world.person.id) == "ana@example.com"
    for foreign in (world.outsider.id, world.outsider_agent.id, "agt_nope", "rvw_1"):
        assert names.display_name(person, foreign) is None


def test_the_actions_waiting_for_a_person_have_a_workspace_page_and_a_notice(
    api: Api, browser: Page, world: World
) -> None:
    browser.sign_in(world.person.token)
    overview = text(browser.get("/"))
    assert 'id="actions-waiting"' not in overview
    assert "No review action waits" in text(browser.get("/pending"))
    api.call("POST", "/memories", world.agent, {"text": CONFLICT[0]})
    api.call("POST", "/memories", world.agent, {"text": CONFLICT[1]})
    _, report = api.call("POST", "/reviews", world.person, {"agentId": world.agent.id})
    overview = text(browser.get("/"))
    assert '<a href="/pending">1 review action</a> waits for a person' in overview
    page = text(browser.get("/pending"))
    assert f'href="/reviews/{report["id"]}#action-a1"' in page
    assert f'href="/agents/{world.agent.id}">builder</a>' in page
    assert "resolve conflict" in page
    assert browser.get("/pending?after=not-a-cursor").status_code == 400
