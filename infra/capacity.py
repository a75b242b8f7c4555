"""The read and write capacity units DynamoDB would charge for each request a boto3
client makes, measured while the app runs on moto (docs/operations.md#cost).

moto answers requests but charges nothing (its ``ConsumedCapacity`` is not DynamoDB's
arithmetic), so ``CapacityMeter`` hooks a DynamoDB client's botocore events
(``before-parameter-build`` and ``after-call``) and computes the units itself from the
bytes each request reads or writes, by the rules of the AWS DynamoDB Developer Guide
pages named below (each rule is a function here, tested in
``tests/unit/test_capacity.py``):

* **Item size** ("DynamoDB item sizes and formats"): the sum over attributes of the
  name's UTF-8 length and the value's size: a string its UTF-8 bytes, a number
  1 byte per two significant digits plus 1 (leading and trailing zeros trimmed), a
  binary its raw bytes, a boolean or null 1 byte, a list or map 3 bytes plus its
  elements plus 1 byte per element (a map element also counts its name), a set the
  sum of its elements.
* **Reads** ("DynamoDB read and write operations"; "Filter expressions for the Query
  operation"): a strongly consistent read costs 1 unit per 4 KB, an eventually
  consistent one half that, a transactional one twice. ``GetItem`` and each item of
  ``BatchGetItem`` / ``TransactGetItems`` round the item up to 4 KB on its own; a
  ``Query`` or ``Scan`` rounds the sum of the items it read up to 4 KB once per
  request, counting the items *before* its ``FilterExpression`` and, from a
  secondary index, the index item (the keys and the projected attributes). The size
  is the whole item's (or index item's), whatever ``ProjectionExpression`` returns.
  Global secondary indexes are read eventually consistent only. A read of nothing
  still costs one unit (half for eventually consistent).
* **Writes** ("DynamoDB read and write operations"): 1 unit per 1 KB of the item,
  rounded up per item; a put or an update of an existing item counts the larger of
  the item before and after; a delete counts the deleted item; a write whose
  condition fails still costs the existing item's size (at least 1 unit). A
  transactional write costs twice; a ``ConditionCheck`` costs as a write of the
  checked item.
* **Global secondary indexes** ("Using Global Secondary Indexes in DynamoDB",
  section "Writes"): a table write that puts, changes or removes an item's index item
  (its keys or a projected attribute) costs the index its own write units (index item
  size, larger of before and after); a change of the index's key is a delete plus a
  put in the index; a write that leaves the index item as it was costs the index
  nothing; an item without the index's keys is not in it (sparse).

To know the items before and after a write, the meter reads them with a second,
unhooked client (``reader``, a strongly consistent ``GetItem``; on moto it costs
nothing): before the request for each key it writes, after it for the new image.
Index items come from the table's own GSI definitions (``DescribeTable``: key schema,
projection ``ALL`` / ``INCLUDE`` / ``KEYS_ONLY``), so the meter fits any table.

Approximations, said where they apply: a cancelled transaction is charged as its
condition checks (twice each item's existing size), index writes of a transaction are
doubled like the table's, and a number's size uses its significant digits as written.

Usage::

    meter = CapacityMeter(client)          # the client the services use
    with meter.measure() as tally:
        services.memories.save(...)
    tally.read_units, tally.write_units, tally.by_target
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import boto3

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

READ_BLOCK = 4096
"""Bytes per read unit (strongly consistent)."""
WRITE_BLOCK = 1024
"""Bytes per write unit."""
Item = Mapping[str, Any]
"""An item in DynamoDB's wire format, as a boto3 client sends and returns it
(``{"name": {"S": "…"}}``; binary values as ``bytes``)."""


def number_size(text: str) -> int:
    """The bytes of a number value: 1 per two significant digits, plus 1.

    Args:
        text: the number as DynamoDB's wire format writes it (``"12.50"``, ``"-3e5"``).

    Returns:
        ``ceil(significant digits / 2) + 1``; ``0`` has one significant digit.
    """
    mantissa = text.strip().lstrip("+-").lower().split("e", 1)[0]
    # DynamoDB stores numbers normalized: leading and trailing zeros are not kept.
    digits = mantissa.replace(".", "").strip("0")
    return math.ceil(max(len(digits), 1) / 2) + 1


def _binary_size(value: bytes | bytearray | str) -> int:
    """Raw bytes of a binary value (a str here is already the raw text)."""
    return len(value.encode("utf-8")) if isinstance(value, str) else len(value)


def attribute_size(value: Mapping[str, Any]) -> int:
    """The bytes of one attribute value, without its name.

    Args:
        value: one wire-format value, e.g. ``{"S": "abc"}``, ``{"L": [...]}``.

    Returns:
        Its size by "DynamoDB item sizes and formats".

    Raises:
        ValueError: the value has no known type.
    """
    ((kind, inner),) = value.items()
    if kind == "S":
        return len(inner.encode("utf-8"))
    if kind == "N":
        return number_size(inner)
    if kind == "B":
        return _binary_size(inner)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(text.encode("utf-8")) for text in inner)
    if kind == "NS":
        return sum(number_size(text) for text in inner)
    if kind == "BS":
        return sum(_binary_size(raw) for raw in inner)
    if kind == "L":
        return 3 + sum(attribute_size(element) + 1 for element in inner)
    if kind == "M":
        return 3 + sum(
            len(name.encode("utf-8")) + attribute_size(element) + 1
            for name, element in inner.items()
        )
    raise ValueError(f"unknown attribute type {kind!r}")


def item_size(item: Item | None) -> int:
    """The bytes of an item: each attribute's name (UTF-8) plus its value; 0 for None."""
    if not item:
        return 0
    return sum(len(name.encode("utf-8")) + attribute_size(value) for name, value in item.items())


def read_units(size: int, *, consistent: bool, transactional: bool = False) -> float:
    """Read units of reading ``size`` bytes in one rounding (one item, or one Query page).

    Args:
        size: bytes read (0 still costs the minimum).
        consistent: strongly consistent (1 unit per 4 KB) or eventually (half).
        transactional: a transactional read (2 units per 4 KB; ``consistent`` ignored).
    """
    blocks = max(1, math.ceil(size / READ_BLOCK))
    if transactional:
        return 2.0 * blocks
    return float(blocks) if consistent else blocks / 2


def write_units(size: int) -> int:
    """Write units of writing one item of ``size`` bytes: 1 per 1 KB, at least 1."""
    return max(1, math.ceil(size / WRITE_BLOCK))


@dataclass(frozen=True)
class IndexShape:
    """One global secondary index: its key attributes and what it projects.

    Attributes:
        name: the index's name.
        keys: the index's partition (and sort) key attribute names.
        projection: ``ALL``, ``INCLUDE`` or ``KEYS_ONLY``.
        included: the non-key attributes an ``INCLUDE`` index projects.
    """

    name: str
    keys: tuple[str, ...]
    projection: str
    included: frozenset[str] = frozenset()

    def index_item(self, item: Item | None, table_keys: Sequence[str]) -> dict[str, Any] | None:
        """The item as the index stores it, or None when the item is not in the index
        (no item, or an index key attribute missing: a sparse index)."""
        if not item or any(key not in item for key in self.keys):
            return None
        if self.projection == "ALL":
            return dict(item)
        kept = set(self.keys) | set(table_keys)
        if self.projection == "INCLUDE":
            kept |= self.included
        return {name: value for name, value in item.items() if name in kept}


@dataclass(frozen=True)
class TableShape:
    """A table's key attributes and global secondary indexes (from ``DescribeTable``)."""

    keys: tuple[str, ...]
    indexes: Mapping[str, IndexShape]

    @classmethod
    def from_description(cls, table: Mapping[str, Any]) -> TableShape:
        """Build from ``describe_table(...)["Table"]`` (or ``CreateTable`` arguments)."""
        indexes = {}
        for index in table.get("GlobalSecondaryIndexes", []):
            projection = index.get("Projection", {})
            indexes[index["IndexName"]] = IndexShape(
                name=index["IndexName"],
                keys=tuple(part["AttributeName"] for part in index["KeySchema"]),
                projection=projection.get("ProjectionType", "ALL"),
                included=frozenset(projection.get("NonKeyAttributes", ())),
            )
        return cls(tuple(part["AttributeName"] for part in table["KeySchema"]), indexes)

    def key_of(self, item: Item) -> dict[str, Any]:
        """The item's primary key."""
        return {name: item[name] for name in self.keys}


def index_write_units(
    index: IndexShape, table_keys: Sequence[str], before: Item | None, after: Item | None
) -> int:
    """Write units a table write costs ``index`` (0 when its index item is unchanged).

    Args:
        index: the index.
        table_keys: the table's key attribute names (always projected).
        before: the table item before the write (None: there was none).
        after: the table item after the write (None: deleted, or not written).
    """
    old = index.index_item(before, table_keys)
    new = index.index_item(after, table_keys)
    if old == new:
        return 0
    if old is None or new is None:
        return write_units(item_size(old if new is None else new))
    if any(old[key] != new[key] for key in index.keys):
        return write_units(item_size(old)) + write_units(item_size(new))  # delete + put
    return write_units(max(item_size(old), item_size(new)))


TABLE = "table"
"""The ``by_target`` key of a table's own units (an index's is ``index:<name>``)."""


@dataclass
class Tally:
    """Units and requests counted while a ``CapacityMeter.measure`` block ran.

    Attributes:
        read_units: read units of every request (table and indexes).
        write_units: write units of every request (table and indexes).
        requests: requests by operation name (``Query``, ``PutItem`` …).
        by_target: ``(read, write)`` units by ``table`` / ``index:<name>``.
    """

    read_units: float = 0.0
    write_units: float = 0.0
    requests: Counter[str] = field(default_factory=Counter)
    by_target: dict[str, list[float]] = field(default_factory=dict)

    def add(self, target: str, read: float = 0.0, write: float = 0.0) -> None:
        """Count ``read`` and ``write`` units against ``target``."""
        self.read_units += read
        self.write_units += write
        units = self.by_target.setdefault(target, [0.0, 0.0])
        units[0] += read
        units[1] += write


_WRITES = ("PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems")
_READS = ("GetItem", "BatchGetItem", "TransactGetItems", "Query", "Scan")


class CapacityMeter:
    """Counts the capacity units of every request a DynamoDB client makes.

    Args:
        client: the boto3 DynamoDB client to watch (the one the services use).
        reader: an unhooked client on the same endpoint for the before/after images and
            the Query re-reads; built from ``client``'s region and endpoint when omitted.

    Units go to every ``Tally`` open in ``measure()`` and to ``total``. Requests that
    fail with anything but a failed condition cost nothing (a throttled request is
    not charged).
    """

    def __init__(self, client: DynamoDBClient, reader: DynamoDBClient | None = None) -> None:
        self._client = client
        self._reader = reader or boto3.client(
            "dynamodb",
            region_name=client.meta.region_name,
            endpoint_url=client.meta.endpoint_url,
        )
        self._shapes: dict[str, TableShape] = {}
        self._open: list[Tally] = []
        self.total = Tally()
        events = client.meta.events
        for operation in _WRITES + _READS:
            events.register(f"before-parameter-build.dynamodb.{operation}", self._before)
            events.register(f"after-call.dynamodb.{operation}", self._after)

    def close(self) -> None:
        """Stop watching the client."""
        events = self._client.meta.events
        for operation in _WRITES + _READS:
            events.unregister(f"before-parameter-build.dynamodb.{operation}", self._before)
            events.unregister(f"after-call.dynamodb.{operation}", self._after)

    @contextmanager
    def measure(self) -> Iterator[Tally]:
        """A block whose requests are counted in the yielded ``Tally``."""
        tally = Tally()
        self._open.append(tally)
        try:
            yield tally
        finally:
            self._open.remove(tally)

    def shape(self, table: str) -> TableShape:
        """The table's keys and indexes (described once)."""
        if table not in self._shapes:
            described = self._reader.describe_table(TableName=table)["Table"]
            self._shapes[table] = TableShape.from_description(described)
        return self._shapes[table]

    # -- the hooks -------------------------------------------------------------------

    def _before(
        self, params: dict[str, Any], model: Any, context: dict[str, Any], **_: Any
    ) -> None:
        """Remember the request and the items its writes will change."""
        written = list(_written(self, model.name, params)) if model.name in _WRITES else []
        for target in written:
            target.before = self._get(target.table, target.key)
        context["capacity"] = (params, written)

    def _after(self, parsed: dict[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
        """Charge the request from its answer."""
        state = context.pop("capacity", None)
        if state is None:
            return
        params, written = state
        error = parsed.get("Error", {}).get("Code")
        charges = self._charges(model.name, params, parsed, written, error)
        for tally in (self.total, *self._open):
            tally.requests[model.name] += 1
            for target, read, write in charges:
                tally.add(target, read, write)

    # -- what each operation costs ---------------------------------------------------

    def _charges(
        self,
        operation: str,
        params: dict[str, Any],
        parsed: dict[str, Any],
        written: list[_Written],
        error: str | None,
    ) -> list[Charge]:
        """``(target, read units, write units)`` of one request."""
        if operation in _READS:
            return [] if error else self._read_charges(operation, params, parsed)
        scale = 2 if operation == "TransactWriteItems" else 1
        if error in ("ConditionalCheckFailedException", "TransactionCanceledException"):
            return [
                (TABLE, 0.0, float(scale * write_units(item_size(target.before))))
                for target in written
            ]
        if error:
            return []
        skipped = _unprocessed(self, parsed) if operation == "BatchWriteItem" else []
        charges: list[Charge] = []
        for target in written:
            if (target.table, target.key) not in skipped:
                charges += self._write_charges(target, scale)
        return charges

    def _write_charges(self, target: _Written, scale: int) -> list[Charge]:
        """The table's and each changed index's write units of one written item."""
        if target.check:  # a ConditionCheck changes nothing
            return [(TABLE, 0.0, float(scale * write_units(item_size(target.before))))]
        after = self._get(target.table, target.key)
        larger = max(item_size(target.before), item_size(after))
        charges: list[Charge] = [(TABLE, 0.0, float(scale * write_units(larger)))]
        shape = self.shape(target.table)
        for index in shape.indexes.values():
            units = index_write_units(index, shape.keys, target.before, after)
            if units:
                charges.append((f"index:{index.name}", 0.0, float(scale * units)))
        return charges

    def _read_charges(
        self, operation: str, params: dict[str, Any], parsed: dict[str, Any]
    ) -> list[Charge]:
        """The read units of a read request (each item, or the page)."""
        if operation in ("Query", "Scan"):
            target, size = self._page_size(operation, params)
            consistent = bool(params.get("ConsistentRead")) and target == TABLE
            return [(target, read_units(size, consistent=consistent), 0.0)]
        if operation == "GetItem":
            item = self._get(params["TableName"], params["Key"])
            units = read_units(item_size(item), consistent=bool(params.get("ConsistentRead")))
            return [(TABLE, units, 0.0)]
        charges: list[Charge] = []
        if operation == "BatchGetItem":
            unprocessed = parsed.get("UnprocessedKeys", {})
            for table, request in params["RequestItems"].items():
                skipped = unprocessed.get(table, {}).get("Keys", [])
                consistent = bool(request.get("ConsistentRead"))
                for key in request["Keys"]:
                    if key not in skipped:
                        size = item_size(self._get(table, key))
                        charges.append((TABLE, read_units(size, consistent=consistent), 0.0))
            return charges
        for entry in params["TransactItems"]:  # TransactGetItems
            get = entry["Get"]
            size = item_size(self._get(get["TableName"], get["Key"]))
            charges.append((TABLE, read_units(size, consistent=True, transactional=True), 0.0))
        return charges

    def _page_size(self, operation: str, params: dict[str, Any]) -> tuple[str, int]:
        """The bytes a Query or Scan page read: the same page again without its filter
        and projection (same key condition, ``Limit`` and start key), summed as the
        table's or the index's items."""
        request = {
            name: value
            for name, value in params.items()
            if name not in _NOT_REREAD and not name.startswith("ExpressionAttribute")
        }
        expression = str(params.get("KeyConditionExpression", ""))
        names = params.get("ExpressionAttributeNames", {})
        values = params.get("ExpressionAttributeValues", {})
        # Only the key condition's placeholders: DynamoDB refuses unused ones.
        if used := {name: names[name] for name in names if _mentions(expression, name)}:
            request["ExpressionAttributeNames"] = used
        if used_values := {name: values[name] for name in values if _mentions(expression, name)}:
            request["ExpressionAttributeValues"] = used_values
        read = self._reader.query if operation == "Query" else self._reader.scan
        items = read(**request).get("Items", [])
        shape = self.shape(params["TableName"])
        index_name = params.get("IndexName")
        if index_name is None:
            return TABLE, sum(item_size(item) for item in items)
        index = shape.indexes[index_name]
        size = sum(item_size(index.index_item(item, shape.keys) or item) for item in items)
        return f"index:{index_name}", size

    def _get(self, table: str, key: Mapping[str, Any]) -> Item | None:
        """The whole item now (strongly consistent, through the unhooked reader)."""
        found = self._reader.get_item(TableName=table, Key=dict(key), ConsistentRead=True)
        return found.get("Item")


Charge = tuple[str, float, float]
"""``(target, read units, write units)``: ``target`` is ``table`` or ``index:<name>``."""
_NOT_REREAD = ("FilterExpression", "ProjectionExpression", "Select", "ReturnConsumedCapacity")


def _mentions(expression: str, placeholder: str) -> bool:
    """Whether ``expression`` uses ``placeholder`` (``#name`` or ``:value``) as a whole word."""
    return re.search(re.escape(placeholder) + r"(?![\w])", expression) is not None


@dataclass
class _Written:
    """One item a write request targets, and the item before the request."""

    table: str
    key: dict[str, Any]
    check: bool = False
    """A ``ConditionCheck`` of a transaction: charged as a write of the checked item."""
    before: Item | None = None


def _written(meter: CapacityMeter, operation: str, params: dict[str, Any]) -> Iterator[_Written]:
    """Each item a write request targets (table and primary key)."""
    if operation == "PutItem":
        yield _Written(params["TableName"], meter.shape(params["TableName"]).key_of(params["Item"]))
    elif operation in ("UpdateItem", "DeleteItem"):
        yield _Written(params["TableName"], dict(params["Key"]))
    elif operation == "BatchWriteItem":
        for table, requests in params["RequestItems"].items():
            for request in requests:
                yield _Written(table, _request_key(meter, table, request))
    else:  # TransactWriteItems
        for entry in params["TransactItems"]:
            ((action, body),) = entry.items()
            table = body["TableName"]
            key = meter.shape(table).key_of(body["Item"]) if action == "Put" else body["Key"]
            yield _Written(table, dict(key), check=action == "ConditionCheck")


def _request_key(meter: CapacityMeter, table: str, request: Mapping[str, Any]) -> dict[str, Any]:
    """The primary key of one ``BatchWriteItem`` request (put or delete)."""
    if "PutRequest" in request:
        return meter.shape(table).key_of(request["PutRequest"]["Item"])
    return dict(request["DeleteRequest"]["Key"])


def _unprocessed(meter: CapacityMeter, parsed: dict[str, Any]) -> list[tuple[str, Any]]:
    """``(table, key)`` of the writes a ``BatchWriteItem`` left unprocessed (not charged)."""
    return [
        (table, _request_key(meter, table, request))
        for table, requests in parsed.get("UnprocessedItems", {}).items()
        for request in requests
    ]
