"""Fixtures of the storage contract suites (``chalicelib/storage/protocols.py``).

Each suite takes its Protocol's implementation from a fixture parametrised by
implementation name, so another implementation (an in-memory double, another
database) joins a suite by adding a name and a factory to that fixture.
"""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.ids import FixedClock, IdFactory
from chalicelib.storage.dynamodb import DynamoDBTable
from tests.helpers import TABLE


@pytest.fixture
def table(dynamodb: Any) -> DynamoDBTable:
    """The single table on moto, made from ``infra/tables.py``."""
    return DynamoDBTable(dynamodb, TABLE)


@pytest.fixture
def ids(clock: FixedClock) -> IdFactory:
    """Ids on the injected clock (so they sort by creation time)."""
    return IdFactory(clock)
