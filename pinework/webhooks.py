"""Verifying a Pinework webhook delivery in a receiver (docs/reference.md#webhook-signatures):
the Standard Webhooks scheme, HMAC-SHA256 keyed with the secret's bytes over
``<webhook-id>.<webhook-timestamp>.<body>``, sent as ``webhook-signature: v1,<base64>``.

    from pinework.webhooks import verify
    event = verify(request_body_bytes, request_headers, secret="whsec_…")

The ``standardwebhooks`` package verifies the same headers."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

TOLERANCE_SECONDS = 300
"""How far a delivery's timestamp may be from now (replayed old deliveries fail)."""


class WebhookVerificationError(ValueError):
    """A delivery failed verification: headers missing, timestamp too old or too new,
    or no signature matching the body."""


def verify(
    body: bytes,
    headers: Mapping[str, str],
    secret: str,
    *,
    tolerance_seconds: int = TOLERANCE_SECONDS,
    now: float | None = None,
) -> dict[str, Any]:
    """Check a delivery's signature and age; return its event (the parsed body).

    Args:
        body: the request body, exactly as received (bytes, before any JSON parsing).
        headers: the request headers (any case).
        secret: the endpoint's ``whsec_…`` secret from its registration.
        tolerance_seconds: the largest allowed distance of ``webhook-timestamp`` from now.
        now: the current Unix time (seconds); the system clock when omitted.

    Raises:
        WebhookVerificationError: what failed.
    """
    found = {name.lower(): value for name, value in headers.items()}
    try:
        message_id = found["webhook-id"]
        timestamp = int(found["webhook-timestamp"])
        signatures = found["webhook-signature"]
    except (KeyError, ValueError) as error:
        raise WebhookVerificationError("missing or malformed webhook-* headers") from error
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance_seconds:
        raise WebhookVerificationError("the delivery's timestamp is too old or too new")
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{message_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    for candidate in signatures.split():
        version, _, value = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(value, expected):
            parsed: dict[str, Any] = json.loads(body)
            return parsed
    raise WebhookVerificationError("no signature matches the body")
