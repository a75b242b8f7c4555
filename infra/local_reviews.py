"""The nightly review and a person's erasures and exports on the local server
(docs/reference.md#9-review, docs/reference.md#the-lifecycle-queue): the same fan-out and
workers as deployed, on the embedded moto server's SQS.

``start(endpoint)`` creates the review and lifecycle queues, sets
``PINEWORK_SQS_ENDPOINT``, and runs daemon threads: a scheduler that calls the fan-out
at 04:00 UTC (as EventBridge does), and one poller per queue (``WORKERS``) that feeds
its queued messages to its worker and deletes the ones it did not report as failed (as
Lambda's SQS event source does with ``ReportBatchItemFailures``). The pollers run
apart, so a person's erasure is taken at once even while the night's reviews run.
All call the Lambda entry points of ``app.py`` (``review_fanout``, ``review_worker``,
``lifecycle_worker``) with a Lambda context, as AWS does, so Chalice middleware runs for
them too.
"""

from __future__ import annotations

import logging
import os
import threading
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import boto3
from chalice.local import LambdaContext

from chalicelib.settings import LIFECYCLE_QUEUE_NAME, REVIEW_QUEUE_NAME

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

logger = logging.getLogger(__name__)
POLL_SECONDS = 2
ACCOUNT = "123456789012"
"""moto's account id, in the events the local entry points receive."""
WORKERS = {"review_worker": (REVIEW_QUEUE_NAME, 10), "lifecycle_worker": (LIFECYCLE_QUEUE_NAME, 1)}
"""Each SQS worker of ``app.py`` -> its queue and batch size (as ``app.py`` declares)."""


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


def ensure_queue(sqs: SQSClient, name: str) -> str:
    """Create a queue on the embedded server (idempotent); return its URL."""
    return str(sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "60"})["QueueUrl"])


def next_run(now: datetime) -> datetime:
    """The next 04:00 UTC after ``now``."""
    today = now.astimezone(UTC).replace(hour=4, minute=0, second=0, microsecond=0)
    return today if today > now else today + timedelta(days=1)


def poll_once(sqs: SQSClient, queue_url: str, function: str = "review_worker") -> int:
    """Run ``function`` (a key of ``WORKERS``) on up to a batch of its queue's messages;
    return how many were handled."""
    name, batch = WORKERS[function]
    messages = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=batch).get(
        "Messages", []
    )
    if not messages:
        return 0
    event = {
        "Records": [
            {
                "messageId": m["MessageId"],
                "body": m["Body"],
                "receiptHandle": m["ReceiptHandle"],
                "eventSource": "aws:sqs",
                "eventSourceARN": f"arn:aws:sqs:us-east-1:{ACCOUNT}:{name}",
                "attributes": {},
                "messageAttributes": {},
            }
            for m in messages
        ]
    }
    failed = {item["itemIdentifier"] for item in invoke(function, event)["batchItemFailures"]}
    for message in messages:
        if message["MessageId"] not in failed:
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
    return len(messages)


def start_workers(sqs: SQSClient, stop: threading.Event) -> list[threading.Thread]:
    """Create every queue of ``WORKERS`` and start one poller thread per queue (daemons,
    until ``stop`` is set); return the threads."""
    threads = []
    for function, (name, _) in WORKERS.items():
        queue_url = ensure_queue(sqs, name)

        def worker(function: str = function, queue_url: str = queue_url) -> None:
            while not stop.is_set():
                try:
                    if poll_once(sqs, queue_url, function) == 0:
                        stop.wait(POLL_SECONDS)
                except Exception:
                    logger.exception("local %s failed; retrying", function)
                    stop.wait(POLL_SECONDS)

        thread = threading.Thread(target=worker, daemon=True, name=f"local-{function}")
        thread.start()
        threads.append(thread)
    return threads


def start(endpoint: str, stop: threading.Event) -> None:
    """Create the queues, point the services at them, and start the pollers and the
    scheduler."""
    os.environ["PINEWORK_SQS_ENDPOINT"] = endpoint
    start_workers(boto3.client("sqs", endpoint_url=endpoint, region_name="us-east-1"), stop)

    def scheduler() -> None:
        while not stop.is_set():
            due = next_run(datetime.now(UTC))
            if stop.wait((due - datetime.now(UTC)).total_seconds()):
                return
            try:
                invoke("review_fanout", scheduled_event(due))
            except Exception:
                logger.exception("local review fan-out failed")

    threading.Thread(target=scheduler, daemon=True, name="review-scheduler").start()
