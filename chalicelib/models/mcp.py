"""Arguments of the MCP tools that have no REST body of their own (docs/reference.md#11-mcp).

``memory_save``, ``memory_day`` and ``memory_recall`` take the REST request
models as they are; ``memory_list`` turns its query string into typed
arguments, and ``memory_archive`` carries the memory id its route has in the
path. Input schemas are generated from these models.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from chalicelib.models.common import RequestModel
from chalicelib.models.requests import SentTags


class MemoryListArguments(RequestModel):
    """``memory_list``: the filters of ``GET /memories`` as typed values."""

    agent_id: str | None = Field(
        default=None, description="Whose memories (persons; omit for every agent)."
    )
    kind: Literal["fact", "day"] | None = Field(default=None, description="Only this kind.")
    status: Literal["active", "archived"] | None = Field(
        default=None, description="Only this status (default: active)."
    )
    all_statuses: bool = Field(
        default=False, alias="all", description="Include archived memories too."
    )
    tags: SentTags | None = Field(
        default=None,
        description="Only facts holding every one of these tags (docs/reference.md#tags).",
    )
    any_tags: SentTags | None = Field(
        default=None, description="Only facts holding at least one of these tags."
    )
    limit: int | None = Field(
        default=None, ge=1, description="Page size: 100 by default, at most 500."
    )
    next_token: str | None = Field(default=None, description="The nextToken of the previous page.")


class MemoryGetArguments(RequestModel):
    """``memory_get``: one memory by id (docs/reference.md#11-mcp)."""

    memory_id: str = Field(
        min_length=1, max_length=64, description="The memory, mem_… (from memory_list or a block)."
    )


class MemoryArchiveArguments(RequestModel):
    """``memory_archive``: which memory, and why (required, at most 500 characters)."""

    memory_id: str = Field(description="The memory to archive, mem_…")
    reason: str = Field(description="Why it is archived (1 to 500 characters).")


class LearningListArguments(RequestModel):
    """``learning_list``: the workspace's learnings, active ones unless ``state`` says."""

    state: Literal["proposed", "active", "rejected", "retired"] = Field(
        default="active", description="Only this state (default: active)."
    )
    q: str | None = Field(default=None, max_length=200, description="Text they contain.")
