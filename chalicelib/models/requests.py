"""Request bodies and query strings (docs/reference.md#7-http-api).

Limits with their own error codes (text length, secrets) are checked by the
services, not here, so that they produce the seed's codes.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    field_validator,
)
from pydantic.alias_generators import to_camel

from chalicelib.limits import (
    DEFAULT_LIST_LIMIT,
    MAX_FILTER_METADATA,
    MAX_LIST_LIMIT,
    MAX_METADATA_KEYS,
    MAX_TAGS,
    METADATA_STRING_MAX_CHARS,
    TAG_MAX_CHARS,
)
from chalicelib.models.common import RequestModel

SentTags = Annotated[
    list[str],
    WithJsonSchema(
        {
            "type": "array",
            "maxItems": MAX_TAGS,
            "items": {
                "type": "string",
                "pattern": rf"^\s*[A-Za-z0-9][A-Za-z0-9._:-]{{0,{TAG_MAX_CHARS - 1}}}\s*$",
            },
        }
    ),
]
"""A request's ``tags`` as the OpenAPI document shows them, with their exact constraints
(docs/reference.md#tags); the service checks them (400 ``memory_tag_invalid``) after
trimming and lower-casing, which is why the pattern allows both."""

SentMetaFilter = Annotated[
    list[str],
    WithJsonSchema(
        {
            "type": "array",
            "maxItems": MAX_FILTER_METADATA,
            "items": {"type": "string", "pattern": r"^\s*[A-Za-z][A-Za-z0-9_.-]{0,39}\s*:"},
        }
    ),
]
"""A metadata filter as sent: conditions ``key:value``, ``key:in:a|b`` or
``key:op:value`` (docs/reference.md#metadata-filters), all of which must hold; the
service checks them (400 ``metadata_filter_invalid``)."""

META_FILTER_DESCRIPTION = (
    "Only facts whose metadata meets every condition: `key:value`, `key:in:a|b|c` or "
    "`key:op:value` with op eq, in, gt, gte, lt, lte; at most 5 "
    "(docs/reference.md#metadata-filters)."
)

SentMetadata = Annotated[
    dict[str, Any],
    WithJsonSchema(
        {
            "type": "object",
            "maxProperties": MAX_METADATA_KEYS,
            "propertyNames": {"pattern": r"^\s*[A-Za-z][A-Za-z0-9_.-]{0,39}\s*$"},
            "additionalProperties": {
                "anyOf": [
                    {"type": "string", "maxLength": METADATA_STRING_MAX_CHARS},
                    {"type": "number"},
                    {"type": "boolean"},
                ]
            },
        }
    ),
]
"""A request's ``metadata`` as the OpenAPI document shows it (docs/reference.md#metadata);
the service checks it (400 ``memory_metadata_invalid``, and the size limit of
``METADATA_MAX_BYTES`` the schema cannot say)."""


class SaveFactRequest(RequestModel):
    """``POST /memories``: ``text``, ``expiresAt?``, ``supersedes?``, ``agentId?``,
    ``evidence?``, ``tags?`` (docs/reference.md#tags; omitted on a superseding save:
    the replaced fact's tags).

    ``evidence`` is the tool-output excerpt that supports the fact (docs/issues.md#issue-4,
    docs/reference.md#review-step-5): at most 2,000 characters, secret-checked by the service.
    """

    text: str
    expires_at: str | None = None
    supersedes: str | None = None
    agent_id: str | None = None
    evidence: str | None = None
    tags: SentTags | None = Field(
        default=None,
        description="Up to 10 tags; each trimmed and lower-cased, then 1-40 of a-z 0-9 "
        ". _ : - starting with a letter or digit. Omitted on a superseding save: the "
        "replaced fact's tags.",
    )
    metadata: SentMetadata | None = Field(
        default=None,
        description="A flat object: up to 10 keys (a letter, then letters, digits, _ . -; "
        "40 at most; case is ignored), each a string (200 characters at most), a number "
        "or a boolean; 2,048 bytes as JSON at most. Omitted on a superseding save: the "
        "replaced fact's metadata.",
    )


class DayLineRequest(RequestModel):
    """``POST /memories/day``: one ``line`` (at most 300 characters as sent)."""

    line: str


class EditRequest(RequestModel):
    """``PATCH /memories/{id}``: new ``text``, ``expiresAt``, ``tags`` (the fact's
    whole new set, docs/reference.md#tags) and/or ``metadata`` (its whole new object,
    docs/reference.md#metadata)."""

    text: str | None = None
    expires_at: str | None = None
    tags: SentTags | None = Field(
        default=None,
        description="The fact's new tags, replacing its set ([] removes them all); rules "
        "as on save.",
    )
    metadata: SentMetadata | None = Field(
        default=None,
        description="The fact's new metadata, replacing its object ({} removes it all); "
        "rules as on save.",
    )


class ArchiveRequest(RequestModel):
    """``POST /memories/{id}/archive``: a required ``reason`` (<= 500 characters)."""

    reason: str


class EraseRequest(RequestModel):
    """``POST /memories/{id}/erase``: a required ``reason`` (<= 500 characters,
    docs/reference.md#erasing-a-memory)."""

    reason: str


class VetoRequest(RequestModel):
    """``POST /memories/{id}/veto``: an optional note; the archive reason is ``vetoed``."""

    reason: str | None = None


class EmptyRequest(RequestModel):
    """A body that must be empty or ``{}`` (e.g. unarchive)."""


class RecallRequest(RequestModel):
    """``POST /memories/recall``: ``query?`` (default: the current task), ``agentId?``,
    ``count?`` (default true; false makes it a preview that counts and logs nothing,
    docs/reference.md#recall-preview), ``tags?`` / ``anyTags?`` (rank only the facts
    holding all / one of them, docs/reference.md#tags), ``meta?`` (rank only the facts
    whose metadata meets every condition, docs/reference.md#metadata-filters)."""

    query: str | None = None
    agent_id: str | None = None
    count: bool = True
    tags: SentTags | None = Field(
        default=None,
        description="Rank only facts holding every one of these tags (docs/reference.md#tags).",
    )
    any_tags: SentTags | None = Field(
        default=None,
        description="Rank only facts holding at least one of these tags.",
    )
    meta: SentMetaFilter | None = Field(default=None, description=META_FILTER_DESCRIPTION)
    as_of: str | None = Field(
        default=None,
        description="With `count: false` only: the block the agent would have been given at "
        "this RFC 3339 time by today's scorer, from its memories as they were then "
        "(docs/reference.md#as-of-a-moment).",
    )


def _digits_only(value: object) -> object:
    """Accept ``limit`` only as plain decimal digits from 1 ("10", not "0", "-1", "1_0",
    "+3" or " 5"); every refusal gets the same message.

    Any number of digits is a number: one too large to convert is over the cap
    anyway, so it becomes ``MAX_LIST_LIMIT`` (docs/reference.md#5-limits clamps, it does not
    refuse).
    """
    if isinstance(value, str):
        significant = value.lstrip("0")
        if not re.fullmatch(r"[0-9]+", value) or not significant:
            raise ValueError(
                "limit must be a whole number from 1, such as 20 (one larger than a page "
                "of the list holds is read as its largest)"
            )
        if len(significant) > len(str(MAX_LIST_LIMIT)):
            return MAX_LIST_LIMIT
    return value


Limit = Annotated[int, BeforeValidator(_digits_only), Field(ge=1)]


class Paging(BaseModel):
    """A paged list's ``limit`` and ``nextToken`` (docs/reference.md#5-limits,
    docs/reference.md#7-http-api): values arrive as strings.

    ``limit`` over 500 is clamped to 500; below 1 or not plain digits is invalid.
    Alone, it is the query string of a list that takes nothing else (a memory's
    history).
    """

    model_config = ConfigDict(
        defer_build=True, alias_generator=to_camel, populate_by_name=False, extra="forbid"
    )

    limit: Limit = DEFAULT_LIST_LIMIT
    next_token: str | None = None

    @field_validator("limit", mode="after")
    @classmethod
    def _clamp(cls, value: int) -> int:
        return min(value, MAX_LIST_LIMIT)


class PageQuery(Paging):
    """A paged list's query string with the agent it is about (``agentId``, a person's
    choice)."""

    agent_id: str | None = None


class ListQuery(PageQuery):
    """``GET /memories`` query string (docs/reference.md#7-http-api): also ``kind``, ``status``,
    ``all``.

    ``status`` filters; without it, ``all=true`` lists both states and the
    default lists active memories only.
    """

    kind: Literal["fact", "day"] | None = None
    status: Literal["active", "archived"] | None = None
    all: Literal["true", "false", "1", "0"] = "false"  # the spec's parameter name
    tag: str | None = Field(
        default=None,
        description="Only facts holding every one of these tags: comma-separated, or the "
        "parameter repeated; at most 10 tags with anyTag (docs/reference.md#tags).",
    )
    any_tag: str | None = Field(
        default=None,
        description="Only facts holding at least one of these tags (as tag).",
    )
    meta: list[str] | None = Field(
        default=None,
        description="A metadata condition, the parameter repeated for more (all must hold): "
        "`key:value`, `key:in:a|b|c` or `key:op:value` with op eq, in, gt, gte, lt, lte; at "
        "most 5 (docs/reference.md#metadata-filters).",
    )

    @property
    def include_archived(self) -> bool:
        """True when ``all`` asks for archived rows too."""
        return self.all in ("true", "1")


class RecallLogQuery(PageQuery):
    """``GET /recalls`` query string: ``agentId`` (a person's choice), ``limit``, ``nextToken``."""


class AgentQuery(BaseModel):
    """A query string naming only the agent a read is about (``agentId``: a person's
    choice; an agent reads its own), e.g. ``GET /recalls/{id}/block``."""

    model_config = ConfigDict(
        defer_build=True, alias_generator=to_camel, populate_by_name=False, extra="forbid"
    )

    agent_id: str | None = None
