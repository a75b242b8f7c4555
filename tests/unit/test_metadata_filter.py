"""The metadata filter's index texts and conditions (docs/reference.md#metadata-filters):
numbers order as numbers (negatives, decimals, huge and tiny), dates as moments, and the
conditions parsed from their text syntax."""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from chalicelib.errors import MetadataFilterInvalid
from chalicelib.models.metadata_filter import holds_metadata, index_text, text_top
from chalicelib.services.memory.metadata_filter import meta_filter


def _random_number(rng: random.Random) -> int | float:
    kind = rng.randrange(4)
    if kind == 0:
        return rng.randint(-(10**6), 10**6)
    if kind == 1:
        return round(rng.uniform(-1000, 1000), rng.randint(0, 6))
    if kind == 2:
        return rng.choice([-1, 1]) * rng.random() * 10 ** rng.randint(-300, 300)
    return rng.choice([0, -0.0, 0.0, 1, -1, 10**40 + 1, -(10**25)])


def test_numbers_order_as_their_values() -> None:
    rng = random.Random(4602)
    numbers = [_random_number(rng) for _ in range(3000)]
    by_text = sorted(numbers, key=index_text)
    values = [Decimal(repr(n)) if isinstance(n, float) else Decimal(n) for n in by_text]
    assert values == sorted(values)
    for first, second in itertools.pairwise(by_text):
        same = Decimal(repr(first) if isinstance(first, float) else first) == Decimal(
            repr(second) if isinstance(second, float) else second
        )
        assert (index_text(first) == index_text(second)) == same


def test_dates_order_as_moments_and_other_strings_stay_strings() -> None:
    rng = random.Random(4603)
    start = datetime(2020, 1, 1, tzinfo=UTC)
    moments = [start + timedelta(seconds=rng.randint(0, 10**9)) for _ in range(500)]
    zones = ["Z", "+02:00", "-07:30", "+00:00"]
    texts = []
    for moment in moments:
        zone = rng.choice(zones)
        offset = (
            timedelta(0)
            if zone in ("Z", "+00:00")
            else timedelta(hours=int(zone[1:3]), minutes=int(zone[4:]))
            * (1 if zone[0] == "+" else -1)
        )
        local = (moment + offset).replace(tzinfo=None)
        texts.append((moment, local.isoformat() + zone))
    ordered = sorted(texts, key=lambda pair: index_text(pair[1]))
    assert [moment for moment, _ in ordered] == sorted(moments)
    assert index_text("2026-12-07") == index_text("2026-12-07T00:00:00Z")
    assert index_text("2026-13-07").startswith("s:")
    assert index_text("billing") == "s:billing" and index_text(True) == "b:1"


def test_a_range_top_keeps_a_value_that_is_a_prefix_of_the_bound() -> None:
    # "ab" < "ab c", and its key "ab#mem_…" must fall at or below the range's top
    assert text_top("s:ab c") >= "s:ab#mem_1"
    assert text_top("s:ab c") >= "s:ab c#mem_1"
    assert text_top("s:ab c") >= "s:ab d#mem_1"  # read, then refused by the exact check


def test_conditions_match_as_documented() -> None:
    metadata = {"amount": -2.5, "code": "3", "due": "2026-12-01T10:00:00+02:00", "vip": True}
    holds = [
        ["amount:gte:-3", "amount:lt:-2.4999"],
        ["code:3"],
        ["code:in:1|3"],
        ["vip:true"],
        ["due:gte:2026-12-01", "due:lt:2026-12-01T08:00:01Z"],
        ["AMOUNT:eq:-2.50"],
    ]
    fails = [
        ["amount:gt:-2.5"],
        ["code:gte:1"],  # a number range keeps numbers only
        ["missing:1"],
        ["due:gt:2026-12-01T08:00:00Z"],
        ["vip:1"],
    ]
    for conditions in holds:
        assert holds_metadata(metadata, meta_filter(conditions)), conditions
    for conditions in fails:
        assert not holds_metadata(metadata, meta_filter(conditions)), conditions


@pytest.mark.parametrize(
    "condition",
    ["nokey", ":value", "1abc:x", "a:gte:false", "a:lt:1e5000", "a:in:" + "|".join("x" * 11)],
)
def test_bad_conditions_are_refused(condition: str) -> None:
    with pytest.raises(MetadataFilterInvalid):
        meta_filter([condition])


def test_a_value_after_an_unknown_operator_is_the_whole_text() -> None:
    (condition,) = meta_filter(["note:a:b"])
    assert condition.values == ("s:a:b",)
    (condition,) = meta_filter(["note:eq:gt:3"])
    assert condition.values == ("s:gt:3",)
