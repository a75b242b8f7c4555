"""A recall's scoring deadline (docs/reference.md#bounded-work): checks raise once it has
passed, time spent loading weights does not count, and nothing happens outside a
recall's scoring."""

import time

import pytest

from chalicelib.services.recall import deadline


def test_a_check_raises_once_the_deadline_passed_and_names_the_stage() -> None:
    with deadline.scoring(0.05) as run:
        deadline.check("first stage")
        time.sleep(0.06)
        with pytest.raises(deadline.DeadlinePassed) as passed:
            deadline.check("reranker")
    assert passed.value.stage == "reranker" == run.stage


def test_loading_weights_does_not_count_against_the_deadline() -> None:
    with deadline.scoring(0.05):
        with deadline.excluded():
            time.sleep(0.1)
        deadline.check("first stage")  # the 0.1 s of loading is not the recall's
        time.sleep(0.06)
        with pytest.raises(deadline.DeadlinePassed):
            deadline.check("clause pass")


def test_outside_a_scoring_nothing_is_checked_or_recorded() -> None:
    deadline.check("first stage")
    deadline.note_reranker(deadline.RERANKER_RAN)
    assert deadline.seconds_left() is None
    with deadline.scoring(10) as run:
        deadline.note_reranker(deadline.RERANKER_OFF)
        left = deadline.seconds_left()
    assert run.reranker == deadline.RERANKER_OFF and left is not None and 9 < left <= 10
    assert deadline.seconds_left() is None
