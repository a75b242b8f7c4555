"""Idempotency records on the single table (issue 15): Powertools' DynamoDB
persistence layer, with our key layout and the table's TTL attribute.

Powertools (``aws-lambda-powertools``' idempotency utility) writes one record per
idempotency key: a conditional ``PutItem`` claims the key (``INPROGRESS``), an
``UpdateItem`` stores the answer (``COMPLETED``), a ``DeleteItem`` releases the key
when the request failed, and a consistent ``GetItem`` reads a record when the claim
found one without returning it. On a composite-key table Powertools would put every
record under one partition key (``static_pk_value``); ``_get_key`` instead gives each
record its own partition, ``IDEMPOTENCY#<sha256>`` (``keys.idempotency_key``), so
records spread over the table. ``expiresAtEpoch`` is the table's TTL attribute
(``infra/tables.py``): DynamoDB deletes records after their 24 hours, and Powertools
treats an expired record as absent before that.

Imported only when a request carries ``Idempotency-Key`` (cold start, see
``chalicelib.wiring``).
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

from chalicelib.storage.dynamodb import DynamoDBTable, to_attributes
from chalicelib.storage.keys import KV_TTL_ATTRIBUTE, idempotency_key


class DynamoDBIdempotencyStore(DynamoDBPersistenceLayer):
    """Powertools' ``DynamoDBPersistenceLayer`` on the single table.

    Attributes written: ``pk``/``sk`` (``keys.idempotency_key``), ``status``
    (``INPROGRESS``/``COMPLETED``), ``expiresAtEpoch`` (TTL, epoch seconds),
    ``inProgressExpiresAtMs`` (the first request's deadline, epoch milliseconds),
    ``response`` (the stored answer, JSON) and ``fingerprint`` (the hash of the
    request the key was first used with).

    Args:
        table: the wrapped table; its client is reused (no second client).
    """

    def __init__(self, table: DynamoDBTable) -> None:
        super().__init__(
            table_name=table.name,
            key_attr="pk",
            sort_key_attr="sk",
            expiry_attr=KV_TTL_ATTRIBUTE,
            in_progress_expiry_attr="inProgressExpiresAtMs",
            status_attr="status",
            data_attr="response",
            validation_key_attr="fingerprint",
            boto3_client=table.client,
        )

    def _get_key(self, idempotency_key_value: str) -> dict[str, Any]:
        """The record's key: its own partition per idempotency key (see the module)."""
        return to_attributes(idempotency_key(idempotency_key_value))
