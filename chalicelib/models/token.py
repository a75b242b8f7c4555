"""Bearer tokens as operators manage them (docs/reference.md#authentication,
docs/reference.md#14-operations; docs/issues.md#issue-12): issued, listed, revoked and rotated with
``pinework admin``. Only a token's SHA-256 is stored; what a listing shows never includes the token
or its hash."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from chalicelib.models.common import Timestamp, WireModel
from chalicelib.models.principal import Principal, PrincipalKind


class TokenStatus(StrEnum):
    """Whether a token authenticates now.

    ``active``: it does, with no end. ``expiring``: it was rotated and still works
    until ``expiresAt`` (the grace period). ``expired``: past ``expiresAt``; every
    request with it is 401 (the item is deleted by the table's TTL later).
    """

    ACTIVE = "active"
    EXPIRING = "expiring"
    EXPIRED = "expired"


class TokenRecord(WireModel):
    """One bearer token, as a listing shows it (never the token, never its hash).

    Attributes:
        id: ``tok_…`` (tokens issued before ids existed get one on their first listing).
        principal_kind, principal_id, workspace_id: whom the token authenticates.
        prefix: the token's first 8 characters (``pwk_`` + 4), not enough to guess
            it; ``None`` for tokens issued before prefixes were kept.
        label: the operator's note (``--label``), or ``None``.
        created_at: when it was issued (for older tokens: when their principal was
            created, which is when they were issued).
        last_used_at: the last request it authenticated, to the hour (written at
            most once an hour), or ``None`` when never seen since tracking began.
        expires_at: when it stops working (set by a rotation), or ``None``.
        rotated_to: the ``tok_…`` id of its replacement, once rotated.
    """

    id: str | None
    principal_kind: PrincipalKind
    principal_id: str
    workspace_id: str
    prefix: str | None = None
    label: str | None = None
    created_at: Timestamp | None = None
    last_used_at: Timestamp | None = None
    expires_at: Timestamp | None = None
    rotated_to: str | None = None

    @property
    def principal(self) -> Principal:
        """The principal the token authenticates."""
        return Principal(
            kind=self.principal_kind, id=self.principal_id, workspace_id=self.workspace_id
        )

    def status(self, now: datetime) -> TokenStatus:
        """``active``, ``expiring`` (rotated, in its grace period) or ``expired``."""
        if self.expires_at is None:
            return TokenStatus.ACTIVE
        return TokenStatus.EXPIRING if now < self.expires_at else TokenStatus.EXPIRED

    def to_listing(self, now: datetime) -> dict[str, object]:
        """The JSON an operator sees: the fields above and ``status``."""
        return {**self.model_dump(mode="json", by_alias=True), "status": self.status(now).value}


@dataclass(frozen=True)
class StoredToken:
    """A token item as storage holds it: its SHA-256 hex and its record.

    Only storage and the token services see ``token_hash``; nothing prints it.
    """

    token_hash: str
    record: TokenRecord


class IssuedToken(WireModel):
    """A new token, shown once (only its hash is stored).

    Attributes:
        id: its ``tok_…`` id (for list, revoke, rotate).
        token: the bearer token in clear.
        principal_kind, principal_id: whom it authenticates.
        label: the operator's note, or ``None``.
    """

    id: str
    token: str
    principal_kind: PrincipalKind
    principal_id: str
    label: str | None = None


class RotatedToken(WireModel):
    """The answer of a rotation: the new token and the old one with its grace end.

    Attributes:
        issued: the replacement, shown once.
        previous: the rotated token; it works until ``previous.expires_at``.
    """

    issued: IssuedToken
    previous: TokenRecord
