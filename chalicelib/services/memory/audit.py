"""The audit record of one memory change (docs/reference.md#4-states: who, when, what,
before/after)."""

from __future__ import annotations

from chalicelib.ids import Clock, IdFactory
from chalicelib.models.memory import AuditRecord, Memory, snapshot
from chalicelib.models.principal import Principal
from chalicelib.storage.protocols import MemoryRepository


def audit_record(
    ids: IdFactory,
    clock: Clock,
    principal: Principal | None,
    action: str,
    before: Memory | None,
    after: Memory,
    reason: str | None = None,
) -> AuditRecord:
    """Build the audit record of one change (who, when, what, before/after;
    docs/reference.md#4-states).

    Args:
        principal: the actor; ``None`` means the system (e.g. the daily review).
        action: ``create``, ``edit``, ``archive``, ``veto``, ``unarchive``, ``supersede``,
            ``renew``, ``undo`` or ``absorb`` (docs/reference.md#audit-record).

    A ``create`` record carries the fact's ``evidence`` (docs/reference.md#review-step-5), so the
    history shows what the saver said supports it.
    """
    return AuditRecord(
        id=ids.new("aud"),
        memory_id=after.id,
        workspace_id=after.workspace_id,
        action=action,
        actor_type="system" if principal is None else principal.kind.value,
        actor_id=None if principal is None else principal.id,
        at=clock.now(),
        reason=reason,
        before=None if before is None else snapshot(before),
        after=snapshot(after),
        evidence=after.evidence if action == "create" else None,
    )


def review_undo_hint(memories: MemoryRepository, memory_id: str) -> str:
    """When the memory's newest audit record is a review's (``actorType: system``,
    ``actorId: rvw_…``), a sentence telling how a person undoes it (docs/issues.md#issue-14-item-3);
    else an empty string. Reads the memory's history to its end."""
    last = None
    records, after = memories.history(memory_id, 100)
    while True:
        last = records[-1] if records else last
        if after is None:
            break
        records, after = memories.history(memory_id, 100, after)
    if last is None or last.actor_type != "system" or not (last.actor_id or "").startswith("rvw_"):
        return ""
    return (
        f" The review {last.actor_id} did it, and a person can undo that: "
        f"pinework review show {last.actor_id}, then pinework review undo {last.actor_id} "
        "<action> (POST /api/v1/reviews/{id}/actions/{n}/undo)."
    )
