"""The API heartbeat (docs/operations.md#api-heartbeat): EventBridge runs this every 5
minutes; it GETs the stage's OpenAPI document and publishes Heartbeat (1: answered 200
with the document, 0: did not) to the stage's namespace. ApiHeartbeatAlarm treats no
data as breaching, so an outage alarms with no traffic. Both deploy paths inline this
file as the code (infra/observability.py): stdlib and boto3, under 4,096 bytes."""

from __future__ import annotations

import http.client
import json
import os
import urllib.request
from typing import Any

import boto3

METRIC = "Heartbeat"
SERVICE = "pinework"
TIMEOUT_SECONDS = 10


def check(url: str, timeout: float = TIMEOUT_SECONDS) -> bool:
    """Whether GET ``url`` answers 200 with an OpenAPI document within ``timeout``
    seconds (any other status, a timeout or a refused connection: False)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:
            body = json.loads(answer.read())
            return answer.status == 200 and isinstance(body, dict) and "openapi" in body
    except (OSError, ValueError, http.client.HTTPException):
        return False


def publish(cloudwatch: Any, namespace: str, ok: bool) -> None:
    """Put one Heartbeat datapoint (1 or 0, dimension service) into ``namespace``."""
    cloudwatch.put_metric_data(
        Namespace=namespace,
        MetricData=[
            {
                "MetricName": METRIC,
                "Dimensions": [{"Name": "service", "Value": SERVICE}],
                "Value": 1.0 if ok else 0.0,
                "Unit": "Count",
            }
        ],
    )


def handler(event: Any, context: Any) -> dict[str, Any]:
    """The Lambda entry: check PINEWORK_HEARTBEAT_URL, publish to
    PINEWORK_METRICS_NAMESPACE; returns {"ok": bool, "url": str}."""
    url = os.environ["PINEWORK_HEARTBEAT_URL"]
    ok = check(url)
    publish(boto3.client("cloudwatch"), os.environ["PINEWORK_METRICS_NAMESPACE"], ok)
    print(json.dumps({"message": "heartbeat", "ok": ok, "url": url}))  # noqa: T201
    return {"ok": ok, "url": url}
