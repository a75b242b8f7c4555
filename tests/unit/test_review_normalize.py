"""Step 1 of the sameness judgment: ``normalize`` (docs/reference.md#review-step-1)."""

from __future__ import annotations

import pytest

from chalicelib.services.review.normalize import has_filler, normalize, without_filler


@pytest.mark.parametrize(
    ("written", "plain"),
    [
        ("FYI: the mirror syncs hourly", "The mirror syncs hourly"),
        ("Worth noting: the mirror syncs hourly", "The mirror syncs hourly"),
        ("For the record, the mirror syncs hourly", "The mirror syncs hourly"),
        ("Remember that the mirror syncs hourly", "The mirror syncs hourly"),
        ("The mirror syncs hourly, as a reminder", "The mirror syncs hourly"),
        ("The mirror syncs hourly btw", "The mirror syncs hourly"),
    ],
)
def test_a_filler_is_set_aside(written: str, plain: str) -> None:
    assert without_filler(written) == plain
    assert has_filler(written)


@pytest.mark.parametrize(
    "sentence",
    [
        "Remember the VPN token expires daily",  # a verb: no colon or comma follows
        "Update the runbook after each incident",
        "Note-taking happens in the shared doc",
        "The mirror syncs hourly",
    ],
)
def test_a_word_of_the_sentence_is_no_filler(sentence: str) -> None:
    assert without_filler(sentence) == sentence
    assert not has_filler(sentence)


def test_a_filler_alone_is_kept() -> None:
    assert without_filler("FYI") == "FYI"


def test_contractions_are_spelled_out_and_spaces_collapsed() -> None:
    assert normalize("Dont  rebase the release branch") == "Do not rebase the release branch"
    assert normalize("We can't rebase it") == "We can not rebase it"
    assert normalize("It won\u2019t page at night") == "It will not page at night"
