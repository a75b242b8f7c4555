"""The deterministic reviewer's rules, without AWS (docs/reference.md#9-review)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from chalicelib.models.memory import Memory, MemoryStatus
from chalicelib.models.review import ReviewAction
from chalicelib.services.review.rule_reviewer import (
    ReviewContext,
    RuleReviewer,
    durable_text,
    normalize,
)
from tests.helpers import NOW, fact


def test_durable_markers_are_read_after_the_time_and_task_prefix() -> None:
    assert durable_text("09:15 [PIN-4] !fact Staging uses db-2") == ("Staging uses db-2", "PIN-4")
    assert durable_text("09:15 [durable] CI runs on arm64") == ("CI runs on arm64", None)
    assert durable_text("09:15 [PIN-4] [DURABLE] Caps work") == ("Caps work", "PIN-4")
    assert durable_text("09:15 fixed the build, !fact not at the start") is None
    assert durable_text("09:15 !fact   ") is None


def test_normalize_folds_case_punctuation_and_contractions() -> None:
    assert normalize("Don't  deploy on FRIDAYS!") == normalize("do not deploy on fridays")


def test_near_duplicate_of_a_vetoed_fact_is_never_lifted() -> None:
    vetoed = fact(
        1, "The cache TTL is 300 seconds", status=MemoryStatus.ARCHIVED, archive_reason="vetoed"
    )
    context = ReviewContext(
        agent_id="agt_1",
        date="2026-11-30",
        now=NOW,
        facts=[vetoed],
        day_lines=["10:00 !fact the cache ttl is 300 seconds."],
    )
    proposal = RuleReviewer().propose(context)
    assert proposal.actions == []
    assert proposal.notes and "vetoed" in proposal.notes[0]


def test_a_merge_keeps_the_cleanest_most_specific_wording() -> None:
    """docs/issues.md#issue-43-item-3: no filler, no misspelling, then the most values."""
    facts = [
        fact(3, "FYI: the invoice worker retries 5 times", recall_count=9),
        fact(2, "The invoice workr retries 5 times", recall_count=9),
        fact(1, "The invoice worker retries 5 times", recall_count=0),
    ]
    (action,) = RuleReviewer().propose(ReviewContext("agt_1", "2026-11-30", NOW, facts)).actions
    assert action.action == "merge" and action.keep_id == facts[2].id
    assert "a filler set aside" in action.reason and "one misspelling apart" in action.reason


def test_a_duplicate_beside_one_side_never_hides_a_contradiction() -> None:
    """docs/issues.md#issue-43-item-2: conflicts are found between groups of duplicates."""
    old = fact(1, "The metrics relay listens on port 9100")
    new = fact(2, "The metrics relay listens on port 9101")
    copy = fact(3, "Just so you know, the metrics relay listens on port 9100")
    alone = propose(new, old)
    assert [a.action for a in alone] == ["resolve_conflict"]
    beside = propose(copy, new, old)
    assert sorted(a.action for a in beside) == ["merge", "resolve_conflict"]
    (conflict,) = [a for a in beside if a.action == "resolve_conflict"]
    (merge,) = [a for a in beside if a.action == "merge"]
    assert conflict.waits_for_person
    assert {conflict.keep_id, *conflict.memory_ids} == {new.id, merge.keep_id}


def test_a_paraphrase_is_never_sent_as_a_conflict() -> None:
    first = fact(1, "The smoke suite takes about 6 minutes")
    second = fact(2, "The smoke suite takes roughly six minutes")
    assert [a.action for a in propose(second, first)] == ["merge"]
    assert (
        propose(fact(4, "Use Ruby 3.2 for the storefront"), fact(3, "Use Ruby 3.3 for the admin"))
        == []
    )


def test_merge_keeps_the_most_recalled_then_the_newest() -> None:
    facts = [
        fact(3, "Deploy with make ship", recall_count=0),
        fact(2, "deploy with make ship", recall_count=4),
        fact(1, "Deploy with `make ship`.", recall_count=4),
    ]
    (action,) = RuleReviewer().propose(ReviewContext("agt_1", "2026-11-30", NOW, facts)).actions
    assert action.action == "merge" and action.keep_id == facts[1].id
    assert sorted(action.memory_ids) == sorted([facts[0].id, facts[2].id])


def propose(*facts: Memory, lines: tuple[str, ...] = ()) -> list[ReviewAction]:
    return RuleReviewer().propose(ReviewContext("agt_1", "2026-11-30", NOW, facts, lines)).actions


def test_opposite_facts_are_not_merged_and_wait_for_a_person() -> None:
    facts = [
        fact(2, "Feature flags are enabled in prod"),
        fact(1, "Feature flags are not enabled in prod"),
    ]
    (action,) = propose(*facts)
    assert action.action == "resolve_conflict" and action.waits_for_person
    assert (action.keep_id, action.memory_ids) == (facts[0].id, [facts[1].id])
    assert "one subject" in action.reason and "says not" in action.reason


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        (
            "Production database runs PostgreSQL on port 5432 in region us-east-1 behind the "
            "pgbouncer connection pool with nightly backups to the archive bucket",
            "Production database runs PostgreSQL on port 6432 in region us-east-1 behind the "
            "pgbouncer connection pool with nightly backups to the archive bucket",
        ),
        (
            "Ana approves production deploys on Fridays after the change board",
            "Bob approves production deploys on Fridays after the change board",
        ),
        (
            "The payments service reads its secret from kv/payments/staging in Vault",
            "The payments service reads its secret from kv/payments/production in Vault",
        ),
    ],
)
def test_facts_with_one_different_detail_are_never_merged(older: str, newer: str) -> None:
    """The issue's reproductions: word overlap >= 0.8, one detail swapped."""
    first, second = fact(1, older), fact(2, newer)
    (action,) = propose(second, first)
    assert action.action == "resolve_conflict" and action.waits_for_person
    assert action.keep_id == second.id and action.memory_ids == [first.id]


SUBJECT_PAIRS = {
    # (older, newer, the same subject with the newer value)
    "environment": (
        "The prod database listens on port 6432",
        "The staging database listens on port 5432",
        "The prod database listens on port 5432",
    ),
    "region": (
        "The us-east-1 cluster has 12 nodes",
        "The eu-west-1 cluster has 8 nodes",
        "The us-east-1 cluster has 8 nodes",
    ),
    "component": (
        "Python 3.11 is used by the API",
        "Python 3.12 is used by the worker",
        "Python 3.12 is used by the API",
    ),
}


@pytest.mark.parametrize("case", list(SUBJECT_PAIRS))
def test_facts_about_different_subjects_are_left_alone(case: str) -> None:
    """A user's reproductions: a qualifier and a value differ on both sides."""
    older, other_subject, _ = SUBJECT_PAIRS[case]
    assert propose(fact(2, other_subject), fact(1, older)) == []


@pytest.mark.parametrize("case", list(SUBJECT_PAIRS))
def test_a_new_value_of_the_same_subject_still_waits_for_a_person(case: str) -> None:
    older, _, same_subject = SUBJECT_PAIRS[case]
    first, second = fact(1, older), fact(2, same_subject)
    (action,) = propose(second, first)
    assert action.action == "resolve_conflict" and action.waits_for_person
    assert (action.keep_id, action.memory_ids) == (second.id, [first.id])


@pytest.mark.parametrize("case", ["environment", "region"])
def test_an_update_is_paired_with_its_own_subject_not_the_other_environment(case: str) -> None:
    older, other_subject, same_subject = SUBJECT_PAIRS[case]
    first, second, third = fact(1, older), fact(2, other_subject), fact(3, same_subject)
    # third and second differ only in the environment or region; third and first in
    # the value: the value is the update.
    (action,) = propose(third, second, first)
    assert action.action == "resolve_conflict" and action.waits_for_person
    assert (action.keep_id, action.memory_ids) == (third.id, [first.id])


def test_only_an_environment_differing_is_still_a_conflict() -> None:
    staging = fact(1, "Feature flags live in the staging account")
    prod = fact(2, "Feature flags live in the prod account")
    (action,) = propose(prod, staging)
    assert action.action == "resolve_conflict" and action.memory_ids == [staging.id]


def test_the_api_s_python_version_is_one_subject_and_a_copy_still_merges() -> None:
    first, second = fact(1, "The API uses Python 3.11"), fact(2, "The API uses Python 3.12")
    (action,) = propose(second, first)
    assert action.action == "resolve_conflict" and action.waits_for_person
    copy = fact(3, "The prod database listens on port 6432.")
    original = fact(4, "The production database listens on port 6432")
    (merge,) = propose(original, copy)
    assert merge.action == "merge" and merge.memory_ids == [copy.id]


def test_a_longer_fact_is_not_merged_into_a_shorter_newer_one() -> None:
    longer = fact(1, "The staging database is db-stg-2 and it is rebuilt every Sunday night")
    shorter = fact(2, "The staging database is db-stg-2")
    assert propose(shorter, longer) == []


def test_conflict_keeps_the_fact_its_saved_evidence_supports() -> None:
    facts = [
        fact(2, "Feature flags are not enabled in prod", run_id="run_2", saved_by_agent_id="agt_1"),
        fact(
            1,
            "Feature flags are enabled in prod",
            evidence="$ flagctl status --env prod\nfeature flags: enabled",
        ),
    ]
    (action,) = propose(*facts)
    assert action.action == "resolve_conflict" and not action.waits_for_person
    assert (action.keep_id, action.memory_ids) == (facts[1].id, [facts[0].id])
    assert "evidence" in action.reason
    assert any("flagctl" in line for line in action.evidence)


def test_evidence_naming_one_side_s_detail_decides_a_detail_conflict() -> None:
    old = fact(
        1, "The payments API listens on port 8080", evidence="$ ss -ltn\n0.0.0.0:8443 LISTEN"
    )
    new = fact(2, "The payments API listens on port 8443")
    (action,) = propose(new, old)
    assert not action.waits_for_person
    assert (action.keep_id, action.memory_ids) == (new.id, [old.id])
    both = fact(3, "The payments API listens on port 9000", evidence="ports 9000 and 8443")
    (undecided,) = propose(both, new)
    assert undecided.waits_for_person


def test_evidence_saying_the_opposite_supports_the_other_fact() -> None:
    facts = [
        fact(2, "The cache is warmed at boot", evidence="cache warmed at boot: no (skipped)"),
        fact(1, "The cache is not warmed at boot"),
    ]
    (action,) = propose(*facts)
    assert action.keep_id == facts[1].id and not action.waits_for_person


def test_run_provenance_alone_no_longer_decides_a_conflict() -> None:
    facts = [
        fact(2, "Feature flags are enabled in prod", evidence="build passed in 42 seconds"),
        fact(1, "Feature flags are not enabled in prod", run_id="run_1", saved_by_agent_id="agt_1"),
    ]
    (action,) = propose(*facts)
    assert action.waits_for_person and "no saved evidence decides" in action.reason


def test_stale_and_expired_facts_are_folded_only_into_a_fact_that_covers_them() -> None:
    old = NOW - timedelta(days=40)
    stale = fact(1, "The docs site builds with mkdocs", created_at=old, updated_at=old)
    covering = fact(2, "The docs site builds with mkdocs and the material theme")
    (archive,) = propose(covering, stale)
    assert archive.action == "archive" and archive.memory_ids == [stale.id]
    other = fact(2, "The docs site builds with sphinx")
    (conflict,) = propose(other, stale)
    assert conflict.action == "resolve_conflict" and conflict.waits_for_person
    expired = fact(3, "Grafana lives at grafana.internal:3000", expires_at=NOW - timedelta(days=1))
    moved = fact(4, "Grafana lives at grafana.internal:3001")
    (archived,) = propose(moved, expired)
    assert (archived.action, archived.reason) == ("archive", "expired")
    kept = fact(4, "Grafana lives at grafana.internal:3000 behind the VPN")
    (replaced,) = propose(kept, expired)
    assert (replaced.action, replaced.keep_id) == ("replace", kept.id)


def test_a_lift_supersedes_only_a_fact_it_adds_to() -> None:
    current = fact(1, "The staging database is db-stg-2")
    (lift,) = propose(current, lines=("10:00 !fact The staging database is db-stg-3",))
    assert lift.action == "lift" and lift.supersedes is None and lift.memory_ids == []
    (adding,) = propose(
        current, lines=("10:00 !fact The staging database is db-stg-2, rebuilt on Sundays",)
    )
    assert adding.supersedes == current.id


def test_a_reworded_twin_of_a_vetoed_fact_is_not_lifted() -> None:
    vetoed = fact(
        1, "Prod deploys need two approvals", status=MemoryStatus.ARCHIVED, archive_reason="vetoed"
    )
    proposal = RuleReviewer().propose(
        ReviewContext(
            "agt_1",
            "2026-11-30",
            NOW,
            [vetoed],
            ["10:00 !fact production deploys need 2 approvals"],
        )
    )
    assert proposal.actions == [] and "a person vetoed" in proposal.notes[0]


def test_many_values_of_one_attribute_never_flood_a_person() -> None:
    """docs/reference.md#review-step-5: each fact in one conflict a review, and at most
    ``REVIEW_MAX_CONFLICTS`` in all; the rest wait for the next review."""
    from chalicelib.limits import REVIEW_MAX_CONFLICTS

    few = [fact(n, f"The build cache keeps artefacts for {n + 2} days") for n in range(1, 6)]
    conflicts = propose(*few)
    assert {a.action for a in conflicts} == {"resolve_conflict"} and len(conflicts) == 2
    named = [memory for a in conflicts for memory in (a.keep_id, *a.memory_ids)]
    assert len(named) == len(set(named))  # no fact in two conflicts
    many = [fact(n, f"The build cache keeps artefacts for {n + 2} days") for n in range(1, 80)]
    assert len(propose(*many)) == REVIEW_MAX_CONFLICTS
