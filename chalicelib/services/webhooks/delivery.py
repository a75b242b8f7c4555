"""Delivering change events to webhook endpoints (docs/reference.md#webhook-deliveries,
docs/issues.md#issue-47): at least once, in order, one event at a time per endpoint.

Each run (a scheduled function every minute on AWS, a timer in the local server) takes
every endpoint in a random order, a few at a time, and for each one that is active and
due: claims it for ``LEASE`` (a conditional write, so two runs never send to one endpoint
at once), reads the workspace's change events after the endpoint's cursor, skips the
types it did not ask for, and sends the rest in order, advancing the cursor by a
conditional write after each success. At its first failure it stops, counts the attempt
and sets the next one after an exponential backoff (``backoff``: 30 s doubling, at most
1 hour); an endpoint failing for more than ``RETRY_FOR`` (24 hours) is paused until a
person resumes it. An endpoint gets at most ``ENDPOINT_BUDGET_SECONDS`` of a run, and
the run starts no endpoint after ``RUN_BUDGET_SECONDS``: a slow receiver delays only its
own deliveries.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from chalicelib.errors import WebhookUrlRefused
from chalicelib.ids import Clock, IdFactory, from_rfc3339, to_rfc3339
from chalicelib.models.webhook import ALL_EVENT_TYPES, DELIVERY_PREFIX
from chalicelib.services.events import EventFeed
from chalicelib.services.webhooks.signing import signed_headers
from chalicelib.services.webhooks.urls import Resolver, Target, resolve_target

RETRY_FOR = timedelta(hours=24)
"""How long an endpoint keeps being retried before it is paused."""
FIRST_RETRY = timedelta(seconds=30)
MAX_RETRY = timedelta(hours=1)
LEASE = timedelta(seconds=90)
"""How long a run holds an endpoint (longer than it may spend on one)."""
ENDPOINT_BUDGET_SECONDS = 20.0
"""The most of one run spent on one endpoint (then the next run goes on)."""
RUN_BUDGET_SECONDS = 40.0
"""A run starts no endpoint after this (its function has 60 s)."""
RUN_WORKERS = 8
"""Endpoints served at the same time in one run."""
EVENT_PAGE = 50
DELIVERY_KEPT_DAYS = 7
"""How long a delivery attempt's record is kept (``GET /webhooks/{id}/deliveries``)."""


@dataclass(frozen=True)
class SendResult:
    """One attempt's outcome: the answer's status (None: no answer), its duration in
    milliseconds, and why it failed (None: a 2xx answer)."""

    status_code: int | None
    duration_ms: int
    error: str | None

    @property
    def ok(self) -> bool:
        """A 2xx answer."""
        return self.error is None


class Sender(Protocol):
    """Sends one delivery (``storage/webhook_http.py``)."""

    def send(self, target: Target, headers: dict[str, str], body: bytes) -> SendResult:
        """POST ``body`` with ``headers`` to the target's checked address."""
        ...


class WebhookStore(Protocol):
    """The endpoints and deliveries (``storage/webhooks.py``)."""

    def get(self, workspace_id: str, webhook_id: str) -> dict[str, Any] | None:
        """One endpoint, or None."""
        ...

    def update(
        self, workspace_id: str, webhook_id: str, version: int, changes: dict[str, Any]
    ) -> bool:
        """Change an endpoint still at ``version``; False when it changed meanwhile."""
        ...

    def every_endpoint(self) -> Iterator[tuple[str, str]]:
        """(workspace id, endpoint id) of every endpoint."""
        ...

    def record_delivery(self, workspace_id: str, delivery: dict[str, Any], expires: int) -> None:
        """Keep one delivery attempt until ``expires`` (epoch seconds)."""
        ...


def backoff(failed_attempts: int) -> timedelta:
    """The wait after the ``failed_attempts``-th failure in a row: 30 s, 1 min, 2 min …,
    at most 1 hour."""
    exponent = min(max(failed_attempts - 1, 0), 20)
    wait: timedelta = FIRST_RETRY * (2**exponent)
    return min(wait, MAX_RETRY)


def wanted(endpoint: dict[str, Any], event_type: str) -> bool:
    """Whether the endpoint asked for events of this type."""
    types = list(endpoint.get("eventTypes") or [ALL_EVENT_TYPES])
    return ALL_EVENT_TYPES in types or event_type in types


def body_of(event: dict[str, Any]) -> bytes:
    """A delivery's body: the event as compact JSON (UTF-8)."""
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class Attempts:
    """Sends one event to one endpoint and keeps the attempt's record.

    Args:
        store: where deliveries are kept.
        sender: the HTTP side.
        resolver: host name -> addresses (checked again at every attempt).
        clock: the time of each attempt.
        ids: delivery ids.
        allow_loopback: ``PINEWORK_WEBHOOKS_ALLOW_LOOPBACK`` (local development only).
    """

    def __init__(
        self,
        store: WebhookStore,
        sender: Sender,
        resolver: Resolver,
        clock: Clock,
        ids: IdFactory,
        *,
        allow_loopback: bool,
    ) -> None:
        self._store = store
        self._sender = sender
        self.resolver = resolver
        self._clock = clock
        self._ids = ids
        self.allow_loopback = allow_loopback

    def send(self, endpoint: dict[str, Any], event: dict[str, Any], attempt: int) -> dict[str, Any]:
        """Check the URL again (after resolving it), sign and send ``event``, and record
        the attempt (``attempt``: its number for this event). Returns the delivery record
        (``ok``, ``statusCode``, ``durationMs``, ``error`` …)."""
        at = self._clock.now()
        try:
            target = resolve_target(
                str(endpoint["url"]), self.resolver, allow_loopback=self.allow_loopback
            )
        except WebhookUrlRefused as refused:
            result = SendResult(None, 0, f"refused: {refused.message}"[:200])
        else:
            body = body_of(event)
            headers = signed_headers(str(endpoint["secret"]), str(event["id"]), at, body)
            result = self._sender.send(target, headers, body)
        delivery = {
            "id": self._ids.new(DELIVERY_PREFIX.rstrip("_")),
            "webhookId": endpoint["id"],
            "eventId": event["id"],
            "eventType": event["type"],
            "attempt": attempt,
            "at": to_rfc3339(at),
            "ok": result.ok,
            "statusCode": result.status_code,
            "durationMs": result.duration_ms,
            "error": result.error,
        }
        expires = int((at + timedelta(days=DELIVERY_KEPT_DAYS)).timestamp()) + 1
        self._store.record_delivery(str(endpoint["workspaceId"]), delivery, expires)
        return delivery


class WebhookDelivery:
    """The delivery worker (see the module's docstring).

    Args:
        store: the endpoints.
        feed: the workspace's change events (``storage/events.py``).
        attempts: sends and records one attempt.
        clock: the current time.
        workers: endpoints served at the same time (at most ``RUN_WORKERS``).
        monotonic: seconds for budgets (``time.monotonic``).
    """

    def __init__(
        self,
        store: WebhookStore,
        feed: EventFeed,
        attempts: Attempts,
        clock: Clock,
        *,
        workers: int = RUN_WORKERS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._workers = max(1, min(workers, RUN_WORKERS))
        self._store = store
        self._feed = feed
        self._attempts = attempts
        self._clock = clock
        self._monotonic = monotonic

    def run(self, budget_seconds: float = RUN_BUDGET_SECONDS) -> dict[str, int]:
        """One run over every endpoint. Returns counts: ``endpoints`` listed,
        ``delivered`` events, ``failed`` attempts, ``paused`` endpoints this run."""
        entries = list(self._store.every_endpoint())
        random.shuffle(entries)  # no workspace always last
        deadline = self._monotonic() + budget_seconds
        totals = {"endpoints": len(entries), "delivered": 0, "failed": 0, "paused": 0}
        with ThreadPoolExecutor(max_workers=self._workers) as pool:
            for counts in pool.map(
                lambda entry: self.endpoint(entry[0], entry[1], deadline), entries
            ):
                for name, number in counts.items():
                    totals[name] += number
        return totals

    def endpoint(self, workspace_id: str, webhook_id: str, deadline: float) -> dict[str, int]:
        """Deliver what is due to one endpoint, within its budget and before
        ``deadline`` (a ``monotonic`` time). Returns ``delivered``, ``failed``,
        ``paused`` counts."""
        counts = {"delivered": 0, "failed": 0, "paused": 0}
        if self._monotonic() >= deadline:
            return counts
        now = self._clock.now()
        endpoint = self._store.get(workspace_id, webhook_id)
        if endpoint is None or endpoint.get("state") != "active" or _later(endpoint, now):
            return counts
        version = int(endpoint["version"])
        lease = {"leaseUntil": to_rfc3339(now + LEASE)}
        if not self._store.update(workspace_id, webhook_id, version, lease):
            return counts
        self._deliver(endpoint, version + 1, deadline, counts)
        return counts

    def _deliver(
        self, endpoint: dict[str, Any], version: int, deadline: float, counts: dict[str, int]
    ) -> None:
        """Send a claimed endpoint's due events in order (``version``: its version after
        the claim), adding to ``counts``; at the end the cursor is saved and the claim
        let go (a failure does both in ``_failed``)."""
        workspace_id, webhook_id = str(endpoint["workspaceId"]), str(endpoint["id"])
        stop_at = min(self._monotonic() + ENDPOINT_BUDGET_SECONDS, deadline)
        cursor = endpoint.get("cursor")
        while self._monotonic() < stop_at:
            events, more = self._feed.page(
                workspace_id=workspace_id,
                agent_id=None,
                after=cursor,
                limit=EVENT_PAGE,
                now=self._clock.now(),
            )
            for event in events:
                if not wanted(endpoint, str(event["type"])):
                    cursor = str(event["id"])
                    continue
                attempt = int(endpoint.get("failedAttempts") or 0) + 1
                delivery = self._attempts.send(endpoint, event, attempt)
                if not delivery["ok"]:
                    counts["failed"] += 1
                    counts["paused"] += self._failed(endpoint, version, cursor, delivery)
                    return
                cursor = str(event["id"])
                changes = _recovered(cursor)
                if not self._store.update(workspace_id, webhook_id, version, changes):
                    return  # deleted or changed by a person meanwhile
                version += 1
                endpoint = {**endpoint, **changes}
                counts["delivered"] += 1
                if self._monotonic() >= stop_at:
                    break
            if not events or not more:
                break
        self._store.update(
            workspace_id, webhook_id, version, {"cursor": cursor, "leaseUntil": None}
        )

    def _failed(
        self, endpoint: dict[str, Any], version: int, cursor: Any, delivery: dict[str, Any]
    ) -> int:
        """Count a failed attempt: the next one after ``backoff``, or pause the endpoint
        once it has failed for more than ``RETRY_FOR``. Returns 1 when it paused it."""
        now = self._clock.now()
        since_text = endpoint.get("failingSince")
        since = from_rfc3339(str(since_text)) if since_text else now
        failed = int(endpoint.get("failedAttempts") or 0) + 1
        changes: dict[str, Any] = {
            "cursor": cursor,
            "leaseUntil": None,
            "failingSince": to_rfc3339(since),
            "failedAttempts": failed,
            "nextAttemptAt": to_rfc3339(now + backoff(failed)),
            "lastError": delivery["error"],
        }
        paused = now - since > RETRY_FOR
        if paused:
            changes.update(state="paused", pausedAt=to_rfc3339(now), nextAttemptAt=None)
        self._store.update(str(endpoint["workspaceId"]), str(endpoint["id"]), version, changes)
        return int(paused)


def _later(endpoint: dict[str, Any], now: datetime) -> bool:
    """The endpoint waits: its next attempt or another run's lease is still ahead."""
    for name in ("nextAttemptAt", "leaseUntil"):
        value = endpoint.get(name)
        if value and from_rfc3339(str(value)) > now:
            return True
    return False


def _recovered(cursor: str) -> dict[str, Any]:
    """An endpoint's changes after a success: the cursor moves, the failures are over."""
    return {
        "cursor": cursor,
        "failingSince": None,
        "failedAttempts": 0,
        "nextAttemptAt": None,
        "lastError": None,
    }
