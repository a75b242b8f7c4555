"""Bulk actions of persons on memories (docs/reference.md#bulk-actions,
docs/issues.md#issue-46-item-3).

A person archives, vetoes, tags or untags up to ``MAX_BULK_MEMORIES`` memories in one
request, named by id or selected by the list's filter (one agent, its tags, a page at
a time). Each memory is changed by ``MemoryService``'s own change for one memory (its
checks, conditional write, history record and new version), so a bulk change is
audited exactly as a single one; a memory that cannot be changed is answered in
``skipped`` with the error code its single change would have had, and the others go
on. The request is checked as a whole first: a bad action, selection, reason, note or
tag is refused (400) before any memory is touched.

Undo reverts each change that is still the memory's latest (its version is the one the
bulk action left): archive and veto by unarchiving, tag and untag by removing or putting
back exactly the tags the action added or removed. An undo runs once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any, Protocol

from chalicelib.errors import Conflict, InvalidRequest, MemoryTagInvalid, NotFound, PineworkError
from chalicelib.ids import Clock, IdFactory
from chalicelib.models.bulk import (
    MAX_BULK_MEMORIES,
    BulkAction,
    BulkChange,
    BulkRecord,
    BulkRequest,
)
from chalicelib.models.memory import Memory
from chalicelib.models.principal import Principal
from chalicelib.models.requests import ArchiveRequest, EditRequest, ListQuery
from chalicelib.services.access.who import refuse_agents
from chalicelib.services.memory.reasons import check_archive_reason, veto_note
from chalicelib.services.memory.service import MemoryService
from chalicelib.services.memory.tags import fact_tags
from chalicelib.services.paging import encode_next_token
from chalicelib.services.text import SecretFinder

BULK_IS_FOR_PERSONS = "Bulk actions are for persons; an agent archives its memories one by one."
NO_CHANGE = "no_change"
"""The ``skipped`` code of a memory the action had nothing to do to."""

_MEMORY_ID = re.compile(r"mem_[0-9A-HJKMNP-TV-Z]{26}")


class BulkStore(Protocol):
    """Where bulk actions' records live (``storage/bulk_actions.py``)."""

    def add(self, record: BulkRecord) -> None:
        """Store a new record."""
        ...

    def get(self, workspace_id: str, bulk_id: str) -> BulkRecord | None:
        """The workspace's record of ``bulk_id``, or None."""
        ...

    def mark_undone(self, record: BulkRecord, now: datetime) -> bool:
        """Mark it undone unless it is; False when it was."""
        ...


@dataclass
class BulkOutcome:
    """What a bulk action or its undo did: each memory changed (``BulkChange``) and each
    left, with the error code and message of why (``NO_CHANGE``: nothing to do)."""

    changed: list[BulkChange] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)

    def run(self, memory_id: str, change: Callable[[], BulkChange | None]) -> None:
        """Run one memory's ``change``; a ``PineworkError`` or ``None`` (nothing to do)
        files it as skipped, and the next memory goes on."""
        try:
            done = change()
        except PineworkError as error:
            self.skipped.append({"id": memory_id, "code": error.code, "message": error.message})
            return
        if done is None:
            self.skipped.append(
                {"id": memory_id, "code": NO_CHANGE, "message": "Nothing to change."}
            )
        else:
            self.changed.append(done)

    def changed_wire(self) -> list[dict[str, Any]]:
        """``changed`` as the API sends it (``BulkChangedObject``)."""
        return [
            {"id": change.memory_id, "version": change.version, "tags": list(change.tags)}
            for change in self.changed
        ]


@dataclass
class BulkResult:
    """A bulk action's answer: its record's id (None when nothing changed), what it
    did, and the filter's ``next_token`` (None for ids, or at the last match)."""

    id: str | None
    action: BulkAction
    outcome: BulkOutcome
    next_token: str | None

    def to_wire(self) -> dict[str, Any]:
        """``BulkResultObject``."""
        return {
            "id": self.id,
            "action": self.action.value,
            "changed": self.outcome.changed_wire(),
            "skipped": self.outcome.skipped,
            "nextToken": self.next_token,
        }


class BulkService:
    """Persons' bulk actions on memories and their undo (module doc).

    Args:
        memories: the memory service whose single changes each bulk change makes.
        store: the bulk actions' records.
        secrets: the secret check of reasons, notes and tags.
        ids: makes ``blk_`` ids.
        clock: the time of records and undos.
    """

    def __init__(
        self,
        memories: MemoryService,
        store: BulkStore,
        secrets: SecretFinder,
        ids: IdFactory,
        clock: Clock,
    ) -> None:
        self._memories = memories
        self._store = store
        self._secrets = secrets
        self._ids = ids
        self._clock = clock

    def apply(self, principal: Principal, request: BulkRequest) -> BulkResult:
        """Apply ``request.action`` to each memory selected (module doc), record what
        changed, and answer it.

        Raises:
            Forbidden: an agent asked.
            InvalidRequest: neither or both of ``ids`` and ``filter``; a malformed or
                repeated id; a field the action does not take; archive without a
                ``reason``, a bad reason or note (``reasons``); a filter's bad
                ``nextToken`` or an agent outside the workspace.
            SecretInMemory: the reason, note or a tag looks like a credential.
            MemoryTagInvalid: tag or untag without tags, or a bad tag (docs/reference.md#tags),
                or a bad tag filter.
        """
        refuse_agents(principal, BULK_IS_FOR_PERSONS)
        action = BulkAction(request.action)
        change = self._change_of(action, request)
        selected, next_token = self._selected(principal, request)
        outcome = BulkOutcome()
        for memory_id, version in selected:
            outcome.run(memory_id, partial(change, principal, memory_id, version))
        bulk_id = None
        if outcome.changed:
            bulk_id = self._ids.new("blk")
            self._store.add(
                BulkRecord(
                    id=bulk_id,
                    workspace_id=principal.workspace_id,
                    action=action,
                    by=principal.id,
                    at=self._clock.now(),
                    changes=tuple(outcome.changed),
                )
            )
        return BulkResult(bulk_id, action, outcome, next_token)

    def get(self, principal: Principal, bulk_id: str) -> BulkRecord:
        """A bulk action of the workspace (kept ``BULK_UNDO_DAYS``).

        Raises:
            Forbidden: an agent asked.
            NotFound: no such action in the workspace (or it expired).
        """
        refuse_agents(principal, BULK_IS_FOR_PERSONS)
        record = self._store.get(principal.workspace_id, bulk_id) if bulk_id else None
        if record is None:
            raise NotFound(f"No bulk action {bulk_id} in this workspace (they are kept 30 days).")
        return record

    def undo(self, principal: Principal, bulk_id: str) -> tuple[BulkRecord, BulkOutcome]:
        """Undo a bulk action once: each change still the memory's latest is reverted
        (module doc), each other memory answered in ``skipped`` with its reason
        (``precondition_failed``: changed since).

        Raises:
            Forbidden: an agent asked.
            NotFound: no such action in the workspace.
            Conflict: it was undone already.
        """
        record = self.get(principal, bulk_id)
        if not self._store.mark_undone(record, self._clock.now()):
            raise Conflict(f"Bulk action {bulk_id} was undone already.")
        outcome = BulkOutcome()
        for change in record.changes:
            outcome.run(change.memory_id, partial(self._revert, principal, record.action, change))
        return record, outcome

    def _change_of(
        self, action: BulkAction, request: BulkRequest
    ) -> Callable[[Principal, str, int | None], BulkChange | None]:
        """The one-memory change of ``action``, the request's inputs checked first."""
        takes = {
            BulkAction.ARCHIVE: "reason",
            BulkAction.VETO: "note",
            BulkAction.TAG: "tags",
            BulkAction.UNTAG: "tags",
        }[action]
        for name, value in (("reason", request.reason), ("note", request.note)):
            if value is not None and name != takes:
                raise InvalidRequest(f"{action.value} takes no {name}.")
        if request.tags is not None and takes != "tags":
            raise InvalidRequest(f"{action.value} takes no tags.")
        if action is BulkAction.ARCHIVE:
            if request.reason is None:
                raise InvalidRequest("Send a reason to archive (1 to 500 characters).")
            check_archive_reason(request.reason, self._secrets)
            reason = ArchiveRequest(reason=request.reason)
            return lambda who, memory_id, version: BulkChange(
                memory_id=memory_id,
                version=self._memories.archive(
                    who, memory_id, reason, expected_versions=_versions(version)
                ).version,
            )
        if action is BulkAction.VETO:
            note = veto_note(request.note, self._secrets)
            return lambda who, memory_id, version: BulkChange(
                memory_id=memory_id,
                version=self._memories.veto(
                    who, memory_id, note, expected_versions=_versions(version)
                ).version,
            )
        tags = frozenset(fact_tags(request.tags or (), self._secrets))
        if not tags:
            raise MemoryTagInvalid("Send the tags to add or remove (1 to 10).")
        adds = action is BulkAction.TAG
        return lambda who, memory_id, version: self._retag(who, memory_id, version, tags, adds)

    def _retag(
        self,
        principal: Principal,
        memory_id: str,
        version: int | None,
        tags: frozenset[str],
        adds: bool,
    ) -> BulkChange | None:
        """Add (``adds``) or remove ``tags`` on one memory: an edit of its tag set at the
        version read (or ``version``); None when there is nothing to do."""
        memory = self._memories.get(principal, memory_id)
        held = set(memory.tags)
        moved = (tags - held) if adds else (tags & held)
        if not moved:
            return None
        after = self._edit_tags(
            principal,
            memory,
            (held | moved) if adds else (held - moved),
            {version if version is not None else memory.version},
        )
        return BulkChange(memory_id=memory_id, version=after.version, tags=tuple(sorted(moved)))

    def _revert(
        self, principal: Principal, action: BulkAction, change: BulkChange
    ) -> BulkChange | None:
        """Put one memory back as it was before ``change``, if it is still at the
        version the change left."""
        expected = {change.version}
        if action in (BulkAction.ARCHIVE, BulkAction.VETO):
            after = self._memories.unarchive(
                principal, change.memory_id, expected_versions=expected
            )
            return BulkChange(memory_id=change.memory_id, version=after.version)
        memory = self._memories.get(principal, change.memory_id)
        held = set(memory.tags)
        moved = set(change.tags)
        wanted = (held - moved) if action is BulkAction.TAG else (held | moved)
        after = self._edit_tags(principal, memory, wanted, expected)
        return BulkChange(memory_id=change.memory_id, version=after.version, tags=change.tags)

    def _edit_tags(
        self, principal: Principal, memory: Memory, tags: set[str], expected: Collection[int]
    ) -> Memory:
        request = EditRequest.model_validate({"tags": sorted(tags)})
        return self._memories.edit(principal, memory.id, request, expected_versions=expected)

    def _selected(
        self, principal: Principal, request: BulkRequest
    ) -> tuple[list[tuple[str, int | None]], str | None]:
        """The memories to act on, each with the version it was read at (None for ids
        named: the change reads it), and the filter's next token."""
        if (request.ids is None) == (request.filter is None):
            raise InvalidRequest("Send ids (1 to 100 memory ids) or a filter, not both.")
        if request.ids is not None:
            malformed = [
                memory_id for memory_id in request.ids if not _MEMORY_ID.fullmatch(memory_id)
            ]
            if malformed:
                raise InvalidRequest(f"Not a memory id: {malformed[0][:40]!r}.")
            if len(set(request.ids)) != len(request.ids):
                raise InvalidRequest("Name each memory once.")
            return [(memory_id, None) for memory_id in request.ids], None
        chosen = request.filter
        assert chosen is not None
        query = ListQuery.model_validate(
            {
                "agentId": chosen.agent_id,
                "limit": str(MAX_BULK_MEMORIES),
                **({"tag": ",".join(chosen.tag)} if chosen.tag else {}),
                **({"anyTag": ",".join(chosen.any_tag)} if chosen.any_tag else {}),
                **({"status": chosen.status} if chosen.status else {}),
                **({"nextToken": chosen.next_token} if chosen.next_token else {}),
            }
        )
        page = self._memories.list(principal, query)
        token = None if page.continue_after is None else encode_next_token(page.continue_after)
        return [(memory.id, memory.version) for memory in page.memories], token


def _versions(version: int | None) -> set[int] | None:
    return None if version is None else {version}
