"""Fixtures for the client and CLI tests."""

from __future__ import annotations

import pytest

from pinework import Client
from tests.client.fake_api import BASE_URL, FakeApi


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
