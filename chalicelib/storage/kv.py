"""DynamoDB + S3 adapter of ``KvRepository`` (docs/reference.md#10-key-value): the key-value
meta-tools' storage.

One item per entry, ``pk=KV#<scope>``, ``sk=KEY#<key>`` (``keys.py``). A value
of up to ``INLINE_MAX_BYTES`` (UTF-8) lives in the item (``storedValue``); a
larger one is written to S3 first, under a fresh object name, and the item
keeps the pointer (``objectKey``). Every write is one ``PutItem`` /
``DeleteItem`` returning the old item, so the object a replaced or deleted entry
pointed to is deleted afterwards and concurrent writers never share an object.

Anonymous entries carry ``expiresAtEpoch`` (the table's TTL attribute); since
TTL deletion is lazy (and moto never deletes), every read and listing skips
entries that expired at ``now``. Their S3 objects sit under ``kv/anon/``,
which the bucket's lifecycle rule empties after two days (``infra/template.py``).
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from chalicelib.errors import RateLimited
from chalicelib.storage.aws_errors import S3_THROTTLING, translate_errors
from chalicelib.storage.dynamodb import DynamoDBTable, from_attributes, to_attributes
from chalicelib.storage.keys import KV_KEY_PREFIX, KV_TTL_ATTRIBUTE, kv_key, kv_partition

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

logger = logging.getLogger(__name__)

INLINE_MAX_BYTES = 300 * 1024
"""Largest value kept in the item itself; DynamoDB items stop at 400 KB (key included)."""
_READ_ATTEMPTS = 3
"""How often a read retries when a concurrent overwrite deleted the object it pointed to."""


class S3ObjectStore:
    """The S3 bucket for large values; the client is built on first use.

    Args:
        client_factory: builds a boto3 S3 client (called at most once).
        bucket: the bucket name (``settings.bucket_name``).
    """

    def __init__(self, client_factory: Callable[[], S3Client], bucket: str) -> None:
        self._client_factory = client_factory
        self._client: S3Client | None = None
        self.bucket = bucket

    @property
    def client(self) -> S3Client:
        """The S3 client, built on first use (most values never need S3)."""
        if self._client is None:
            self._client = translate_errors(self._client_factory(), S3_THROTTLING)
        return self._client

    def put(self, object_key: str, data: bytes) -> None:
        """Write one object."""
        self.client.put_object(
            Bucket=self.bucket, Key=object_key, Body=data, ContentType="application/octet-stream"
        )

    def get(self, object_key: str) -> bytes | None:
        """Read one object; None if it does not exist."""
        try:
            response = self.client.get_object(Bucket=self.bucket, Key=object_key)
        except ClientError as error:
            if error.response["Error"]["Code"] in ("NoSuchKey", "404"):
                return None
            raise
        data: bytes = response["Body"].read()
        return data

    def delete(self, object_key: str) -> None:
        """Delete one object, best effort: a failure leaves an orphan, logged, never an error."""
        try:
            self.client.delete_object(Bucket=self.bucket, Key=object_key)
        except (ClientError, RateLimited):
            logger.warning("could not delete s3://%s/%s", self.bucket, object_key, exc_info=True)


class DynamoDBKvRepository:
    """Key-value entries in the single table, large values in S3.

    Args:
        table: the single table.
        objects: the bucket for values over ``inline_max_bytes``.
        inline_max_bytes: the largest value kept in the item.
        page_size: ``Limit`` of each listing Query (None: DynamoDB's 1 MB pages);
            tests set it small to cross page boundaries.
    """

    def __init__(
        self,
        table: DynamoDBTable,
        objects: S3ObjectStore,
        *,
        inline_max_bytes: int = INLINE_MAX_BYTES,
        page_size: int | None = None,
    ) -> None:
        self._table = table
        self._objects = objects
        self._inline_max_bytes = inline_max_bytes
        self._page_size = page_size

    def put(self, scope: str, key: str, value: str, *, expires_at: int | None) -> None:
        """Store ``value`` under ``key``, replacing any entry; one PutItem for inline values.

        Args:
            expires_at: epoch seconds after which the entry is gone (anonymous
                scopes), or None for a permanent entry.
        """
        data = value.encode("utf-8")
        item: dict[str, Any] = {**kv_key(scope, key), "entity": "kv", "valueBytes": len(data)}
        object_key = None
        if len(data) > self._inline_max_bytes:
            object_key = _object_name(scope, key, temporary=expires_at is not None)
            self._objects.put(object_key, data)
            item["objectKey"] = object_key
        else:
            item["storedValue"] = value
        if expires_at is not None:
            item[KV_TTL_ATTRIBUTE] = expires_at
        try:
            # Unconditional: remember overwrites. ALL_OLD names the object to clean up.
            response = self._table.client.put_item(
                TableName=self._table.name, Item=to_attributes(item), ReturnValues="ALL_OLD"
            )
        except Exception:
            if object_key is not None:
                self._objects.delete(object_key)
            raise
        self._drop_object_of(response.get("Attributes"))

    def get(self, scope: str, key: str, *, now: float) -> str | None:
        """Return the live value of ``key`` (read from S3 when the item points there), or None."""
        for _ in range(_READ_ATTEMPTS):
            item = self._table.get(kv_key(scope, key))
            if item is None or not _live(item, now):
                return None
            if "storedValue" in item:
                return str(item["storedValue"])
            data = self._objects.get(str(item["objectKey"]))
            if data is not None:
                return data.decode("utf-8")
            # Overwritten or forgotten between the two reads: read the item again.
        raise RuntimeError(f"the value of {key!r} kept moving while it was read")

    def delete(self, scope: str, key: str, *, now: float) -> bool:
        """Delete ``key`` (one DeleteItem); True if a live entry was there."""
        response = self._table.client.delete_item(
            TableName=self._table.name,
            Key=to_attributes(kv_key(scope, key)),
            ReturnValues="ALL_OLD",
        )
        old = response.get("Attributes")
        self._drop_object_of(old)
        return old is not None and _live(from_attributes(old), now)

    def keys(self, scope: str, *, now: float) -> list[str]:
        """Every live key of the scope in key (UTF-8 byte) order, following every page."""
        request: dict[str, Any] = {
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": kv_partition(scope)}},
            "ProjectionExpression": f"sk, {KV_TTL_ATTRIBUTE}",
            "ConsistentRead": True,
        }
        if self._page_size is not None:
            request["Limit"] = self._page_size
        return [
            str(item["sk"])[len(KV_KEY_PREFIX) :]
            for item in self._table.query(**request)
            if _live(item, now)
        ]

    def _drop_object_of(self, attributes: dict[str, Any] | None) -> None:
        if attributes is not None and "objectKey" in attributes:
            self._objects.delete(attributes["objectKey"]["S"])


def _live(item: dict[str, Any], now: float) -> bool:
    expires_at = item.get(KV_TTL_ATTRIBUTE)
    return expires_at is None or now < int(expires_at)


def _object_name(scope: str, key: str, *, temporary: bool) -> str:
    """A fresh S3 name per write: ``kv/<anon|keep>/<sha256 of scope and key>/<random>``.

    The key itself never appears (it may hold anything); anonymous values sit
    under ``kv/anon/`` for the bucket's two-day lifecycle rule.
    """
    digest = hashlib.sha256(f"{scope}\n{key}".encode()).hexdigest()
    return f"kv/{'anon' if temporary else 'keep'}/{digest}/{uuid.uuid4().hex}"
