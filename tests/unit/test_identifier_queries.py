"""Queries made only of ticket keys (docs/reference.md#identifier-queries): they find the
facts that name one of their keys, and only those."""

from __future__ import annotations

import pytest

from chalicelib.limits import MAX_KEPT, SCORE_CUTOFF
from chalicelib.services.recall.identifiers import keyed_scores, names_a_key, ticket_keys


@pytest.mark.parametrize(
    ("query", "keys"),
    [
        ("PIN-42", {"PIN-42"}),
        ("  pin-42 ", {"PIN-42"}),
        ("PIN-42, OPS-7", {"PIN-42", "OPS-7"}),
        ("AB_C2-10;XY-1", {"AB_C2-10", "XY-1"}),
        ("PIN-42 deploy", None),
        ("deploy staging", None),
        ("42", None),
        ("PIN-", None),
        ("-42", None),
        ("", None),
        ("PIN-42?", None),
    ],
)
def test_a_query_of_ticket_keys_only(query: str, keys: set[str] | None) -> None:
    assert ticket_keys(query) == (None if keys is None else frozenset(keys))


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("Deploys need the VPN (source: PIN-42)", True),
        ("see pin-42.", True),
        ("PIN-42: fixed", True),
        ("PIN-420 is another ticket", False),
        ("XPIN-42 is another project", False),
        ("SUBPIN-42", False),
        ("PIN 42", False),
        ("PIN-812", False),
    ],
)
def test_a_fact_names_a_key_as_a_whole_key(text: str, named: bool) -> None:
    assert names_a_key(text, frozenset({"PIN-42"})) is named


def test_named_facts_are_kept_and_others_score_nothing() -> None:
    texts = ["Uploader retries (PIN-42)", "VPN for staging (PIN-812)", "pin-42 is done"]
    assert keyed_scores("PIN-42", texts, [0.3, 0.97, 0.9]) == [SCORE_CUTOFF, 0.0, 0.9]
    assert keyed_scores("PIN-999", texts, [0.3, 0.97, 0.9]) == [0.0, 0.0, 0.0]
    assert keyed_scores("what about PIN-42", texts, [0.3, 0.97, 0.9]) == [0.3, 0.97, 0.9]


def test_at_most_the_cap_of_named_facts_reach_the_cut() -> None:
    texts = [f"fact {i} of PIN-1" for i in range(MAX_KEPT + 5)]
    scores = [i / 100 for i in range(MAX_KEPT + 5)]
    keyed = keyed_scores("PIN-1", texts, scores)
    assert sum(score >= SCORE_CUTOFF for score in keyed) == MAX_KEPT
    assert all(keyed[i] < SCORE_CUTOFF for i in range(5))  # the five lowest stay below
