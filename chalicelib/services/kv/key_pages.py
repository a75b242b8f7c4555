"""Pages of a key-value scope's keys: ``recall {}`` (docs/reference.md#kv-listing).

A page holds at most ``limit`` keys (100 by default, 1,000 at most) and 1 MiB of
them as JSON; ``next`` is an opaque cursor that continues after the page's last key,
null on the last page. ``count`` is the scope's key count from its usage item, so
no listing reads the whole scope. Choices:
docs/DECISIONS.md#key-value-quotas-bounded-listings-and-batches-issue-21-item-2
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from chalicelib.errors import InvalidRequest
from chalicelib.limits import (
    KEY_MAX_BYTES,
    KV_PAGE_DEFAULT_KEYS,
    KV_PAGE_MAX_BYTES,
    KV_PAGE_MAX_KEYS,
)
from chalicelib.storage.protocols import KvRepository

_CURSOR_PREFIX = "k:"
"""What a decoded cursor starts with (the rest is the key to continue after)."""
_BAD_CURSOR = "cursor is not valid; pass the `next` of the previous recall {} page."


@dataclass(frozen=True)
class KeyList:
    """``recall {}`` answer: ``{keys, count}``, plus ``next`` (the cursor) and
    ``truncated: true`` only while more keys follow.

    Attributes:
        keys: this page's keys, in key order.
        count: every live key of the scope (its usage item's count).
        next_cursor: the cursor of the next page, None on the last.
    """

    keys: list[str]
    count: int
    next_cursor: str | None = None

    def to_wire(self) -> dict[str, Any]:
        """The JSON body (docs/reference.md#10-key-value)."""
        body: dict[str, Any] = {"keys": self.keys, "count": self.count}
        if self.next_cursor is not None:  # the seed's exact {keys, count} on the last page
            body["next"] = self.next_cursor
            body["truncated"] = True
        return body


def encode_cursor(key: str) -> str:
    """The opaque cursor that continues a listing after ``key``."""
    return base64.urlsafe_b64encode((_CURSOR_PREFIX + key).encode("utf-8")).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> str | None:
    """The key a cursor continues after (None: from the first key).

    Raises:
        InvalidRequest: the cursor was not made by ``encode_cursor``.
    """
    if cursor is None:
        return None
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("utf-8")
    except (binascii.Error, UnicodeError, ValueError) as error:
        raise InvalidRequest(_BAD_CURSOR) from error
    key = text.removeprefix(_CURSOR_PREFIX)
    if key == text or not 1 <= len(key.encode("utf-8")) <= KEY_MAX_BYTES:
        raise InvalidRequest(_BAD_CURSOR)
    if encode_cursor(key) != cursor:
        raise InvalidRequest(_BAD_CURSOR)  # the one spelling encode_cursor makes
    return key


def page_size(limit: int | None) -> int:
    """Keys in a page: ``limit`` lowered to 1,000, 100 when not given.

    Raises:
        InvalidRequest: a ``limit`` under 1.
    """
    if limit is None:
        return KV_PAGE_DEFAULT_KEYS
    if limit < 1:
        raise InvalidRequest("limit must be at least 1.")
    return min(limit, KV_PAGE_MAX_KEYS)


def page_of_keys(
    entries: KvRepository, scope: str, now: float, cursor: str | None, limit: int | None
) -> KeyList:
    """One page of ``scope``'s live keys after ``cursor`` (docs/reference.md#kv-listing).

    Raises:
        InvalidRequest: a bad cursor or a ``limit`` under 1.
    """
    after = decode_cursor(cursor)
    size = page_size(limit)
    found = entries.keys(scope, now=now, after=after, limit=size + 1)
    shown: list[str] = []
    used = 2  # the brackets
    for key in found[:size]:
        used += len(json.dumps(key, ensure_ascii=False).encode("utf-8")) + 1
        if used > KV_PAGE_MAX_BYTES:
            break
        shown.append(key)
    more = len(found) > len(shown)
    count = entries.usage(scope, now=now).key_count
    return KeyList(
        keys=shown,
        count=count,
        next_cursor=encode_cursor(shown[-1]) if more and shown else None,
    )
