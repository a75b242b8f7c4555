"""The memory object (docs/reference.md#3-the-memory-object) and its audit record
(docs/reference.md#4-states)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import Field

from chalicelib.models.common import Timestamp, WireModel


class MemoryKind(StrEnum):
    """What a memory is: one fact, or one agent's day log for one UTC date."""

    FACT = "fact"
    DAY = "day"


class MemoryStatus(StrEnum):
    """Lifecycle state (docs/reference.md#4-states). ``expired`` is computed, not a status."""

    ACTIVE = "active"
    ARCHIVED = "archived"
    ERASED = "erased"
    """A person erased it: a tombstone without its text (docs/reference.md#erasing-a-memory)."""


SUPERSEDED = "superseded"
"""Archive reason set when a newer memory replaced this one (reserved,
docs/reference.md#3-the-memory-object)."""
VETOED = "vetoed"
"""Archive reason set when a person vetoed the memory (reserved,
docs/reference.md#3-the-memory-object)."""
RESERVED_ARCHIVE_REASONS = frozenset({SUPERSEDED, VETOED})


MetadataValue = bool | int | float | str
"""One metadata value (docs/reference.md#metadata); a date is an ISO 8601 string."""


class Memory(WireModel):
    """A fact or a day row, as stored and (through ``to_wire``) as returned.

    ``workspace_id``, ``version`` (optimistic-concurrency counter),
    ``embedding`` and ``evidence`` are stored but never sent in the memory
    object (``evidence`` is shown in the ``create`` audit record instead;
    docs/DECISIONS.md). Times are aware UTC datetimes.
    """

    id: str
    workspace_id: str = Field(exclude=True)
    agent_id: str
    kind: MemoryKind
    date: str | None = None
    text: str
    tags: tuple[str, ...] = ()
    """A fact's tags, normalized, sorted, each once (docs/reference.md#tags); a day
    row has none."""
    metadata: dict[str, MetadataValue] = Field(default_factory=dict)
    """A fact's metadata, keys normalized and sorted (docs/reference.md#metadata); a day
    row has none."""
    expires_at: Timestamp
    status: MemoryStatus = MemoryStatus.ACTIVE
    archive_reason: str | None = None
    archived_at: Timestamp | None = None
    supersedes: str | None = None
    superseded_by: str | None = None
    run_id: str | None = None
    task_key: str | None = None
    saved_by_agent_id: str | None = None
    edited_by_person_id: str | None = None
    recall_count: int = 0
    last_recalled_at: Timestamp | None = None
    created_at: Timestamp
    updated_at: Timestamp
    version: int = Field(default=1, exclude=True)
    embedding: bytes | None = Field(default=None, exclude=True, repr=False)
    """The text's embedding for recall (``Embedder.embed``), computed at save time."""
    evidence: str | None = Field(default=None, exclude=True, repr=False)
    """The tool-output excerpt the saver gave to support the fact (<= 2,000
    characters, docs/reference.md#review-step-5); read by the review's conflict step."""
    erased_at: Timestamp | None = None
    erased_by: str | None = None
    """The person (``usr_…``) who erased it (docs/reference.md#erasing-a-memory)."""
    erase_reason: str | None = None

    def __hash__(self) -> int:
        """Of the fields an equal memory shares and that hash (``metadata`` is a dict):
        a memory can be a set member or a dict key, as frozen models are."""
        return hash((self.id, self.version, self.status, self.text, self.tags))

    @property
    def is_erased(self) -> bool:
        """True for a tombstone: erased memories never come back
        (docs/reference.md#erasing-a-memory)."""
        return self.status is MemoryStatus.ERASED

    def erased(self, by: str, reason: str, now: datetime) -> Memory:
        """This memory as its tombstone (docs/reference.md#erasing-a-memory): identity,
        kind, date, times, run, task and supersede links kept; text, tags, metadata, embedding,
        evidence and archive reason gone; one version on (the caller writes it
        conditionally on this version)."""
        return self.model_copy(
            update={
                "status": MemoryStatus.ERASED,
                "text": "",
                "tags": (),
                "metadata": {},
                "embedding": None,
                "evidence": None,
                "archive_reason": None,
                "erased_at": now,
                "erased_by": by,
                "erase_reason": reason,
                "updated_at": now,
                "version": self.version + 1,
            }
        )

    def is_expired(self, now: datetime) -> bool:
        """True once ``expires_at`` has passed (docs/reference.md#3-the-memory-object: computed at
        read time)."""
        return self.expires_at <= now

    @property
    def is_superseded(self) -> bool:
        """True when a newer memory replaced this one; it never comes back
        (docs/reference.md#4-states)."""
        return self.superseded_by is not None or self.archive_reason == SUPERSEDED

    def superseded(self, by: str, now: datetime) -> Memory:
        """This memory archived as replaced by ``by`` (docs/reference.md#4-states: reason
        ``superseded``), one version on; the caller writes it conditionally on this version."""
        return self.model_copy(
            update={
                "status": MemoryStatus.ARCHIVED,
                "archive_reason": SUPERSEDED,
                "archived_at": now,
                "superseded_by": by,
                "updated_at": now,
                "version": self.version + 1,
            }
        )

    def to_wire(self, now: datetime) -> dict[str, Any]:
        """Return the JSON object of docs/reference.md#3-the-memory-object (camelCase, ``object:
        "memory"``).

        Args:
            now: the time against which ``expired`` is computed.
        """
        body = self.model_dump(mode="json", by_alias=True)
        return {"id": body.pop("id"), "object": "memory", **body, "expired": self.is_expired(now)}


class AuditRecord(WireModel):
    """One entry of a memory's history: who did what, when, before and after
    (docs/reference.md#4-states).

    ``before`` / ``after`` are the memory's wire form (without ``expired``) or
    ``None`` (no ``before`` on create). ``evidence`` is set on a fact's
    ``create`` record when the save carried one (docs/reference.md#review-step-5).
    """

    id: str
    memory_id: str
    workspace_id: str = Field(exclude=True)
    action: str
    actor_type: str
    actor_id: str | None
    at: Timestamp
    reason: str | None = None
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    evidence: str | None = None

    def to_wire(self) -> dict[str, Any]:
        """Return the JSON object (``object: "audit"``; ``evidence`` is ``null``
        except on a ``create`` that carried some)."""
        body = self.model_dump(mode="json", by_alias=True)
        return {"id": body.pop("id"), "object": "audit", **body}


SNAPSHOT_TEXTS = ("text", "line", "archiveReason", "tags", "metadata")
"""The fields of an audit snapshot (``snapshot``) that hold words someone wrote; the
rest are ids, states and times. Erasure and retention remove these."""


def snapshot(memory: Memory) -> dict[str, Any]:
    """The audit form of a memory: its wire fields without the computed ``expired``."""
    body = memory.model_dump(mode="json", by_alias=True)
    return {"id": body.pop("id"), "object": "memory", **body}


def without_words(shot: dict[str, Any]) -> dict[str, Any]:
    """A snapshot with its ``SNAPSHOT_TEXTS`` (text, reason, tags, metadata) set to null: the
    ``before`` of an erase record (docs/reference.md#erasing-a-memory)."""
    return {name: (None if name in SNAPSHOT_TEXTS else value) for name, value in shot.items()}
