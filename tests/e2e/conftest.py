"""Fixtures of the end-to-end tests: the real local server in a subprocess."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import LocalServer


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LocalServer]:
    """A local server on free ports with its own data folder (started by the test)."""
    running = LocalServer(tmp_path / "data")
    yield running
    running.stop()
