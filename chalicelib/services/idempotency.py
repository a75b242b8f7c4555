"""Safe retries (issue 15, SPEC §14): a request sent again with the same
``Idempotency-Key`` gets the first answer again and writes nothing.

AWS Lambda Powertools' idempotency utility does the work (``idempotent_function``
over a persistence layer, ``chalicelib.storage.idempotency`` on the single table):
the first request claims the key with a conditional write, runs, and stores its
answer; a retry finds the answer and gets it back; a second request while the
first still runs is refused; the same key with another request is refused. Keys
are scoped by the caller (see ``chalicelib.api.idempotency``) and live 24 hours.

Powertools is imported on the first request that carries a key, not at cold start.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from chalicelib.errors import IdempotencyKeyInUse, IdempotencyKeyReused

KEY_LIFETIME_SECONDS = 24 * 60 * 60
"""How long a key's answer is kept and replayed (Stripe's 24 hours)."""
RECORD_PREFIX = "IDEMPOTENCY"
"""Powertools' key prefix: records are ``IDEMPOTENCY#<sha256 of the scoped key>``."""


@dataclass(frozen=True)
class Outcome:
    """What one idempotent request returns.

    Attributes:
        answer: the JSON-ready answer the action returned (now or the first time).
        replayed: True when ``answer`` is the stored answer of an earlier request.
    """

    answer: dict[str, Any]
    replayed: bool


class IdempotencyService:
    """Runs an action at most once per scoped key (issue 15).

    Args:
        persistence: builds the Powertools persistence layer on first use (a
            ``BasePersistenceLayer``; wiring passes the single table's).
    """

    def __init__(self, persistence: Callable[[], Any]) -> None:
        self._persistence_factory = persistence
        self._persistence: Any = None

    def _store(self) -> Any:
        if self._persistence is None:
            self._persistence = self._persistence_factory()
        return self._persistence

    def run(
        self,
        scoped_key: str,
        fingerprint: str,
        action: Callable[[], dict[str, Any]],
        *,
        deadline_ms: int,
    ) -> Outcome:
        """Run ``action`` unless ``scoped_key`` was used before; then replay its answer.

        Args:
            scoped_key: the caller's scope and its ``Idempotency-Key``; hashed (SHA-256)
                into the record key.
            fingerprint: what identifies the request (method, path, body); a key
                reused with another fingerprint is refused.
            action: does the request's work and returns its answer (JSON-ready).
                If it raises, the key is released (nothing stored) and the error
                propagates, so a retry runs again.
            deadline_ms: milliseconds the request may still run (the Lambda's
                remaining time); after it a crashed first request no longer holds
                the key.

        Returns:
            The answer, and whether it was replayed.

        Raises:
            IdempotencyKeyInUse: the first request with this key is still running.
            IdempotencyKeyReused: the key was used with another request.
            Exception: whatever ``action`` raised (the key is released).
        """
        from aws_lambda_powertools.utilities.idempotency import (
            IdempotencyConfig,
            idempotent_function,
        )
        from aws_lambda_powertools.utilities.idempotency.exceptions import (
            IdempotencyAlreadyInProgressError,
            IdempotencyValidationError,
        )

        config = IdempotencyConfig(
            event_key_jmespath="key",
            payload_validation_jmespath="fingerprint",
            raise_on_no_idempotency_key=True,
            expires_after_seconds=KEY_LIFETIME_SECONDS,
            hash_function="sha256",
            response_hook=_mark_replayed,
        )
        # Powertools reads only get_remaining_time_in_millis from the context.
        config.register_lambda_context(cast(Any, _Deadline(deadline_ms)))

        def run_action(request: dict[str, str]) -> dict[str, Any]:
            return {"answer": action()}

        once: Callable[..., dict[str, Any]] = idempotent_function(
            data_keyword_argument="request",
            persistence_store=self._store(),
            config=config,
            key_prefix=RECORD_PREFIX,
        )(run_action)

        try:
            result = once(request={"key": scoped_key, "fingerprint": fingerprint})
        except IdempotencyAlreadyInProgressError as error:
            raise IdempotencyKeyInUse(
                "A request with this Idempotency-Key is still running; retry shortly to "
                "get its answer."
            ) from error
        except IdempotencyValidationError as error:
            raise IdempotencyKeyReused(
                "This Idempotency-Key was used with another request (method, path or body) "
                "in the last 24 hours; use a new key for a new request."
            ) from error
        return Outcome(answer=result["answer"], replayed=bool(result.get("replayed")))


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
