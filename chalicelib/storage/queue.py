"""SQS adapter of ``ReviewQueue``: the nightly fan-out sends one message per agent
(docs/reference.md#9-review), in batches of ten (SQS's limit); a person's erasures and
exports go to the lifecycle queue through another one (docs/reference.md#the-lifecycle-queue)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

_BATCH = 10


class QueueSendFailed(Exception):
    """SQS refused some messages of a batch (their ids are in the message)."""


class SqsReviewQueue:
    """``ReviewQueue`` on SQS; the client and queue URL are resolved on first use.

    Args:
        client_factory: returns a boto3 SQS client.
        queue_name: the queue's name (``settings.review_queue_name`` or
            ``settings.lifecycle_queue_name``).
    """

    def __init__(self, client_factory: Callable[[], SQSClient], queue_name: str) -> None:
        self._factory = client_factory
        self._queue_name = queue_name
        self._client: SQSClient | None = None
        self._url: str | None = None

    def _target(self) -> tuple[SQSClient, str]:
        if self._client is None:
            self._client = self._factory()
        if self._url is None:
            self._url = str(self._client.get_queue_url(QueueName=self._queue_name)["QueueUrl"])
        return self._client, self._url

    def send(self, bodies: Sequence[str]) -> int:
        """Send every body, ten per request.

        Returns:
            How many messages were sent.

        Raises:
            QueueSendFailed: SQS reported failed entries (the fan-out then fails
                and EventBridge's retry sends again; the worker's per-date claim
                makes the duplicates harmless).
        """
        client, url = self._target()
        for start in range(0, len(bodies), _BATCH):
            chunk = bodies[start : start + _BATCH]
            response = client.send_message_batch(
                QueueUrl=url,
                Entries=[
                    {"Id": str(number), "MessageBody": body} for number, body in enumerate(chunk)
                ],
            )
            failed = response.get("Failed", [])
            if failed:
                raise QueueSendFailed(", ".join(entry.get("Message", "?") for entry in failed))
        return len(bodies)
