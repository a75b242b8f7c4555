"""Opaque ``nextToken`` values of every list (docs/reference.md#5-limits: ``limit``,
``nextToken``)."""

from __future__ import annotations

import base64
import binascii
import re

from chalicelib.errors import InvalidRequest
from chalicelib.ids import ULID_PATTERN


def encode_next_token(memory_id: str | None) -> str | None:
    """Make the opaque ``nextToken`` that continues a list after ``memory_id``."""
    if memory_id is None:
        return None
    return base64.urlsafe_b64encode(memory_id.encode()).decode().rstrip("=")


def decode_next_token(
    token: str | None, prefix: str = "mem", pattern: str | None = None
) -> str | None:
    """Read a ``nextToken`` that must continue after a ``<prefix>_`` id (or, with
    ``pattern``, after a position matching that regular expression).

    Raises:
        InvalidRequest: the token was not made by ``encode_next_token``.
    """
    if token is None:
        return None
    try:
        memory_id = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError) as error:
        raise InvalidRequest("nextToken is not valid; pass the one a list returned.") from error
    if not re.fullmatch(pattern or rf"{prefix}_{ULID_PATTERN}", memory_id):
        raise InvalidRequest("nextToken is not valid; pass the one a list returned.")
    return memory_id
