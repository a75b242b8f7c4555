"""A faster ``TransactWriteItems`` for the embedded DynamoDB.

moto backs up every table a transaction touches with ``copy.deepcopy`` so it
can roll back, which makes each transaction cost O(table size): a local server
with a few thousand memories would take seconds per save. This replacement
checks every condition (and that no item appears twice) against the current
state first, cancels with the same per-item reasons as moto if any fails, and
only then applies the writes with moto's own code, without the backup.

It is only correct when requests are served one at a time, which the embedded
server guarantees (``infra/local_dynamodb.py``); it is never used in the
deployed service, which talks to DynamoDB.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from moto.dynamodb import models
from moto.dynamodb.comparisons import get_filter_expression
from moto.dynamodb.exceptions import MultipleTransactionsException, TransactionCanceledException

_original = models.DynamoDBBackend.transact_write_items
_installed = threading.Lock()
_state = {"installed": False}


class _NoBackup:
    """Stands in for the ``copy`` module inside moto's transaction code."""

    @staticmethod
    def deepcopy(value: Any) -> Any:
        return value


def _key_of(backend: Any, op_type: str, op: dict[str, Any]) -> dict[str, Any]:
    if op_type != "Put":
        return dict(op["Key"])
    table = backend.get_table(op["TableName"])
    attributes = op["Item"]
    key = {table.hash_key_attr: attributes[table.hash_key_attr]}
    if table.range_key_attr is not None:
        key[table.range_key_attr] = attributes[table.range_key_attr]
    return key


def _precheck(backend: Any, transact_items: list[dict[str, Any]]) -> None:
    """Raise moto's own cancellation if any condition fails; change nothing."""
    seen: set[tuple[str, str]] = set()
    reasons: list[Any] = []
    for item in transact_items:
        ((op_type, op),) = item.items()
        key = _key_of(backend, op_type, op)
        identity = (str(op["TableName"]), str(dict(sorted(key.items()))))
        if identity in seen:
            raise MultipleTransactionsException()
        seen.add(identity)
        expression = op.get("ConditionExpression")
        if expression is None:
            reasons.append((None, None, None))
            continue
        current = backend.get_item(op["TableName"], key)
        condition = get_filter_expression(
            expression, op.get("ExpressionAttributeNames"), op.get("ExpressionAttributeValues")
        )
        if condition.expr(current):
            reasons.append((None, None, None))
            continue
        old = None
        if op.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD" and current:
            old = current.to_json()["Attributes"]
        reasons.append(("ConditionalCheckFailed", "The conditional request failed", old))
    if any(code is not None for code, _, _ in reasons):
        raise TransactionCanceledException(reasons)


def _fast_transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
    _precheck(self, transact_items)
    with _without_backup():
        _original(self, transact_items)


@contextlib.contextmanager
def _without_backup() -> Iterator[None]:
    saved = models.copy
    models.copy = _NoBackup  # type: ignore[assignment]
    try:
        yield
    finally:
        models.copy = saved


def install() -> None:
    """Replace moto's ``transact_write_items`` in this process (idempotent)."""
    with _installed:
        if not _state["installed"]:
            models.DynamoDBBackend.transact_write_items = _fast_transact_write_items
            _state["installed"] = True
