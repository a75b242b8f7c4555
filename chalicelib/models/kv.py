"""Request bodies of the key-value meta-tools (docs/reference.md#10-key-value): ``remember``,
``recall``, ``forget``.

Strict and closed like every request model: unknown fields and wrong types are
``invalid_request``. The key's byte limit and the value's size, number and
secret rules are checked by ``KvService`` (they need the serialized form).
The same models give the MCP tools their input schemas.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from chalicelib.models.common import RequestModel


class RememberRequest(RequestModel):
    """``remember {key, value}``: store ``value`` (any JSON) under ``key`` (1–512 UTF-8 bytes)."""

    key: str = Field(description="The key: 1 to 512 bytes of UTF-8.")
    value: Any = Field(
        description=(
            "Any JSON value. A string is stored as given; anything else is stored as its "
            "compact JSON text (like JavaScript's JSON.stringify) and recalled as that string."
        )
    )
    if_revision: int | None = Field(
        default=None,
        ge=0,
        description="Store only if the key is at this revision (as `recall` answered it); "
        "0: only if the key is absent. Otherwise 412 `precondition_failed`, nothing stored.",
    )


class KvRecallRequest(RequestModel):
    """``recall {key}`` reads one key; ``recall {}`` (or ``key: null``) lists a page of the
    scope's keys, ``{cursor, limit}`` choosing the page (docs/reference.md#kv-listing)."""

    key: str | None = Field(
        default=None, description="The key to read; omit it to list the keys of your scope."
    )
    cursor: str | None = Field(
        default=None,
        description="Listing only: the `next` of the previous page, to continue after it.",
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        description="Listing only: keys per page (100 by default; more than 1000 reads as 1000).",
    )

    with_revision: bool = Field(
        default=False,
        description="With a key: also answer the entry's `revision` (0 when missing), "
        "what `ifRevision` takes.",
    )

    @model_validator(mode="after")
    def _paging_only_when_listing(self) -> KvRecallRequest:
        if self.key is not None and (self.cursor is not None or self.limit is not None):
            raise ValueError("cursor and limit page a listing: leave them out with a key")
        if self.key is None and self.with_revision:
            raise ValueError("withRevision reads one key's revision: send it with a key")
        return self


class ForgetRequest(RequestModel):
    """``forget {key}``: delete one key of the caller's scope."""

    key: str = Field(description="The key to delete: 1 to 512 bytes of UTF-8.")
    if_revision: int | None = Field(
        default=None,
        ge=0,
        description="Delete only if the key is at this revision (as `recall` answered it). "
        "Otherwise 412 `precondition_failed`, nothing deleted.",
    )
