"""Bearer tokens (SPEC §7 auth): random, shown once, stored as their SHA-256;
``AuthService`` resolves a request's token to its principal.
"""

from __future__ import annotations

import hashlib
import secrets

from chalicelib.errors import Unauthorized
from chalicelib.models.principal import Principal
from chalicelib.storage.protocols import DirectoryRepository

TOKEN_PREFIX = "pwk_"


def hash_token(token: str) -> str:
    """Return the SHA-256 hex digest under which a bearer token is stored."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class AuthService:
    """Resolves bearer tokens to principals.

    Args:
        directory: where token hashes live.
    """

    def __init__(self, directory: DirectoryRepository) -> None:
        self._directory = directory

    def authenticate(self, authorization: str | None) -> Principal:
        """Resolve an ``Authorization`` header value to its principal.

        Raises:
            Unauthorized: the header is missing, not ``Bearer <token>``, or unknown.
        """
        if not authorization:
            raise Unauthorized("Send Authorization: Bearer <token> (PINEWORK_TOKEN).")
        scheme, _, token = authorization.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise Unauthorized("Send Authorization: Bearer <token> (PINEWORK_TOKEN).")
        principal = self._directory.principal_for_token(hash_token(token))
        if principal is None:
            raise Unauthorized("The bearer token is unknown or revoked. Ask an admin for one.")
        return principal


def new_token() -> str:
    """Return a new random bearer token (``pwk_`` + 43 URL-safe characters)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)
