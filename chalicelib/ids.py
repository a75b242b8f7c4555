"""New ids and the clock, injected everywhere so tests control time (docs/conventions.md#rule-7).

Ids are a prefix plus a ULID (docs/reference.md#2-concepts): ``mem_`` memories, ``aud_`` audit
records, ``wsp_`` workspaces, ``agt_`` agents, ``usr_`` persons. A ULID starts
with its creation time, so ids sort by creation time.
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime
from typing import Any, Protocol

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

    Ids made by one process in one millisecond are strictly increasing (the ULID
    spec's monotonic mode: the random part of the previous id plus one), so the
    audit records of one memory written in the same millisecond keep the order they
    were written in (docs/reference.md#audit-records: history and Undo read that order).

    Args:
        clock: the clock whose time starts each ULID.
    """

    def __init__(self, clock: Clock) -> None:
        self._clock = clock

    def new(self, prefix: str) -> str:
        """Return ``f"{prefix}_{ULID}"``, e.g. ``mem_01JD…`` (26 ULID characters)."""
        return f"{prefix}_{_generator().generate(self._clock.now())}"


@functools.cache
def _generator() -> Any:
    """The process's one ULID generator, monotonic per millisecond (``_PerMillisecond``).

    Its own, not python-ulid's module default, which any ``ULID.from_datetime`` call
    elsewhere would move to another millisecond. python-ulid reads its own package
    metadata when imported (~20 ms of every cold start); only requests that write pay
    it, on their first id.
    """
    from ulid import ULIDGenerator

    return ULIDGenerator(policy=_PerMillisecond())


class _PerMillisecond:
    """python-ulid's monotonicity policy, kept per millisecond: the next id of a
    millisecond seen lately is the previous one's random part plus one, even when ids
    of other milliseconds were made in between (clocks of other tests, backdated ids).

    Remembers the last ``_REMEMBERED`` milliseconds; 2**80 ids of one millisecond
    exhausted start a fresh random part. Called under the generator's lock.
    """

    def __init__(self) -> None:
        self._last: dict[int, bytes] = {}

    def resolve_randomness(self, timestamp: int, randomness_source: Any) -> bytes:
        """The random part (10 bytes) of the next id of ``timestamp`` (milliseconds)."""
        previous = self._last.pop(timestamp, None)
        if previous is None or previous == b"\xff" * 10:
            randomness: bytes = randomness_source(timestamp)
        else:
            randomness = (int.from_bytes(previous, "big") + 1).to_bytes(10, "big")
        self._last[timestamp] = randomness
        if len(self._last) > _REMEMBERED:
            del self._last[next(iter(self._last))]  # the least recently used
        return randomness


_REMEMBERED = 256


def ulid_floor(moment: datetime) -> str:
    """The smallest ULID of ``moment``'s millisecond: its 10-character time part, then
    16 zeros. Made without any generator, so it never disturbs the ids' order."""
    from ulid import ULID

    milliseconds = int(moment.timestamp() * 1000)
    return str(ULID.from_bytes(milliseconds.to_bytes(6, "big") + bytes(10)))


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
