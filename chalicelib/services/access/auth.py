"""Bearer tokens (docs/reference.md#authentication): random, shown once, stored as their SHA-256;
``AuthService`` resolves a request's token to its principal.

Every request reads its token item with one consistent GetItem (no cache), so a
revoked token is 401 on its next request and a rotated one from the end of its
grace period; a person's token also reads the person, so a removed person's token is
401 (docs/reference.md#offboarding). ``lastUsedAt`` costs no write per request: it is
written only when the stored value is an hour old or more, with a conditional write
(docs/issues.md#issue-12).
"""

from __future__ import annotations

import hashlib
import logging
import secrets

from chalicelib.errors import RateLimited, Unauthorized
from chalicelib.ids import Clock, to_rfc3339
from chalicelib.limits import TOKEN_LAST_USED_INTERVAL
from chalicelib.models.principal import Principal, PrincipalKind
from chalicelib.models.token import StoredToken, TokenStatus
from chalicelib.storage.protocols import DirectoryRepository

logger = logging.getLogger(__name__)

TOKEN_PREFIX = "pwk_"


def hash_token(token: str) -> str:
    """Return the SHA-256 hex digest under which a bearer token is stored."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class AuthService:
    """Resolves bearer tokens to principals.

    Args:
        directory: where token hashes live.
        clock: the current time (rotated tokens' grace periods, ``lastUsedAt``).
    """

    def __init__(self, directory: DirectoryRepository, clock: Clock) -> None:
        self._directory = directory
        self._clock = clock

    def authenticate(self, authorization: str | None) -> Principal:
        """Resolve an ``Authorization`` header value to its principal.

        Raises:
            Unauthorized: the header is missing, not ``Bearer <token>``, unknown,
                revoked, or rotated and past its grace period.
            RateLimited: the token lookup was throttled (429).
        """
        if not authorization:
            raise Unauthorized("Send Authorization: Bearer <token> (PINEWORK_TOKEN).")
        scheme, _, token = authorization.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise Unauthorized("Send Authorization: Bearer <token> (PINEWORK_TOKEN).")
        stored = self._directory.get_token(hash_token(token))
        if stored is None:
            raise Unauthorized("The bearer token is unknown or revoked. Ask an admin for one.")
        now = self._clock.now()
        expires_at = stored.record.expires_at
        if expires_at is not None and stored.record.status(now) is TokenStatus.EXPIRED:
            raise Unauthorized(
                f"The bearer token was rotated and stopped working at {to_rfc3339(expires_at)}; "
                "use its replacement, or ask an admin for a new one."
            )
        principal = stored.record.principal
        if principal.kind is PrincipalKind.PERSON and not self._person_present(principal.id):
            raise Unauthorized("This person was removed from the workspace; the token is revoked.")
        self._note_use(stored)
        return principal

    def _person_present(self, person_id: str) -> bool:
        # A removed person's tokens are revoked by remove-person; this read also covers
        # one issued so recently that the token index did not list it yet.
        person = self._directory.get_person(person_id)
        return person is not None and person.removed_at is None

    def _note_use(self, stored: StoredToken) -> None:
        now = self._clock.now()
        last = stored.record.last_used_at
        if last is not None and now - last < TOKEN_LAST_USED_INTERVAL:
            return
        try:
            self._directory.touch_token(stored.token_hash, now, now - TOKEN_LAST_USED_INTERVAL)
        except RateLimited:
            # Bookkeeping only: the request goes on, and a later one writes it.
            logger.warning("lastUsedAt of token %s not written (throttled)", stored.record.id)


def bearer_token_hash(authorization: str | None) -> str | None:
    """The stored hash of the token in an ``Authorization: Bearer <token>`` value, or
    None when there is none (what ``authenticate`` looked up)."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    token = token.strip()
    return hash_token(token) if scheme.lower() == "bearer" and token else None


def new_token() -> str:
    """Return a new random bearer token (``pwk_`` + 43 URL-safe characters)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)
