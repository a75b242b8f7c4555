"""Paged key listings in the Python clients and ``pinework kv recall``
(docs/reference.md#kv-listing): a page with its cursor, every key by following ``next``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner, Result

from pinework import AsyncClient, Client, cli
from tests.client.fake_api import BASE_URL, FakeApi
from tests.helpers import InjectedCliRunner

ENV = {"PINEWORK_API_URL": "http://pinework.test", "PINEWORK_TOKEN": "tok_person"}
PAGES: dict[str | None, dict[str, Any]] = {
    None: {"keys": ["a", "b"], "count": 5, "next": "c1", "truncated": True},
    "c1": {"keys": ["c", "d"], "count": 5, "next": "c2", "truncated": True},
    "c2": {"keys": ["e"], "count": 5, "next": None},
}


@pytest.fixture
def paged(fake_api: FakeApi) -> list[dict[str, Any]]:
    """Serve ``PAGES`` by cursor; the list of request bodies seen."""
    sent: list[dict[str, Any]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        sent.append(body)
        return httpx.Response(200, json=PAGES[body.get("cursor")])

    fake_api.routes[("POST", "/api/v1/kv/recall")] = answer
    return sent


def test_the_client_reads_one_page_and_its_cursor(
    client: Client, paged: list[dict[str, Any]]
) -> None:
    page = client.kv_keys(limit=2)
    assert (page.keys, page.count, page.next_cursor) == (["a", "b"], 5, "c1")
    assert client.kv_recall(cursor="c2").next_cursor is None  # type: ignore[union-attr]
    assert paged == [{"limit": 2}, {"cursor": "c2"}]


def test_the_clients_iterate_every_key_following_next(
    client: Client, fake_api: FakeApi, paged: list[dict[str, Any]]
) -> None:
    assert list(client.iter_kv_keys(page_size=2)) == ["a", "b", "c", "d", "e"]
    assert paged == [{"limit": 2}, {"cursor": "c1", "limit": 2}, {"cursor": "c2", "limit": 2}]

    async def run() -> list[str]:
        async with AsyncClient(BASE_URL, token="tok", transport=fake_api.transport) as client:
            return [key async for key in client.iter_kv_keys()]

    assert asyncio.run(run()) == ["a", "b", "c", "d", "e"]


@pytest.fixture
def runner(fake_api: FakeApi) -> CliRunner:
    return InjectedCliRunner(
        cli.Connections(client=lambda: Client.from_env(transport=fake_api.transport))
    )


def invoke(runner: CliRunner, *args: str) -> Result:
    return runner.invoke(cli.app, list(args), env=ENV)


def test_cli_prints_a_page_and_the_next_cursor_on_stderr(
    runner: CliRunner, paged: list[dict[str, Any]]
) -> None:
    result = invoke(runner, "kv", "recall", "--limit", "2", "--cursor", "c1")
    assert result.exit_code == 0, result.output
    assert result.stdout == "c\nd\n"
    assert "next: c2" in result.stderr
    assert paged == [{"cursor": "c1", "limit": 2}]


def test_cli_all_follows_every_page(runner: CliRunner, paged: list[dict[str, Any]]) -> None:
    result = invoke(runner, "kv", "recall", "--all")
    assert result.exit_code == 0, result.output
    assert result.stdout == "a\nb\nc\nd\ne\n" and "next:" not in result.stderr
    as_json = invoke(runner, "kv", "recall", "--all", "--json")
    assert json.loads(as_json.stdout) == {
        "keys": ["a", "b", "c", "d", "e"],
        "count": 5,
        "next": None,
    }


def test_cli_refuses_paging_options_with_a_key(runner: CliRunner) -> None:
    result = invoke(runner, "kv", "recall", "k", "--all")
    assert result.exit_code == 2
