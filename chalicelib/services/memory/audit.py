"""The audit record of one memory change (SPEC §4: who, when, what, before/after)."""

from __future__ import annotations

from chalicelib.ids import Clock, IdFactory
from chalicelib.models.memory import AuditRecord, Memory, snapshot
from chalicelib.models.principal import Principal


def audit_record(
    ids: IdFactory,
    clock: Clock,
    principal: Principal | None,
    action: str,
    before: Memory | None,
    after: Memory,
    reason: str | None = None,
) -> AuditRecord:
    """Build the audit record of one change (who, when, what, before/after; SPEC §4).

    Args:
        principal: the actor; ``None`` means the system (e.g. the daily review).
        action: ``create``, ``edit``, ``archive``, ``veto``, ``unarchive`` or ``supersede``.

    A ``create`` record carries the fact's ``evidence`` (SPEC §9 step 5), so the
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
