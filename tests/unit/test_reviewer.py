"""The deterministic reviewer's rules, without AWS (SPEC §9)."""

from __future__ import annotations

from chalicelib.models.memory import MemoryStatus
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


def test_merge_keeps_the_most_recalled_then_the_newest() -> None:
    facts = [
        fact(3, "Deploy with make ship", recall_count=0),
        fact(2, "deploy with make ship", recall_count=4),
        fact(1, "Deploy with `make ship`.", recall_count=4),
    ]
    (action,) = RuleReviewer().propose(ReviewContext("agt_1", "2026-11-30", NOW, facts)).actions
    assert action.action == "merge" and action.keep_id == facts[1].id
    assert sorted(action.memory_ids) == sorted([facts[0].id, facts[2].id])


def test_opposite_facts_are_not_merged_but_resolved() -> None:
    facts = [
        fact(2, "Feature flags are enabled in prod"),
        fact(1, "Feature flags are not enabled in prod"),
    ]
    (action,) = RuleReviewer().propose(ReviewContext("agt_1", "2026-11-30", NOW, facts)).actions
    assert action.action == "resolve_conflict" and action.keep_id == facts[0].id


def test_conflict_keeps_the_fact_its_saved_evidence_supports() -> None:
    facts = [
        fact(2, "Feature flags are not enabled in prod", run_id="run_2", saved_by_agent_id="agt_1"),
        fact(
            1,
            "Feature flags are enabled in prod",
            evidence="$ flagctl status --env prod\nfeature flags: enabled",
        ),
    ]
    (action,) = RuleReviewer().propose(ReviewContext("agt_1", "2026-11-30", NOW, facts)).actions
    assert action.action == "resolve_conflict"
    assert (action.keep_id, action.memory_ids) == (facts[1].id, [facts[0].id])
    assert "evidence" in action.reason
    assert any("flagctl" in line for line in action.evidence)


def test_evidence_saying_the_opposite_supports_the_other_fact() -> None:
    facts = [
        fact(2, "The cache is warmed at boot", evidence="cache warmed at boot: no (skipped)"),
        fact(1, "The cache is not warmed at boot"),
    ]
    (action,) = RuleReviewer().propose(ReviewContext("agt_1", "2026-11-30", NOW, facts)).actions
    assert action.keep_id == facts[1].id


def test_unrelated_evidence_falls_back_to_run_provenance() -> None:
    facts = [
        fact(2, "Feature flags are enabled in prod", evidence="build passed in 42 seconds"),
        fact(1, "Feature flags are not enabled in prod", run_id="run_1", saved_by_agent_id="agt_1"),
    ]
    (action,) = RuleReviewer().propose(ReviewContext("agt_1", "2026-11-30", NOW, facts)).actions
    assert action.keep_id == facts[1].id
    assert "run run_1" in action.reason
