"""S3 adapter of the review's JSON reports (docs/reference.md#9-review): ``S3ReportStore`` writes
and reads one report per review under the key the review service chooses; a missing
report reads as None."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from chalicelib.storage.aws_errors import S3_THROTTLING, translate_errors

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client


class S3ReportStore:
    """``ReportStore`` on S3; the client is built on first use (docs/conventions.md#rule-6).

    Args:
        client_factory: returns a boto3 S3 client.
        bucket: the bucket (``settings.bucket_name``).
    """

    def __init__(self, client_factory: Callable[[], S3Client], bucket: str) -> None:
        self._factory = client_factory
        self._client: S3Client | None = None
        self._bucket = bucket

    def _s3(self) -> S3Client:
        if self._client is None:
            self._client = translate_errors(self._factory(), S3_THROTTLING)
        return self._client

    def put(self, key: str, body: bytes) -> None:
        """Write a JSON report."""
        self._s3().put_object(
            Bucket=self._bucket, Key=key, Body=body, ContentType="application/json"
        )

    def get(self, key: str) -> bytes | None:
        """Read a report, or None when it is missing."""
        return object_body(self._s3(), self._bucket, key)


def object_body(client: Any, bucket: str, key: str) -> bytes | None:
    """An object's current body (``GetObject``), or None when it is missing.

    Raises:
        botocore.exceptions.ClientError: any other refusal (access, throttling).
    """
    try:
        response = client.get_object(Bucket=bucket, Key=key)
    except ClientError as error:
        if error.response["Error"]["Code"] in ("NoSuchKey", "404"):
            return None
        raise
    return bytes(response["Body"].read())
