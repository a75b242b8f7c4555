"""Change events on the wire (docs/reference.md#change-events, docs/issues.md#issue-47):
the pull feed's query and page, each event a CloudEvents 1.0 JSON object whose ``data``
holds references (ids, states, versions, actors), never stored text."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from chalicelib.models.requests import Limit
from chalicelib.models.responses import ResponseModel, WireDate, WireTime

EVENT_ID_PATTERN = r"^evt_[0-7][0-9A-HJKMNP-TV-Z]{25}$"
"""An event id: ``evt_`` and a ULID (Crockford base 32, upper case)."""
DEFAULT_EVENT_PAGE = 100
"""Events in a feed page when ``limit`` is not given."""
MAX_EVENT_PAGE = 200
"""The largest feed page; a larger ``limit`` is read as this."""


class EventQuery(BaseModel):
    """``GET /events``: ``after`` the cursor (the last event id a consumer holds; none:
    from the oldest kept event), ``limit`` from 1, default 100, over 200 read as 200
    (values arrive as strings; anything else is ``invalid_request``)."""

    model_config = ConfigDict(
        defer_build=True, alias_generator=to_camel, populate_by_name=False, extra="forbid"
    )

    after: str | None = Field(
        default=None,
        max_length=200,
        # checked by the service, whose error says what a cursor is
        json_schema_extra={"pattern": EVENT_ID_PATTERN},
        description="The cursor: the `nextCursor` of the previous page (an event id).",
    )
    limit: Limit = DEFAULT_EVENT_PAGE

    @field_validator("limit", mode="after")
    @classmethod
    def _clamp(cls, value: int) -> int:
        return min(value, MAX_EVENT_PAGE)


class EventData(ResponseModel):
    """An event's ``data``: the changed object by reference. ``object`` says which
    (``memory`` or ``learning``); the fields of the other are null."""

    object: Literal["memory", "learning"]
    id: str
    action: str = Field(description="The history record's action (`create`, `edit` …).")
    audit_id: str = Field(description="The history record the change wrote.")
    actor_type: str
    actor_id: str | None
    version: int | None = Field(description="The object's version after the change.")
    kind: Literal["fact", "day"] | None = None
    agent_id: str | None = None
    date: WireDate | None = None
    status: Literal["active", "archived", "erased"] | None = None
    archive_reason: Literal["superseded", "vetoed"] | None = Field(
        default=None, description="A reserved archive reason; a person's own stays out."
    )
    supersedes: str | None = None
    superseded_by: str | None = None
    state: Literal["proposed", "active", "rejected", "retired"] | None = None
    proposed_by: str | None = None
    proposed_by_type: Literal["agent", "person", "review"] | None = None


class EventObject(ResponseModel):
    """One change event: CloudEvents 1.0 (JSON format) with the extensions
    ``workspace`` and ``agent`` (absent when no agent's)."""

    specversion: Literal["1.0"]
    id: str = Field(pattern=EVENT_ID_PATTERN)
    source: str
    type: str = Field(description="`pinework.memory.saved`, `pinework.learning.approved` …")
    time: WireTime
    subject: str = Field(description="The changed object's id.")
    datacontenttype: Literal["application/json"]
    workspace: str
    agent: str | None = Field(default=None, exclude_if=lambda value: value is None)
    data: EventData


class EventList(ResponseModel):
    """``GET /events``: events oldest first; ``nextCursor`` is what to send as ``after``
    next time (the last event's id, or the ``after`` sent when none came; null when
    the feed is empty and no cursor was sent); ``hasMore`` says the next page is ready
    now."""

    object: Literal["list"] = "list"
    data: list[EventObject]
    next_cursor: str | None
    has_more: bool
