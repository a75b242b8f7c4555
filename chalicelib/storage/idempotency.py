"""Idempotency records on the single table (docs/issues.md#issue-15): Powertools' DynamoDB
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

import re
from collections.abc import Callable
from typing import Any, cast

from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyValidationError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord

from chalicelib.errors import IdempotencyKeyInUse, IdempotencyKeyReused
from chalicelib.storage.dynamodb import DynamoDBTable, to_attributes
from chalicelib.storage.keys import KV_TTL_ATTRIBUTE, idempotency_key
from chalicelib.storage.owner_marks import put_owner_mark


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
        self._table = table

    def _get_hashed_idempotency_key(self, data: dict[str, Any]) -> str | None:
        """Powertools' hashed key, with the ids of the caller's workspace and principal
        put before the hash: ``IDEMPOTENCY#<wsp_…>#<agt_…|usr_…>#<sha256>``
        (``record_owner``). An erasure finds a workspace's or a principal's records by
        their key (docs/reference.md#erasing-an-agent-a-person-or-a-workspace); the
        key-value routes' anonymous and ``X-Api-Key`` scopes name no id and keep
        ``IDEMPOTENCY#<sha256>``."""
        hashed = super()._get_hashed_idempotency_key(data)
        owner = record_owner(str(data.get("key", "")))
        if hashed is None or not owner:
            return hashed
        return hashed.replace(f"{RECORD_PREFIX}#", f"{RECORD_PREFIX}#{owner}#", 1)

    def _put_record(self, data_record: DataRecord) -> None:
        """Powertools' claim of a key, after the owner mark of a principal's record
        (``owner_marks.py``: the principal's erasure finds the record by key; the mark
        expires with it)."""
        key = str(data_record.idempotency_key)
        owners = key.split("#")[1:3]
        if len(owners) == 2 and all(_OWNER_ID.fullmatch(part) for part in owners):
            put_owner_mark(
                self._table,
                owners[1],
                idempotency_key(key),
                int(data_record.expiry_timestamp or 0) or None,
            )
        super()._put_record(data_record)

    def _get_key(self, idempotency_key_value: str) -> dict[str, Any]:
        """The record's key: its own partition per idempotency key (see the module)."""
        return to_attributes(idempotency_key(idempotency_key_value))

    def run_once(
        self,
        record_key: str,
        fingerprint: str,
        action: Callable[[], dict[str, Any]],
        *,
        deadline_ms: int,
        lifetime_seconds: int,
    ) -> tuple[dict[str, Any], bool]:
        """``IdempotencyStore.run_once`` with Powertools' ``idempotent_function``:
        ``record_key`` is hashed (SHA-256) into ``IDEMPOTENCY#<hex>``; ``fingerprint``
        is the payload Powertools validates a retry against.

        Raises:
            IdempotencyKeyInUse: Powertools' ``IdempotencyAlreadyInProgressError``.
            IdempotencyKeyReused: Powertools' ``IdempotencyValidationError``.
            Exception: whatever ``action`` raised (Powertools deletes the record).
        """
        config = IdempotencyConfig(
            event_key_jmespath="key",
            payload_validation_jmespath="fingerprint",
            raise_on_no_idempotency_key=True,
            # Powertools truncates the expiry to whole epoch seconds: one more second
            # keeps a key for at least ``lifetime_seconds``.
            expires_after_seconds=lifetime_seconds + 1,
            hash_function="sha256",
            response_hook=_mark_replayed,
        )
        # Powertools reads only get_remaining_time_in_millis from the context.
        config.register_lambda_context(cast(Any, _Deadline(deadline_ms)))

        def run_action(request: dict[str, str]) -> dict[str, Any]:
            return {"answer": action()}

        once: Callable[..., dict[str, Any]] = idempotent_function(
            data_keyword_argument="request",
            persistence_store=self,
            config=config,
            key_prefix=RECORD_PREFIX,
        )(run_action)

        try:
            result = once(request={"key": record_key, "fingerprint": fingerprint})
        except IdempotencyAlreadyInProgressError as error:
            raise IdempotencyKeyInUse(
                "A request with this Idempotency-Key is still running; retry shortly to "
                "get its answer."
            ) from error
        except IdempotencyValidationError as error:
            raise IdempotencyKeyReused(
                "This Idempotency-Key was used in the last 24 hours with another request "
                "(another method, path, query string, body, If-Match or X-Pinework-Run, "
                "-Task or -Session header); use a new key for a new request."
            ) from error
        return result["answer"], bool(result.get("replayed"))


_OWNER_ID = re.compile(r"\b(?:wsp|agt|usr)_[0-9A-HJKMNP-TV-Z]{26}\b")


def record_owner(record_key: str) -> str:
    """The workspace and principal ids a scoped key names, ``#``-joined: a bearer
    scope ``principal#<wsp_…>#<agt_…|usr_…>#<key>`` -> ``wsp_…#agt_…``; any other scope
    (the key-value routes' ``kv#…``) -> empty. Only those two scope parts are read, so
    a caller's key that looks like an id never lands a record under someone else."""
    parts = record_key.split("#")
    if len(parts) < 4 or parts[0] != "principal":
        return ""
    owner = parts[1:3]
    return "#".join(owner) if all(_OWNER_ID.fullmatch(part) for part in owner) else ""


RECORD_PREFIX = "IDEMPOTENCY"
"""Powertools' key prefix: records are ``IDEMPOTENCY#<sha256 of the scoped key>``."""


def _mark_replayed(response: Any, idempotent_data: Any) -> Any:
    """Powertools' ``response_hook``: runs only when a stored answer is returned."""
    return {**response, "replayed": True}


class _Deadline:
    """The one part of a Lambda context Powertools reads: the time left."""

    def __init__(self, remaining_ms: int) -> None:
        self._remaining_ms = remaining_ms

    def get_remaining_time_in_millis(self) -> int:
        """Milliseconds the request may still run."""
        return self._remaining_ms
