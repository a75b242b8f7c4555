"""The "Memory dreaming" routine of an agent (docs/reference.md#9-review, docs/issues.md#issue-4).

One routine per agent, created by the agent's first save. Its id is derived
from the agent's (``agt_<ULID>`` -> ``rtn_<ULID>``), so either names it.
A deleted routine stays stored as a tombstone (``status: deleted``) so that the
next save does not create it again; the API never shows tombstones.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field

from chalicelib.models.common import RequestModel, Timestamp, WireModel
from chalicelib.models.requests import PageQuery

ROUTINE_NAME = "Memory dreaming"
ROUTINE_SCHEDULE = "cron(0 4 * * ? *)"
"""EventBridge expression of the daily review: 04:00 UTC every day (docs/reference.md#9-review)."""
ROUTINE_SCHEDULE_TEXT = "daily at 04:00 UTC"


class RoutineStatus(StrEnum):
    """``active`` routines are reviewed nightly; ``paused`` ones are skipped;
    ``deleted`` is a hidden tombstone."""

    ACTIVE = "active"
    PAUSED = "paused"
    DELETED = "deleted"


def routine_id_for(agent_id: str) -> str:
    """The routine id of an agent: ``agt_<ULID>`` -> ``rtn_<ULID>``."""
    return "rtn_" + agent_id.removeprefix("agt_")


def agent_id_for(routine_id: str) -> str:
    """The agent of a routine id: ``rtn_<ULID>`` -> ``agt_<ULID>``."""
    return "agt_" + routine_id.removeprefix("rtn_")


class Routine(WireModel):
    """An agent's routine as stored and (through ``to_wire``) as returned.

    ``workspace_id`` and ``version`` are stored, never sent.
    """

    id: str
    workspace_id: str = Field(exclude=True)
    agent_id: str
    name: str = ROUTINE_NAME
    schedule: str = ROUTINE_SCHEDULE
    status: RoutineStatus = RoutineStatus.ACTIVE
    created_at: Timestamp
    updated_at: Timestamp
    updated_by_person_id: str | None = None
    version: int = Field(default=1, exclude=True)

    def to_wire(self) -> dict[str, Any]:
        """Return the JSON object (``object: "routine"``, camelCase)."""
        body = self.model_dump(mode="json", by_alias=True)
        return {
            "id": body.pop("id"),
            "object": "routine",
            **body,
            "scheduleDescription": ROUTINE_SCHEDULE_TEXT,
            "timezone": "UTC",
        }


class RoutineQuery(PageQuery):
    """``GET /routines`` query string: ``agentId`` (a person's choice; all if omitted),
    ``limit`` and ``nextToken`` (docs/reference.md#lists; pages run by agent id)."""


class CreateRoutineRequest(RequestModel):
    """``POST /routines``: a person (re)creates an agent's routine, e.g. after deleting it."""

    agent_id: str
