"""Webhook signatures, the Standard Webhooks scheme (https://www.standardwebhooks.com,
docs/reference.md#webhook-signatures): HMAC-SHA256, keyed with the endpoint's secret's
bytes, over ``<webhook-id>.<webhook-timestamp>.<body>``, sent base64 as
``webhook-signature: v1,<signature>``. The scheme's own libraries (``standardwebhooks``
for Python, TypeScript and others) verify it, as does the Python client's
``pinework.webhooks.verify``."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from datetime import datetime

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32
"""Random bytes of a new secret (Standard Webhooks: 24 to 64)."""


def new_secret() -> str:
    """A new signing secret: ``whsec_`` and 32 random bytes in base64."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode("ascii")


def signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header's value for one message: ``v1,<base64>``.

    Args:
        secret: ``whsec_<base64 key>``.
        message_id: the ``webhook-id`` (the event id).
        timestamp: the ``webhook-timestamp`` (Unix seconds).
        body: the request body, exactly as sent.
    """
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def signed_headers(secret: str, message_id: str, at: datetime, body: bytes) -> dict[str, str]:
    """The headers of one signed delivery: ``webhook-id``, ``webhook-timestamp`` (``at``
    in Unix seconds), ``webhook-signature`` and the JSON content type."""
    timestamp = int(at.timestamp())
    return {
        "content-type": "application/json",
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature(secret, message_id, timestamp, body),
    }
