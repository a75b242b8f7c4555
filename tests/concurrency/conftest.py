"""Fixtures of the concurrency tests: one embedded server per test module (the real
serialized moto server of ``infra/local_dynamodb.py``), services on a fresh table of
it, and an agent to race with."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib import wiring
from chalicelib.ids import IdFactory
from chalicelib.models.principal import Principal, PrincipalKind
from chalicelib.settings import Settings
from infra.local_dynamodb import EmbeddedAWS
from infra.tables import create_table
from tests.helpers import embedded_client


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    """One embedded server for the module, in memory only."""
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
    server = EmbeddedAWS()
    yield server.start()
    server.stop()


@pytest.fixture
def client(endpoint: str) -> Any:
    """The DynamoDB client of the embedded server that ``wired`` uses."""
    return embedded_client(endpoint)


@pytest.fixture
def wired(client: Any) -> wiring.Services:
    """Services on a fresh table of the embedded server."""
    table = "race-" + IdFactory(wiring.SystemClock()).new("t").lower()
    create_table(client, table)
    return wiring.build_services(Settings(table_name=table), client=client)


@pytest.fixture
def agent(wired: wiring.Services) -> Principal:
    """An agent of a fresh workspace on that table."""
    workspace = wired.admin.create_workspace("race")
    issued = wired.admin.create_agent(workspace.id, "racer")
    return Principal(kind=PrincipalKind.AGENT, id=issued.id, workspace_id=workspace.id)
