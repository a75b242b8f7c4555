"""Shared fixtures: moto-backed DynamoDB with the real table definition, an
injected clock, services wired against them, and a Chalice test client.

The constants, types and functions tests share are in ``tests/helpers.py``;
test modules import them from there, never from this file or from each other.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import boto3
import httpx
import pytest
from chalice.test import Client
from moto import mock_aws

from chalicelib import wiring
from chalicelib.ids import FixedClock
from chalicelib.settings import Settings
from infra import moto_transactions
from infra.tables import create_table
from tests.helpers import BUCKET, START, TABLE, Actor, Api, Faults, Receiver, World

pytest_plugins = ["tests.iam_plugin"]
"""Every AWS call of a Lambda entry point is checked against its role (docs/issues.md#issue-12)."""

LONGEST_FILES = ("tests/e2e/test_contract_local_server.py",)
"""Test files that each take a large share of a whole run (the contract fuzz: about a
third of CI's test time, docs/DECISIONS.md#ci-time-the-longest-file-first-issue-48-item-6)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Order the run by file: the tests of ``LONGEST_FILES`` first, then the files with
    more tests before those with fewer (pytest-xdist's own order, which ``make test``
    turns off with ``--no-loadscope-reorder`` so that this one holds). ``make test`` runs
    each file whole on one worker, handing files out in this order, so a long file started
    last keeps its worker busy after the others are done; started first, the rest of the
    run fills the other workers meanwhile. A stable sort: a file's tests keep their order."""
    per_file = Counter(item.nodeid.split("::", 1)[0] for item in items)

    def place(item: pytest.Item) -> tuple[bool, int, str]:
        path = item.nodeid.split("::", 1)[0]
        return path not in LONGEST_FILES, -per_file[path], path

    items.sort(key=place)


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """moto for every AWS call in the test; fake credentials, never real AWS. The test's
    thread is served as the embedded server's requests are (``infra/moto_transactions.py``:
    a transaction backs up the items it touches, not whole tables; a Query reads its
    partition), whose answers the parity tests hold against stock moto
    (docs/DECISIONS.md#ci-time-the-tests-on-the-embedded-servers-moto-paths-issue-48-item-6)."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(name, value)
    with mock_aws(), moto_transactions.embedded_server_requests():
        yield


@pytest.fixture
def dynamodb(aws: None) -> Any:
    """A DynamoDB client with the table created from ``infra/tables.py``."""
    client = boto3.client("dynamodb", region_name="us-east-1")
    create_table(client, TABLE)
    return client


@pytest.fixture
def s3(aws: None) -> Any:
    """An S3 client with the bucket for large key-value values (docs/reference.md#10-key-value)."""
    client = boto3.client("s3", region_name="us-east-1")
    client.create_bucket(Bucket=BUCKET)
    return client


@pytest.fixture
def versioned(s3: Any) -> Any:
    """The test bucket versioned, as the stacks create it (infra/protection.py): an
    erasure must delete every version."""
    s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
    return s3


@pytest.fixture
def clock() -> FixedClock:
    """A clock fixed at 2026-11-30T12:00:00Z; tests move it."""
    return FixedClock(START)


@pytest.fixture
def wired(dynamodb: Any, s3: Any, clock: FixedClock) -> Iterator[wiring.Services]:
    """Services on the moto table and bucket with the fixed clock, installed for the API.

    In-process moto is not thread-safe, so the overview reads its agents one at a time
    here (``read_concurrency=1``); parallel reads are tested against the embedded server."""
    built = wiring.build_services(
        Settings(table_name=TABLE, bucket_name=BUCKET, read_concurrency=1),
        clock=clock,
        client=dynamodb,
        s3=s3,
    )
    wiring.install(built)
    yield built
    wiring.install(None)


@pytest.fixture
def world(wired: wiring.Services) -> World:
    """Principals created through the admin service, as an operator would."""
    admin = wired.admin
    workspace = admin.create_workspace("Acme")
    other = admin.create_workspace("Elsewhere")
    agent = admin.create_agent(workspace.id, "builder")
    other_agent = admin.create_agent(workspace.id, "reviewer")
    person = admin.create_person(workspace.id, "ana@example.com")
    outsider = admin.create_person(other.id, "eve@example.com")
    outsider_agent = admin.create_agent(other.id, "spy")
    return World(
        workspace_id=workspace.id,
        agent=Actor(agent.id, agent.token),
        other_agent=Actor(other_agent.id, other_agent.token),
        person=Actor(person.id, person.token),
        outsider=Actor(outsider.id, outsider.token),
        outsider_agent=Actor(outsider_agent.id, outsider_agent.token),
    )


@pytest.fixture
def api(wired: wiring.Services) -> Iterator[Api]:
    """The HTTP API of ``app.py`` through ``chalice.test.Client``."""
    from app import app

    with Client(app) as client:
        yield Api(client)


@pytest.fixture
def faults(dynamodb: Any) -> Faults:
    """Fault injection on the test's DynamoDB client (the one ``wired`` uses)."""
    return Faults(dynamodb)


@pytest.fixture
def app_transport(wired: wiring.Services) -> Iterator[httpx.MockTransport]:
    """An httpx transport that hands every request to the Chalice app in-process."""
    from app import app

    with Client(app) as chalice:

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
def receiver() -> Iterator[Receiver]:
    """A webhook receiver on 127.0.0.1 (``Receiver``), stopped after the test."""
    started = Receiver()
    yield started
    started.server.shutdown()
    started.server.server_close()


@pytest.fixture
def local(
    wired: wiring.Services, dynamodb: Any, s3: Any, clock: FixedClock
) -> Iterator[wiring.Services]:
    """Services as ``wired`` with ``PINEWORK_WEBHOOKS_ALLOW_LOOPBACK`` on (a loopback
    webhook receiver allowed), installed for the API."""
    built = wiring.build_services(
        Settings(
            table_name=TABLE, bucket_name=BUCKET, read_concurrency=1, webhooks_allow_loopback=True
        ),
        clock=clock,
        client=dynamodb,
        s3=s3,
    )
    wiring.install(built)
    yield built
    wiring.install(wired)
