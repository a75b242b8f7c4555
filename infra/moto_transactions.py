"""A faster ``TransactWriteItems`` and ``Query`` for the embedded DynamoDB, with moto's results.

``TransactWriteItems``, with moto's atomicity:
stock moto backs up every table a transaction touches (O(table size) per save); here
a transaction served by the embedded server copies only the items it touches and puts
exactly those back when anything fails, and moto's own code does the rest, so results,
errors and cancellation reasons are moto's (``tests/unit/test_moto_transactions.py``
holds it against stock moto). It applies only on the thread of a request the embedded
server handles (``embedded_server_requests``); everything else in the process gets
stock moto, and the deployed service never loads it. Choices:
docs/DECISIONS.md#local-server.

``Query`` of the table itself (not an index): stock moto sorts every item of the table
for each page it returns (``Table.all_items``), so a page costs time in proportion to
the whole table; here, on an embedded request, it sorts the queried partition's items
only (``_partition_items``), which are the only ones such a query can return. Results,
pages and ``LastEvaluatedKey`` are moto's (``tests/unit/test_moto_transactions.py``),
and a store of 100,000 facts answers a recall in seconds, as DynamoDB's partition
lookup would, not minutes (docs/issues.md#issue-23-item-2). An index Query still reads
every item (moto keeps no index), but no longer sorts the whole table first: moto sorts
the matches it keeps (docs/issues.md#issue-41-item-1).
"""

from __future__ import annotations

import contextlib
import copy
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from moto.dynamodb import models
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.models.table import Table

_original_transact_write_items = models.DynamoDBBackend.transact_write_items
_original_query = Table.query
_original_all_items = Table.all_items
_install_lock = threading.Lock()
_installed = {"done": False}
_embedded = threading.local()
"""``active`` is True on a thread while it serves an embedded server's request."""


def _serving_embedded_request() -> bool:
    return bool(getattr(_embedded, "active", False))


class _CopyWithoutTableBackup:
    """Stands in for the ``copy`` module inside ``moto.dynamodb.models``.

    On a thread serving an embedded server's request, ``deepcopy`` of a whole
    ``Table`` (moto's transaction backup) returns the table itself: the touched
    items are backed up instead (``_touched_items``). Everything else is the real
    ``copy`` module.
    """

    def __getattr__(self, name: str) -> Any:
        return getattr(copy, name)

    @staticmethod
    def deepcopy(value: Any, memo: dict[int, Any] | None = None) -> Any:
        """``copy.deepcopy``, except for a whole table during an embedded request."""
        if isinstance(value, Table) and _serving_embedded_request():
            return value
        return copy.deepcopy(value, memo)


@dataclass
class _ItemBackup:
    """One touched item as it was before the transaction (``item`` None: absent)."""

    table: Table
    hash_value: DynamoType
    range_value: DynamoType | None
    item: Any
    partition_existed: bool


def _touched_items(backend: Any, transact_items: list[dict[str, Any]]) -> list[_ItemBackup]:
    """Copies of the items a transaction names, before it runs.

    An operation whose table or key cannot be read is skipped: moto refuses it
    before writing anything for it.
    """
    backups: list[_ItemBackup] = []
    for entry in transact_items:
        try:
            ((op_type, op),) = entry.items()
            table = backend.get_table(op["TableName"])
            key = op["Item"] if op_type == "Put" else op["Key"]
            hash_value = DynamoType(key[table.hash_key_attr])
            range_value = (
                DynamoType(key[table.range_key_attr]) if table.range_key_attr is not None else None
            )
            current = table.get_item(hash_value, range_value)
        except Exception:
            continue
        backups.append(
            _ItemBackup(
                table=table,
                hash_value=hash_value,
                range_value=range_value,
                item=copy.deepcopy(current),
                partition_existed=hash_value in table.items,
            )
        )
    return backups


def _restore(backups: list[_ItemBackup]) -> None:
    """Put every touched item back as it was (last backup first)."""
    for backup in reversed(backups):
        items = backup.table.items
        if backup.range_value is None:
            if backup.item is None:
                items.pop(backup.hash_value, None)
            else:
                items[backup.hash_value] = backup.item
            continue
        if backup.item is None:
            partition = items.get(backup.hash_value)
            if partition is not None:
                partition.pop(backup.range_value, None)
                if not partition and not backup.partition_existed:
                    del items[backup.hash_value]
        else:
            items[backup.hash_value][backup.range_value] = backup.item


def _transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
    """moto's ``transact_write_items``; on an embedded request, with item backups."""
    if not _serving_embedded_request():
        _original_transact_write_items(self, transact_items)
        return
    backups = _touched_items(self, transact_items)
    try:
        _original_transact_write_items(self, transact_items)
    except BaseException:
        _restore(backups)
        raise


_UNSORTED = object()
"""``_embedded.partition`` for an index Query: every item, unsorted (moto sorts the
index Query's matches itself, so the whole table's sort is wasted work)."""


def _query(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
    """moto's ``Table.query``; on an embedded request, a query of the table's own key
    reads only ``hash_key``'s partition, and an index query filters the table's items
    without sorting them first (``_partition_items``)."""
    index_name = args[6] if len(args) > 6 else kwargs.get("index_name")
    if not _serving_embedded_request() or (index_name is None and hash_key is None):
        return _original_query(self, hash_key, *args, **kwargs)
    previous = getattr(_embedded, "partition", None)
    _embedded.partition = _UNSORTED if index_name is not None else hash_key
    try:
        return _original_query(self, hash_key, *args, **kwargs)
    finally:
        _embedded.partition = previous


def _partition_items(self: Any) -> Any:
    """moto's ``Table.all_items``, limited to the partition ``_query`` is reading (in
    moto's order: sorted by range key within one hash key)."""
    hash_key = getattr(_embedded, "partition", None)
    if hash_key is None or not self.range_key_attr:
        return _original_all_items(self)
    if hash_key is _UNSORTED:
        return [item for partition in self.items.values() for item in partition.values()]
    partition = self.items.get(hash_key, {})
    return sorted(partition.values(), key=lambda item: item.range_key)


def install() -> None:
    """Put the replacement in place (idempotent). Inert outside
    ``embedded_server_requests``: other callers get stock moto."""
    with _install_lock:
        if not _installed["done"]:
            # Replacing moto's own names is the point here (the types say "don't").
            models.copy = _CopyWithoutTableBackup()  # type: ignore[attr-defined,assignment]
            models.DynamoDBBackend.transact_write_items = _transact_write_items  # type: ignore[method-assign]
            Table.query = _query  # type: ignore[method-assign]
            Table.all_items = _partition_items  # type: ignore[method-assign]
            _installed["done"] = True


@contextlib.contextmanager
def embedded_server_requests() -> Iterator[None]:
    """Serve what runs inside with item backups instead of table backups (this thread)."""
    install()
    previous = _serving_embedded_request()
    _embedded.active = True
    try:
        yield
    finally:
        _embedded.active = previous
