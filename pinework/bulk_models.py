"""Typed bulk actions of the Pinework HTTP API, as the Python client decodes them
(docs/reference.md#bulk-actions): snake_case attributes, either spelling accepted,
unknown fields ignored (``pinework.models.WireModel``)."""

from __future__ import annotations

import datetime as dt

from pydantic import Field

from pinework.models import WireModel

__all__ = ["BulkChanged", "BulkRecord", "BulkResult", "BulkSkipped", "BulkUndo"]


class BulkChanged(WireModel):
    """A memory a bulk action (or its undo) changed.

    Attributes:
        id: the memory, ``mem_…``.
        version: its version after the change (``If-Match`` on a later change).
        tags: the tags the action added (``tag``) or removed (``untag``); empty otherwise.
    """

    id: str
    version: int
    tags: list[str] = Field(default_factory=list)


class BulkSkipped(WireModel):
    """A memory a bulk action (or its undo) left as it was.

    Attributes:
        id: the memory.
        code: the error code its single change would have answered, or ``no_change``.
        message: why, for a person.
    """

    id: str
    code: str
    message: str


class BulkResult(WireModel):
    """``POST /memories/bulk``.

    Attributes:
        id: the action's ``blk_`` id (undo it with it for 30 days); None when nothing
            changed.
        action: ``archive``, ``veto``, ``tag`` or ``untag``.
        changed, skipped: each memory changed, and each left with the reason.
        next_token: for a filter, where the next 100 matches start (None at the last).
    """

    id: str | None
    action: str
    changed: list[BulkChanged]
    skipped: list[BulkSkipped]
    next_token: str | None


class BulkRecord(WireModel):
    """``GET /memories/bulk/{id}``: a bulk action as stored.

    Attributes:
        id, action: as in ``BulkResult``.
        by, at: the person who acted, and when.
        changed: each memory changed.
        undone_at: when it was undone (None: not yet).
    """

    id: str
    action: str
    by: str
    at: dt.datetime
    changed: list[BulkChanged]
    undone_at: dt.datetime | None


class BulkUndo(WireModel):
    """``POST /memories/bulk/{id}/undo``.

    Attributes:
        id: the action undone.
        restored: each memory put back.
        skipped: each memory left (changed since: ``precondition_failed``) with why.
    """

    id: str
    restored: list[BulkChanged]
    skipped: list[BulkSkipped]
