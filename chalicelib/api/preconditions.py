"""``ETag`` and ``If-Match`` on memories (docs/reference.md#6-errors,
docs/reference.md#14-operations; docs/issues.md#issue-15): no lost edits.

Every answer that is one memory carries ``ETag: "<memory id>.v<version>"``, a strong
entity tag naming the memory's stored version (it changes with every change to the
memory: text, expiry, status, supersede links, a day line). The read-time fields
``expired``, ``recallCount`` and ``lastRecalledAt`` can change under the same tag,
so the tag is for ``If-Match`` on changes, not for caching (no ``If-None-Match``).

``If-Match`` on ``PATCH``, archive, veto and unarchive: ``*``, or one or more tags
(comma-separated; a ``W/`` that a compressing proxy added is ignored). The change
goes ahead only if the memory is at a version one of them names; otherwise 412
``precondition_failed`` and nothing changes. Without the header nothing is checked.
"""

from __future__ import annotations

import re
from typing import Any

from chalicelib.errors import InvalidRequest
from chalicelib.models.learning import Learning
from chalicelib.models.memory import Memory
from chalicelib.models.page import Page

IF_MATCH_MAX_CHARS = 1024
"""The longest ``If-Match`` header read (a handful of tags)."""

_ENTITY_TAG = re.compile(r'\s*(?:W/)?"([\x21\x23-\x7e]*)"\s*(?:,|$)')
"""One entity tag of a list (RFC 9110 §8.8.3), with its separator."""
_VERSION_TAG = re.compile(
    r"(?P<memory>(?:mem|lrn|pag)_[0-9A-Za-z]+)\.v(?P<version>[1-9][0-9]{0,17})"
)
"""The opaque part of a memory's (or a learning's, or a wiki page's) tag: ``<id>.v<version>``."""


def etag(memory: Memory | Learning | Page) -> str:
    """The ``ETag`` header value of a memory or a learning (docs/reference.md#15-learnings):
    ``"<id>.v<version>"`` (strong, quoted)."""
    return f'"{memory.id}.v{memory.version}"'


def etag_header(memory: Memory | Learning | Page) -> dict[str, str]:
    """The headers a memory answer carries: ``{"ETag": …}``."""
    return {"ETag": etag(memory)}


def expected_versions(request: Any, memory_id: str) -> frozenset[int] | None:
    """The versions of ``memory_id`` the request's ``If-Match`` accepts.

    Args:
        request: the Chalice request.
        memory_id: the memory the route changes.

    Returns:
        ``None`` without ``If-Match`` or with ``*`` (no check); otherwise the
        versions its tags name for this memory, which may be empty (tags of other
        memories or other servers match nothing: 412).

    Raises:
        InvalidRequest: the header is not ``*`` or a list of quoted entity tags.
    """
    header = request.headers.get("if-match")
    if header is None:
        return None
    value = header.strip()
    if value == "*":
        return None
    tags = parse_entity_tags(value)
    versions = set()
    for tag in tags:
        parsed = _VERSION_TAG.fullmatch(tag)
        if parsed is not None and parsed["memory"] == memory_id:
            versions.add(int(parsed["version"]))
    return frozenset(versions)


def parse_entity_tags(value: str) -> list[str]:
    """The opaque parts of a comma-separated list of entity tags (``"a", W/"b"``).

    Raises:
        InvalidRequest: empty, too long, or not a list of quoted entity tags.
    """
    problem = InvalidRequest(
        'If-Match must be "*" or the ETag of the memory as received, such as '
        '"mem_01JD….v3" (quotes included).'
    )
    if not value or len(value) > IF_MATCH_MAX_CHARS:
        raise problem
    tags, position = [], 0
    while position < len(value):
        found = _ENTITY_TAG.match(value, position)
        if found is None or found.end() == position:
            raise problem
        tags.append(found[1])
        position = found.end()
    return tags
