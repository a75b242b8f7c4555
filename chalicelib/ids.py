"""New ids and the clock, injected everywhere so tests control time (docs/conventions.md#rule-7).

Ids are a prefix plus a ULID (docs/reference.md#2-concepts): ``mem_`` memories, ``aud_`` audit
records, ``wsp_`` workspaces, ``agt_`` agents, ``usr_`` persons. A ULID starts
with its creation time, so ids sort by creation time.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Protocol

ULID_PATTERN = "[0-9A-HJKMNP-TV-Z]{26}"
MEMORY_ID = re.compile(rf"^mem_{ULID_PATTERN}$")
AGENT_ID = re.compile(rf"^agt_{ULID_PATTERN}$")
WORKSPACE_ID = re.compile(rf"^wsp_{ULID_PATTERN}$")


class Clock(Protocol):
    """Source of the current time."""

    def now(self) -> datetime:
        """Return the current time, timezone-aware, in UTC."""
        ...


class SystemClock:
    """The real clock, always UTC whatever the process time zone (docs/conventions.md#time)."""

    def now(self) -> datetime:
        """Return ``datetime.now(UTC)``."""
        return datetime.now(UTC)


class FixedClock:
    """A clock that returns a set time until moved; for tests and replays.

    Args:
        start: the initial time; must be timezone-aware.
    """

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("FixedClock needs an aware datetime")
        self._now = start.astimezone(UTC)

    def now(self) -> datetime:
        """Return the set time."""
        return self._now

    def set(self, moment: datetime) -> None:
        """Move the clock to ``moment`` (aware)."""
        self._now = moment.astimezone(UTC)


class IdFactory:
    """Makes prefixed ULID ids whose time part comes from the injected clock.

    Args:
        clock: the clock whose time starts each ULID.
    """

    def __init__(self, clock: Clock) -> None:
        self._clock = clock

    def new(self, prefix: str) -> str:
        """Return ``f"{prefix}_{ULID}"``, e.g. ``mem_01JD…`` (26 ULID characters)."""
        # python-ulid reads its own package metadata when imported (~20 ms of every
        # cold start); only requests that write pay it, on their first id.
        from ulid import ULID

        return f"{prefix}_{ULID.from_datetime(self._clock.now())}"


def to_rfc3339(moment: datetime) -> str:
    """Format an aware datetime as RFC 3339 UTC with milliseconds and ``Z``.

    Example: ``2026-11-30T01:02:03.456Z``. The fixed width keeps string order
    equal to time order, which the storage relies on.
    """
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + (
        f"{moment.astimezone(UTC).microsecond // 1000:03d}Z"
    )


def from_rfc3339(text: str) -> datetime:
    """Parse a timestamp written by ``to_rfc3339`` (or any ISO 8601 with offset)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
