"""The local server's SQS pollers (``infra/local_reviews.py``,
docs/reference.md#the-lifecycle-queue): one per queue, so a person's erasure is taken at
once while a long review runs, and each message goes to its own queue's worker and is
deleted once that worker did not fail it."""

from __future__ import annotations

import threading
from typing import Any

import boto3
import pytest

from chalicelib.settings import LIFECYCLE_QUEUE_NAME, REVIEW_QUEUE_NAME
from infra import local_reviews

REVIEW = '{"workspaceId": "w", "agentId": "a", "date": "2026-12-06"}'
ERASURE = '{"job": "erase", "id": "agt_01M8P570G0QJRZ8T2NSWNPVZ62"}'


def test_an_erasure_is_taken_while_a_long_review_runs(
    aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    sqs = boto3.client("sqs", region_name="us-east-1")
    review_running, review_may_end, erasure_taken = (threading.Event() for _ in range(3))
    seen: dict[str, list[str]] = {"review_worker": [], "lifecycle_worker": []}

    def entry_point(function: str, event: dict[str, Any]) -> dict[str, Any]:
        seen[function] += [record["body"] for record in event["Records"]]
        if function == "review_worker":
            review_running.set()
            assert review_may_end.wait(30)  # the night's long review
        else:
            assert not review_may_end.is_set()  # the review is still running
            erasure_taken.set()
        return {"batchItemFailures": []}

    monkeypatch.setattr(local_reviews, "invoke", entry_point)
    monkeypatch.setattr(local_reviews, "POLL_SECONDS", 0.05)
    stop = threading.Event()
    threads = local_reviews.start_workers(sqs, stop)
    urls = {
        name: sqs.get_queue_url(QueueName=name)["QueueUrl"]
        for name in (REVIEW_QUEUE_NAME, LIFECYCLE_QUEUE_NAME)
    }
    try:
        sqs.send_message(QueueUrl=urls[REVIEW_QUEUE_NAME], MessageBody=REVIEW)
        assert review_running.wait(10)
        sqs.send_message(QueueUrl=urls[LIFECYCLE_QUEUE_NAME], MessageBody=ERASURE)
        assert erasure_taken.wait(10), "the erasure waited behind the review"
    finally:
        review_may_end.set()
        stop.set()
        for thread in threads:
            thread.join(10)
    assert seen == {"review_worker": [REVIEW], "lifecycle_worker": [ERASURE]}
    for url in urls.values():  # done: deleted from their queues
        attributes = sqs.get_queue_attributes(
            QueueUrl=url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        assert attributes == {
            "ApproximateNumberOfMessages": "0",
            "ApproximateNumberOfMessagesNotVisible": "0",
        }


def test_a_message_its_worker_failed_stays_on_its_queue(
    aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    sqs = boto3.client("sqs", region_name="us-east-1")
    url = local_reviews.ensure_queue(sqs, LIFECYCLE_QUEUE_NAME)
    sqs.send_message(QueueUrl=url, MessageBody=ERASURE)
    sqs.send_message(QueueUrl=url, MessageBody=ERASURE + " ")
    calls: list[tuple[str, int]] = []

    def entry_point(function: str, event: dict[str, Any]) -> dict[str, Any]:
        calls.append((function, len(event["Records"])))
        record = event["Records"][0]
        failed = record["body"].endswith(" ")
        return {"batchItemFailures": [{"itemIdentifier": record["messageId"]}] if failed else []}

    monkeypatch.setattr(local_reviews, "invoke", entry_point)
    assert local_reviews.poll_once(sqs, url, "lifecycle_worker") == 1
    assert local_reviews.poll_once(sqs, url, "lifecycle_worker") == 1
    assert calls == [("lifecycle_worker", 1), ("lifecycle_worker", 1)]  # one job a batch
    left = sqs.get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    assert left == {"ApproximateNumberOfMessagesNotVisible": "1"}  # the failed one, to retry
