"""``pinework dashboard``: a one-time sign-in link from the person's token, printed
and opened, never the token in a URL (docs/reference.md#13-dashboard, docs/issues.md#issue-13)."""

from __future__ import annotations

import json
import webbrowser

import pytest
from typer.testing import CliRunner

from pinework import Client, cli
from tests.client.fake_api import FakeApi

ENV = {"PINEWORK_API_URL": "http://pinework.test/", "PINEWORK_TOKEN": "pwk_person"}
LINK = {
    "object": "sign_in_link",
    "path": "/sign-in/link?code=abc123",
    "expiresAt": "2026-11-30T12:10:00.000Z",
}


@pytest.fixture(autouse=True)
def use_fake_api(fake_api: FakeApi, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    opened: list[str] = []
    monkeypatch.setattr(cli, "make_client", lambda: Client.from_env(transport=fake_api.transport))
    monkeypatch.setattr(webbrowser, "open", lambda url: opened.append(url) or True)
    return opened


def test_dashboard_prints_and_opens_the_link(fake_api: FakeApi, use_fake_api: list[str]) -> None:
    fake_api.on("POST", "/sign-in-links", 201, LINK)
    result = CliRunner().invoke(cli.app, ["dashboard"], env=ENV)
    assert result.exit_code == 0, result.output
    assert "http://pinework.test/sign-in/link?code=abc123" in result.output
    assert "until 12:10 UTC" in result.output
    assert use_fake_api == ["http://pinework.test/sign-in/link?code=abc123"]
    sent = fake_api.requests[0]
    assert sent.headers["Authorization"] == "Bearer pwk_person"
    assert "pwk_person" not in str(sent.url) and "pwk_person" not in result.output


def test_dashboard_behind_a_stage_prefix_and_as_json(
    fake_api: FakeApi, use_fake_api: list[str]
) -> None:
    fake_api.on("POST", "/sign-in-links", 201, LINK)
    env = {**ENV, "PINEWORK_API_URL": "http://pinework.test/api/v1"}
    result = CliRunner().invoke(cli.app, ["dashboard", "--json", "--no-browser"], env=env)
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert body["url"] == "http://pinework.test/sign-in/link?code=abc123"
    assert body["object"] == "sign_in_link" and use_fake_api == []


def test_an_agent_token_gets_the_apis_error(fake_api: FakeApi, use_fake_api: list[str]) -> None:
    fake_api.on(
        "POST",
        "/sign-in-links",
        403,
        {"error": {"code": "forbidden", "message": "This is an agent's token; agents cannot"}},
    )
    result = CliRunner().invoke(cli.app, ["dashboard"], env=ENV)
    assert result.exit_code == 1
    assert "error: forbidden: This is an agent's token" in result.output
    assert use_fake_api == []
