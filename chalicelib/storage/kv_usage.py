"""The usage item of each key-value scope (docs/reference.md#kv-quotas): its key count and
bytes, changed in the same transaction as the entries (``kv.py``), so a quota holds
under concurrent writers.

``pk=KV#<scope>``, ``sk=USAGE`` (``keys.py``): ``keyCount``, ``byteCount`` (UTF-8 bytes of
keys and values), ``revision`` (bumped by every change) and, in a scope whose entries
expire, ``expiresAtEpoch``, the expiry of its latest write: no entry outlives it, so
the item expires with the scope. A scope without a live usage item (never written,
written before usage was kept, or expired) is counted once from its entries, which
deletes the expired ones; so is an expiring scope that reaches its quota, since
DynamoDB's TTL deletes entries without telling the count. Choices:
docs/DECISIONS.md#key-value-quotas-bounded-listings-and-batches-issue-21-item-2
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from chalicelib.errors import Conflict
from chalicelib.storage.aws_errors import CONFLICT_MESSAGE
from chalicelib.storage.dynamodb import DynamoDBTable, to_attributes
from chalicelib.storage.keys import (
    KV_KEY_PREFIX,
    KV_TTL_ATTRIBUTE,
    kv_new_scopes_key,
    kv_partition,
    kv_usage_key,
)
from chalicelib.storage.protocols import KvNewScopes, KvQuota, KvUsage

_TTL = "#expiresAt"
"""Alias of the TTL attribute in expressions."""


@dataclass(frozen=True)
class StoredUsage:
    """A scope's live usage item as read (``revision`` -1: none stored, counted as empty).

    Attributes:
        usage: keys and bytes.
        revision: bumped by every change (a recount is conditional on it).
        expires_at: the item's expiry (epoch seconds), None in a permanent scope.
    """

    usage: KvUsage
    revision: int
    expires_at: int | None


@dataclass(frozen=True)
class EntrySize:
    """What one stored entry counts for: its bytes (key and value) and S3 object, if any."""

    byte_count: int
    value_bytes: int
    object_key: str | None


def entry_size(item: dict[str, Any]) -> EntrySize:
    """The size of a stored entry item (``sk``, ``valueBytes``, ``objectKey``)."""
    key = str(item["sk"])[len(KV_KEY_PREFIX) :]
    value_bytes = int(item["valueBytes"])
    object_key = item.get("objectKey")
    return EntrySize(
        len(key.encode("utf-8")) + value_bytes,
        value_bytes,
        None if object_key is None else str(object_key),
    )


def live(item: dict[str, Any], now: float) -> bool:
    """Whether an item with an optional TTL attribute has not expired at ``now``."""
    expires_at = item.get(KV_TTL_ATTRIBUTE)
    return expires_at is None or now < int(expires_at)


class KvUsageItems:
    """Reads, counts and changes the usage items of key-value scopes.

    Args:
        table: the single table.
        drop_object: deletes the S3 object of an expired entry the count removes.
    """

    def __init__(self, table: DynamoDBTable, drop_object: Callable[[str], None]) -> None:
        self._table = table
        self._drop_object = drop_object

    def read(self, scope: str, *, now: float) -> StoredUsage | None:
        """The scope's live usage item, or None (missing or expired)."""
        item = self._table.get(kv_usage_key(scope))
        if item is None or not live(item, now):
            return None
        expires_at = item.get(KV_TTL_ATTRIBUTE)
        return StoredUsage(
            KvUsage(int(item["keyCount"]), int(item["byteCount"])),
            int(item["revision"]),
            None if expires_at is None else int(expires_at),
        )

    def ensure(
        self, scope: str, *, now: float, expires_at: int | None, create: bool
    ) -> StoredUsage:
        """The scope's usage; counted from its entries when no live item exists.

        Args:
            expires_at: the expiry of a write about to be made (None: permanent).
            create: store the count even when it is empty (a write follows that
                needs the item); otherwise an empty scope is answered without a write.
        """
        for _ in range(3):
            found = self.read(scope, now=now)
            if found is not None:
                return found
            counted = self.recount(scope, now=now, expires_at=expires_at, create=create)
            if counted is not None:
                return counted
        raise Conflict(CONFLICT_MESSAGE)

    def recount(
        self,
        scope: str,
        *,
        now: float,
        expires_at: int | None,
        create: bool = True,
        replacing: StoredUsage | None = None,
    ) -> StoredUsage | None:
        """Count the scope's live entries (deleting the expired ones) and store the count.

        The store is conditional: on ``replacing``'s revision, or (``replacing`` None)
        on there being no live usage item. Returns the stored usage, None when the
        condition failed (another writer got there first: read again), or the
        unsaved empty usage when there is nothing to count and ``create`` is False.
        """
        key_count, byte_count, latest = 0, 0, expires_at
        for item in self._entries(scope):
            if not live(item, now):
                self._delete_expired(item)
                continue
            key_count += 1
            byte_count += entry_size(item).byte_count
            if KV_TTL_ATTRIBUTE in item:
                latest = max(latest or 0, int(item[KV_TTL_ATTRIBUTE]))
        usage = KvUsage(key_count, byte_count)
        if key_count == 0 and not create and replacing is None:
            return StoredUsage(usage, -1, None)
        revision = 0 if replacing is None else replacing.revision + 1
        stored = StoredUsage(usage, revision, latest)
        return stored if self._store(scope, stored, now=now, replacing=replacing) else None

    def change(
        self,
        scope: str,
        added_keys: int,
        added_bytes: int,
        *,
        now: float,
        quota: KvQuota | None = None,
        expires_at: int | None = None,
    ) -> dict[str, Any]:
        """The transaction's ``Update`` of the usage item: add ``added_keys`` and
        ``added_bytes`` (negative to free them), within ``quota`` when they grow."""
        names = {_TTL: KV_TTL_ATTRIBUTE}
        values: dict[str, Any] = {
            ":keys": added_keys,
            ":bytes": added_bytes,
            ":one": 1,
            ":now": math.floor(now),
        }
        update = "SET keyCount = keyCount + :keys, byteCount = byteCount + :bytes"
        if expires_at is not None:
            update += f", {_TTL} = :expires"
            values[":expires"] = expires_at
        # The item must be there and live: a missing or expired one is recounted first.
        condition = f"attribute_exists(pk) AND (attribute_not_exists({_TTL}) OR {_TTL} > :now)"
        # Conditions cannot add: the bounds are the quota less what this write adds.
        if quota is not None and added_keys > 0:
            condition += " AND keyCount <= :maxKeys"
            values[":maxKeys"] = quota.max_keys - added_keys
        if quota is not None and added_bytes > 0:
            condition += " AND byteCount <= :maxBytes"
            values[":maxBytes"] = quota.max_bytes - added_bytes
        return {
            "Update": {
                "Key": to_attributes(kv_usage_key(scope)),
                "UpdateExpression": update + " ADD revision :one",
                "ConditionExpression": condition,
                "ExpressionAttributeNames": names,
                "ExpressionAttributeValues": to_attributes(values),
            }
        }

    def create(
        self, scope: str, usage: KvUsage, *, now: float, expires_at: int | None
    ) -> dict[str, Any]:
        """The transaction's ``Put`` of a new scope's usage item holding ``usage`` (its
        first entry), only where no live usage item is kept."""
        item: dict[str, Any] = {
            **kv_usage_key(scope),
            "entity": "kvUsage",
            "keyCount": usage.key_count,
            "byteCount": usage.byte_count,
            "revision": 1,
        }
        if expires_at is not None:
            item[KV_TTL_ATTRIBUTE] = expires_at
        return {
            "Put": {
                "Item": to_attributes(item),
                "ConditionExpression": f"attribute_not_exists(pk) OR {_TTL} <= :now",
                "ExpressionAttributeNames": {_TTL: KV_TTL_ATTRIBUTE},
                "ExpressionAttributeValues": to_attributes({":now": math.floor(now)}),
            }
        }

    def _entries(self, scope: str) -> Iterator[dict[str, Any]]:
        return self._table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues={
                ":pk": {"S": kv_partition(scope)},
                ":prefix": {"S": KV_KEY_PREFIX},
            },
            ProjectionExpression=f"pk, sk, valueBytes, objectKey, {_TTL}",
            ExpressionAttributeNames={_TTL: KV_TTL_ATTRIBUTE},
            ConsistentRead=True,
        )

    def _delete_expired(self, item: dict[str, Any]) -> None:
        try:
            # Only while it is the expired entry that was read: a new write replaced it.
            self._table.client.delete_item(
                TableName=self._table.name,
                Key=to_attributes({"pk": item["pk"], "sk": item["sk"]}),
                ConditionExpression=f"{_TTL} = :expires",
                ExpressionAttributeNames={_TTL: KV_TTL_ATTRIBUTE},
                ExpressionAttributeValues=to_attributes({":expires": item[KV_TTL_ATTRIBUTE]}),
            )
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            return
        object_key = item.get("objectKey")
        if object_key is not None:
            self._drop_object(str(object_key))

    def _store(
        self, scope: str, stored: StoredUsage, *, now: float, replacing: StoredUsage | None
    ) -> bool:
        item: dict[str, Any] = {
            **kv_usage_key(scope),
            "entity": "kvUsage",
            "keyCount": stored.usage.key_count,
            "byteCount": stored.usage.byte_count,
            "revision": stored.revision,
        }
        if stored.expires_at is not None:
            item[KV_TTL_ATTRIBUTE] = stored.expires_at
        request: dict[str, Any] = {"TableName": self._table.name, "Item": to_attributes(item)}
        if replacing is None:
            # Only where no live count is kept: writers need one before they write.
            request["ConditionExpression"] = f"attribute_not_exists(pk) OR {_TTL} <= :now"
            request["ExpressionAttributeNames"] = {_TTL: KV_TTL_ATTRIBUTE}
            values: dict[str, Any] = {":now": math.floor(now)}
        else:
            # Only if no write changed the count since it was read.
            request["ConditionExpression"] = "revision = :revision"
            values = {":revision": replacing.revision}
        request["ExpressionAttributeValues"] = to_attributes(values)
        try:
            self._table.client.put_item(**request)
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            return False
        return True


def count_new_scopes(new_scopes: KvNewScopes) -> list[dict[str, Any]]:
    """The transaction's ``Update``s adding one to the network's new scopes of the day
    (and its IPv6 /48's, when it has one), each only while it stays within its cap
    (docs/reference.md#kv-new-scopes)."""
    counts = [count_new_scope(new_scopes.network, new_scopes.max_new, new_scopes)]
    if new_scopes.site is not None:
        counts.append(count_new_scope(new_scopes.site, new_scopes.site_max_new, new_scopes))
    return counts


def count_new_scope(network: str, max_new: int, new_scopes: KvNewScopes) -> dict[str, Any]:
    """The transaction's ``Update`` adding one to ``network``'s new scopes of the day,
    only while that stays within ``max_new`` (docs/reference.md#kv-quotas)."""
    return {
        "Update": {
            "Key": to_attributes(kv_new_scopes_key(network, new_scopes.day)),
            "UpdateExpression": (
                "SET newScopes = if_not_exists(newScopes, :zero) + :one, "
                f"entity = :entity, {_TTL} = :expires"
            ),
            "ConditionExpression": "attribute_not_exists(newScopes) OR newScopes < :max",
            "ExpressionAttributeNames": {_TTL: KV_TTL_ATTRIBUTE},
            "ExpressionAttributeValues": to_attributes(
                {
                    ":zero": 0,
                    ":one": 1,
                    ":max": max_new,
                    ":entity": "kvNewScopes",
                    ":expires": new_scopes.expires_at,
                }
            ),
        }
    }
