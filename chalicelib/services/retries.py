"""Re-running a read-check-write step while it loses races (every state change,
docs/reference.md#4-states: conditional writes, re-read and re-checked on a lost race).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from chalicelib.errors import Conflict
from chalicelib.storage.protocols import WriteConflict

WRITE_ATTEMPTS = 8
"""How often a state change re-reads and retries after losing a concurrent race."""


T = TypeVar("T")


def with_retries(attempt: Callable[[], T]) -> T:
    """Run a read-check-write ``attempt`` again while it loses races (``WriteConflict``).

    Each attempt re-reads, so every rule is checked against the state it writes over.

    Raises:
        Conflict: still losing after ``WRITE_ATTEMPTS`` attempts.
    """
    for _ in range(WRITE_ATTEMPTS):
        try:
            return attempt()
        except WriteConflict:
            continue
    raise Conflict("The memory kept changing while this request ran; try again.")
