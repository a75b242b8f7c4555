"""Webhook endpoints of a workspace (docs/reference.md#webhooks, docs/issues.md#issue-47):
persons register, list, remove, test and resume them; agents may not (an endpoint sees
every change of the workspace)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Protocol

from chalicelib.errors import Conflict, InvalidRequest, WebhookNotFound
from chalicelib.ids import Clock, IdFactory, to_rfc3339, ulid_floor
from chalicelib.models.principal import Principal
from chalicelib.models.webhook import (
    ALL_EVENT_TYPES,
    WEBHOOK_PREFIX,
    CreateWebhookRequest,
    DeliveryObject,
    WebhookObject,
)
from chalicelib.services.access.who import refuse_agents
from chalicelib.services.webhooks.delivery import Attempts, WebhookStore
from chalicelib.services.webhooks.signing import new_secret
from chalicelib.services.webhooks.urls import resolve_target

MAX_WEBHOOKS = 10
"""Endpoints a workspace may have (``webhook_limit_reached`` past it)."""
MAX_DELIVERIES_SHOWN = 100
WEBHOOKS_ARE_FOR_PERSONS = (
    "Webhook endpoints receive every change of the workspace: a person registers and "
    "manages them (an agent reads its own events with GET /api/v1/events)."
)
PING = "pinework.webhook.ping"
"""The type of the test event ``POST /webhooks/{id}/test`` sends."""
EVENT_PREFIX = "evt_"
_ID_SHAPE = len(WEBHOOK_PREFIX) + 26


class WebhookRegistry(WebhookStore, Protocol):
    """The endpoints' writes and reads beyond the worker's (``storage/webhooks.py``)."""

    def create(self, endpoint: dict[str, Any], max_endpoints: int) -> None:
        """Write a new endpoint and count it (``WebhookLimitReached`` past the limit)."""
        ...

    def endpoints(self, workspace_id: str) -> list[dict[str, Any]]:
        """Every endpoint of the workspace, oldest first."""
        ...

    def delete(self, workspace_id: str, webhook_id: str) -> bool:
        """Delete an endpoint; False when it was not there."""
        ...

    def deliveries(
        self, workspace_id: str, webhook_id: str, limit: int, now_epoch: int
    ) -> list[dict[str, Any]]:
        """Recent deliveries of an endpoint, newest first."""
        ...


def webhook_object(item: dict[str, Any], *, secret: bool = False) -> WebhookObject:
    """An endpoint item as the API shows it (the secret only when ``secret``)."""
    return WebhookObject(
        id=str(item["id"]),
        url=str(item["url"]),
        event_types=[str(kind) for kind in item["eventTypes"]],
        description=str(item.get("description") or ""),
        state=item["state"],
        created_at=str(item["createdAt"]),
        created_by=str(item["createdBy"]),
        cursor=item.get("cursor"),
        failing_since=item.get("failingSince"),
        failed_attempts=int(item.get("failedAttempts") or 0),
        next_attempt_at=item.get("nextAttemptAt"),
        last_error=item.get("lastError"),
        paused_at=item.get("pausedAt"),
        secret=str(item["secret"]) if secret else None,
    )


def delivery_object(item: dict[str, Any]) -> DeliveryObject:
    """A delivery record as the API shows it."""
    status = item.get("statusCode")
    return DeliveryObject(
        id=str(item["id"]),
        webhook_id=str(item["webhookId"]),
        event_id=str(item["eventId"]),
        event_type=str(item["eventType"]),
        attempt=int(item["attempt"]),
        at=str(item["at"]),
        ok=bool(item["ok"]),
        status_code=None if status is None else int(status),
        duration_ms=int(item["durationMs"]),
        error=item.get("error"),
    )


class WebhookService:
    """Persons' webhook routes.

    Args:
        store: the endpoints.
        attempts: sends a test event (and checks URLs with its resolver and setting).
        known_types: every event type the outbox writes (``storage/events.py``).
        clock: the current time.
        ids: endpoint and event ids.
    """

    def __init__(
        self,
        store: WebhookRegistry,
        attempts: Attempts,
        known_types: frozenset[str],
        clock: Clock,
        ids: IdFactory,
    ) -> None:
        self._store = store
        self._attempts = attempts
        self._known = known_types
        self._clock = clock
        self._ids = ids

    def create(self, principal: Principal, request: CreateWebhookRequest) -> WebhookObject:
        """Register an endpoint; its answer holds the signing secret, shown this once.
        Events from now on are delivered (none from before).

        Raises:
            Forbidden: an agent asked.
            WebhookUrlRefused: the URL is not ``https://`` or resolves to a non-public
                address (docs/reference.md#webhook-urls).
            InvalidRequest: an unknown event type.
            WebhookLimitReached: the workspace has ``MAX_WEBHOOKS`` endpoints.
        """
        refuse_agents(principal, WEBHOOKS_ARE_FOR_PERSONS)
        types = list(dict.fromkeys(request.event_types))
        unknown = [kind for kind in types if kind != ALL_EVENT_TYPES and kind not in self._known]
        if unknown:
            raise InvalidRequest(
                f"Unknown event type {unknown[0]!r}: send types such as "
                f'{sorted(self._known)[0]!r}, or ["*"] for all (docs/reference.md#change-events).'
            )
        if ALL_EVENT_TYPES in types:
            types = [ALL_EVENT_TYPES]
        resolve_target(
            request.url, self._attempts.resolver, allow_loopback=self._attempts.allow_loopback
        )
        now = self._clock.now()
        item = {
            "id": self._ids.new(WEBHOOK_PREFIX.rstrip("_")),
            "workspaceId": principal.workspace_id,
            "url": request.url,
            "eventTypes": types,
            "description": request.description,
            "secret": new_secret(),
            "state": "active",
            "createdAt": to_rfc3339(now),
            "createdBy": principal.id,
            # events from the registration on: the feed's position at this moment
            "cursor": EVENT_PREFIX + ulid_floor(now - timedelta(milliseconds=1)),
            "failingSince": None,
            "failedAttempts": 0,
            "nextAttemptAt": None,
            "lastError": None,
            "pausedAt": None,
            "leaseUntil": None,
            "version": 1,
        }
        self._store.create(item, MAX_WEBHOOKS)
        return webhook_object(item, secret=True)

    def list_endpoints(self, principal: Principal) -> list[WebhookObject]:
        """The workspace's endpoints, oldest first, without secrets.

        Raises:
            Forbidden: an agent asked.
        """
        refuse_agents(principal, WEBHOOKS_ARE_FOR_PERSONS)
        return [webhook_object(item) for item in self._store.endpoints(principal.workspace_id)]

    def get(self, principal: Principal, webhook_id: str) -> dict[str, Any]:
        """One endpoint's item of the caller's workspace.

        Raises:
            Forbidden: an agent asked.
            WebhookNotFound: none with that id (or a malformed id).
        """
        refuse_agents(principal, WEBHOOKS_ARE_FOR_PERSONS)
        item = None
        if webhook_id.startswith(WEBHOOK_PREFIX) and len(webhook_id) == _ID_SHAPE:
            item = self._store.get(principal.workspace_id, webhook_id)
        if item is None:
            raise WebhookNotFound(f"No webhook endpoint {webhook_id} in this workspace.")
        return item

    def delete(self, principal: Principal, webhook_id: str) -> WebhookObject:
        """Remove an endpoint: nothing more is sent to it. Returns it as it was.

        Raises:
            Forbidden, WebhookNotFound: as ``get``.
        """
        item = self.get(principal, webhook_id)
        if not self._store.delete(principal.workspace_id, webhook_id):
            raise WebhookNotFound(f"No webhook endpoint {webhook_id} in this workspace.")
        return webhook_object(item)

    def resume(self, principal: Principal, webhook_id: str) -> WebhookObject:
        """Resume a paused endpoint: delivery starts again at its cursor (the event it
        failed on) with the next run; an active one is returned as it is.

        Raises:
            Forbidden, WebhookNotFound: as ``get``.
            Conflict: it changed meanwhile (read it again).
        """
        item = self.get(principal, webhook_id)
        if item["state"] == "active":
            return webhook_object(item)
        changes = {
            "state": "active",
            "pausedAt": None,
            "failingSince": None,
            "failedAttempts": 0,
            "nextAttemptAt": None,
            "leaseUntil": None,
        }
        if not self._store.update(
            principal.workspace_id, webhook_id, int(item["version"]), changes
        ):
            raise Conflict("The webhook endpoint changed meanwhile: read it again.")
        return webhook_object({**item, **changes})

    def test(self, principal: Principal, webhook_id: str) -> DeliveryObject:
        """Send a ``pinework.webhook.ping`` event to the endpoint now (signed as any
        delivery, the URL checked again) and return the attempt; the endpoint's cursor
        and state do not change.

        Raises:
            Forbidden, WebhookNotFound: as ``get``.
        """
        item = self.get(principal, webhook_id)
        now = self._clock.now()
        event = {
            "specversion": "1.0",
            "id": self._ids.new(EVENT_PREFIX.rstrip("_")),
            "source": f"/workspaces/{principal.workspace_id}",
            "type": PING,
            "time": to_rfc3339(now),
            "subject": webhook_id,
            "datacontenttype": "application/json",
            "workspace": principal.workspace_id,
            "data": {"object": "webhook", "id": webhook_id, "actorId": principal.id},
        }
        return delivery_object(self._attempts.send(item, event, 1))

    def deliveries(self, principal: Principal, webhook_id: str) -> list[DeliveryObject]:
        """The endpoint's recent delivery attempts, newest first (kept 7 days, at most
        ``MAX_DELIVERIES_SHOWN``).

        Raises:
            Forbidden, WebhookNotFound: as ``get``.
        """
        self.get(principal, webhook_id)
        now_epoch = int(self._clock.now().timestamp())
        found = self._store.deliveries(
            principal.workspace_id, webhook_id, MAX_DELIVERIES_SHOWN, now_epoch
        )
        return [delivery_object(item) for item in found]
