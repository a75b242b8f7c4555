"""Safe retries (docs/issues.md#issue-15, docs/reference.md#14-operations): a request sent again
with the same
``Idempotency-Key`` gets the first answer again and writes nothing.

AWS Lambda Powertools' idempotency utility does the work, behind the
``IdempotencyStore`` protocol (``chalicelib.storage.idempotency`` on the single table):
the first request claims the key with a conditional write, runs, and stores its
answer; a retry finds the answer and gets it back; a second request while the
first still runs is refused; the same key with another request is refused. Keys
are scoped by the caller (see ``chalicelib.api.idempotency``) and live 24 hours.

Powertools is imported on the first request that carries a key, not at cold start.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from chalicelib.storage.protocols import IdempotencyStore

KEY_LIFETIME_SECONDS = 24 * 60 * 60
"""How long a key's answer is kept and replayed (Stripe's 24 hours)."""


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
    """Runs an action at most once per scoped key (docs/issues.md#issue-15).

    Args:
        persistence: builds the store on first use (wiring passes the single
            table's, ``DynamoDBIdempotencyStore``).
        lifetime_seconds: how long a key's answer is kept and replayed
            (``PINEWORK_IDEMPOTENCY_RETENTION_HOURS``, docs/reference.md#retention).
    """

    def __init__(
        self,
        persistence: Callable[[], IdempotencyStore],
        lifetime_seconds: int = KEY_LIFETIME_SECONDS,
    ) -> None:
        self._lifetime_seconds = lifetime_seconds
        self._persistence_factory = persistence
        self._persistence: IdempotencyStore | None = None

    def _store(self) -> IdempotencyStore:
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
        answer, replayed = self._store().run_once(
            scoped_key,
            fingerprint,
            action,
            deadline_ms=deadline_ms,
            lifetime_seconds=self._lifetime_seconds,
        )
        return Outcome(answer=answer, replayed=replayed)
