"""What the services need from storage (docs/conventions.md#layers: services see Protocols only).

Adapters (``dynamodb.py``) implement these and translate every backend
failure: a lost optimistic-concurrency race is ``WriteConflict``; the rules of
docs/reference.md#4-states to docs/reference.md#6-errors stay in the services.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any, Protocol

from chalicelib.models.memory import AuditRecord, Memory
from chalicelib.models.metadata_filter import MetaCondition
from chalicelib.models.principal import (
    Agent,
    Person,
    PersonRole,
    Principal,
    ReviewApproval,
    Workspace,
)
from chalicelib.models.recall import RecallEntry, RecallLogEntry
from chalicelib.models.review import ActionDecision, ActionUndo, PendingAction, ReviewSummary
from chalicelib.models.review_run import ReviewRun
from chalicelib.models.routine import Routine
from chalicelib.models.token import StoredToken
from chalicelib.models.totals import ListTotal


class WriteConflict(Exception):
    """A conditional write found the item changed since it was read: re-read and retry."""


class ModelFileMissing(Exception):
    """A model's weights are neither on this machine nor in the bucket: build them
    (``make models/ms-marco-minilm-l12-int8.npz``) or upload them with a deploy
    (docs/operations.md#reranker-weights). The message names the file or object."""


class DayPointerTaken(Exception):
    """Another live day row already holds the agent's date (docs/reference.md#4-states)."""


class DayRowNotLive(Exception):
    """The day row an append aimed at was archived meanwhile: look up the live one again."""


class DayLogFull(Exception):
    """The append would take the stored day text over its cap (docs/reference.md#5-limits)."""


@dataclass(frozen=True)
class RoleChange:
    """One change of a person's role (docs/reference.md#person-roles), written only if the
    person is live, of ``workspace_id``, still ``before`` and, when ``other_owner`` is
    given, that other person is still a live owner of the workspace (so a workspace
    keeps an owner: two owners demoting each other at once cannot both win).

    Attributes:
        person_id, workspace_id: whose role.
        before, after: the role read, the role to set.
        by: who set it (an owner's ``usr_…`` id, or ``operator``).
        at: when.
        other_owner: a ``usr_…`` that must stay a live owner, or None.
    """

    person_id: str
    workspace_id: str
    before: PersonRole
    after: PersonRole
    by: str
    at: datetime
    other_owner: str | None = None


class PersonEmailTaken(Exception):
    """Another person of the workspace already has this e-mail address."""


class SessionAlreadyRecalled(Exception):
    """A resumed session had a run-start recall within the last 24 hours
    (docs/reference.md#8-recall)."""


@dataclass(frozen=True)
class SessionClaim:
    """Record a run-start recall for a session; a resumed one only if its last
    run-start recall is older than ``cutoff``."""

    agent_id: str
    session_id: str
    resumed: bool
    cutoff: datetime


class DayPointerChange(Enum):
    """What a state change of a day row does to its date's live-row pointer."""

    NONE = "none"
    CLAIM = "claim"
    RELEASE = "release"


@dataclass(frozen=True)
class MemoryPage:
    """One page of a list: memories newest first and the id to continue after."""

    memories: list[Memory]
    continue_after: str | None


class MemoryRepository(Protocol):
    """Stores memories and their audit records (docs/reference.md#3-the-memory-object to
    docs/reference.md#4-states)."""

    def get(self, memory_id: str) -> Memory | None:
        """Return the memory (strongly consistent read) or None."""
        ...

    def create(
        self, memory: Memory, audit: AuditRecord, *, claim_day_pointer: bool = False
    ) -> None:
        """Write a new memory and its audit record in one transaction.

        Raises:
            DayPointerTaken: ``claim_day_pointer`` and the date already has a live row.
        """
        ...

    def set_embedding(self, memory: Memory, embedding: bytes) -> bool:
        """Store a recomputed recall embedding on a fact still at ``memory.version``.

        Derived data: no version bump, no audit record. ``False`` (nothing written)
        when the memory changed since it was read (its own edit wrote a fresh one).
        """
        ...

    def supersede(
        self, new: Memory, old_before: Memory, old_after: Memory, audits: Sequence[AuditRecord]
    ) -> None:
        """Write ``new`` and archive ``old`` (unchanged since read) in one transaction.

        Raises:
            WriteConflict: the old memory changed since ``old_before`` was read.
        """
        ...

    def transition(
        self,
        before: Memory,
        after: Memory,
        audit: AuditRecord,
        *,
        day_pointer: DayPointerChange = DayPointerChange.NONE,
        veto_keys: Sequence[str] = (),
    ) -> None:
        """Replace the state of a memory unchanged since ``before``, with its audit record;
        with ``veto_keys`` (a person's veto of a fact), the memory is added to those
        entries of the agent's vetoed-text index in the same transaction.

        Raises:
            WriteConflict: the memory changed since it was read.
            DayPointerTaken: claiming the date's pointer failed (another live row).
        """
        ...

    def live_day_row_id(self, agent_id: str, date: str) -> str | None:
        """Return the id of the agent's live day row for ``date`` (UTC), if any."""
        ...

    def append_to_day_row(
        self,
        memory_id: str,
        line: str,
        *,
        audit: AuditRecord,
        max_chars_before: int,
        now: datetime,
    ) -> Memory:
        """Append ``line`` (after a newline) to the day row if it is live and has room,
        writing its ``append`` audit record in the same transaction
        (docs/reference.md#day-line-history).

        Args:
            memory_id: the live day row.
            line: the stored line to append; the text grows by ``len(line) + 1``.
            audit: the append's audit record (``day_line_audit``).
            max_chars_before: the largest stored length that still leaves room.
            now: the change time.

        Returns:
            The day row after the append.

        Raises:
            DayRowNotLive: the row was archived meanwhile.
            DayLogFull: the stored text is longer than ``max_chars_before``.
        """
        ...

    def list_memories(
        self,
        *,
        workspace_id: str,
        agent_id: str | None,
        status: str | None,
        kind: str | None,
        limit: int,
        after_id: str | None,
        consistent: bool = False,
        all_tags: Sequence[str] = (),
        any_tags: Sequence[str] = (),
        meta: Sequence[MetaCondition] = (),
    ) -> MemoryPage:
        """List memories newest first, exactly ``limit`` when that many match; the items
        read strongly consistently with ``consistent`` (what a review plans against),
        else eventually (a person's or an agent's list page). With ``all_tags``,
        ``any_tags`` or ``meta`` (``agent_id`` then required): only facts holding every
        tag of ``all_tags``, one of ``any_tags`` and meeting every condition of ``meta``,
        filtered before the page is cut (docs/reference.md#tags,
        docs/reference.md#metadata-filters)."""
        ...

    def tagged_fact_ids(
        self,
        agent_id: str,
        all_tags: Sequence[str],
        any_tags: Sequence[str],
        meta: Sequence[MetaCondition] = (),
    ) -> set[str]:
        """The ids of every active fact of the agent holding every tag of ``all_tags``
        and one of ``any_tags`` and meeting every condition of ``meta``
        (docs/reference.md#tags, docs/reference.md#metadata-filters)."""
        ...

    def live_facts(self, agent_id: str, *, recall_counts: bool = True) -> list[Memory]:
        """Every active fact of an agent (expired ones included), newest first; with
        ``recall_counts=False`` without reading the recall counters (docs/reference.md#8-recall)."""
        ...

    def get_many(self, memory_ids: Sequence[str]) -> list[Memory]:
        """The memories of ``memory_ids`` that exist (strongly consistent), without recall
        counts, in ``memory_ids`` order."""
        ...

    def stored_embeddings(self, memory_ids: Sequence[str]) -> dict[str, bytes | None]:
        """The stored recall embedding of each of ``memory_ids`` that exists (eventually
        consistent: recall's second stage reads the word pieces of its best candidates,
        docs/issues.md#issue-23-item-1)."""
        ...

    def with_recall_counts(self, memories: list[Memory]) -> list[Memory]:
        """``memories`` with their current ``recallCount`` / ``lastRecalledAt``."""
        ...

    def history(
        self, memory_id: str, limit: int, after_audit_id: str | None = None
    ) -> tuple[list[AuditRecord], str | None]:
        """A page of a memory's audit records, oldest first, after ``after_audit_id``;
        and the audit id to continue after (None at the end)."""
        ...


class RecallIndexRepository(Protocol):
    """The recall index: one entry per live fact, written in the same transaction as
    every change of the fact (docs/issues.md#issue-23-item-1)."""

    def entries(self, agent_id: str, now: datetime) -> list[RecallEntry] | None:
        """The agent's live facts not expired at ``now``, newest first (expired ones
        are not read); ``None`` while the agent's index is not complete."""
        ...

    def is_built(self, agent_id: str) -> bool:
        """Whether the agent's index is complete."""
        ...

    def mark_built(self, agent_id: str, now: datetime) -> None:
        """Record that the agent's index is complete."""
        ...

    def settle(self, agent_id: str, now: datetime) -> int:
        """Compact the agent's index until a read calls for no more; how many
        compactions were written."""
        ...

    def clear(self, agent_id: str) -> int:
        """Drop the agent's marker, then its entries; how many entries went."""
        ...

    def put_entries(self, memories: list[Memory]) -> list[str]:
        """Write the entries of those of ``memories`` that are active facts, each only if
        its memory is unchanged since read; the ids to read again (backfill)."""
        ...


class RecallRepository(Protocol):
    """Recall counters, the recall log and run-start session state (docs/reference.md#8-recall)."""

    def session_recalled_at(self, agent_id: str, session_id: str) -> datetime | None:
        """When the session last had a run-start recall, or None."""
        ...

    def commit_recall(
        self,
        memory_ids: Sequence[str],
        entry: RecallLogEntry,
        now: datetime,
        session: SessionClaim | None = None,
    ) -> None:
        """Append the log entry and record the session atomically, then count one
        recall on each memory (at most once; a failure after the log may leave it
        uncounted, never counted twice).

        Raises:
            SessionAlreadyRecalled: the session claim's condition failed; nothing
                was logged or counted.
        """
        ...

    def list_log(
        self, agent_id: str, limit: int, after_id: str | None
    ) -> tuple[list[RecallLogEntry], str | None]:
        """An agent's recall log entries newest first, and the id to continue after."""
        ...

    def log_entry(self, agent_id: str, recall_id: str) -> RecallLogEntry | None:
        """One entry of the agent's recall log, or None (none, or past its retention)."""
        ...

    def count_log(self, agent_id: str, after_id: str | None, cap: int) -> ListTotal:
        """How many entries ``list_log`` lists and how many are newer than the page
        after ``after_id``; at most ``cap`` read (docs/reference.md#list-totals)."""
        ...

    def recall_times(self, agent_id: str, since: datetime) -> list[datetime]:
        """When each of the agent's recalls since ``since`` was made, oldest first."""
        ...


class DirectoryRepository(Protocol):
    """Stores workspaces, agents, persons and token hashes (docs/reference.md#2-concepts,
    docs/reference.md#authentication)."""

    def create_workspace(self, workspace: Workspace) -> None:
        """Write a new workspace."""
        ...

    def get_workspace(self, workspace_id: str) -> Workspace | None:
        """Return the workspace or None."""
        ...

    def set_review_approval(self, workspace_id: str, value: ReviewApproval) -> Workspace | None:
        """Set a stored workspace's ``reviewApproval``; None when there is no such workspace."""
        ...

    def set_learning_approval(
        self, workspace_id: str, value: ReviewApproval, *, by: str, at: datetime
    ) -> Workspace | None:
        """Set a stored workspace's ``learningApproval``, recording who (``by``) and when
        (``at``); None when there is no such workspace."""
        ...

    def create_agent(self, agent: Agent, token: StoredToken) -> None:
        """Write a new agent and its first token in one transaction."""
        ...

    def create_person(
        self, person: Person, token: StoredToken, *, email_digests: Sequence[str]
    ) -> None:
        """Write a new person, their first token and the claim on their e-mail address
        under ``email_digests[0]`` (the service's keyed digests of the normalised address,
        current first) in one transaction, checking that no claim exists under any of them.

        Raises:
            PersonEmailTaken: the workspace's claim on that address exists.
        """
        ...

    def get_agent(self, agent_id: str) -> Agent | None:
        """Return the agent or None."""
        ...

    def list_agents(self, workspace_id: str) -> list[Agent]:
        """Every agent of a workspace, by agent id."""
        ...

    def all_agents(self) -> Iterator[Agent]:
        """Every agent of every workspace, in no order. Reads the whole table: an
        operator command only (docs/issues.md#issue-23-item-4)."""
        ...

    def get_person(self, person_id: str) -> Person | None:
        """Return the person or None."""
        ...

    def principal_for_token(self, token_hash: str) -> Principal | None:
        """Return the principal a token hash belongs to, or None (no expiry check)."""
        ...

    def get_token(self, token_hash: str) -> StoredToken | None:
        """The token stored under a hash (strongly consistent), or None."""
        ...

    def find_token(self, token_id: str) -> StoredToken | None:
        """The token with a ``tok_…`` id (strongly consistent), or None."""
        ...

    def add_token(self, token: StoredToken) -> None:
        """Store a new token (conditional writes, one transaction)."""
        ...

    def list_tokens(self, principal_id: str) -> list[StoredToken]:
        """Every stored token of a principal (eventually consistent)."""
        ...

    def assign_token_id(self, token_hash: str, token_id: str, created_at: datetime) -> bool:
        """Give an id-less token ``token_id`` (and ``created_at`` unless set); False
        when it had one already or is gone."""
        ...

    def revoke_token(self, token: StoredToken) -> bool:
        """Delete a token at once; False when it was gone already."""
        ...

    def rotate_token(
        self, old: StoredToken, new: StoredToken, until: datetime, delete_after: int
    ) -> bool:
        """Store ``new`` and let ``old`` expire at ``until`` (its items deleted by TTL
        after ``delete_after``, epoch seconds), atomically; False when ``old`` was
        revoked or rotated meanwhile."""
        ...

    def touch_token(self, token_hash: str, now: datetime, stale_before: datetime) -> bool:
        """Set the token's ``lastUsedAt`` to ``now`` unless it is already at
        ``stale_before`` or later (conditional); False when nothing was written."""
        ...

    def end_person_sessions(self, person_id: str) -> Person | None:
        """Raise a person's ``sessionsEpoch`` by one (their dashboard sessions end);
        the person as now stored, or None when there is no such person or they were
        removed."""
        ...

    def all_persons(self) -> Iterator[Person]:
        """Every person of the table, removed ones too (a whole-table read)."""
        ...

    def list_persons(self, workspace_id: str) -> list[Person]:
        """Every person of a workspace, removed ones too, in no order (read by key
        through the workspace's owner marks, never a scan)."""
        ...

    def set_person_role(self, change: RoleChange) -> Person | None:
        """Set a live person's role as ``change`` says, in one transaction with its
        checks; the person as now stored, or None when a check failed (nothing
        written)."""
        ...

    def rekey_email_claim(self, person: Person, *, email_digests: Sequence[str]) -> bool:
        """Move the person's e-mail claim to ``email_digests[0]`` from the older digests
        atomically; False when another person holds it under one of them."""
        ...

    def remove_person(self, person: Person, *, email_digests: Sequence[str], now: datetime) -> bool:
        """Mark a person removed at ``now``, raise their ``sessionsEpoch`` and release
        their e-mail claim (under any of ``email_digests``), in one transaction; False
        when they are gone or were removed meanwhile."""
        ...


@dataclass(frozen=True)
class KvQuota:
    """The most one key-value scope may hold (docs/reference.md#kv-quotas).

    Attributes:
        max_keys: keys.
        max_bytes: UTF-8 bytes of its keys plus those of its stored values.
    """

    max_keys: int
    max_bytes: int


@dataclass(frozen=True)
class KvUsage:
    """What one key-value scope holds: ``key_count`` keys, ``byte_count`` bytes of keys
    and values (UTF-8), as its usage item counts them (docs/reference.md#kv-quotas)."""

    key_count: int
    byte_count: int


class KvQuotaReached(Exception):
    """A ``put`` would take the scope past its quota; nothing was stored.

    Attributes:
        usage: the scope's usage before the write.
        added_keys, added_bytes: what the write would add (0 or 1 key; bytes may be negative).
    """

    def __init__(self, usage: KvUsage, added_keys: int, added_bytes: int) -> None:
        super().__init__(f"{usage} + {added_keys} keys, {added_bytes} bytes")
        self.usage = usage
        self.added_keys = added_keys
        self.added_bytes = added_bytes


@dataclass(frozen=True)
class KvNewScopes:
    """The cap on new scopes one source network may start per UTC day
    (docs/reference.md#kv-quotas): a ``put`` that creates the scope's usage item counts
    one against it, in the same transaction.

    Attributes:
        network: the SHA-256 hex of the caller's network (IPv4 address or IPv6 /64).
        day: the UTC day, ``YYYY-MM-DD``.
        max_new: new scopes the network may start that day (0: none).
        expires_at: when the day's counter may go (epoch seconds; DynamoDB TTL).
        site: for an IPv6 caller, the SHA-256 hex of its /48, counted in the same
            transaction with its own cap; None for IPv4.
        site_max_new: new scopes the /48 may start that day.
    """

    network: str
    day: str
    max_new: int
    expires_at: int
    site: str | None = None
    site_max_new: int = 0


class KvNewScopesReached(Exception):
    """A ``put`` would start a new scope past its network's ``KvNewScopes`` cap for the
    day; nothing was stored."""


class KvRevisionMismatch(Exception):
    """A conditional key-value write named another revision than the entry's
    (docs/reference.md#kv-revisions); ``current`` is the entry's (0: no live entry)."""

    def __init__(self, current: int) -> None:
        super().__init__(f"the entry is at revision {current}")
        self.current = current


class KvRepository(Protocol):
    """Stores key-value entries by scope (docs/reference.md#10-key-value); large values live in S3.

    ``now`` is epoch seconds: an entry whose ``expires_at`` is not after ``now``
    is expired and never returned or listed, whether or not DynamoDB's TTL has
    deleted it yet. Each scope's usage (keys, bytes) changes in the same transaction
    as its entries (docs/reference.md#kv-quotas).
    """

    def put(
        self,
        scope: str,
        key: str,
        value: str,
        *,
        expires_at: int | None,
        now: float,
        quota: KvQuota,
        new_scopes: KvNewScopes | None = None,
        expected_revision: int | None = None,
    ) -> int:
        """Store ``value`` under ``key``, replacing any entry (``expires_at`` None: permanent);
        returns the entry's new revision.

        ``new_scopes``: when given and the scope is new (no usage item, no entries), the
        write also counts one new scope against it, atomically. ``expected_revision``: store
        only if the live entry's revision is this (0: only if there is none).

        Raises:
            KvRevisionMismatch: ``expected_revision`` is not the entry's; nothing was stored.
            KvQuotaReached: the scope would pass ``quota``; nothing was stored.
            KvNewScopesReached: the scope is new and ``new_scopes`` is used up.
        """
        ...

    def get(self, scope: str, key: str, *, now: float) -> str | None:
        """Return the live value of ``key``, or None."""
        ...

    def read(self, scope: str, key: str, *, now: float) -> tuple[str, int] | None:
        """Return the live value of ``key`` and its revision, or None."""
        ...

    def delete(
        self, scope: str, key: str, *, now: float, expected_revision: int | None = None
    ) -> bool:
        """Delete ``key`` (freeing its quota); return True if a live entry was there.

        Raises:
            KvRevisionMismatch: ``expected_revision`` (0: none) is not the entry's.
        """
        ...

    def keys(self, scope: str, *, now: float, after: str | None, limit: int) -> list[str]:
        """Up to ``limit`` live keys of the scope after ``after`` (None: from the first),
        in key (UTF-8 byte) order."""
        ...

    def usage(self, scope: str, *, now: float) -> KvUsage:
        """The scope's usage (zero for a scope never written)."""
        ...


class RoutineExists(Exception):
    """A routine (or its tombstone) is already stored for the agent."""


class RoutineRepository(Protocol):
    """Stores each agent's "Memory dreaming" routine (docs/reference.md#9-review), tombstones
    included."""

    def get(self, agent_id: str) -> Routine | None:
        """Return the agent's routine, a ``deleted`` tombstone included (consistent read)."""
        ...

    def create(self, routine: Routine, *, over_tombstone: bool = False) -> None:
        """Write a new routine; only if none is stored (or, with ``over_tombstone``,
        only over a ``deleted`` one).

        Raises:
            RoutineExists: the condition failed.
        """
        ...

    def change(self, before: Routine, after: Routine) -> None:
        """Replace a routine unchanged since ``before`` was read.

        Raises:
            WriteConflict: it changed meanwhile.
        """
        ...

    def list_workspace(
        self, workspace_id: str, limit: int, after_agent_id: str | None = None
    ) -> tuple[list[Routine], str | None]:
        """A page of the live (active or paused) routines of a workspace, by agent id,
        after ``after_agent_id``; and the agent id to continue after (None at the end)."""
        ...

    def iter_active(self) -> Iterator[Routine]:
        """Every active routine of every workspace, page by page (the nightly fan-out)."""
        ...


class LiftClaimed(Exception):
    """The normalized text was lifted for this agent before: never lift it again."""


class ReviewDateTaken(Exception):
    """Another review of this agent and date is running or finished."""


class DecisionTaken(Exception):
    """The action was decided already, or another approval is applying it.

    Attributes:
        existing: the stored decision when it could be read, else None.
    """

    def __init__(self, message: str, existing: ActionDecision | None = None) -> None:
        super().__init__(message)
        self.existing = existing


class ReviewRepository(Protocol):
    """The review's own writes (docs/reference.md#9-review): system changes that need more
    conditions than the API's, the per-date claim, and report summaries."""

    def supersede_by_existing(
        self,
        old_before: Memory,
        old_after: Memory,
        keeper: Memory,
        audit: AuditRecord,
        keeper_audit: AuditRecord | None = None,
    ) -> None:
        """Archive ``old`` as superseded by the live ``keeper``, both unchanged since read,
        writing ``audit`` (the old fact's) and ``keeper_audit`` (the keeper's ``absorb``).

        Raises:
            WriteConflict: either changed.
        """
        ...

    def create_lifted(
        self,
        fact: Memory,
        audits: Sequence[AuditRecord],
        text_digest: str,
        replaced: tuple[Memory, Memory] | None = None,
    ) -> None:
        """Write a lifted fact, its audit records and its lift claim in one transaction,
        archiving ``replaced`` (before, after) when it updates a fact.

        Raises:
            LiftClaimed: the text was lifted before.
            WriteConflict: the replaced fact changed.
        """
        ...

    def claim_date(
        self, agent_id: str, date: str, review_id: str, now: datetime, stale_before: datetime
    ) -> None:
        """Claim the agent's review of ``date`` unless one finished or is still running
        (one started after ``stale_before``).

        Raises:
            ReviewDateTaken: the claim failed.
        """
        ...

    def finish_date(self, agent_id: str, date: str, review_id: str, now: datetime) -> None:
        """Mark the claimed review of ``date`` finished."""
        ...

    def save_summary(self, summary: ReviewSummary) -> None:
        """Store a report's summary (listing and lookup by id), expiring at the end of
        the review's retention (docs/reference.md#retention)."""
        ...

    def get_summary(self, review_id: str) -> ReviewSummary | None:
        """The summary of one review, or None (also when past its retention)."""
        ...

    def list_summaries(
        self, agent_id: str, limit: int, after_id: str | None
    ) -> tuple[list[ReviewSummary], str | None]:
        """An agent's review summaries newest first, without those past their retention,
        and the id to continue after."""
        ...

    def count_summaries(self, agent_id: str, after_id: str | None, cap: int) -> ListTotal:
        """How many summaries ``list_summaries`` lists and how many are newer than the
        page after ``after_id``; at most ``cap`` read (docs/reference.md#list-totals)."""
        ...

    def claim_approval(
        self,
        summary: ReviewSummary,
        decision: ActionDecision,
        claim_id: str,
        stale_before: datetime,
    ) -> None:
        """Store ``decision`` (state ``applying``) on ``summary``'s review unless the
        action has a decision, or an ``applying`` one made after ``stale_before``.

        Raises:
            DecisionTaken: the condition failed.
        """
        ...

    def record_outcome(
        self, summary: ReviewSummary, decision: ActionDecision, claim_id: str
    ) -> None:
        """Replace the claim ``claim_id`` with the final ``decision`` and move the
        summary's counts, in one transaction.

        Raises:
            DecisionTaken: the claim is no longer ours (taken over).
            WriteConflict: the summary has no pending action left.
        """
        ...

    def record_rejection(
        self, summary: ReviewSummary, decision: ActionDecision, signatures: Sequence[str]
    ) -> None:
        """Store a ``rejected`` decision for an undecided action, move the summary's
        counts and remember the rejection under the agent (one item per signature,
        ``ReviewAction.signatures``), in one transaction.

        Raises:
            DecisionTaken: the action has a decision (or is being applied).
            WriteConflict: the summary has no pending action left.
        """
        ...

    def list_decisions(self, review_id: str) -> list[ActionDecision]:
        """Every stored decision of a review (strongly consistent), in any order."""
        ...

    def rejections(self, agent_id: str) -> dict[str, str]:
        """Every action a person rejected for the agent: ``ReviewAction.signature`` ->
        a short description of the rejection (review, action, person, date)."""
        ...


class ReportStore(Protocol):
    """Where full review reports live (S3 JSON objects)."""

    def put(self, key: str, body: bytes) -> None:
        """Write one object."""
        ...

    def get(self, key: str) -> bytes | None:
        """Read one object, or None when missing."""
        ...


class ReviewQueue(Protocol):
    """Where the nightly fan-out puts one review per agent (SQS, docs/reference.md#9-review);
    the lifecycle queue, where a person's erasures and exports go
    (docs/reference.md#the-lifecycle-queue), has the same shape."""

    def send(self, bodies: Sequence[str]) -> int:
        """Send the message bodies; return how many were sent."""
        ...


class UndoTaken(Exception):
    """The review action was undone already."""


class PendingActionRepository(Protocol):
    """The review actions waiting for a person, per workspace (docs/issues.md#issue-14-item-2)."""

    def put_pending(
        self,
        workspace_id: str,
        pending: Sequence[PendingAction],
        signatures: dict[str, list[str]],
    ) -> None:
        """Add actions to the list (``signatures`` by action id, ``ReviewAction.signatures``)."""
        ...

    def list_pending(
        self, workspace_id: str, agent_id: str | None, limit: int, after: str | None
    ) -> tuple[list[PendingAction], str | None]:
        """A page of waiting actions (by agent, oldest review first; none of a review
        past its retention) and the key to continue after."""
        ...

    def count_pending(
        self, workspace_id: str, agent_id: str | None, after: str | None, cap: int
    ) -> ListTotal:
        """How many actions ``list_pending`` lists and how many come before the page
        after ``after``; at most ``cap`` read (docs/reference.md#list-totals)."""
        ...

    def pending_signatures(self, workspace_id: str, agent_id: str) -> dict[str, str]:
        """Signature -> ``"rvw_… a3"`` of every action of the agent still waiting (of a
        review inside its retention)."""
        ...


class ReviewUndoRepository(Protocol):
    """Undo records of review actions (docs/issues.md#issue-14-item-3)."""

    def record_undo(
        self,
        summary: ReviewSummary,
        undo: ActionUndo,
        changes: Sequence[tuple[Memory, Memory, AuditRecord]],
        signatures: Sequence[str] = (),
    ) -> None:
        """Store the undo record, restore every memory (version-checked) with its
        audit record, count it on the summary, and remember the action's ``signatures``
        (``ReviewAction.signatures``) as undone, so later reviews do not propose it again
        (read back by ``ReviewRepository.rejections``), in one transaction.

        Raises:
            UndoTaken: undone already.
            WriteConflict: a memory changed since it was read.
        """
        ...

    def list_undos(self, review_id: str) -> list[ActionUndo]:
        """Every undo record of a review."""
        ...


class VetoIndex(Protocol):
    """Which of an agent's facts a person vetoed, by text (docs/issues.md#issue-14-item-5)."""

    def candidates(self, agent_id: str, index_keys: Sequence[str]) -> tuple[set[str], bool]:
        """The memory ids filed under any of ``index_keys``, and whether the agent's
        vetoes from before the index existed were filed (``mark_indexed``)."""
        ...

    def add(self, agent_id: str, memory_id: str, index_keys: Sequence[str]) -> None:
        """File a vetoed memory under ``index_keys`` (idempotent)."""
        ...

    def mark_indexed(self, agent_id: str) -> None:
        """Record that every veto of the agent made so far is filed."""


class ReviewRunTaken(Exception):
    """A queued review is done, or another worker runs it and its claim is not stale."""


class ReviewRunRepository(Protocol):
    """Queued manual reviews (``POST /reviews`` answered 202; docs/issues.md#issue-12)."""

    def create(self, run: ReviewRun) -> None:
        """Store a new ``queued`` run (its id is new; never overwrites)."""
        ...

    def get(self, review_id: str) -> ReviewRun | None:
        """The run by review id (strongly consistent), or None (also when requested
        longer than the review retention ago)."""
        ...

    def claim(
        self, review_id: str, claim_id: str, now: datetime, stale_before: datetime
    ) -> ReviewRun:
        """Mark the run ``running`` under ``claim_id`` (``attempts`` + 1): from ``queued``
        or ``failed``, or over a ``running`` claim started before ``stale_before``.

        Raises:
            ReviewRunTaken: the run is done, unknown, or held by a live claim.
        """
        ...

    def finish(self, review_id: str, claim_id: str, now: datetime, report_key: str | None) -> None:
        """Mark the run ``done`` (only while ``claim_id`` holds it)."""
        ...

    def fail(self, review_id: str, claim_id: str, now: datetime, error: str) -> None:
        """Mark the run ``failed`` with why (only while ``claim_id`` holds it)."""
        ...


class IdempotencyStore(Protocol):
    """Runs an action at most once per idempotency key (docs/issues.md#issue-15; the adapter is
    Powertools' idempotency utility on the single table)."""

    def run_once(
        self,
        record_key: str,
        fingerprint: str,
        action: Callable[[], dict[str, Any]],
        *,
        deadline_ms: int,
        lifetime_seconds: int,
    ) -> tuple[dict[str, Any], bool]:
        """Run ``action`` and keep its answer under ``record_key`` for
        ``lifetime_seconds``, or return the kept answer; the flag says it was replayed.

        Raises:
            IdempotencyKeyInUse: the first request with this key is still running
                (it holds the key ``deadline_ms``).
            IdempotencyKeyReused: the key was used with another ``fingerprint``.
            Exception: whatever ``action`` raised (nothing is kept).
        """
        ...


class ModelFile(Protocol):
    """One model's weights as a local file, fetched on first use
    (docs/operations.md#reranker-weights): from the stack's bucket into ``/tmp`` on Lambda,
    the checkout's ``models/`` file elsewhere."""

    def path(self) -> Path:
        """The local file (the first call may download it; later calls reuse it).

        Raises:
            ModelFileMissing: the weights are not where they should be.
            RateLimited: the store throttled the download.
        """
        ...
