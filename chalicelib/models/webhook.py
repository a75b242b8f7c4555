"""Webhook endpoints on the wire (docs/reference.md#webhooks, docs/issues.md#issue-47): a
person registers an HTTPS URL of the workspace to receive its change events, signed the
Standard Webhooks way; the signing secret is shown once, in the registration's answer."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from chalicelib.models.common import RequestModel
from chalicelib.models.responses import ResponseModel, WireTime

WEBHOOK_PREFIX = "whk_"
"""An endpoint id: ``whk_`` and a ULID."""
DELIVERY_PREFIX = "dlv_"
"""A delivery attempt's id: ``dlv_`` and a ULID."""
WEBHOOK_URL_MAX_CHARS = 2048
WEBHOOK_DESCRIPTION_MAX_CHARS = 200
WEBHOOK_EVENT_TYPES_MAX = 50
ALL_EVENT_TYPES = "*"
"""The one entry of ``eventTypes`` that means every type, new ones included."""
WebhookState = Literal["active", "paused"]


class CreateWebhookRequest(RequestModel):
    """``POST /webhooks``: the receiver's URL (``https://``; checked by the service),
    the event types to send (``["*"]``, the default: all) and a person's note."""

    url: str = Field(min_length=1, max_length=WEBHOOK_URL_MAX_CHARS)
    event_types: list[str] = Field(
        default_factory=lambda: [ALL_EVENT_TYPES],
        min_length=1,
        max_length=WEBHOOK_EVENT_TYPES_MAX,
        description='Event types (`pinework.memory.saved` …), or `["*"]` for all.',
    )
    description: str = Field(default="", max_length=WEBHOOK_DESCRIPTION_MAX_CHARS)


class WebhookObject(ResponseModel):
    """An endpoint. ``secret`` is only in the registration's answer (null elsewhere);
    ``cursor`` is the last event delivered (or skipped by type); ``state`` is ``paused``
    after failing for more than 24 hours (``pausedAt``), until a person resumes it."""

    id: str = Field(description="`whk_` + a ULID.")
    object: Literal["webhook"] = "webhook"
    url: str
    event_types: list[str]
    description: str
    state: WebhookState
    created_at: WireTime
    created_by: str
    cursor: str | None
    failing_since: WireTime | None
    failed_attempts: int
    next_attempt_at: WireTime | None
    last_error: str | None
    paused_at: WireTime | None
    secret: str | None = Field(
        default=None, description="`whsec_…`: shown once, when the endpoint is registered."
    )


class WebhookList(ResponseModel):
    """``GET /webhooks``: the workspace's endpoints, oldest first (never their secrets)."""

    object: Literal["list"] = "list"
    data: list[WebhookObject]


class DeliveryObject(ResponseModel):
    """One delivery attempt: the event, the answer's status (null when none came), how
    long it took, the attempt's number for that event, and the error when it failed."""

    id: str = Field(description="`dlv_` + a ULID.")
    object: Literal["delivery"] = "delivery"
    webhook_id: str
    event_id: str
    event_type: str
    attempt: int
    at: WireTime
    ok: bool
    status_code: int | None
    duration_ms: int
    error: str | None


class DeliveryList(ResponseModel):
    """``GET /webhooks/{id}/deliveries``: recent attempts, newest first (kept 7 days)."""

    object: Literal["list"] = "list"
    data: list[DeliveryObject]
