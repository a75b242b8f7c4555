"""The response models describe the wire exactly (docs/issues.md#issue-15-item-1): every stored
object's ``to_wire`` validates against its closed model and comes back unchanged,
with every optional field set and unset."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from chalicelib.models.memory import AuditRecord, Memory, MemoryKind, MemoryStatus, snapshot
from chalicelib.models.recall import RecalledMemory, RecallLogEntry
from chalicelib.models.responses import (
    AuditObject,
    KvForgotten,
    KvKeys,
    KvRecalled,
    KvRemembered,
    MemoryList,
    MemoryObject,
    PendingActionObject,
    RecallLogObject,
    ReviewObject,
    ReviewRunObject,
    ReviewSummaryObject,
    RoutineObject,
)
from chalicelib.models.review import (
    ActionDecision,
    ActionOutcome,
    ActionUndo,
    PendingAction,
    ReviewAction,
    ReviewPlan,
    ReviewReport,
)
from chalicelib.models.review_run import ReviewRun
from chalicelib.models.routine import Routine
from chalicelib.services.kv.key_pages import KeyList
from chalicelib.services.kv.service import Forgotten, Recalled, Remembered

NOW = datetime(2026, 11, 30, 12, 0, 0, 123000, tzinfo=UTC)


def round_trip(model: type[BaseModel], wire: dict[str, Any]) -> None:
    parsed = model.model_validate(wire)
    assert parsed.model_dump(mode="json", by_alias=True, exclude_unset=False) == wire
    assert list(parsed.model_dump(by_alias=True)) == list(wire), "field order differs"


def full_memory() -> Memory:
    return Memory(
        id="mem_01JD00000000000000000000AA",
        workspace_id="wsp_1",
        agent_id="agt_1",
        kind=MemoryKind.DAY,
        date="2026-11-30",
        text="09:00 [PIN-1] started",
        expires_at=NOW + timedelta(days=90),
        status=MemoryStatus.ARCHIVED,
        archive_reason="superseded",
        archived_at=NOW,
        supersedes="mem_0",
        superseded_by="mem_2",
        run_id="run_1",
        task_key="PIN-1",
        saved_by_agent_id="agt_1",
        edited_by_person_id="usr_1",
        recall_count=3,
        last_recalled_at=NOW,
        created_at=NOW,
        updated_at=NOW,
        version=4,
        embedding=b"\x00",
        evidence="tool output",
    )


def bare_memory() -> Memory:
    return Memory(
        id="mem_01JD00000000000000000000AB",
        workspace_id="wsp_1",
        agent_id="agt_1",
        kind=MemoryKind.FACT,
        text="a fact",
        expires_at=NOW,
        created_at=NOW,
        updated_at=NOW,
    )


@pytest.mark.parametrize("memory", [full_memory(), bare_memory()])
def test_memory_objects_round_trip(memory: Memory) -> None:
    round_trip(MemoryObject, memory.to_wire(NOW))


def test_a_memory_field_the_model_lacks_is_refused() -> None:
    wire = bare_memory().to_wire(NOW)
    with pytest.raises(ValidationError):
        MemoryObject.model_validate({**wire, "version": 1})
    with pytest.raises(ValidationError):
        MemoryObject.model_validate({key: value for key, value in wire.items() if key != "expired"})


def test_list_pages_render_as_before() -> None:
    memory = full_memory()
    page = MemoryList(data=[MemoryObject.model_validate(memory.to_wire(NOW))], next_token="t")
    assert page.wire() == {"object": "list", "data": [memory.to_wire(NOW)], "nextToken": "t"}


def test_audit_records_round_trip() -> None:
    memory = full_memory()
    for record in (
        AuditRecord(
            id="aud_1",
            memory_id=memory.id,
            workspace_id="wsp_1",
            action="create",
            actor_type="agent",
            actor_id="agt_1",
            at=NOW,
            after=snapshot(memory),
            evidence="tool output",
        ),
        AuditRecord(
            id="aud_2",
            memory_id=memory.id,
            workspace_id="wsp_1",
            action="archive",
            actor_type="system",
            actor_id=None,
            at=NOW,
            reason="stale",
            before=snapshot(memory),
            after=snapshot(memory),
        ),
    ):
        round_trip(AuditObject, record.to_wire())


def test_recall_log_entries_and_routines_round_trip() -> None:
    entry = RecallLogEntry(
        id="rcl_1",
        workspace_id="wsp_1",
        agent_id="agt_1",
        kind="start",
        session_id="s",
        run_id="run_1",
        task_key="PIN-1",
        query="deploy",
        fallback="newest",
        at=NOW,
        memories=[RecalledMemory(memory_id="mem_1", score=None)],
    )
    round_trip(RecallLogObject, entry.to_wire())
    routine = Routine(
        id="rtn_1", workspace_id="wsp_1", agent_id="agt_1", created_at=NOW, updated_at=NOW
    )
    round_trip(RoutineObject, routine.to_wire())


def test_review_reports_and_summaries_round_trip() -> None:
    plan = ReviewPlan(
        agent_id="agt_1",
        date="2026-11-29",
        reviewer="rules-v1",
        generated_at=NOW,
        actions=[
            ReviewAction(
                id="a1",
                action="renew",
                memory_ids=["mem_1"],
                expires_at=NOW,
                reason="recalled lately",
                evidence=["recalled 3 times"],
                expected_versions={"mem_1": 2},
            )
        ],
        notes=["n"],
    )
    report = ReviewReport(
        id="rvw_1",
        workspace_id="wsp_1",
        agent_id="agt_1",
        date="2026-11-29",
        trigger="manual",
        dry_run=False,
        reviewer="rules-v1",
        started_at=NOW,
        finished_at=NOW,
        plan=plan,
        applied=[ActionOutcome(action_id="a1", action="renew", detail="renewed")],
        report_key="reviews/x.json",
        approval="required",
        decisions=[ActionDecision(action_id="a1", state="applied", decided_by="usr_1")],
        undone=[ActionUndo(action_id="a1", undone_by="usr_1", undone_at=NOW, detail="d")],
    )
    round_trip(ReviewObject, report.to_wire())
    round_trip(ReviewSummaryObject, report.summary().to_wire())
    pending = PendingAction(
        review_id="rvw_1",
        agent_id="agt_1",
        date="2026-11-29",
        approval="none",
        waiting_since=NOW,
        action=plan.actions[0].model_copy(update={"waits_for_person": True}),
    )
    round_trip(PendingActionObject, pending.to_wire())


@pytest.mark.parametrize("status", ["queued", "running", "failed"])
def test_queued_review_runs_round_trip(status: str) -> None:
    bare = ReviewRun(
        id="rvw_1",
        workspace_id="wsp_1",
        agent_id="agt_1",
        date="2026-11-29",
        dry_run=False,
        status=status,  # type: ignore[arg-type]
        requested_by="usr_1",
        requested_at=NOW,
    )
    round_trip(ReviewRunObject, bare.to_wire())
    full = bare.model_copy(
        update={"started_at": NOW, "finished_at": NOW, "attempts": 2, "error": "Timeout"}
    )
    round_trip(ReviewRunObject, full.to_wire())
    assert "workspaceId" not in full.to_wire() and "claimId" not in full.to_wire()


def test_key_value_answers_round_trip() -> None:
    round_trip(KvRemembered, Remembered("k", permanent=False).to_wire())
    round_trip(KvRecalled, Recalled("k", None).to_wire())
    round_trip(KvRecalled, Recalled("k", "v").to_wire())
    round_trip(KvRecalled, Recalled("k", "v", 3).to_wire(with_revision=True))
    round_trip(KvRecalled, Recalled("k", None).to_wire(with_revision=True))
    round_trip(KvRemembered, Remembered("k", permanent=True, revision=2).to_wire())
    round_trip(KvForgotten, Forgotten("k", deleted=True).to_wire())
    listed = KeyList(["a"], count=1).to_wire()
    assert KvKeys.model_validate(listed).wire() == listed
    cut = KeyList(["a"], count=2, next_cursor="YQ").to_wire()
    assert KvKeys.model_validate(cut).wire() == cut
    assert cut == {"keys": ["a"], "count": 2, "next": "YQ", "truncated": True}
