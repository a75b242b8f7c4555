"""Bulk actions of persons on memories (docs/reference.md#bulk-actions,
docs/issues.md#issue-46-item-3): the request, the stored record an undo reads, and
the answers.

A bulk action names at most ``MAX_BULK_MEMORIES`` memories, by id or by a list filter,
and applies one action (archive, veto, tag, untag) to each through the memory's own
change (its conditions, history record and version), so every change is audited as
one made alone would be. The record keeps, for each memory changed, the version the
action left and the tags it added or removed: the undo reverts exactly those, and only
where the memory is still at that version.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from chalicelib.ids import to_rfc3339
from chalicelib.models.common import RequestModel
from chalicelib.models.requests import SentTags
from chalicelib.models.responses import ResponseModel, Tag, WireTime

MAX_BULK_MEMORIES = 100
"""Memories one bulk request acts on, at most (ids named, or a filter's page)."""

BULK_UNDO_DAYS = 30
"""Days a bulk action's record is kept, so its undo is possible (DynamoDB TTL)."""


class BulkAction(StrEnum):
    """What a bulk request does to each memory (docs/reference.md#bulk-actions)."""

    ARCHIVE = "archive"
    VETO = "veto"
    TAG = "tag"
    UNTAG = "untag"


class BulkFilter(RequestModel):
    """The memories a bulk request acts on, as the list filters them: one agent's facts
    holding every ``tag`` and one of ``anyTag`` (``GET /memories`` rules), of ``status``
    (default active), ``MAX_BULK_MEMORIES`` at a time from ``nextToken``."""

    agent_id: str
    tag: SentTags | None = None
    any_tag: SentTags | None = None
    status: Literal["active", "archived"] | None = None
    next_token: str | None = None


class BulkRequest(RequestModel):
    """``POST /memories/bulk``: ``action``, exactly one of ``ids`` (1 to 100 memory ids)
    and ``filter``; ``reason`` (archive, required), ``note`` (veto, optional), ``tags``
    (tag and untag, 1 to 10)."""

    action: Literal["archive", "veto", "tag", "untag"]
    ids: list[str] | None = Field(default=None, min_length=1, max_length=MAX_BULK_MEMORIES)
    filter: BulkFilter | None = None
    reason: str | None = None
    note: str | None = None
    tags: SentTags | None = None


class BulkChange(BaseModel):
    """One memory a bulk action changed: the version it left and the tags it added
    (``tag``) or removed (``untag``); empty for archive and veto."""

    model_config = ConfigDict(frozen=True)

    memory_id: str
    version: int
    tags: tuple[str, ...] = ()


class BulkRecord(BaseModel):
    """A stored bulk action (``BULK#<wsp_id>`` / ``<blk_id>``): who, when, what, and
    each change; ``undone_at`` once undone (an undo happens once)."""

    model_config = ConfigDict(frozen=True)

    id: str
    workspace_id: str
    action: BulkAction
    by: str
    at: datetime
    changes: tuple[BulkChange, ...]
    undone_at: datetime | None = None

    def to_wire(self) -> dict[str, object]:
        """The record as ``BulkRecordObject`` (camelCase)."""
        return {
            "id": self.id,
            "action": self.action.value,
            "by": self.by,
            "at": to_rfc3339(self.at),
            "changed": [
                {"id": change.memory_id, "version": change.version, "tags": list(change.tags)}
                for change in self.changes
            ],
            "undoneAt": None if self.undone_at is None else to_rfc3339(self.undone_at),
        }


class BulkChangedObject(ResponseModel):
    """A memory a bulk action changed: its ``version`` after the change and the
    ``tags`` the change added or removed (tag and untag)."""

    id: str
    version: int
    tags: list[Tag]


class BulkSkippedObject(ResponseModel):
    """A memory a bulk action left as it was, and why: ``code`` is the error code a
    single change would have answered, or ``no_change`` (nothing to do: the tags are
    there already, or none of them)."""

    id: str
    code: str
    message: str


class BulkRecordObject(ResponseModel):
    """``GET /memories/bulk/{id}``: a bulk action as stored (kept 30 days)."""

    id: str
    action: Literal["archive", "veto", "tag", "untag"]
    by: str
    at: WireTime
    changed: list[BulkChangedObject]
    undone_at: WireTime | None


class BulkResultObject(ResponseModel):
    """``POST /memories/bulk``: the bulk action's id (null when nothing changed: no
    record, nothing to undo), each memory ``changed`` and each ``skipped`` with its
    reason, and for a filter the ``nextToken`` of the matches after these (null at the
    last)."""

    id: str | None
    action: Literal["archive", "veto", "tag", "untag"]
    changed: list[BulkChangedObject]
    skipped: list[BulkSkippedObject]
    next_token: str | None


class BulkUndoObject(ResponseModel):
    """``POST /memories/bulk/{id}/undo``: the memories put back, and those left (a
    memory changed since the bulk action, or that cannot come back) with the reason."""

    id: str
    restored: list[BulkChangedObject]
    skipped: list[BulkSkippedObject]
