"""Duplicates a person would call duplicates (docs/issues.md#issue-26-item-1,
``chalicelib/services/review/loose.py``): formatting, fillers, one misspelt word, another
frame; and what must never merge: two real words one letter apart, a word with a prefix
that negates it, handles joined across a hyphen, roles swapped, two attributes of one
subject. The misspelling distance is held against rapidfuzz's."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import OSA

from chalicelib.services.review.loose import edits, same_words, typo_pair, without_filler
from chalicelib.services.review.sameness import compare

DUPLICATES = [
    ("typo", "The nightly backup job runs at 02:00", "The nightly bakcup job runs at 02:00"),
    ("typo", "Our Postgres uses logical replication", "Our Postgres uses logical replicaton"),
    ("hyphen", "The reporting replica is read-only", "the reporting replica is read only"),
    ("compound", "The web tier auto-scales on CPU", "The web tier autoscales on CPU"),
    ("compound", "Users log in with single sign-on", "Users login with single sign-on"),
    (
        "case",
        "THE STAGING DATABASE IS REFRESHED WEEKLY",
        "The staging database is refreshed weekly",
    ),
    ("filler", "FYI: the VPN is required for staging", "The VPN is required for staging"),
    ("filler", "Just so you know, Marco approves contracts", "Marco approves contracts"),
    ("filler", "The support queue closes at 18:00, btw", "The support queue closes at 18:00"),
    (
        "frame",
        "The Kafka cluster in us-east-2 has 6 brokers",
        "The us-east-2 Kafka cluster has 6 brokers",
    ),
    ("passive", "Jenkins builds the legacy services", "The legacy services are built by Jenkins"),
    ("name", "The internal wiki is called Compass", "Compass is the internal wiki's name"),
    ("moved", "On Fridays we freeze production deploys", "We freeze production deploys on Fridays"),
]
NOT_DUPLICATES = [
    (
        "real words",
        "Traffic goes to the east region first",
        "Traffic goes to the west region first",
    ),
    ("real words", "The stable channel updates monthly", "The staple channel updates monthly"),
    ("prefix", "The internal API is synchronous", "The internal API is asynchronous"),
    ("handle", "Bob's GitHub handle is bob-dev", "Bob's GitHub handle is bobdev"),
    ("path", "The health check path is /healthz", "The health check path is /health"),
    ("roles", "Alice reports to Bob", "Bob reports to Alice"),
    ("order", "Deploy the API before the workers", "Deploy the workers before the API"),
    ("passive kept order", "Ana is managed by Bob", "Ana manages Bob"),
    ("number", "The build cache holds 20 GB", "The build cache holds 200 GB"),
    ("negation", "Engineers can deploy on Fridays", "Engineers can't deploy on Fridays"),
]


@pytest.mark.parametrize(("kind", "a", "b"), DUPLICATES, ids=[d[0] for d in DUPLICATES])
def test_duplicates_across_formatting_fillers_typos_and_frames(kind: str, a: str, b: str) -> None:
    assert compare(a, b).kind == "duplicate"
    assert compare(b, a).kind == "duplicate"


@pytest.mark.parametrize(("kind", "a", "b"), NOT_DUPLICATES, ids=[n[0] for n in NOT_DUPLICATES])
def test_what_differs_in_one_detail_is_never_merged(kind: str, a: str, b: str) -> None:
    assert compare(a, b).kind != "duplicate"
    assert compare(b, a).kind != "duplicate"


def test_two_attributes_of_one_subject_are_not_a_conflict_but_a_changed_value_is() -> None:
    attributes = compare(
        "The staging database is db-stg-2 in eu-west-1", "The staging database listens on port 5432"
    )
    assert attributes.kind == "unrelated"
    assert compare(
        "The Kafka cluster has six brokers", "The Kafka cluster runs version 3.6"
    ).kind == ("unrelated")
    assert (
        compare(
            "The reporting database listens on port 5432",
            "The reporting database listens on port 6432",
        ).kind
        == "different"
    )
    assert (
        compare(
            "The session cache TTL is 300 seconds",
            "The session cache TTL was raised to 600 seconds",
        ).kind
        == "different"
    )


def test_fillers_and_compounds() -> None:
    assert without_filler("Heads up: staging is down") == "staging is down"
    assert (
        without_filler("Remember to rotate keys") == "Remember to rotate keys"
    )  # not a filler here
    assert without_filler("FYI") == "FYI"  # nothing else left: kept
    assert same_words("The on-call rota", "the oncall rota")
    assert not same_words("handle bob-dev", "handle bobdev")


def test_a_typo_needs_one_real_word_and_the_same_first_letter() -> None:
    assert typo_pair("backup", "bakcup") and typo_pair("replication", "replicaton")
    assert not typo_pair("east", "west") and not typo_pair("synchronous", "asynchronous")
    assert not typo_pair("lead", "load")  # two real words
    assert not typo_pair("prod", "prof")  # an environment is a value, never a misspelling
    assert not typo_pair("kaylee", "kaylie")  # neither known: only an insertion, deletion or swap
    assert not typo_pair("v2", "v3") and not typo_pair(
        "abc", "abd"
    )  # no digits, 4 letters at least


@settings(max_examples=300, deadline=None)
@given(st.text("abcdeilnorst", max_size=9), st.text("abcdeilnorst", max_size=9))
def test_the_distance_is_the_optimal_string_alignment_distance(x: str, y: str) -> None:
    assert edits(x, y)[0] == OSA.distance(x, y)
