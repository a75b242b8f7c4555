"""The query strings of the as-of views (docs/reference.md#as-of-a-moment): ``asOf`` on
``GET /memories/{id}`` and on ``GET /memories``."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from chalicelib.models.requests import ListQuery

AS_OF_DESCRIPTION = (
    "An RFC 3339 time with a zone (`2026-11-30T12:00:00Z`, `…+01:00`): the memory as it "
    "was then, rebuilt from its history (docs/reference.md#as-of-a-moment). Not in the "
    "future, not before the workspace existed."
)


class AsOfQuery(BaseModel):
    """``GET /memories/{id}`` query string: ``asOf`` alone, optional (without it, the
    memory as it is now)."""

    model_config = ConfigDict(
        defer_build=True, alias_generator=to_camel, populate_by_name=False, extra="forbid"
    )

    as_of: str | None = Field(default=None, description=AS_OF_DESCRIPTION)


class AsOfListQuery(ListQuery):
    """``GET /memories`` query string: the list's (``ListQuery``) and ``asOf``, which
    needs ``agentId`` from a person (the agent's memories as they were then)."""

    as_of: str | None = Field(default=None, description=AS_OF_DESCRIPTION)
