"""Shared pydantic building blocks: camelCase wire names and RFC 3339 timestamps.

Every model of the service sets ``defer_build=True``: pydantic then builds a model's
validator and serializer on its first use instead of when its module is imported,
which took a quarter of ``import app`` (cold start; docs/DECISIONS.md "Cold start").
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, PlainSerializer
from pydantic.alias_generators import to_camel

from chalicelib.ids import to_rfc3339

Timestamp = Annotated[datetime, PlainSerializer(to_rfc3339, return_type=str, when_used="json")]
"""An aware UTC datetime that serializes as ``2026-11-30T01:02:03.456Z``."""


class WireModel(BaseModel):
    """Base of stored and returned objects: camelCase aliases, immutable."""

    model_config = ConfigDict(
        defer_build=True, alias_generator=to_camel, populate_by_name=True, frozen=True
    )


class RequestModel(BaseModel):
    """Base of request bodies: camelCase, unknown fields rejected, no type coercion.

    A body that fails validation becomes 400 ``invalid_request`` (docs/reference.md#6-errors).
    """

    model_config = ConfigDict(
        defer_build=True,
        alias_generator=to_camel,
        populate_by_name=False,
        extra="forbid",
        strict=True,
    )
