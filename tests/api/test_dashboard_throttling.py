"""DynamoDB throttling on the dashboard's routes (docs/reference.md#6-errors and
docs/reference.md#13-dashboard; docs/issues.md#issue-12's 429
``rate_limited`` rule, docs/issues.md#issue-13): a page never answers 500; a throttled store gives
the error page with the API's code, status 429 and ``Retry-After``. Faults come
from botocore (``tests.helpers.Faults``); no project module is patched. The API's
routes have their own sweep in ``test_throttling.py``."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from chalice.test import Client

from chalicelib.wiring import Services
from tests.helpers import Api, Faults, World, save, text
from tests.helpers import DashboardPage as Page


@pytest.fixture
def browser(wired: Services) -> Iterator[Page]:
    from app import app

    with Client(app) as client:
        yield Page(client)


def dashboard_routes() -> list[tuple[str, str]]:
    """(method, path) of every dashboard view, including views added later."""
    from app import app

    found = []
    for path, methods in app.routes.items():
        if path.startswith("/api/"):
            continue  # JSON routes: the API's sweep
        for method, entry in methods.items():
            if not entry.view_function.__name__.startswith("not_allowed"):
                found.append((method, path))
    return sorted(found)


def request_lines(capfd: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    """The JSON ``request`` log lines printed since the last call."""
    printed = capfd.readouterr().out.splitlines()
    records = [json.loads(line) for line in printed if line.startswith("{")]
    return [record for record in records if record.get("message") == "request"]


def assert_throttled_page(response: Any) -> None:
    assert response.status_code == 429, text(response)[:500]
    assert response.headers["Retry-After"] == "1"
    assert "<code>rate_limited</code>" in text(response)
    assert response.headers["Content-Type"].startswith("text/html")


def test_every_dashboard_route_answers_429_when_dynamodb_throttles_everything(
    api: Api, browser: Page, world: World, faults: Faults
) -> None:
    memory = save(api, world)
    browser.sign_in(world.person.token)
    csrf = browser.csrf()
    values = {
        "agent_id": world.agent.id,
        "memory_id": memory["id"],
        "review_id": "rvw_01KAAAAAAAAAAAAAAAAAAAAAAA",
        "action_ref": "1",
        "name": "app.css",
        "target_id": world.agent.id,
        "export_id": "exp_01KAAAAAAAAAAAAAAAAAAAAAAA",
        "learning_id": "lrn_01KAAAAAAAAAAAAAAAAAAAAAAA",
        "page_ref": "pag_01KAAAAAAAAAAAAAAAAAAAAAAA",
        "person_id": world.person.id,
        "token_id": "tok_01KAAAAAAAAAAAAAAAAAAAAAAA",
        "bulk_id": "blk_01KAAAAAAAAAAAAAAAAAAAAAAA",
        "recall_id": "rcl_01KAAAAAAAAAAAAAAAAAAAAAAA",
    }
    forms = {
        "/sign-in": {"token": world.person.token, "next": "/"},
        "/sign-in/link": {"code": "x"},
        "/agents/{agent_id}/facts": {"text": "The release train leaves on Thursdays"},
        "/memories/{memory_id}/edit": {"text": "The staging deploy needs the VPN"},
        "/memories/{memory_id}/veto": {"note": "wrong"},
        "/memories/{memory_id}/archive": {"reason": "obsolete"},
        "/agents/{agent_id}/recall": {"task": "deploy staging"},
        "/settings/review-approval": {"value": "required"},
        "/agents/{agent_id}/erase": {"reason": "asked", "confirm": "builder"},
        "/agents/{agent_id}/bulk": {
            "action": "archive",
            "detail": "old",
            f"pick-{memory['id']}": "on",
        },
    }
    faults.fail("ProvisionedThroughputExceededException", times=None)
    routes = dashboard_routes()
    reached = []
    for method, path in routes:
        concrete = re.sub(r"\{(\w+)\}", lambda found: values[found.group(1)], path)
        before = len(faults.calls)
        if method == "GET":
            response = browser.get(concrete + ("?code=x" if path == "/sign-in/link" else ""))
        else:
            response = browser.post(concrete, {"csrf": csrf, **forms.get(path, {})})
        assert response.status_code != 500, (method, path, text(response)[:300])
        if len(faults.calls) > before:
            reached.append((method, path))
            assert response.status_code == 429, (method, path, response.headers)
            assert_throttled_page(response)
    # Only the vendored files need no table (the sign-in form looks for a live session).
    assert sorted(set(routes) - set(reached)) == [("GET", "/static/{name}")]
    assert len(reached) >= 25


def _sweep(faults: Faults, request: Callable[[], Any], ok: int) -> int:
    """Throttle the n-th DynamoDB call of ``request`` for every n it makes: each answer
    is the normal one or the 429 page, never anything else. Returns the calls made."""
    before = len(faults.calls)
    assert request().status_code == ok
    calls = len(faults.calls) - before
    for n in range(calls):
        faults.clear()
        faults.fail("ThrottlingException", skip=n)
        response = request()
        assert response.status_code in (ok, 429), (n, text(response)[:300])
        if response.status_code == 429:
            assert_throttled_page(response)
    faults.clear()
    return calls


def test_a_throttle_at_any_call_of_a_page_is_429_or_the_page(
    api: Api, browser: Page, world: World, faults: Faults
) -> None:
    memory = save(api, world)
    api.call("POST", "/memories/day", world.agent, {"line": "deployed staging"})
    browser.sign_in(world.person.token)
    agent = world.agent.id
    pages = [
        "/",
        f"/agents/{agent}",
        f"/agents/{agent}?kind=fact&status=active&q=VPN",
        f"/agents/{agent}/days",
        f"/agents/{agent}/pictures",
        f"/agents/{agent}/reviews",
        f"/memories/{memory['id']}",
        "/settings",
    ]
    calls = sum(_sweep(faults, lambda path=path: browser.get(path), 200) for path in pages)
    assert calls >= 2 * len(pages)  # each page read its session and then its data


def test_a_throttled_save_from_the_page_stores_nothing_or_once(
    api: Api, browser: Page, world: World, faults: Faults
) -> None:
    browser.sign_in(world.person.token)
    csrf = browser.csrf()
    texts = iter(f"The nightly backup number {n} runs at two" for n in range(100))

    def post() -> Any:
        return browser.post(f"/agents/{world.agent.id}/facts", {"csrf": csrf, "text": next(texts)})

    calls = _sweep(faults, post, 303)
    status, listed = api.call("GET", f"/memories?agentId={world.agent.id}&limit=100", world.person)
    assert status == 200
    saved = [item["text"] for item in listed["data"]]
    # The first (unthrottled) save, and at most one per throttled attempt; never twice.
    assert "The nightly backup number 0 runs at two" in saved
    assert len(saved) == len(set(saved)) and len(saved) <= calls + 1


def test_the_log_line_of_a_page_names_the_person_and_the_error_code(
    browser: Page, world: World, faults: Faults, capfd: pytest.CaptureFixture[str]
) -> None:
    browser.sign_in(world.person.token)
    request_lines(capfd)
    assert browser.get(f"/agents/{world.agent.id}").status_code == 200
    # After the session, its person and its token (docs/reference.md#offboarding).
    faults.fail("ThrottlingException", skip=3, times=None)
    assert_throttled_page(browser.get(f"/agents/{world.agent.id}"))
    lines = [
        (line["route"], line["status"], line.get("person_id"), line.get("error_code"))
        for line in request_lines(capfd)
    ]
    assert lines == [
        ("/agents/{agent_id}", 200, world.person.id, None),
        ("/agents/{agent_id}", 429, world.person.id, "rate_limited"),
    ]
