"""The single DynamoDB table as the storage adapters use it (``DynamoDBTable``), and
the helpers they share: attribute conversion, the conditional put of a new item,
key-range paging. The adapters (``memories.py``, ``directory.py``, ``recalls.py``,
``reviews.py``, ``routines.py``, ``kv.py``) are, with ``wiring.py``, the only code
that imports boto3.

Every state change is a conditional write or a transaction; each condition
says why it exists. ``status``, ``date``, ``text`` and other reserved words are
always aliased.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from chalicelib.errors import Conflict
from chalicelib.storage.aws_errors import (
    CONFLICT_MESSAGE,
    DYNAMODB_THROTTLED_REASONS,
    DYNAMODB_THROTTLING,
    TRANSACTION_CANCELLED,
    cancellation_reasons,
    translate_errors,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_dynamodb.type_defs import TransactWriteItemTypeDef

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()

QUERY_PAGE = 200
_BATCH_GET_KEYS = 100
"""Items read per Query call while filling a filtered page
(docs/conventions.md#limit-before-filter)."""
TRANSACTION_CONFLICT_ATTEMPTS = 3
"""How often a transaction cancelled only by ``TransactionConflict`` (another
transaction was writing one of its items) is sent again before ``Conflict``."""
_CONFLICT_PAUSE_SECONDS = (0.01, 0.05)
"""Jittered pause before sending a conflicted transaction again: the transaction in
the way commits within milliseconds."""


Row = TypeVar("Row")


def key_range_after(prefix: str, after: str | None) -> dict[str, str]:
    """``:low`` and ``:high`` of a ``BETWEEN`` over the sort keys starting with
    ``prefix``, from ``prefix + after`` on: one page of a list (docs/reference.md#5-limits).

    The range includes the key of ``after`` itself, so a page of ``limit`` reads
    ``limit + 2`` rows (``after``, the page, one more to know the list goes on) and
    hands them to ``page_after``.
    """
    return {":low": prefix + (after or ""), ":high": prefix + "\U0010ffff"}


def page_after(
    rows: Iterable[Row], limit: int, after: str | None, key: Callable[[Row], str]
) -> tuple[list[Row], str | None]:
    """The first ``limit`` of ``rows`` (in ``key`` order) other than ``after``, and the
    key of the last one to continue after (None when none was left over)."""
    found = [row for row in rows if key(row) != after]
    page = found[:limit]
    return page, (key(page[-1]) if len(found) > limit else None)


def to_attributes(item: dict[str, Any]) -> dict[str, Any]:
    """Serialize a plain item into DynamoDB attribute values."""
    return {name: _serializer.serialize(value) for name, value in item.items()}


def from_attributes(attributes: dict[str, Any]) -> dict[str, Any]:
    """Deserialize DynamoDB attribute values into a plain item (numbers as Decimal)."""
    return {name: _deserializer.deserialize(value) for name, value in attributes.items()}


class TransactionCancelled(Exception):
    """A transaction failed; ``reasons`` holds one cancellation code per item, in order."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__(", ".join(reasons))
        self.reasons = reasons


class DynamoDBTable:
    """A thin wrapper around one table: serialization and transaction errors.

    ``client`` is the boto3 client behind ``aws_errors.TranslatingClient``: every
    call the adapters make through it raises ``RateLimited`` (429, docs/reference.md#6-errors) when
    DynamoDB throttles it, directly or as a transaction's cancellation reason, and
    ``Conflict`` (409) when a single-item write collides with a transaction.

    Args:
        client: a boto3 DynamoDB client.
        table_name: the single table's name.
    """

    def __init__(self, client: DynamoDBClient, table_name: str) -> None:
        self.client = translate_errors(client, DYNAMODB_THROTTLING, DYNAMODB_THROTTLED_REASONS)
        self.name = table_name

    def get(self, key: dict[str, str]) -> dict[str, Any] | None:
        """Strongly consistent GetItem (read-your-write, docs/conventions.md#gsis)."""
        response = self.client.get_item(
            TableName=self.name, Key=to_attributes(key), ConsistentRead=True
        )
        found = response.get("Item")
        return None if found is None else from_attributes(found)

    def batch_get(
        self,
        keys: Sequence[dict[str, str]],
        *,
        consistent: bool = True,
        attributes: Sequence[str] = (),
    ) -> list[dict[str, Any]]:
        """BatchGetItem of ``keys`` (100 per request, unprocessed keys asked again); the
        items found, in any order.

        Args:
            consistent: strongly consistent reads (the default: read-your-write); ``False``
                halves the read units where a moment's lag is harmless.
            attributes: only these attributes (a ProjectionExpression: less to transfer
                and decode; DynamoDB still charges for the whole item).
        """
        found: list[dict[str, Any]] = []
        for start in range(0, len(keys), _BATCH_GET_KEYS):
            request: dict[str, Any] = {
                "Keys": [to_attributes(key) for key in keys[start : start + _BATCH_GET_KEYS]],
                "ConsistentRead": consistent,
            }
            if attributes:
                request["ProjectionExpression"] = ", ".join(
                    f"#a{position}" for position in range(len(attributes))
                )
                request["ExpressionAttributeNames"] = {
                    f"#a{position}": name for position, name in enumerate(attributes)
                }
            pending: dict[str, Any] = {self.name: request}
            while pending:
                response = self.client.batch_get_item(RequestItems=pending)
                found.extend(from_attributes(item) for item in response["Responses"][self.name])
                pending = response.get("UnprocessedKeys") or {}
        return found

    def transact(self, operations: list[dict[str, Any]], *, attempts: int = 0) -> None:
        """Run TransactWriteItems.

        Each operation is ``{"Put"|"Update"|"Delete"|"ConditionCheck": {...}}``
        without ``TableName`` (added here). A cancellation caused only by
        ``TransactionConflict`` (another transaction was writing one of the items;
        nothing was written) is sent again, up to ``attempts`` times in all (default
        ``TRANSACTION_CONFLICT_ATTEMPTS``; 1 for a write that another request doing the
        same makes pointless to repeat, as the recall index's compaction).

        Raises:
            TransactionCancelled: a condition failed (per-item reasons, in order).
            RateLimited: DynamoDB throttled the transaction (429).
            Conflict: still conflicting with other transactions after the retries (409).
        """
        transact_items: list[TransactWriteItemTypeDef] = []
        for operation in operations:
            ((kind, body),) = operation.items()
            item = {kind: {"TableName": self.name, **body}}
            transact_items.append(cast("TransactWriteItemTypeDef", item))
        tries = attempts or TRANSACTION_CONFLICT_ATTEMPTS
        for attempt in range(1, tries + 1):
            try:
                self.client.transact_write_items(TransactItems=transact_items)
                return
            except ClientError as error:
                if error.response["Error"]["Code"] != TRANSACTION_CANCELLED:
                    raise
                reasons = cancellation_reasons(error)
                if not _only_conflicts(reasons):
                    raise TransactionCancelled(reasons) from error
                if attempt == tries:
                    raise Conflict(CONFLICT_MESSAGE) from error
            time.sleep(random.uniform(*_CONFLICT_PAUSE_SECONDS))

    def query(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
        """Yield every item of a Query, following ``LastEvaluatedKey``."""
        return self._every_page(self.client.query, kwargs)

    def scan(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
        """Yield every item of a Scan of the whole table, following ``LastEvaluatedKey``
        (operator commands only: it reads every item, docs/reference.md#14-operations)."""
        return self._every_page(self.client.scan, kwargs)

    def _every_page(self, operation: Any, kwargs: dict[str, Any]) -> Iterator[dict[str, Any]]:
        request = {"TableName": self.name, **kwargs}
        while True:
            response = operation(**request)
            for found in response.get("Items", []):
                yield from_attributes(found)
            last = response.get("LastEvaluatedKey")
            if not last:
                return
            request["ExclusiveStartKey"] = last


def _only_conflicts(reasons: list[str]) -> bool:
    # Every item either was fine or met another transaction: nothing to re-check.
    return "TransactionConflict" in reasons and all(
        reason in ("None", "TransactionConflict") for reason in reasons
    )


def put_new(item: dict[str, Any]) -> dict[str, Any]:
    # attribute_not_exists: a new id must never overwrite an existing item.
    return {
        "Put": {
            "Item": to_attributes(item),
            "ConditionExpression": "attribute_not_exists(pk)",
        }
    }
