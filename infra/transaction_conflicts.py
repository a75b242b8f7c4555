"""DynamoDB's transaction conflicts for a client of the embedded DynamoDB, which serves
one request at a time and so never has two writes in progress at once (no
``TransactionConflict`` ever). ``TransactionConflicts`` hooks a boto3 client's
``before-call`` event and refuses, before they are sent, the writes DynamoDB would
refuse for meeting a transaction in progress (AWS DynamoDB Developer Guide, "Transaction
conflict handling in DynamoDB"):

* a ``TransactWriteItems`` with an item that another ``TransactWriteItems`` still in
  progress writes or checks is cancelled (``TransactionCanceledException``, reason
  ``TransactionConflict`` on that item, ``None`` on the others); nothing is written;
* a ``PutItem``, ``UpdateItem`` or ``DeleteItem`` of such an item is refused with
  ``TransactionConflictException``.

A transaction that is let through is "in progress" on its items for ``hold_seconds``
from the moment it is sent: DynamoDB's own time to run it, which the embedded server's
queue does not model. Single-item writes are taken as instantaneous (they never make a
transaction conflict). For benchmarks and tests of concurrent writers
(``bench/recall_concurrency.py``); the deployed service never loads it.

Usage::

    conflicts = TransactionConflicts(client, hold_seconds=0.02)
    ...  # threads writing through ``client``
    conflicts.cancelled, conflicts.refused
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from botocore.awsrequest import AWSResponse, HTTPHeaders

ItemKey = tuple[str, tuple[tuple[str, str], ...]]
"""An item as the rule sees it: the table's name and its key attributes, serialized."""
_SINGLE_WRITES = ("PutItem", "UpdateItem", "DeleteItem")
_TRANSACTION = "TransactWriteItems"


class TransactionConflicts:
    """Refuses a client's writes that meet a transaction in progress, as DynamoDB does.

    Args:
        client: the boto3 DynamoDB client to watch (the one the code under test uses).
        hold_seconds: how long a transaction is in progress on its items once sent.
        key_names: the key attributes of the tables written (this project's ``pk``, ``sk``).
        clock: seconds, monotonic (injectable for tests).

    Attributes:
        cancelled: transactions cancelled with ``TransactionConflict``.
        refused: single-item writes refused with ``TransactionConflictException``.
        let_through: transactions sent on to the server.
    """

    def __init__(
        self,
        client: Any,
        hold_seconds: float,
        key_names: tuple[str, ...] = ("pk", "sk"),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._hold = hold_seconds
        self._key_names = key_names
        self._clock = clock
        self._lock = threading.Lock()
        self._busy_until: dict[ItemKey, float] = {}
        self.cancelled = 0
        self.refused = 0
        self.let_through = 0
        events = client.meta.events
        for operation in (*_SINGLE_WRITES, _TRANSACTION):
            events.register(f"before-call.dynamodb.{operation}", self._before_call)

    def close(self) -> None:
        """Stop watching the client."""
        for operation in (*_SINGLE_WRITES, _TRANSACTION):
            self._client.meta.events.unregister(
                f"before-call.dynamodb.{operation}", self._before_call
            )

    def _before_call(self, model: Any, params: dict[str, Any], **_: Any) -> Any:
        """Answer a conflicting write with DynamoDB's error; let every other one through."""
        request = json.loads(params.get("body") or b"{}")
        with self._lock:
            now = self._clock()
            if model.name == _TRANSACTION:
                return self._transaction(request, now)
            if self._busy(self._item_key(request["TableName"], request["Key"]), now):
                self.refused += 1
                return _error(
                    "TransactionConflictException",
                    "Transaction is ongoing for the item",
                )
            return None

    def _transaction(self, request: dict[str, Any], now: float) -> Any:
        items = list(self._transaction_items(request))
        reasons = ["TransactionConflict" if self._busy(item, now) else "None" for item in items]
        if "TransactionConflict" in reasons:
            self.cancelled += 1
            return _error(
                "TransactionCanceledException",
                "Transaction cancelled, please refer cancellation reasons for specific "
                f"reasons [{', '.join(reasons)}]",
                reasons,
            )
        for item in items:
            self._busy_until[item] = now + self._hold
        self.let_through += 1
        return None

    def _busy(self, item: ItemKey, now: float) -> bool:
        return self._busy_until.get(item, now) > now

    def _transaction_items(self, request: dict[str, Any]) -> Iterator[ItemKey]:
        for action in request["TransactItems"]:
            ((kind, body),) = action.items()
            yield self._item_key(body["TableName"], body["Item"] if kind == "Put" else body["Key"])

    def _item_key(self, table: str, attributes: dict[str, Any]) -> ItemKey:
        return table, tuple(
            (name, json.dumps(attributes[name], sort_keys=True))
            for name in self._key_names
            if name in attributes
        )


def _error(code: str, message: str, reasons: list[str] | None = None) -> Any:
    """What botocore's ``before-call`` takes as the answer (an HTTP 400 with ``code``)."""
    parsed: dict[str, Any] = {
        "ResponseMetadata": {"HTTPStatusCode": 400},
        "Error": {"Code": code, "Message": message},
    }
    if reasons is not None:
        parsed["CancellationReasons"] = [{"Code": reason} for reason in reasons]
    return AWSResponse("", 400, HTTPHeaders(), None), parsed
