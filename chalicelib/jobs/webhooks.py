"""The webhook delivery run (docs/reference.md#webhook-deliveries): every minute on AWS
(``app.py``'s ``webhook_delivery`` schedule), on a timer in the local server. One
``webhooks`` log line per run with its counts and time, never an event's content."""

from __future__ import annotations

import logging
import time
from typing import Any

from chalicelib.wiring import Services

_log = logging.getLogger("pinework.webhooks")


def deliver_webhooks(wired: Services) -> dict[str, Any]:
    """One delivery run over every endpoint. Returns its counts (``endpoints``,
    ``delivered``, ``failed``, ``paused``) and ``ms``."""
    started = time.monotonic()
    counts: dict[str, Any] = dict(wired.webhook_delivery.run())
    counts["ms"] = round((time.monotonic() - started) * 1000)
    _log.info("webhooks %s", counts)
    return counts
