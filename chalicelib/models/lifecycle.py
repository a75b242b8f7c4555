"""A person's erasure of an agent and exports
(docs/reference.md#erasing-an-agent-a-person-or-a-workspace,
docs/reference.md#exports-for-a-person, docs/issues.md#issue-24-item-8): request bodies, the
objects the routes answer, and the review queue's job messages that run them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from chalicelib.ids import ULID_PATTERN
from chalicelib.models.common import RequestModel
from chalicelib.models.requests import Paging
from chalicelib.models.responses import ListPage, ResponseModel, WireTime

JobStatus = Literal["queued", "running", "done", "failed"]
ExportStatus = Literal["queued", "running", "done", "failed", "expired"]
"""``expired``: the file is gone (past its 7 days, or deleted by an erasure)."""
EXPORT_ID_PATTERN = rf"^exp_{ULID_PATTERN}$"


class EraseAgentRequest(RequestModel):
    """``POST /agents/{id}/erase``: a required ``reason`` (<= 500 characters, no
    credential), kept in the erasure's tombstone."""

    reason: str = Field(min_length=1, max_length=500)


class ExportRequest(RequestModel):
    """``POST /exports``: ``agentId`` exports one agent; without it, the whole workspace."""

    agent_id: str | None = Field(default=None, pattern=rf"^agt_{ULID_PATTERN}$")


class ErasureObject(ResponseModel):
    """An erasure of an agent (``POST /agents/{id}/erase``, ``GET /erasures/{id}``): its
    ``status``, the phase it is in and what it deleted so far; once ``done`` it is the
    tombstone that stays (who, when, why, counts)."""

    id: str = Field(description="The erased agent's id (an erasure is named by its target).")
    object: Literal["erasure"]
    kind: Literal["agent", "person", "workspace", "memory"] = Field(
        description="``memory``: a person's erasure of one memory (``GET /erasures`` only; "
        "``GET /memories/{id}`` shows its tombstone)."
    )
    workspace_id: str
    status: JobStatus
    phase: str = Field(description="collect, delete, objects, then done.")
    requested_by: str
    reason: str | None
    requested_at: WireTime | None
    started_at: WireTime | None = Field(description="When the worker started it.")
    finished_at: WireTime | None
    items: dict[str, int] = Field(description="Items deleted so far, by kind.")
    item_count: int
    object_versions: int


class ErasureQuery(Paging):
    """``GET /erasures`` query string: ``limit`` (100 by default, at most 500),
    ``nextToken``."""


class ErasureList(ListPage[ErasureObject]):
    """``GET /erasures``: the workspace's past erasures, newest first."""


class ExportObject(ResponseModel):
    """A person's export (``POST /exports``, ``GET /exports/{id}``); when ``done``, ``url``
    fetches the file (a JSON document by kind, docs/reference.md#the-persons-export-file)
    until ``urlExpiresAt`` (15 minutes; read the export again for a new link) and the file
    itself is kept until ``expiresAt`` (7 days)."""

    id: str
    object: Literal["export"]
    kind: Literal["agent", "workspace"]
    target_id: str
    status: ExportStatus
    requested_by: str
    requested_at: WireTime
    finished_at: WireTime | None
    expires_at: WireTime
    items: int
    objects: int
    bytes: int
    url: str | None
    url_expires_at: WireTime | None
    error: str | None


class LifecycleJob(BaseModel):
    """A review-queue message that runs a person's erasure or export in the review worker
    (``job`` tells it from a review message)."""

    model_config = ConfigDict(defer_build=True, extra="forbid", strict=True)

    job: Literal["erase", "export"]
    id: str = Field(pattern=rf"^(?:agt|exp)_{ULID_PATTERN}$")
