"""Fixtures for the client and CLI tests."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from chalice.test import Client as ChaliceClient

from chalicelib import wiring
from pinework import Client
from tests.client.fake_api import BASE_URL, FakeApi


@pytest.fixture
def app_transport(wired: wiring.Services) -> Iterator[httpx.MockTransport]:
    """An httpx transport that hands every request to the Chalice app in-process."""
    from app import app

    with ChaliceClient(app) as chalice:

        def handle(request: httpx.Request) -> httpx.Response:
            answer = chalice.http.request(
                request.method,
                request.url.raw_path.decode("ascii"),
                headers=dict(request.headers),
                body=request.content,
            )
            return httpx.Response(answer.status_code, content=answer.body, headers=answer.headers)

        yield httpx.MockTransport(handle)


@pytest.fixture
def fake_api() -> FakeApi:
    return FakeApi()


@pytest.fixture
def client(fake_api: FakeApi) -> Client:
    return Client(
        BASE_URL,
        token="tok_agent",
        run_id="run_01",
        task_key="PIN-42",
        transport=fake_api.transport,
    )
