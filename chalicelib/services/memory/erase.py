"""Erasing a memory on a person's request (docs/reference.md#erasing-a-memory,
docs/issues.md#issue-24-item-1): the memory becomes a tombstone (id, who, when, why),
and its text leaves every place it was copied to.

Order: the tombstone first (one transaction with its ``erase`` audit record, the recall
index's tombstone and a day row's pointer release), then the copies: the learnings the
review proposed from it (blanked and retired when it was their last source, else it
leaves their evidence: ``lifecycle/learning_sources.py``), review items,
pending actions and report objects, cached exports, the agent's recall index (rebuilt),
and last the texts of the memory's earlier audit records, which the earlier steps read
to know what to look for. Every step is idempotent, so erasing an erased memory again
finishes an erasure that stopped half way and answers the same tombstone.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Protocol

from chalicelib.errors import InvalidRequest
from chalicelib.ids import Clock, IdFactory
from chalicelib.limits import ARCHIVE_REASON_MAX_CHARS
from chalicelib.models.memory import (
    AuditRecord,
    Memory,
    MemoryKind,
    MemoryStatus,
    snapshot,
    without_words,
)
from chalicelib.models.principal import Principal
from chalicelib.services.access.who import load_visible, refuse_agents
from chalicelib.services.lifecycle.learning_sources import ErasedSources
from chalicelib.services.memory.preconditions import check_expected_version
from chalicelib.services.recall.index_backfill import RecallIndexBackfill
from chalicelib.services.retries import with_retries
from chalicelib.services.text import (
    SecretFinder,
    check_characters,
    check_no_secret,
    has_content,
)
from chalicelib.storage.protocols import DayPointerChange, MemoryRepository

ERASE_IS_FOR_PERSONS = (
    "Only a person may erase a memory; an agent archives what it no longer needs."
)
ERASE_ACTION = "erase"


class MemoryScrub(Protocol):
    """Where an erased memory's text was copied (``storage/erasure.py``)."""

    def audit_texts(self, memory_id: str) -> set[str]:
        """Every text the memory's audit records hold."""
        ...

    def redact_audit(self, memory_id: str, keep_action: str) -> int:
        """Remove the texts of the memory's audit records but those of ``keep_action``."""
        ...

    def redact_reviews(self, memory: Memory, texts: Collection[str]) -> int:
        """Replace ``texts`` in the agent's review items and report objects."""
        ...

    def purge_exports(self, workspace_id: str) -> int:
        """Delete the workspace's cached exports, every version."""
        ...

    def bump_erasure_epoch(self, workspace_id: str) -> None:
        """Change the workspace's erasure epoch (an export running meanwhile discards
        its file)."""
        ...

    def purge_recall_volumes(self, agent_id: str) -> int:
        """Delete the older versions of the agent's recall index volumes."""
        ...


class MemoryErasure:
    """Erase one memory (person only).

    Args:
        memories: memory storage.
        scrub: the copies' clean-up.
        sources: the learnings the review proposed from the memory.
        index_backfill: rebuilds the agent's recall index without the erased fact.
        secrets: the secret detector (a reason is free text).
        clock: the current time.
        ids: the id factory.
    """

    def __init__(
        self,
        memories: MemoryRepository,
        scrub: MemoryScrub,
        sources: ErasedSources,
        index_backfill: RecallIndexBackfill,
        secrets: SecretFinder,
        clock: Clock,
        ids: IdFactory,
    ) -> None:
        self._memories = memories
        self._scrub = scrub
        self._sources = sources
        self._backfill = index_backfill
        self._secrets = secrets
        self._clock = clock
        self._ids = ids

    def erase(
        self,
        principal: Principal,
        memory_id: str,
        reason: str,
        *,
        expected_versions: Collection[int] | None = None,
    ) -> Memory:
        """Erase a memory of the person's workspace, in any state; return its tombstone.

        Args:
            reason: why (required, at most 500 characters, no secret); kept on the
                tombstone and in its ``erase`` audit record.
            expected_versions: ``If-Match`` (``check_expected_version``); not checked
                when the memory is erased already (the same answer again).

        Raises:
            Forbidden: an agent called (``ERASE_IS_FOR_PERSONS``).
            InvalidRequest: a blank or too long reason.
            SecretInMemory: the reason looks like a credential.
            MemoryNotFound: no such memory in the workspace.
            PreconditionFailed: the memory is not at one of ``expected_versions``.
        """
        refuse_agents(principal, ERASE_IS_FOR_PERSONS)
        check_erase_reason(reason, self._secrets)
        known: set[str] = set()

        def attempt() -> Memory:
            before = load_visible(self._memories, principal, memory_id)
            if before.is_erased:
                return before
            check_expected_version(before, expected_versions)
            known.add(before.text)
            known.update(line for line in before.text.split("\n") if line)
            if before.evidence:
                known.add(before.evidence)
            now = self._clock.now()
            after = before.erased(principal.id, reason, now)
            releases = before.kind is MemoryKind.DAY and before.status is MemoryStatus.ACTIVE
            self._memories.transition(
                before,
                after,
                self._erase_record(principal, before, after, reason),
                day_pointer=DayPointerChange.RELEASE if releases else DayPointerChange.NONE,
            )
            return after

        self._scrub.bump_erasure_epoch(principal.workspace_id)
        tombstone = with_retries(attempt)
        texts = known | self._scrub.audit_texts(memory_id)
        self._sources.after_erasure(tombstone.workspace_id, memory_ids={memory_id}, texts=texts)
        self._scrub.redact_reviews(tombstone, texts)
        if tombstone.kind is MemoryKind.FACT:
            # Segments and volumes packed the text: the index is rebuilt from the live
            # facts, then the replaced volumes' older versions are deleted.
            self._backfill.run(None, tombstone.agent_id, rebuild=True)
            self._scrub.purge_recall_volumes(tombstone.agent_id)
        self._scrub.redact_audit(memory_id, ERASE_ACTION)
        # Last, after the epoch changes again: an export that read the text either sees
        # the change and discards its file, or uploaded it before this purge.
        self._scrub.bump_erasure_epoch(tombstone.workspace_id)
        self._scrub.purge_exports(tombstone.workspace_id)
        return tombstone

    def _erase_record(
        self, principal: Principal, before: Memory, after: Memory, reason: str
    ) -> AuditRecord:
        """The ``erase`` audit record: the state before without its text."""
        return AuditRecord(
            id=self._ids.new("aud"),
            memory_id=after.id,
            workspace_id=after.workspace_id,
            action=ERASE_ACTION,
            actor_type=principal.kind.value,
            actor_id=principal.id,
            at=self._clock.now(),
            reason=reason,
            before=without_words(snapshot(before)),
            after=snapshot(after),
        )


def check_erase_reason(reason: str, secrets: SecretFinder) -> None:
    """Check an erasure's reason (docs/reference.md#erasing-a-memory: required, at most
    500 characters, no credential).

    Raises:
        InvalidRequest: blank, control or tag characters, or over 500 characters.
        SecretInMemory: it looks like a credential.
    """
    if not has_content(reason):
        raise InvalidRequest("An erasure needs a reason: say why in `reason`.")
    check_characters(reason, "reason")
    if len(reason) > ARCHIVE_REASON_MAX_CHARS:
        raise InvalidRequest(
            f"The reason has {len(reason)} characters; the limit is {ARCHIVE_REASON_MAX_CHARS}."
        )
    check_no_secret(reason, what="reason", secrets=secrets)
