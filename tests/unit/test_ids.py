"""Ids of one millisecond keep the order they were made in (chalicelib/ids.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from ulid import ULID

from chalicelib.ids import FixedClock, IdFactory, ulid_floor

MOMENT = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_ids_of_one_millisecond_increase_even_when_other_times_come_between() -> None:
    clock = FixedClock(MOMENT)
    ids = IdFactory(clock)
    other = IdFactory(FixedClock(MOMENT - timedelta(days=3)))
    made = []
    for _ in range(200):
        made.append(ids.new("aud"))
        ulid_floor(MOMENT - timedelta(days=90))  # a recall-log window read
        ULID.from_datetime(MOMENT + timedelta(hours=1))  # python-ulid's own default generator
    other.new("rcl")
    made.append(ids.new("aud"))
    assert made == sorted(made) and len(set(made)) == len(made)
    assert {ident[4:14] for ident in made} == {str(ULID.from_datetime(MOMENT))[:10]}


def test_the_floor_is_the_millisecond_then_zeros() -> None:
    moment = MOMENT + timedelta(milliseconds=7)
    floor = ulid_floor(moment)
    made = IdFactory(FixedClock(moment)).new("rcl")[4:]
    assert floor == made[:10] + "0" * 16 and floor < made
    assert ulid_floor(moment - timedelta(milliseconds=1)) < floor
    assert ULID.from_str(floor).datetime == moment
