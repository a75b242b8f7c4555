"""The bearer-token lifecycle (docs/reference.md#authentication, docs/reference.md#14-operations;
docs/issues.md#issue-12): issue more tokens for an agent or a person, list them, revoke, rotate with
a grace period.

Tokens are ``pwk_`` + 43 random URL-safe characters, shown once; storage keeps
their SHA-256 (``TOKEN#<hex>``), an id (``tok_…``), the first 8 characters as a
non-secret prefix, and the times an operator needs. A revoked token's items are
deleted in one transaction, and every request reads its token with a consistent
GetItem (no cache), so the next request with it is 401. A rotated token keeps
working until its grace period ends, then is 401 (``TokenRecord.status``).
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from chalicelib.errors import InvalidRequest, NotFound
from chalicelib.ids import AGENT_ID, Clock, IdFactory
from chalicelib.limits import (
    TOKEN_LABEL_MAX_CHARS,
    TOKEN_PREFIX_CHARS,
    TOKEN_ROTATION_GRACE_MAX,
)
from chalicelib.models.principal import Principal, PrincipalKind
from chalicelib.models.token import (
    IssuedToken,
    RotatedToken,
    StoredToken,
    TokenRecord,
    TokenStatus,
)
from chalicelib.services.access.auth import hash_token, new_token
from chalicelib.storage.protocols import DirectoryRepository

TOKEN_ID_PREFIX = "tok"
EXPIRED_TOKENS_KEPT = timedelta(days=7)
"""How long a rotated token's items stay listed (as ``expired``) after the grace
period before the table's TTL may delete them."""


class TokenService:
    """Issues, lists, revokes and rotates bearer tokens (operator commands).

    Args:
        directory: where principals and token hashes live.
        clock: the current time (grace periods, ``createdAt``).
        ids: makes ``tok_…`` ids.
    """

    def __init__(self, directory: DirectoryRepository, clock: Clock, ids: IdFactory) -> None:
        self._directory = directory
        self._clock = clock
        self._ids = ids

    def mint(self, principal: Principal, label: str | None = None) -> tuple[str, StoredToken]:
        """A new random token for ``principal`` and the item that stores its hash
        (not stored yet).

        Returns:
            The token in clear (shown once) and what storage keeps of it.
        """
        token = new_token()
        record = TokenRecord(
            id=self._ids.new(TOKEN_ID_PREFIX),
            principal_kind=principal.kind,
            principal_id=principal.id,
            workspace_id=principal.workspace_id,
            prefix=token[:TOKEN_PREFIX_CHARS],
            label=label,
            created_at=self._clock.now(),
        )
        return token, StoredToken(token_hash=hash_token(token), record=record)

    def issue(self, principal_id: str, label: str | None = None) -> IssuedToken:
        """Issue one more token for an agent or a person; their other tokens keep working.

        Args:
            principal_id: ``agt_…`` or ``usr_…``.
            label: an operator's note (1 to 100 characters), e.g. ``ci-runner``.

        Returns:
            The new token, shown once.

        Raises:
            InvalidRequest: not an agent or person id, no such principal, a bad label.
        """
        principal = self._principal(principal_id)
        token, stored = self.mint(principal, _check_label(label))
        self._directory.add_token(stored)
        return _issued(token, stored)

    def list(self, principal_id: str) -> list[TokenRecord]:
        """Every token of an agent or a person, oldest first (never a token or its hash).

        Tokens stored before ids existed get a ``tok_…`` id now (one conditional
        write each, once), so they can be revoked and rotated like the others.

        Raises:
            InvalidRequest: not an agent or person id, or no such principal.
        """
        principal = self._principal(principal_id)
        records = []
        for stored in self._directory.list_tokens(principal.id):
            record = stored.record if stored.record.id is not None else self._assign_id(stored)
            if record is not None:
                records.append(record)
        now = self._clock.now()
        return sorted(records, key=lambda record: (record.created_at or now, record.id or ""))

    def revoke(self, token_id: str) -> TokenRecord:
        """Revoke a token at once: its next request is 401 (its items are deleted).

        Returns:
            The token as it was.

        Raises:
            NotFound: no such token (never issued, or revoked already).
        """
        stored = self._find(token_id)
        if not self._directory.revoke_token(stored):
            raise NotFound(f"Token {token_id} is already revoked.")
        return stored.record

    def rotate(self, token_id: str, grace: timedelta) -> RotatedToken:
        """Issue a replacement and let the old token work until ``grace`` has passed.

        Args:
            token_id: the ``tok_…`` to rotate.
            grace: how long the old token keeps working (0 to 30 days; the CLI's
                default is ``TOKEN_ROTATION_GRACE``, 24 hours).

        Returns:
            The new token (shown once) and the old one with its ``expiresAt``.

        Raises:
            NotFound: no such token.
            InvalidRequest: a grace outside 0 to 30 days; the token expired or was
                rotated already (rotate its replacement instead).
        """
        if not timedelta(0) <= grace <= TOKEN_ROTATION_GRACE_MAX:
            days = TOKEN_ROTATION_GRACE_MAX.days
            raise InvalidRequest(f"The grace period must be 0 to {days * 24} hours.")
        old = self._find(token_id)
        now = self._clock.now()
        if old.record.rotated_to is not None or old.record.status(now) is TokenStatus.EXPIRED:
            heir = old.record.rotated_to
            raise InvalidRequest(
                f"Token {token_id} was rotated already"
                + (f"; rotate its replacement {heir}." if heir else ".")
            )
        token, new = self.mint(old.record.principal, old.record.label)
        until = now + grace
        delete_after = math.ceil((until + EXPIRED_TOKENS_KEPT).timestamp())
        if not self._directory.rotate_token(old, new, until, delete_after):
            raise InvalidRequest(f"Token {token_id} was revoked or rotated meanwhile.")
        previous = old.record.model_copy(update={"expires_at": until, "rotated_to": new.record.id})
        return RotatedToken(issued=_issued(token, new), previous=previous)

    def _find(self, token_id: str) -> StoredToken:
        stored = self._directory.find_token(token_id.strip()) if token_id.strip() else None
        if stored is None:
            raise NotFound(f"No token {token_id!r}: it was never issued or is revoked.")
        return stored

    def _assign_id(self, stored: StoredToken) -> TokenRecord | None:
        created = self._created_at(stored.record.principal)
        token_id = self._ids.new(TOKEN_ID_PREFIX)
        if self._directory.assign_token_id(stored.token_hash, token_id, created):
            return stored.record.model_copy(update={"id": token_id, "created_at": created})
        # Another listing named it first (or it was revoked): read what is stored.
        again = self._directory.get_token(stored.token_hash)
        return None if again is None else again.record

    def _created_at(self, principal: Principal) -> datetime:
        # Before docs/issues.md#issue-12, a token was only ever issued with its principal.
        if principal.kind is PrincipalKind.AGENT:
            agent = self._directory.get_agent(principal.id)
            return agent.created_at if agent is not None else self._clock.now()
        person = self._directory.get_person(principal.id)
        return person.created_at if person is not None else self._clock.now()

    def _principal(self, principal_id: str) -> Principal:
        principal_id = principal_id.strip()
        if AGENT_ID.match(principal_id):
            agent = self._directory.get_agent(principal_id)
            if agent is not None:
                return Principal(
                    kind=PrincipalKind.AGENT, id=agent.id, workspace_id=agent.workspace_id
                )
        elif principal_id.startswith("usr_"):
            person = self._directory.get_person(principal_id)
            if person is not None and person.removed_at is not None:
                raise InvalidRequest(f"Person {principal_id} was removed.")
            if person is not None:
                return Principal(
                    kind=PrincipalKind.PERSON, id=person.id, workspace_id=person.workspace_id
                )
        else:
            raise InvalidRequest(f"{principal_id!r} is not an agent (agt_…) or person (usr_…) id.")
        raise InvalidRequest(f"No agent or person {principal_id!r}.")


def _issued(token: str, stored: StoredToken) -> IssuedToken:
    record = stored.record
    if record.id is None:
        raise ValueError("an issued token has an id")
    return IssuedToken(
        id=record.id,
        token=token,
        principal_kind=record.principal_kind,
        principal_id=record.principal_id,
        label=record.label,
    )


def _check_label(label: str | None) -> str | None:
    if label is None:
        return None
    label = label.strip()
    if not label or len(label) > TOKEN_LABEL_MAX_CHARS or not label.isprintable():
        raise InvalidRequest(f"A token label is 1 to {TOKEN_LABEL_MAX_CHARS} printable characters.")
    return label
