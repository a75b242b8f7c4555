"""Facts and the memory lifecycle: save, supersede, edit, archive, veto,
unarchive, read, list and history (docs/reference.md#3-the-memory-object to
docs/reference.md#4-states, docs/reference.md#7-http-api).

Every change reads the memory, checks the rules against what it read, and
writes conditionally on the memory being unchanged (``version``), retrying
on a lost race; the audit record is written in the same transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from datetime import timedelta
from typing import TYPE_CHECKING, Literal

from chalicelib.errors import (
    InvalidRequest,
    MemoryAgentMismatch,
    MemoryAlreadyArchived,
    MemoryDayAppendOnly,
    MemoryDayExists,
    MemoryDayFull,
    MemoryErased,
    MemoryNotArchived,
    MemoryNotFound,
    MemorySupersedeArchived,
    MemorySuperseded,
    MemoryVetoHumanOnly,
)
from chalicelib.ids import Clock, IdFactory, to_rfc3339
from chalicelib.limits import (
    DAY_LOG_MAX_CHARS,
    DEFAULT_FACT_LIFETIME,
    DEFAULT_LIST_LIMIT,
    FACT_MAX_CHARS,
)
from chalicelib.models.memory import (
    VETOED,
    AuditRecord,
    Memory,
    MemoryKind,
    MemoryStatus,
    MetadataValue,
)
from chalicelib.models.principal import Principal
from chalicelib.models.requests import ArchiveRequest, EditRequest, ListQuery, SaveFactRequest
from chalicelib.services.access.who import (
    check_memory_id,
    load_visible,
    refuse_agents,
    resolve_agent,
)
from chalicelib.services.lifecycle.retention import (
    ARCHIVED_TEXT_RETENTION,
    hide_expired_texts,
    texts_expired,
)
from chalicelib.services.memory.audit import audit_record, review_undo_hint
from chalicelib.services.memory.expiry import parse_expiry
from chalicelib.services.memory.metadata import fact_metadata, refuse_day_metadata
from chalicelib.services.memory.metadata_filter import meta_filter
from chalicelib.services.memory.preconditions import check_expected_version
from chalicelib.services.memory.reasons import check_archive_reason, veto_note
from chalicelib.services.memory.tags import fact_tags, refuse_day_tags, split_tags, tag_filter
from chalicelib.services.memory.vetoes import VetoGuard, veto_index_keys
from chalicelib.services.paging import decode_next_token
from chalicelib.services.retries import with_retries
from chalicelib.services.run_context import RunContext
from chalicelib.services.text import SecretFinder, check_evidence, check_text
from chalicelib.storage.protocols import (
    DayPointerChange,
    DayPointerTaken,
    DirectoryRepository,
    MemoryPage,
    MemoryRepository,
)

if TYPE_CHECKING:  # numpy: loaded by the embedder itself, on first use (cold start)
    from chalicelib.services.recall.embedding import Embedder

logger = logging.getLogger(__name__)


EDIT_IS_FOR_PERSONS = "Only a person can edit a memory. Archive it and save a new one."
VETO_IS_FOR_PERSONS = "Only a person can veto a memory. Archive it with a reason."


def refuse_erased(memory: Memory) -> None:
    """Refuse any change to an erased memory (docs/reference.md#erasing-a-memory).

    Raises:
        MemoryErased: ``memory`` is a tombstone (409).
    """
    if memory.is_erased:
        raise MemoryErased(
            f"{memory.id} was erased by {memory.erased_by}; an erased memory cannot change "
            "or come back."
        )


class MemoryService:
    """The use-cases on facts and on the lifecycle of any memory.

    Args:
        memories: memory storage.
        directory: agents and workspaces, to check a named agent.
        secrets: the secret detector run on every text.
        clock: the current time.
        ids: the id factory.
        embedder: computes each fact's recall embedding at save and edit time
            (``None``: facts are embedded at recall instead).
        after_save: called with ``(workspace_id, agent_id)`` after every fact is
            saved (wiring passes ``RoutineService.ensure_routine``, docs/reference.md#9-review); a
            failure there is logged, never turned into a failed save.
        vetoes: refuses an agent's save of a vetoed text (docs/issues.md#issue-14-item-5), and
            files each vetoed fact in its index; ``None``: no such check.
        archived_text_retention: how long after its archiving a memory's history keeps
            its texts (docs/reference.md#retention); ``history`` hides them after.
    """

    def __init__(
        self,
        memories: MemoryRepository,
        directory: DirectoryRepository,
        secrets: SecretFinder,
        clock: Clock,
        ids: IdFactory,
        embedder: Embedder | None = None,
        after_save: Callable[[str, str], object] | None = None,
        vetoes: VetoGuard | None = None,
        archived_text_retention: timedelta = ARCHIVED_TEXT_RETENTION,
    ) -> None:
        self._archived_text_retention = archived_text_retention
        self._vetoes = vetoes
        self._memories = memories
        self._directory = directory
        self._secrets = secrets
        self._clock = clock
        self._ids = ids
        self._embedder = embedder
        self._after_save = after_save

    def _embed(self, text: str) -> bytes | None:
        """The fact's recall embedding, computed once at save time (docs/issues.md#issue-3)."""
        return None if self._embedder is None else self._embedder.embed([text])[0]

    def save(self, principal: Principal, request: SaveFactRequest, run: RunContext) -> Memory:
        """Save a fact, optionally superseding one of the same agent's live facts.

        Returns:
            The new fact (201).

        Raises:
            MemoryNotOwn, MemoryAgentRequired, InvalidRequest: see ``resolve_agent``.
            MemoryTextTooLong: over 500 characters. SecretInMemory: the text, a tag or
                ``evidence`` looks like a secret.
            MemoryTagInvalid: ``tags`` breaks docs/reference.md#tags (``fact_tags``).
            MemoryMetadataInvalid: ``metadata`` breaks docs/reference.md#metadata
                (``fact_metadata``).
            InvalidRequest: empty text, bad or past ``expiresAt``; ``evidence``
                blank or over 2,000 characters (see ``check_evidence``).
            MemoryNotFound: ``supersedes`` names no memory of the workspace.
            MemoryAgentMismatch: ``supersedes`` names another agent's memory.
            MemoryDayAppendOnly: ``supersedes`` names a day row.
            MemorySupersedeArchived: the memory to supersede is archived.
            MemoryVetoed: an agent saved a text a person vetoed (the message names
                the vetoed memory; a person may save it).
        """
        agent_id = resolve_agent(self._directory, principal, request.agent_id)
        check_text(request.text, limit=FACT_MAX_CHARS, what="fact", secrets=self._secrets)
        tags = None if request.tags is None else fact_tags(request.tags, self._secrets)
        metadata = (
            None if request.metadata is None else fact_metadata(request.metadata, self._secrets)
        )
        if request.evidence is not None:
            check_evidence(request.evidence, secrets=self._secrets)
        embedding = self._embed(request.text)
        if principal.is_agent and self._vetoes is not None:
            self._vetoes.check(principal.workspace_id, agent_id, request.text, embedding)
        now = self._clock.now()
        expires_at = (
            parse_expiry(request.expires_at, now)
            if request.expires_at is not None
            else now + DEFAULT_FACT_LIFETIME
        )
        fact = Memory(
            id=self._ids.new("mem"),
            workspace_id=principal.workspace_id,
            agent_id=agent_id,
            kind=MemoryKind.FACT,
            text=request.text,
            tags=tags or (),
            metadata=metadata or {},
            embedding=embedding,
            expires_at=expires_at,
            supersedes=request.supersedes,
            run_id=run.run_id,
            task_key=run.task_key,
            saved_by_agent_id=principal.id if principal.is_agent else None,
            edited_by_person_id=None if principal.is_agent else principal.id,
            created_at=now,
            updated_at=now,
            evidence=request.evidence,
        )
        if request.supersedes is None:
            self._memories.create(
                fact, audit_record(self._ids, self._clock, principal, "create", None, fact)
            )
            self._saved(fact)
            return fact
        old_id = request.supersedes

        def attempt() -> Memory:
            old = self._superseded_candidate(principal, old_id, agent_id)
            # Tags or metadata not sent: the new fact keeps the ones of the fact it
            # replaces (docs/reference.md#tags, docs/reference.md#metadata).
            kept: dict[str, object] = {}
            if tags is None:
                kept["tags"] = old.tags
            if metadata is None:
                kept["metadata"] = old.metadata
            new = fact.model_copy(update=kept) if kept else fact
            new_created = audit_record(self._ids, self._clock, principal, "create", None, new)
            old_after = old.superseded(new.id, now)
            archived = audit_record(
                self._ids, self._clock, principal, "supersede", old, old_after, f"by {new.id}"
            )
            self._memories.supersede(new, old, old_after, [new_created, archived])
            return new

        saved = with_retries(attempt)
        self._saved(saved)
        return saved

    def _saved(self, fact: Memory) -> None:
        # The fact is stored: a failing hook must not make the caller save it twice.
        if self._after_save is None:
            return
        try:
            self._after_save(fact.workspace_id, fact.agent_id)
        except Exception:
            logger.exception("after-save hook failed for %s", fact.agent_id)

    def _superseded_candidate(self, principal: Principal, old_id: str, agent_id: str) -> Memory:
        check_memory_id(old_id)
        old = self._memories.get(old_id)
        if old is None or old.workspace_id != principal.workspace_id:
            raise MemoryNotFound(f"supersedes names {old_id}, which is not in your workspace.")
        if old.agent_id != agent_id:
            raise MemoryAgentMismatch(
                f"{old_id} belongs to another agent. Supersede one of the same agent's memories."
            )
        if old.kind is MemoryKind.DAY:
            raise MemoryDayAppendOnly(
                f"{old_id} is a day row; day logs are append-only. Append a new line instead."
            )
        if old.status is MemoryStatus.ARCHIVED:
            raise MemorySupersedeArchived(f"{old_id} is archived. Supersede a live memory.")
        return old

    def get(self, principal: Principal, memory_id: str) -> Memory:
        """Return one memory the caller may see.

        Raises:
            MemoryNotFound, MemoryNotOwn: see ``load_visible``.
        """
        return load_visible(self._memories, principal, memory_id)

    def history(
        self,
        principal: Principal,
        memory_id: str,
        limit: int = DEFAULT_LIST_LIMIT,
        after_audit_id: str | None = None,
    ) -> tuple[list[AuditRecord], str | None]:
        """A page of the audit records of a memory the caller may see, oldest first
        (docs/reference.md#lists: ``limit``, continuing after ``after_audit_id``); without
        their texts once the memory has been archived longer than the retention period
        (docs/reference.md#retention).

        Returns:
            The page, and the audit id to continue after (None at the end).

        Raises:
            MemoryNotFound, MemoryNotOwn: see ``load_visible``.
        """
        memory = load_visible(self._memories, principal, memory_id)
        records, more = self._memories.history(memory_id, limit, after_audit_id)
        if texts_expired(memory, self._clock.now(), self._archived_text_retention):
            records = hide_expired_texts(records)  # the nightly sweep removes them
        return records, more

    def edit(
        self,
        principal: Principal,
        memory_id: str,
        request: EditRequest,
        *,
        expected_versions: Collection[int] | None = None,
    ) -> Memory:
        """A person edits ``text``, ``expiresAt``, ``tags`` (a fact's whole new set,
        docs/reference.md#tags) and/or ``metadata`` (its whole new object,
        docs/reference.md#metadata); sets ``editedByPersonId``.

        An edit that changes nothing (the same text, expiry and tags) writes nothing:
        the memory comes back as it is, with no new version or history record.
        ``expected_versions`` (``If-Match``): see ``check_expected_version``.

        Raises:
            PreconditionFailed: the memory is not at one of ``expected_versions``.
            Forbidden: an agent tried to edit (agents archive and save instead).
            InvalidRequest: nothing to change, empty text, bad ``expiresAt``.
            MemoryTextTooLong: a fact over 500 characters.
            MemoryDayFull: a day row's text over 8,000 characters.
            SecretInMemory: the new text or a tag looks like a secret.
            MemoryTagInvalid: ``tags`` breaks docs/reference.md#tags, or names tags for a
                day row (only facts carry tags).
            MemoryMetadataInvalid: ``metadata`` breaks docs/reference.md#metadata, or
                is sent for a day row.
            MemoryNotFound: no such memory in the workspace.
            MemorySuperseded: a newer memory replaced this one.
        """
        refuse_agents(principal, EDIT_IS_FOR_PERSONS)
        if (
            request.text is None
            and request.expires_at is None
            and request.tags is None
            and request.metadata is None
        ):
            raise InvalidRequest("Send text, expiresAt, tags and/or metadata to edit.")
        tags = None if request.tags is None else fact_tags(request.tags, self._secrets)
        metadata = (
            None if request.metadata is None else fact_metadata(request.metadata, self._secrets)
        )

        def attempt() -> Memory:
            before = load_visible(self._memories, principal, memory_id)
            now = self._clock.now()
            # Bad input is answered first (400), whatever the version or the state.
            if request.text is not None:
                self._check_edited_text(before, request.text)
            expires_at = (
                None if request.expires_at is None else parse_expiry(request.expires_at, now)
            )
            check_expected_version(before, expected_versions)
            refuse_erased(before)
            if before.is_superseded:
                raise MemorySuperseded(
                    f"{memory_id} was replaced by {before.superseded_by}. Edit the newer memory."
                )
            changes = _labels_changed(before, tags, metadata)
            if request.text is not None and request.text != before.text:
                changes["text"] = request.text
                if before.kind is MemoryKind.FACT:
                    changes["embedding"] = self._embed(request.text)
            # Compared as stored (milliseconds): ".9991Z" is the stored ".999Z".
            if expires_at is not None and to_rfc3339(expires_at) != to_rfc3339(before.expires_at):
                changes["expires_at"] = expires_at
            if not changes:
                # Nothing would change: no write, no new version, no history record.
                return before
            after = before.model_copy(
                update={
                    **changes,
                    "edited_by_person_id": principal.id,
                    "updated_at": now,
                    "version": before.version + 1,
                }
            )
            audit = audit_record(self._ids, self._clock, principal, "edit", before, after)
            self._memories.transition(before, after, audit)
            return after

        return with_retries(attempt)

    def _check_edited_text(self, before: Memory, text: str) -> None:
        if before.kind is MemoryKind.FACT:
            check_text(text, limit=FACT_MAX_CHARS, what="fact", secrets=self._secrets)
            return
        if len(text) > DAY_LOG_MAX_CHARS:
            raise MemoryDayFull(
                f"A day log holds {DAY_LOG_MAX_CHARS} characters; the edit has {len(text)}."
            )
        check_text(text, limit=DAY_LOG_MAX_CHARS, what="day log", secrets=self._secrets)

    def archive(
        self,
        principal: Principal,
        memory_id: str,
        request: ArchiveRequest,
        *,
        expected_versions: Collection[int] | None = None,
    ) -> Memory:
        """Archive a live memory with a reason (owner agent or person; docs/reference.md#4-states).
        ``expected_versions`` (``If-Match``): see ``check_expected_version``.

        Raises:
            PreconditionFailed: the memory is not at one of ``expected_versions``.
            InvalidRequest, SecretInMemory: see ``reasons.check_archive_reason``
                (blank, over 500 characters, a secret, reads as a reserved reason).
            MemoryNotFound, MemoryNotOwn: see ``load_visible``.
            MemoryAlreadyArchived: the memory is archived already.
        """
        check_archive_reason(request.reason, self._secrets)
        return self._archive(
            principal,
            memory_id,
            request.reason,
            action="archive",
            expected_versions=expected_versions,
        )

    def veto(
        self,
        principal: Principal,
        memory_id: str,
        note: str | None,
        *,
        expected_versions: Collection[int] | None = None,
    ) -> Memory:
        """A person vetoes a memory: archived with reason ``vetoed`` (docs/reference.md#4-states).

        A memory archived for another reason becomes vetoed too, so an agent can
        no longer bring it back. ``expected_versions`` (``If-Match``): see
        ``check_expected_version``.

        Raises:
            PreconditionFailed: the memory is not at one of ``expected_versions``.
            Forbidden: an agent tried to veto.
            InvalidRequest, SecretInMemory: see ``reasons.veto_note`` (a blank note
                is no note).
            MemoryNotFound: no such memory in the workspace.
            MemoryAlreadyArchived: it is vetoed already.
            MemorySuperseded: a newer memory replaced it.
        """
        refuse_agents(principal, VETO_IS_FOR_PERSONS)
        note = veto_note(note, self._secrets)
        return self._archive(
            principal,
            memory_id,
            VETOED,
            action="veto",
            note=note,
            expected_versions=expected_versions,
        )

    def _archive(
        self,
        principal: Principal,
        memory_id: str,
        reason: str,
        *,
        action: Literal["archive", "veto"],
        note: str | None = None,
        expected_versions: Collection[int] | None = None,
    ) -> Memory:
        def attempt() -> Memory:
            before = load_visible(self._memories, principal, memory_id)
            check_expected_version(before, expected_versions)
            refuse_erased(before)
            now = self._clock.now()
            if before.status is MemoryStatus.ARCHIVED:
                if action == "archive" or before.archive_reason == VETOED:
                    raise MemoryAlreadyArchived(f"{memory_id} is archived already.")
                if before.is_superseded:
                    raise MemorySuperseded(f"{memory_id} was replaced by {before.superseded_by}.")
            after = before.model_copy(
                update={
                    "status": MemoryStatus.ARCHIVED,
                    "archive_reason": reason,
                    "archived_at": before.archived_at or now,
                    "updated_at": now,
                    "version": before.version + 1,
                }
            )
            releases = before.kind is MemoryKind.DAY and before.status is MemoryStatus.ACTIVE
            audit = audit_record(
                self._ids, self._clock, principal, action, before, after, note or reason
            )
            # A vetoed fact is filed by its text, so the agent cannot save it again.
            files_veto = action == "veto" and before.kind is MemoryKind.FACT
            self._memories.transition(
                before,
                after,
                audit,
                day_pointer=DayPointerChange.RELEASE if releases else DayPointerChange.NONE,
                veto_keys=veto_index_keys(before.text) if files_veto else (),
            )
            return after

        return with_retries(attempt)

    def unarchive(
        self,
        principal: Principal,
        memory_id: str,
        *,
        expected_versions: Collection[int] | None = None,
    ) -> Memory:
        """Bring an archived memory back (docs/reference.md#unarchive-rules). ``expected_versions``
        (``If-Match``): see ``check_expected_version``.

        Raises:
            PreconditionFailed: the memory is not at one of ``expected_versions``.
            MemoryNotFound, MemoryNotOwn: see ``load_visible``.
            MemoryNotArchived: the memory is active.
            MemorySuperseded: a newer memory replaced it; it never comes back.
            MemoryVetoHumanOnly: an agent tried to bring back a vetoed memory.
            MemoryDayExists: a day row whose date has another live day row.
        """

        def attempt() -> Memory:
            before = load_visible(self._memories, principal, memory_id)
            check_expected_version(before, expected_versions)
            refuse_erased(before)
            if before.status is MemoryStatus.ACTIVE:
                raise MemoryNotArchived(f"{memory_id} is active; there is nothing to undo.")
            if before.is_superseded:
                raise MemorySuperseded(
                    f"{memory_id} was replaced by {before.superseded_by} and cannot come back."
                    + review_undo_hint(self._memories, memory_id)
                )
            if before.archive_reason == VETOED and principal.is_agent:
                raise MemoryVetoHumanOnly(
                    f"A person vetoed {memory_id}; only a person can bring it back. Ask one."
                )
            now = self._clock.now()
            after = before.model_copy(
                update={
                    "status": MemoryStatus.ACTIVE,
                    "archive_reason": None,
                    "archived_at": None,
                    "updated_at": now,
                    "version": before.version + 1,
                }
            )
            audit = audit_record(self._ids, self._clock, principal, "unarchive", before, after)
            claims = before.kind is MemoryKind.DAY
            try:
                self._memories.transition(
                    before,
                    after,
                    audit,
                    day_pointer=DayPointerChange.CLAIM if claims else DayPointerChange.NONE,
                )
            except DayPointerTaken as taken:
                raise MemoryDayExists(
                    f"{before.date} already has a live day row. Archive that one first."
                ) from taken
            return after

        return with_retries(attempt)

    def list(self, principal: Principal, query: ListQuery) -> MemoryPage:
        """List memories newest first (docs/reference.md#7-http-api): an agent its own, a person any
        of the workspace's (every agent's when ``agentId`` is omitted).

        ``tag`` / ``anyTag`` keep the facts holding all / one of the tags, ``meta`` those
        meeting every metadata condition, filtered before the page is cut
        (docs/reference.md#tags, docs/reference.md#metadata-filters).

        Raises:
            MemoryNotOwn: an agent named another agent.
            InvalidRequest: a person named an agent outside the workspace; a bad
                ``nextToken``; a tag or metadata filter without ``agentId``.
            MemoryTagInvalid: a bad tag filter (``tags.tag_filter``).
            MetadataFilterInvalid: a bad ``meta`` (``metadata_filter.meta_filter``).
        """
        agent_id: str | None
        if principal.is_agent or query.agent_id is not None:
            agent_id = resolve_agent(self._directory, principal, query.agent_id)
        else:
            agent_id = None
        tags = tag_filter(split_tags(query.tag), split_tags(query.any_tag))
        meta = meta_filter(query.meta or ())
        if agent_id is None and not (tags.is_empty and not meta):
            raise InvalidRequest(
                "Name agentId to filter by tag or metadata: both are filed per agent."
            )
        status = query.status
        if status is None and not query.include_archived:
            status = MemoryStatus.ACTIVE.value
        return self._memories.list_memories(
            workspace_id=principal.workspace_id,
            agent_id=agent_id,
            status=status,
            kind=query.kind,
            limit=query.limit,
            after_id=decode_next_token(query.next_token),
            all_tags=tags.all_of,
            any_tags=tags.any_of,
            meta=meta,
        )


def _labels_changed(
    before: Memory,
    tags: tuple[str, ...] | None,
    metadata: dict[str, MetadataValue] | None,
) -> dict[str, object]:
    """An edit's changes of tags and metadata (each ``None``: not sent), only those that
    differ from ``before``.

    Raises:
        MemoryTagInvalid, MemoryMetadataInvalid: new tags or metadata for a day row.
    """
    changes: dict[str, object] = {}
    if tags is not None and tags != before.tags:
        refuse_day_tags(before)
        changes["tags"] = tags
    if metadata is not None and metadata != before.metadata:
        refuse_day_metadata(before)
        changes["metadata"] = metadata
    return changes
