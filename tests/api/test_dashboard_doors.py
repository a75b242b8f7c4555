"""The dashboard's doors (docs/reference.md#13-dashboard, docs/issues.md#issue-21-item-3): opening a
one-time link signs nobody in (login CSRF) until a same-origin POST confirms it, and a ``next``
path of any characters is a path of this app or ``/``, never a broken answer."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import pytest
from chalice.test import Client

from chalicelib.wiring import Services
from tests.helpers import Api, World, save, text
from tests.helpers import DashboardPage as Page


@pytest.fixture
def browser(wired: Services) -> Iterator[Page]:
    from app import app

    with Client(app) as client:
        yield Page(client)


def link_code(api: Api, world: World) -> tuple[str, str]:
    status, link = api.call("POST", "/sign-in-links", world.person)
    assert status == 201
    return link["path"], link["path"].split("code=", 1)[1]


def test_opening_a_link_signs_nobody_in_and_uses_nothing(
    api: Api, browser: Page, world: World
) -> None:
    path, code = link_code(api, world)
    for _ in range(3):  # an attacker's page may open it in a frame or an image, repeatedly
        page = browser.get(path)
        assert page.status_code == 200 and "Set-Cookie" not in page.headers
        assert f'name="code" value="{code}"' in text(page)
        assert page.headers["Cache-Control"] == "no-store"
    assert browser.get("/").status_code == 303  # still signed out
    assert browser.post("/sign-in/link", {"code": code}).status_code == 303
    assert browser.get("/").status_code == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example"},
        {"Origin": "null", "Sec-Fetch-Site": "cross-site"},
        {"Origin": "null"},
        {"Origin": "http://localhost.evil.example"},
    ],
)
def test_a_link_posted_from_another_site_is_refused_and_still_works(
    api: Api, browser: Page, world: World, headers: dict[str, str]
) -> None:
    _, code = link_code(api, world)
    refused = browser.post("/sign-in/link", {"code": code}, **headers)
    assert refused.status_code == 403 and "Set-Cookie" not in refused.headers
    assert browser.get("/").status_code == 303
    done = browser.post("/sign-in/link", {"code": code})
    assert done.status_code == 303 and done.headers["Location"] == "/"


def test_a_link_post_with_no_origin_at_all_is_refused(
    api: Api, browser: Page, world: World
) -> None:
    _, code = link_code(api, world)
    response = browser.client.http.post(
        "/sign-in/link",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        body=f"code={code}",
    )
    assert response.status_code == 403
    same = browser.post(
        "/sign-in/link", {"code": code}, Origin="null", **{"Sec-Fetch-Site": "same-origin"}
    )
    assert same.status_code == 303 and same.headers["Location"] == "/"


def test_unusable_links_go_to_sign_in(browser: Page) -> None:
    for path in ("/sign-in/link", "/sign-in/link?code=nope", "/sign-in/link?code=" + "x" * 500):
        response = browser.get(path)
        assert response.headers["Location"] == "/sign-in?link=unusable", path
    posted = browser.post("/sign-in/link", {"code": "nope"})
    assert posted.headers["Location"] == "/sign-in?link=unusable"


NEXT_PATHS = [
    ("/agents/\u65e5\u672c", "/agents/%E6%97%A5%E6%9C%AC"),
    (
        "/agents/x?q=\u0421\u0435\u0440\u0432\u0435\u0440",
        "/agents/x?q=%D0%A1%D0%B5%D1%80%D0%B2%D0%B5%D1%80",
    ),
    ("/\U0001f680", "/%F0%9F%9A%80"),
    ("//evil.example", "/"),
    ("/\\evil.example", "/"),
    ("/%2F%2Fevil.example", "/"),
    ("/%5c%5cevil.example", "/"),
    ("/x\r\nSet-Cookie: a=b", "/"),
    ("/x\u0085y", "/"),
    ("https://evil.example", "/"),
]


@pytest.mark.parametrize(("given", "location"), NEXT_PATHS)
def test_sign_in_goes_to_a_safe_ascii_next(
    browser: Page, world: World, given: str, location: str
) -> None:
    signed = browser.post("/sign-in", {"token": world.person.token, "next": given})
    assert signed.status_code == 303
    assert signed.headers["Location"] == location
    again = browser.get("/sign-in?next=" + quote(given, safe=""))  # signed in: straight on
    assert again.status_code == 303 and again.headers["Location"] == location


@pytest.mark.parametrize(("given", "location"), NEXT_PATHS[:3])
def test_the_sign_in_form_carries_a_next_of_any_characters(
    browser: Page, given: str, location: str
) -> None:
    page = browser.get("/sign-in?next=" + quote(given, safe=""))
    assert page.status_code == 200
    assert f'name="next" value="{location}"' in text(page)


def test_a_form_posts_next_is_made_safe_too(api: Api, browser: Page, world: World) -> None:
    browser.sign_in(world.person.token)
    csrf = browser.csrf()
    for number, (given, location) in enumerate(NEXT_PATHS):
        memory = save(api, world, f"The build cache lives on volume {number}")
        response = browser.post(
            f"/memories/{memory['id']}/veto",
            {"csrf": csrf, "version": "1", "note": "", "next": given},
        )
        assert response.status_code == 303, text(response)[:300]
        assert response.headers["Location"].split("done=")[0].rstrip("?&") == location
