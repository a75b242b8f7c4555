"""AWS errors that are the caller's to retry, as domain errors (docs/reference.md#6-errors):
the storage adapters see their boto3 clients through ``TranslatingClient``, so a call
AWS throttles (once botocore's retries are spent, or a transaction cancelled for
throttling) raises ``RateLimited`` (429 ``rate_limited``) and a single-item write that
collided with a transaction raises ``Conflict`` (409 ``conflict``); every other error
passes through untouched. Choices: docs/DECISIONS.md#throttling-and-conflicts-issue-12.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from botocore.exceptions import ClientError

from chalicelib.errors import Conflict, RateLimited

DYNAMODB_THROTTLING = frozenset(
    {"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"}
)
"""DynamoDB error codes that mean "too many requests" (on-demand and provisioned tables,
account-level request limits)."""
DYNAMODB_THROTTLED_REASONS = frozenset({"ThrottlingError", "ProvisionedThroughputExceeded"})
"""``CancellationReasons`` codes of a transaction cancelled because it was throttled."""
DYNAMODB_CONFLICT = "TransactionConflictException"
"""A single-item write refused because a transaction was writing the same item."""
S3_THROTTLING = frozenset({"SlowDown", "503 SlowDown", "ThrottlingException"})
"""S3 error codes that mean "too many requests" (large key-value values, review reports)."""

TRANSACTION_CANCELLED = "TransactionCanceledException"
THROTTLED_MESSAGE = (
    "Too many requests right now (the store is throttling); retry after the Retry-After delay."
)
CONFLICT_MESSAGE = "Another change to the same data was being written; try again."
_PASS_THROUGH = frozenset({"meta", "exceptions", "get_paginator", "get_waiter", "can_paginate"})

ClientT = TypeVar("ClientT")
"""A boto3 client type (``DynamoDBClient``, ``S3Client``, …): ``translate_errors`` keeps it."""


def error_code(error: ClientError) -> str:
    """The AWS error code of a ``ClientError`` (``""`` when it has none)."""
    return str(error.response.get("Error", {}).get("Code", ""))


def cancellation_reasons(error: ClientError) -> list[str]:
    """The ``CancellationReasons`` codes of a cancelled transaction, in item order
    (``"None"`` for an item that was fine)."""
    reasons = [
        str(reason.get("Code", "None"))
        for reason in error.response.get("CancellationReasons", []) or []
    ]
    if reasons:
        return reasons
    # Some emulators list the reasons only in the message: "... [None, ConditionalCheckFailed]".
    message = str(error.response.get("Error", {}).get("Message", ""))
    if "[" not in message or "]" not in message:
        return []
    inside = message[message.rindex("[") + 1 : message.rindex("]")]
    return [part.strip() for part in inside.split(",")]


def throttle_code(
    error: ClientError, codes: frozenset[str], reasons: frozenset[str] = frozenset()
) -> str | None:
    """The throttling code in ``error`` (its own code, or a cancellation reason), or None.

    Args:
        error: a botocore ``ClientError``.
        codes: error codes that mean throttling for this service.
        reasons: transaction cancellation reason codes that mean throttling.
    """
    code = error_code(error)
    if code in codes:
        return code
    if code == TRANSACTION_CANCELLED and reasons:
        return next((found for found in cancellation_reasons(error) if found in reasons), None)
    return None


class TranslatingClient:
    """A boto3 client whose throttled calls raise ``RateLimited`` (429) and whose
    transaction-conflicted single-item writes raise ``Conflict`` (409), instead of
    ``ClientError``; everything else is the wrapped client's.

    Args:
        client: the boto3 client (real, moto, or stubbed with botocore's ``Stubber``).
        codes: error codes that mean throttling (e.g. ``DYNAMODB_THROTTLING``).
        reasons: transaction cancellation reasons that mean throttling.
    """

    def __init__(
        self, client: object, codes: frozenset[str], reasons: frozenset[str] = frozenset()
    ) -> None:
        self._client = client
        self._codes = codes
        self._reasons = reasons

    @property
    def wrapped(self) -> object:
        """The boto3 client itself."""
        return self._client

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._client, name)
        if name in _PASS_THROUGH or name.startswith("_") or not callable(found):
            return found
        return self._translating(name, found)

    def _translating(self, name: str, operation: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return operation(*args, **kwargs)
            except ClientError as error:
                if throttle_code(error, self._codes, self._reasons) is not None:
                    raise RateLimited(THROTTLED_MESSAGE) from error
                if error_code(error) == DYNAMODB_CONFLICT:
                    raise Conflict(CONFLICT_MESSAGE) from error
                raise

        call.__name__ = name
        return call


def translate_errors(
    client: ClientT, codes: frozenset[str], reasons: frozenset[str] = frozenset()
) -> ClientT:
    """``client`` behind a ``TranslatingClient`` (once: a wrapped client is kept).

    The wrapper answers every call the client answers, so it keeps the client's
    type for the type checker (``DynamoDBClient`` stays ``DynamoDBClient``).
    """
    if isinstance(client, TranslatingClient):
        return client
    return cast(ClientT, TranslatingClient(client, codes, reasons))
