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
the whole table; here, on an embedded request, it reads the queried partition's items
only (``_partition_items``), which are the only ones such a query can return, and of
those only the ones a page's walk can reach: the partition's range keys are kept sorted
until an item is put or deleted, and the key condition, the exclusive start key and
``Limit`` are found in them by bisection (``_sorted_partition``), so a page of a large
partition costs what it returns (docs/issues.md#issue-41-item-4). Results,
pages and ``LastEvaluatedKey`` are moto's (``tests/unit/test_moto_transactions.py``),
and a store of 100,000 facts answers a recall in seconds, as DynamoDB's partition
lookup would, not minutes (docs/issues.md#issue-23-item-2).

``Query`` of an index: stock moto keeps no index and tests every item of the table.
Here each table an embedded request queries through an index gets a filing
(``_IndexFiling``): per index, the primary keys of the items under each value of the
index's hash key attribute(s). It is built in one pass on the table's first index Query
(and again when its indexes change, or its items mapping is replaced) and kept current
on every thread by the places where moto writes an item: ``Table.put_item`` and
``Table.delete_item`` (PutItem, BatchWriteItem, transactions, PartiQL, the journal's
replay), ``update_item`` (which changes the stored item in place) and
``transact_write_items`` (whose failure puts items back). A write whose key cannot be
read drops the filing, and a filed item found moved at Query time rebuilds it. An index
Query then hands moto's own Query code just that partition's items, in moto's order, so
sorting, paging, filters, projections and errors stay moto's
(``tests/unit/test_moto_index_query.py`` holds it against stock moto over random
writes and Queries), and the export and erasure of one workspace cost the same beside
ten times more data of others (docs/issues.md#issue-41-item-1; measurements:
docs/DECISIONS.md#embedded-index-queries).
"""

from __future__ import annotations

import contextlib
import copy
import threading
import weakref
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from moto.dynamodb import models
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.models.table import Table

_original_transact_write_items = models.DynamoDBBackend.transact_write_items
_original_query = Table.query
_original_all_items = Table.all_items
_original_put_item = Table.put_item
_original_delete_item = Table.delete_item
_original_update_item = models.DynamoDBBackend.update_item
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
    """moto's ``transact_write_items``; on an embedded request, with item backups. Either
    way, the index filings of the tables it names are brought up to date afterwards
    (``_refile_named``: a failed transaction puts items back without moto's writes)."""
    try:
        if not _serving_embedded_request():
            _original_transact_write_items(self, transact_items)
            return
        backups = _touched_items(self, transact_items)
        try:
            _original_transact_write_items(self, transact_items)
        except BaseException:
            _restore(backups)
            raise
    finally:
        _keys_changed()  # a failed one puts items back without moto's writes
        for entry in transact_items:
            try:
                ((op_type, op),) = entry.items()
                name, key = op["TableName"], op["Item"] if op_type == "Put" else op["Key"]
            except Exception:
                _forget_all_filings()
                continue
            _refile_named(self, name, key)


_UNSORTED = object()
"""``_embedded.partition`` for an index Query whose candidates are not known (an unknown
index, or key conditions that do not name all of the index's hash key attributes):
every item, unsorted (moto sorts the index Query's matches itself)."""

PrimaryKey = tuple[DynamoType, DynamoType | None]
"""An item's place in moto's ``Table.items``: its hash key and range key (None: none)."""

IndexValue = tuple[DynamoType, ...]
"""The values of an index's hash key attribute(s) in one item (one index partition)."""

Signature = tuple[tuple[str, tuple[str, ...]], ...]
"""A table's indexes as a filing sees them: (index name, its hash key attributes)."""


@dataclass
class _Candidates:
    """``_embedded.partition`` for an index Query: the items of its index partition, in
    moto's ``all_items`` order."""

    items: list[Any]


@dataclass
class _IndexFiling:
    """One table's items filed by index partition, kept current write by write.

    Attributes:
        signature: the table's indexes when the filing was built; another signature
            (``UpdateTable`` added, dropped or changed an index) means rebuild.
        stored: the table's ``items`` mapping it files; another one means rebuild.
        partitions: index name -> index hash value(s) -> the primary keys filed there.
        filed: primary key -> index name -> where that item is filed.
    """

    signature: Signature
    stored: Any
    partitions: dict[str, dict[IndexValue, set[PrimaryKey]]] = field(default_factory=dict)
    filed: dict[PrimaryKey, dict[str, IndexValue]] = field(default_factory=dict)

    def refile(self, table: Table, key: PrimaryKey) -> None:
        """Take ``key`` out of its index partitions and file the item now stored under
        it (if any) where its attributes put it."""
        for index_name, value in self.filed.pop(key, {}).items():
            keys = self.partitions[index_name][value]
            keys.discard(key)
            if not keys:
                del self.partitions[index_name][value]
        item = _stored_item(table, key)
        if item is None:
            return
        places: dict[str, IndexValue] = {}
        for index_name, attributes in self.signature:
            place = _index_value(item, attributes)
            if place is not None:
                self.partitions.setdefault(index_name, {}).setdefault(place, set()).add(key)
                places[index_name] = place
        if places:
            self.filed[key] = places

    def candidates(self, table: Table, index_name: str, value: IndexValue) -> list[Any] | None:
        """The items filed under ``value`` in ``index_name``; None when one of them is
        no longer stored there as filed (a write the filing missed: rebuild)."""
        attributes = dict(self.signature)[index_name]
        found = []
        for key in self.partitions.get(index_name, {}).get(value, ()):
            item = _stored_item(table, key)
            if item is None or _index_value(item, attributes) != value:
                return None
            found.append(item)
        return found


_filings: weakref.WeakKeyDictionary[Table, _IndexFiling] = weakref.WeakKeyDictionary()
"""The index filing of each table an embedded request has queried through an index."""
_filing_lock = threading.RLock()


def _signature(table: Table) -> Signature:
    return tuple(
        (index.name, tuple(k["AttributeName"] for k in index.schema if k["KeyType"] == "HASH"))
        for index in table.all_indexes()
    )


def _index_value(item: Any, attributes: tuple[str, ...]) -> IndexValue | None:
    """The item's values of ``attributes`` (None: one is missing or is not a key type;
    moto's index Query cannot match such an item)."""
    values = tuple(item.attrs.get(name) for name in attributes)
    if not values or any(value is None for value in values):
        return None
    try:
        hash(values)
    except TypeError:
        return None
    return values


def _stored_item(table: Table, key: PrimaryKey) -> Any:
    hash_value, range_value = key
    if table.range_key_attr is None:
        return table.items.get(hash_value)
    return table.items.get(hash_value, {}).get(range_value) if range_value is not None else None


def _stored_items(table: Table) -> Iterable[Any]:
    if table.range_key_attr is None:
        return table.items.values()
    return (item for partition in table.items.values() for item in partition.values())


def _build_filing(table: Table, signature: Signature) -> _IndexFiling:
    """File every item of ``table`` (one pass; after a change of its indexes, or the
    first index Query of an embedded request)."""
    filing = _IndexFiling(signature=signature, stored=table.items)
    for item in list(_stored_items(table)):
        filing.refile(table, (item.hash_key, item.range_key))
    _filings[table] = filing
    return filing


def _forget_all_filings() -> None:
    """Drop every filing (a write whose items are not known: rebuild on the next Query)."""
    with _filing_lock:
        _filings.clear()


def _refile(table: Table, key: Callable[[], PrimaryKey]) -> None:
    """After a write to ``table``: refile the item under ``key()``; when the key cannot
    be read, drop the table's filing (rebuilt on its next index Query)."""
    with _filing_lock:
        filing = _filings.get(table)
        if filing is None:
            return
        try:
            primary_key = key()
        except Exception:
            del _filings[table]
            return
        filing.refile(table, primary_key)


def _key_of(table: Table, attributes: dict[str, Any]) -> PrimaryKey:
    """The primary key named by ``attributes`` (attribute-value form); raises KeyError
    or TypeError when it names none."""
    range_attribute = table.range_key_attr
    return (
        DynamoType(attributes[table.hash_key_attr]),
        DynamoType(attributes[range_attribute]) if range_attribute is not None else None,
    )


def _refile_named(backend: Any, table_name: Any, key: dict[str, Any]) -> None:
    table = backend.tables.get(table_name) if isinstance(table_name, str) else None
    if table is not None:
        _refile(table, lambda: _key_of(table, key))


def _put_item(self: Any, item_attrs: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
    """moto's ``Table.put_item`` (every put: PutItem, BatchWriteItem, transactions,
    PartiQL, an UpdateItem that creates); then the item is refiled."""
    try:
        return _original_put_item(self, item_attrs, *args, **kwargs)
    finally:
        _keys_changed()
        _refile(self, lambda: _key_of(self, item_attrs))


def _delete_item(self: Any, hash_key: Any, range_key: Any, *args: Any, **kwargs: Any) -> Any:
    """moto's ``Table.delete_item`` (every delete); then the key is refiled."""
    try:
        return _original_delete_item(self, hash_key, range_key, *args, **kwargs)
    finally:
        _keys_changed()
        _refile(self, lambda: (hash_key, range_key))


def _update_item(self: Any, table_name: str, key: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
    """moto's ``update_item`` (UpdateItem and a transaction's Update change the stored
    item in place); then the item is refiled."""
    try:
        return _original_update_item(self, table_name, key, *args, **kwargs)
    finally:
        _refile_named(self, table_name, key)


def _index_candidates(table: Table, index_name: str, conditions: Any) -> Any:
    """``_Candidates`` for a Query of ``index_name`` with these hash key conditions
    (``[(attribute, DynamoType)]``, moto's), or ``_UNSORTED`` when they do not pick one
    index partition."""
    signature = _signature(table)
    attributes = dict(signature).get(index_name)
    wanted = dict(conditions or [])
    if not attributes or any(name not in wanted for name in attributes):
        return _UNSORTED
    value = tuple(wanted[name] for name in attributes)
    try:
        hash(value)
    except TypeError:
        return _UNSORTED
    with _filing_lock:
        filing = _filings.get(table)
        if filing is None or filing.signature != signature or filing.stored is not table.items:
            filing = _build_filing(table, signature)
        items = filing.candidates(table, index_name, value)
        if items is None:
            items = _build_filing(table, signature).candidates(table, index_name, value)
    return _Candidates(sorted(items or [], key=_all_items_order))


def _all_items_order(item: Any) -> Any:
    """The sort key of moto's ``Table.all_items``."""
    return (item.hash_key, item.range_key) if item.range_key else item.hash_key


def _query(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
    """moto's ``Table.query``; on an embedded request, a query of the table's own key
    reads only ``hash_key``'s partition, and an index query only the items filed under
    its index partition (``_index_candidates``, read through ``_partition_items``)."""
    index_name = args[6] if len(args) > 6 else kwargs.get("index_name")
    if not _serving_embedded_request() or (index_name is None and hash_key is None):
        return _original_query(self, hash_key, *args, **kwargs)
    previous = getattr(_embedded, "partition", None)
    if index_name is None:
        range_comparison = args[0] if args else kwargs.get("range_comparison")
        range_objs = args[1] if len(args) > 1 else kwargs.get("range_objs")
        limit = args[2] if len(args) > 2 else kwargs.get("limit")
        start = args[3] if len(args) > 3 else kwargs.get("exclusive_start_key")
        forward = args[4] if len(args) > 4 else kwargs.get("scan_index_forward", True)
        _embedded.partition = _RangeOfPartition(
            hash_key,
            range_comparison,
            range_objs or [],
            forward is not False,
            limit if isinstance(limit, int) and limit > 0 else None,
            _start_range_key(self, start),
        )
    else:
        conditions = args[9] if len(args) > 9 else kwargs.get("hash_key_conditions")
        _embedded.partition = _index_candidates(self, index_name, conditions)
    try:
        return _original_query(self, hash_key, *args, **kwargs)
    finally:
        _embedded.partition = previous


def _partition_items(self: Any) -> Any:
    """moto's ``Table.all_items``, limited to the partition ``_query`` is reading (in
    moto's order: sorted by range key within one hash key)."""
    hash_key = getattr(_embedded, "partition", None)
    if isinstance(hash_key, _Candidates):
        return list(hash_key.items)
    if isinstance(hash_key, _RangeOfPartition):
        if not self.range_key_attr:
            return _original_all_items(self)
        return _sorted_partition(self, hash_key)
    if hash_key is None or not self.range_key_attr:
        return _original_all_items(self)
    if hash_key is _UNSORTED:
        return list(_stored_items(self))
    partition = self.items.get(hash_key, {})
    return sorted(partition.values(), key=lambda item: item.range_key)


@dataclass(frozen=True)
class _RangeOfPartition:
    """``_embedded.partition`` for a Query of the table's own key: the partition and the
    key condition on its range key (moto's comparison name and values; None: none)."""

    hash_key: Any
    comparison: str | None
    values: list[Any]
    forward: bool = True
    limit: int | None = None
    start: Any = None


@dataclass
class _SortedKeys:
    """A partition's range keys in order, as of ``generation`` (``_keys_changed``)."""

    generation: int
    stored: Any
    casts: list[Any]
    keys: list[Any]


_sorted_keys: weakref.WeakKeyDictionary[Table, dict[Any, _SortedKeys]] = weakref.WeakKeyDictionary()
"""Per table, the range keys of the partitions embedded Queries read, kept until any
item is put or deleted anywhere (an update never changes a key)."""
_key_generation = {"n": 0}


def _keys_changed() -> None:
    """An item was put or deleted (or a transaction ran): every sorted key list is old."""
    with _filing_lock:
        _key_generation["n"] += 1


def _sorted_partition(table: Table, query: _RangeOfPartition) -> list[Any]:
    """The partition's items from the first that can meet the range key condition on
    (in the Query's direction), in moto's order (sorted by range key): found by
    bisection in the partition's sorted range keys, which are kept until a key changes,
    so a page no longer sorts the partition. moto still tests each item it is given, so
    the answer is moto's."""
    partition = table.items.get(query.hash_key, {})
    with _filing_lock:
        cached = _sorted_keys.setdefault(table, {}).get(query.hash_key)
        generation = _key_generation["n"]
        if (
            cached is None
            or cached.generation != generation
            or cached.stored is not partition
            or len(cached.keys) != len(partition)
        ):
            try:
                keys = sorted(partition, key=lambda key: key.cast_value)
                casts = [key.cast_value for key in keys]
            except TypeError:  # keys of mixed types: moto sorts its own way
                return sorted(partition.values(), key=lambda item: item.range_key)
            cached = _SortedKeys(generation, partition, casts, keys)
            _sorted_keys[table][query.hash_key] = cached
    low, high = _key_span(cached.casts, query)
    start, end = _walk(cached.casts, low, high, query)
    return [partition[key] for key in cached.keys[start:end] if key in partition]


def _walk(casts: list[Any], low: int, high: int, query: _RangeOfPartition) -> tuple[int, int]:
    """The positions of ``casts`` moto's walk of one page can reach: the matches
    (``low:high``) after the exclusive start key, in the Query's direction; when more
    than ``Limit`` remain, ``Limit`` of them and one more (which makes moto write the
    continuation key); else everything to the partition's end, because moto weighs the
    1 MB page limit against the keys after its last match too."""
    try:
        after = query.start.cast_value if query.start is not None else None
        if query.forward:
            first = low if after is None else max(low, bisect_right(casts, after))
            if query.limit and high - first > query.limit:
                return first, first + query.limit + 1
            return first, len(casts)
        last = high if after is None else min(high, bisect_left(casts, after))
        if query.limit and last - low > query.limit:
            return last - query.limit - 1, last
        return 0, last
    except TypeError:
        return (low, len(casts)) if query.forward else (0, high)


def _start_range_key(table: Table, start: Any) -> Any:
    """The exclusive start key's range key (a ``DynamoType``), or None."""
    if not start or not table.range_key_attr:
        return None
    value = start.get(table.range_key_attr)
    if value is None:
        return None
    return value if isinstance(value, DynamoType) else DynamoType(value)


def _key_span(casts: list[Any], query: _RangeOfPartition) -> tuple[int, int]:
    """The positions in ``casts`` (sorted) the key condition can match: every one when
    there is none, or it is not a comparison bisection serves."""
    whole = (0, len(casts))
    try:
        values = [value.cast_value for value in query.values]
        comparison = (query.comparison or "").upper()
        if comparison in ("EQ", "="):
            return bisect_left(casts, values[0]), bisect_right(casts, values[0])
        if comparison in ("LT", "<"):
            return 0, bisect_left(casts, values[0])
        if comparison in ("LE", "<="):
            return 0, bisect_right(casts, values[0])
        if comparison in ("GT", ">"):
            return bisect_right(casts, values[0]), len(casts)
        if comparison in ("GE", ">="):
            return bisect_left(casts, values[0]), len(casts)
        if comparison == "BETWEEN":
            return bisect_left(casts, values[0]), bisect_right(casts, values[1])
        if comparison == "BEGINS_WITH" and isinstance(values[0], str):
            low = bisect_left(casts, values[0])
            high = low
            while high < len(casts) and str(casts[high]).startswith(values[0]):
                high += 1
            return low, high
    except (TypeError, IndexError):
        return whole
    return whole


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
            Table.put_item = _put_item  # type: ignore[method-assign]
            Table.delete_item = _delete_item  # type: ignore[method-assign]
            models.DynamoDBBackend.update_item = _update_item  # type: ignore[method-assign]
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
