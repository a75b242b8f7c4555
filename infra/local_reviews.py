"""The nightly review on the local server (docs/reference.md#9-review): the same fan-out and worker
as deployed, on the embedded moto server's SQS.

``start(endpoint)`` creates the review queue, sets ``PINEWORK_SQS_ENDPOINT``, and
runs two daemon threads: a scheduler that calls the fan-out at 04:00 UTC (as
EventBridge does), and a poller that feeds queued messages to the worker in
batches of ten and deletes the ones it did not report as failed (as Lambda's
SQS event source does with ``ReportBatchItemFailures``). Both call the Lambda
entry points of ``app.py`` (``review_fanout``, ``review_worker``) with a Lambda
context, as AWS does, so Chalice middleware runs for them too.
"""

from __future__ import annotations

import logging
import os
import threading
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import boto3
from chalice.local import LambdaContext

from chalicelib.settings import REVIEW_QUEUE_NAME

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

logger = logging.getLogger(__name__)
POLL_SECONDS = 2
ACCOUNT = "123456789012"
"""moto's account id, in the events the local entry points receive."""


def invoke(function_name: str, event: dict[str, Any]) -> Any:
    """Call one of ``app.py``'s non-HTTP Lambda entry points as Lambda would."""
    from app import app

    return app.handler_map[function_name](event, LambdaContext(function_name, 1024))


def scheduled_event(moment: datetime) -> dict[str, Any]:
    """The EventBridge event of the 04:00 UTC schedule firing at ``moment``."""
    return {
        "version": "0",
        "id": f"local-{moment:%Y%m%dT%H%M%S}",
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": ACCOUNT,
        "time": moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": "us-east-1",
        "resources": [],
        "detail": {},
    }


def ensure_queue(endpoint: str) -> str:
    """Create the review queue on the embedded server (idempotent); return its URL."""
    sqs = boto3.client("sqs", endpoint_url=endpoint, region_name="us-east-1")
    return str(
        sqs.create_queue(QueueName=REVIEW_QUEUE_NAME, Attributes={"VisibilityTimeout": "60"})[
            "QueueUrl"
        ]
    )


def next_run(now: datetime) -> datetime:
    """The next 04:00 UTC after ``now``."""
    today = now.astimezone(UTC).replace(hour=4, minute=0, second=0, microsecond=0)
    return today if today > now else today + timedelta(days=1)


def poll_once(sqs: SQSClient, queue_url: str) -> int:
    """Run the worker on up to ten queued messages; return how many were handled."""
    messages = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages", [])
    if not messages:
        return 0
    event = {
        "Records": [
            {
                "messageId": m["MessageId"],
                "body": m["Body"],
                "receiptHandle": m["ReceiptHandle"],
                "eventSource": "aws:sqs",
                "eventSourceARN": f"arn:aws:sqs:us-east-1:{ACCOUNT}:{REVIEW_QUEUE_NAME}",
                "attributes": {},
                "messageAttributes": {},
            }
            for m in messages
        ]
    }
    failed = {
        item["itemIdentifier"] for item in invoke("review_worker", event)["batchItemFailures"]
    }
    for message in messages:
        if message["MessageId"] not in failed:
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
    return len(messages)


def start(endpoint: str, stop: threading.Event) -> str:
    """Create the queue, point the services at it, and start the two threads."""
    queue_url = ensure_queue(endpoint)
    os.environ["PINEWORK_SQS_ENDPOINT"] = endpoint
    sqs = boto3.client("sqs", endpoint_url=endpoint, region_name="us-east-1")

    def worker() -> None:
        while not stop.is_set():
            try:
                if poll_once(sqs, queue_url) == 0:
                    stop.wait(POLL_SECONDS)
            except Exception:
                logger.exception("local review worker failed; retrying")
                stop.wait(POLL_SECONDS)

    def scheduler() -> None:
        while not stop.is_set():
            due = next_run(datetime.now(UTC))
            if stop.wait((due - datetime.now(UTC)).total_seconds()):
                return
            try:
                invoke("review_fanout", scheduled_event(due))
            except Exception:
                logger.exception("local review fan-out failed")

    for target in (worker, scheduler):
        threading.Thread(target=target, daemon=True, name=f"review-{target.__name__}").start()
    return queue_url
