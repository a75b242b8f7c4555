"""The ``ReviewQueue`` contract (chalicelib/storage/protocols.py): the nightly fan-out's
messages, every one delivered, in batches the queue accepts.

Runs against every implementation in the ``queue`` fixture (today the SQS adapter on
moto); what arrived is read with the queue's own client."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest

from chalicelib.storage.protocols import ReviewQueue
from chalicelib.storage.queue import SqsReviewQueue

QUEUE = "pinework-reviews-test"
IMPLEMENTATIONS: dict[str, Callable[[Any], ReviewQueue]] = {
    "sqs": lambda sqs: SqsReviewQueue(lambda: sqs, QUEUE),
}


@pytest.fixture
def sqs(aws: None) -> Any:
    client = boto3.client("sqs", region_name="us-east-1")
    client.create_queue(QueueName=QUEUE)
    return client


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def queue(request: pytest.FixtureRequest, sqs: Any) -> ReviewQueue:
    return IMPLEMENTATIONS[request.param](sqs)


def received(sqs: Any) -> Iterator[str]:
    url = sqs.get_queue_url(QueueName=QUEUE)["QueueUrl"]
    while True:
        messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
        if not messages:
            return
        for message in messages:
            yield message["Body"]
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])


def test_every_body_is_sent_once_across_batches(queue: ReviewQueue, sqs: Any) -> None:
    bodies = [f'{{"agentId":"agt_{number}","date":"2026-11-29"}}' for number in range(23)]
    assert queue.send(bodies) == 23
    assert sorted(received(sqs)) == sorted(bodies)


def test_sending_nothing_sends_nothing(queue: ReviewQueue, sqs: Any) -> None:
    assert queue.send([]) == 0
    assert list(received(sqs)) == []
