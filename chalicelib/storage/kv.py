"""DynamoDB + S3 adapter of ``KvRepository`` (docs/reference.md#10-key-value): the key-value
meta-tools' storage.

One item per entry, ``pk=KV#<scope>``, ``sk=KEY#<key>`` (``keys.py``). A value
of up to ``INLINE_MAX_BYTES`` (UTF-8) lives in the item (``storedValue``); a
larger one is written to S3 first, under a fresh object name, and the item
keeps the pointer (``objectKey``). Every write is one transaction with the
scope's usage item (``kv_usage.py``), conditional on the old entry being the one
read, so the quota holds under concurrent writers and the object a replaced or
deleted entry pointed to is known and deleted afterwards; concurrent writers never
share an object.

The first write of a new scope that counts against its network's new scopes of the
day (``X-Api-Key`` scopes, docs/reference.md#kv-new-scopes) creates the usage item in
the same transaction as the entry and the day's counter (``kv_usage.count_new_scopes``).

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

from chalicelib.errors import Conflict, RateLimited
from chalicelib.storage.aws_errors import CONFLICT_MESSAGE, S3_THROTTLING, translate_errors
from chalicelib.storage.dynamodb import DynamoDBTable, TransactionCancelled, to_attributes
from chalicelib.storage.keys import KV_KEY_PREFIX, KV_TTL_ATTRIBUTE, kv_key, kv_partition
from chalicelib.storage.kv_usage import KvUsageItems, count_new_scopes, entry_size, live
from chalicelib.storage.protocols import (
    KvNewScopes,
    KvNewScopesReached,
    KvQuota,
    KvQuotaReached,
    KvRevisionMismatch,
    KvUsage,
)

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

logger = logging.getLogger(__name__)

INLINE_MAX_BYTES = 300 * 1024
"""Largest value kept in the item itself; DynamoDB items stop at 400 KB (key included)."""
_READ_ATTEMPTS = 3
"""How often a read retries when a concurrent overwrite deleted the object it pointed to."""
_WRITE_ATTEMPTS = 5
"""How often a write reads again when the entry or the scope's count changed under it."""
_REVISION = "kvRevision"
"""The entry's revision: 1 at its first write, one more at each (docs/reference.md#kv-revisions)."""


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
    """Key-value entries in the single table, large values in S3, and each scope's usage.

    Args:
        table: the single table.
        objects: the bucket for values over ``inline_max_bytes``.
        inline_max_bytes: the largest value kept in the item.
        page_size: ``Limit`` of each listing Query (None: the page asked for);
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
        self._usage = KvUsageItems(table, objects.delete)

    def put(
        self,
        scope: str,
        key: str,
        value: str,
        *,
        expires_at: int | None,
        now: float,
        quota: KvQuota,
        new_scopes: KvNewScopes | None = None,
        expected_revision: int | None = None,
    ) -> int:
        """Store ``value`` under ``key``, replacing any entry, in one transaction with the
        scope's usage (docs/reference.md#kv-quotas); returns the entry's new revision (the
        one it replaced plus 1; docs/reference.md#kv-revisions).

        Args:
            expires_at: epoch seconds after which the entry is gone (anonymous
                scopes), or None for a permanent entry.
            now: epoch seconds (expiry of the usage item and old entries).
            quota: the scope's quota; an overwrite counts the difference in bytes.
            new_scopes: the caller's network's cap on new scopes per day; when the scope
                is new (no usage item, no entries), its usage item is created in the
                same transaction as the entry and one more new scope of the day.
            expected_revision: store only if the live entry has this revision (0: only if
                there is none); None: whatever is there.

        Raises:
            KvRevisionMismatch: ``expected_revision`` is not the entry's; nothing was stored.
            KvQuotaReached: the scope would pass ``quota``; nothing was stored.
            KvNewScopesReached: the scope is new and its network started
                ``new_scopes.max_new`` scopes that day already; nothing was stored.
            Conflict: other writers kept changing the key (409).
        """
        write = _Write(scope, key, value, expires_at, now, expected_revision)
        try:
            for _ in range(_WRITE_ATTEMPTS):
                if self._try_put(write, quota, new_scopes):
                    return write.revision
            raise Conflict(CONFLICT_MESSAGE)
        except BaseException:
            if write.object_key is not None:
                self._objects.delete(write.object_key)
            raise

    def _try_put(self, write: _Write, quota: KvQuota, new_scopes: KvNewScopes | None) -> bool:
        """One attempt: read usage and the old entry, check, write; False to try again."""
        if new_scopes is None:
            stored = self._usage.ensure(
                write.scope, now=write.now, expires_at=write.expires_at, create=True
            )
        else:
            found = self._usage.read(write.scope, now=write.now)
            if found is None:
                # Counted without storing when empty: an empty scope is a new one.
                found = self._usage.recount(
                    write.scope, now=write.now, expires_at=write.expires_at, create=False
                )
                if found is None:
                    return False  # another writer stored the count: read it again
                if found.revision < 0:
                    _check_revision(write.expected, None, write.now)
                    return self._start_scope(write, quota, new_scopes)
            stored = found
        old = self._table.get(kv_key(write.scope, write.key))
        write.revision = _check_revision(write.expected, old, write.now) + 1
        added_keys, added_bytes = _added(old, write.size)
        if _over(stored.usage, added_keys, added_bytes, quota):
            if stored.expires_at is None or write.recounted:
                raise KvQuotaReached(stored.usage, added_keys, added_bytes)
            # Expiring entries may have gone without the count knowing: count again once.
            write.recounted = True
            self._usage.recount(
                write.scope, now=write.now, expires_at=write.expires_at, replacing=stored
            )
            return False
        self._write_object(write)
        try:
            self._table.transact(
                [
                    _put_entry(write, old),
                    self._usage.change(
                        write.scope,
                        added_keys,
                        added_bytes,
                        now=write.now,
                        quota=quota,
                        expires_at=write.expires_at,
                    ),
                ]
            )
        except TransactionCancelled:
            return False  # the entry or the count changed meanwhile: read both again
        write.object_key = None  # stored: the entry owns it now
        self._drop_object_of(old)
        return True

    def _start_scope(self, write: _Write, quota: KvQuota, new_scopes: KvNewScopes) -> bool:
        """Write the first entry of a new scope, its usage item and one more new scope of
        its network's day in one transaction; False to try again."""
        if _over(KvUsage(0, 0), 1, write.size, quota):
            raise KvQuotaReached(KvUsage(0, 0), 1, write.size)
        if new_scopes.max_new <= 0 or (
            new_scopes.site is not None and new_scopes.site_max_new <= 0
        ):
            raise KvNewScopesReached(f"no new scopes allowed ({new_scopes.max_new})")
        self._write_object(write)
        try:
            self._table.transact(
                [
                    _put_entry(write, None),
                    self._usage.create(
                        write.scope,
                        KvUsage(1, write.size),
                        now=write.now,
                        expires_at=write.expires_at,
                    ),
                    *count_new_scopes(new_scopes),
                ]
            )
        except TransactionCancelled as cancelled:
            scope_taken = any(reason != "None" for reason in cancelled.reasons[:2])
            if not scope_taken and "ConditionalCheckFailed" in cancelled.reasons[2:]:
                raise KvNewScopesReached(
                    f"{new_scopes.max_new} new scopes on {new_scopes.day}"
                ) from cancelled
            return False  # another writer started the scope meanwhile: read it again
        write.object_key = None  # stored: the entry owns it now
        return True

    def _write_object(self, write: _Write) -> None:
        """Write a large value to S3 once per ``put`` (the entry then points to it)."""
        if write.object_key is None and len(write.data) > self._inline_max_bytes:
            write.object_key = _object_name(
                write.scope, write.key, temporary=write.expires_at is not None
            )
            self._objects.put(write.object_key, write.data)

    def get(self, scope: str, key: str, *, now: float) -> str | None:
        """Return the live value of ``key`` (read from S3 when the item points there), or None."""
        found = self.read(scope, key, now=now)
        return None if found is None else found[0]

    def read(self, scope: str, key: str, *, now: float) -> tuple[str, int] | None:
        """The live value of ``key`` and its revision (docs/reference.md#kv-revisions), or
        None."""
        for _ in range(_READ_ATTEMPTS):
            item = self._table.get(kv_key(scope, key))
            if item is None or not live(item, now):
                return None
            if "storedValue" in item:
                return str(item["storedValue"]), revision_of(item)
            data = self._objects.get(str(item["objectKey"]))
            if data is not None:
                return data.decode("utf-8"), revision_of(item)
            # Overwritten or forgotten between the two reads: read the item again.
        raise RuntimeError(f"the value of {key!r} kept moving while it was read")

    def delete(
        self, scope: str, key: str, *, now: float, expected_revision: int | None = None
    ) -> bool:
        """Delete ``key`` and free its keys and bytes in one transaction; True if a live
        entry was there. ``expected_revision``: as ``put`` (0: only if there is none, which
        deletes nothing).

        Raises:
            KvRevisionMismatch: ``expected_revision`` is not the entry's; nothing changed.
            Conflict: other writers kept changing the key (409).
        """
        for _ in range(_WRITE_ATTEMPTS):
            old = self._table.get(kv_key(scope, key))
            _check_revision(expected_revision, old, now)
            if old is None:
                return False
            self._usage.ensure(scope, now=now, expires_at=None, create=True)
            size = entry_size(old)
            try:
                self._table.transact(
                    [
                        {"Delete": {"Key": to_attributes(kv_key(scope, key)), **_unchanged(old)}},
                        self._usage.change(scope, -1, -size.byte_count, now=now),
                    ]
                )
            except TransactionCancelled:
                continue  # changed meanwhile (or counted and expired): read it again
            self._drop_object_of(old)
            return live(old, now)
        raise Conflict(CONFLICT_MESSAGE)

    def keys(self, scope: str, *, now: float, after: str | None, limit: int) -> list[str]:
        """Up to ``limit`` live keys after ``after``, in key (UTF-8 byte) order; reads on
        past expired entries (docs/conventions.md#limit-before-filter)."""
        request: dict[str, Any] = {
            # ``sk > KEY#<after>``: keys are never empty, so ``KEY#`` alone starts the list.
            "KeyConditionExpression": "pk = :pk AND sk > :start",
            "ExpressionAttributeValues": {
                ":pk": {"S": kv_partition(scope)},
                ":start": {"S": KV_KEY_PREFIX + (after or "")},
            },
            "ProjectionExpression": f"sk, {KV_TTL_ATTRIBUTE}",
            "ConsistentRead": True,
            "Limit": self._page_size or limit,
        }
        found: list[str] = []
        for item in self._table.query(**request):
            sort_key = str(item["sk"])
            if not sort_key.startswith(KV_KEY_PREFIX):
                break  # past the entries: the usage item sorts after them
            if live(item, now):
                found.append(sort_key[len(KV_KEY_PREFIX) :])
                if len(found) == limit:
                    break  # a full page: read no further Query page
        return found

    def usage(self, scope: str, *, now: float) -> KvUsage:
        """The scope's keys and bytes from its usage item (counted once if it has none)."""
        return self._usage.ensure(scope, now=now, expires_at=None, create=False).usage

    def _drop_object_of(self, item: dict[str, Any] | None) -> None:
        if item is not None and "objectKey" in item:
            self._objects.delete(str(item["objectKey"]))


class _Write:
    """One ``put`` across its attempts: the value's bytes and the S3 object written, if any."""

    def __init__(
        self,
        scope: str,
        key: str,
        value: str,
        expires_at: int | None,
        now: float,
        expected: int | None = None,
    ) -> None:
        self.scope, self.key, self.value = scope, key, value
        self.expires_at, self.now, self.expected = expires_at, now, expected
        self.revision = 1
        self.data = value.encode("utf-8")
        self.size = len(key.encode("utf-8")) + len(self.data)
        self.object_key: str | None = None
        self.recounted = False


def _added(old: dict[str, Any] | None, size: int) -> tuple[int, int]:
    """Keys and bytes a write of ``size`` bytes adds over the entry it replaces."""
    if old is None:
        return 1, size
    return 0, size - entry_size(old).byte_count


def _over(usage: KvUsage, added_keys: int, added_bytes: int, quota: KvQuota) -> bool:
    """Whether a write passes the quota; one that adds nothing (an equal or smaller
    overwrite) always fits, so a scope over a lowered quota can shrink."""
    return (added_keys > 0 and usage.key_count + added_keys > quota.max_keys) or (
        added_bytes > 0 and usage.byte_count + added_bytes > quota.max_bytes
    )


def revision_of(item: dict[str, Any]) -> int:
    """An entry's revision (docs/reference.md#kv-revisions); an entry written before
    revisions were kept is revision 1."""
    return int(item.get(_REVISION, 1))


def _check_revision(expected: int | None, old: dict[str, Any] | None, now: float) -> int:
    """The revision of the live entry ``old`` (0: none, or expired); KvRevisionMismatch
    when ``expected`` is given and differs."""
    current = 0 if old is None or not live(old, now) else revision_of(old)
    if expected is not None and expected != current:
        raise KvRevisionMismatch(current)
    return current


def _put_entry(write: _Write, old: dict[str, Any] | None) -> dict[str, Any]:
    item: dict[str, Any] = {
        **kv_key(write.scope, write.key),
        "entity": "kv",
        "valueBytes": len(write.data),
        _REVISION: write.revision,
    }
    if write.object_key is not None:
        item["objectKey"] = write.object_key
    else:
        item["storedValue"] = write.value
    if write.expires_at is not None:
        item[KV_TTL_ATTRIBUTE] = write.expires_at
    if old is None:
        # A new key: only if still absent, since the count adds one key.
        return {
            "Put": {"Item": to_attributes(item), "ConditionExpression": "attribute_not_exists(pk)"}
        }
    return {"Put": {"Item": to_attributes(item), **_unchanged(old)}}


def _unchanged(old: dict[str, Any]) -> dict[str, Any]:
    """Condition: the entry is still the one read (its size is what the count frees, its
    object the one to delete); each write of a large value has its own object name."""
    size = entry_size(old)
    values: dict[str, Any] = {":valueBytes": size.value_bytes}
    condition = "valueBytes = :valueBytes AND "
    if _REVISION in old:
        condition += f"{_REVISION} = :revision AND "
        values[":revision"] = old[_REVISION]
    else:
        condition += f"attribute_not_exists({_REVISION}) AND "
    if size.object_key is None:
        condition += "attribute_not_exists(objectKey)"
    else:
        condition += "objectKey = :objectKey"
        values[":objectKey"] = size.object_key
    return {"ConditionExpression": condition, "ExpressionAttributeValues": to_attributes(values)}


def _object_name(scope: str, key: str, *, temporary: bool) -> str:
    """A fresh S3 name per write: ``kv/<anon|keep>/<sha256 of scope and key>/<random>``.

    The key itself never appears (it may hold anything); anonymous values sit
    under ``kv/anon/`` for the bucket's two-day lifecycle rule.
    """
    digest = hashlib.sha256(f"{scope}\n{key}".encode()).hexdigest()
    return f"kv/{'anon' if temporary else 'keep'}/{digest}/{uuid.uuid4().hex}"
