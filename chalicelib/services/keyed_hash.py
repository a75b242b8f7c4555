"""Keyed hashes of the personal data that keys are made of
(docs/reference.md#keyed-hashes-of-personal-data): the anonymous key-value scope and
the new-scope counter (a caller's network) and a workspace's claim on an e-mail address.

A digest is HMAC-SHA256 under a key derived for its purpose from the deployment's hash
secret, so a copy of the table alone cannot be reversed by hashing every IPv4 address
or a list of e-mail addresses. The secret rotates: the current one makes every new
digest, previous ones (and the unkeyed SHA-256 that releases before 24 wrote) are still
looked up until ``pinework admin rehash-emails`` has moved the claims and the
anonymous entries have expired (docs/operations.md#rotating-the-hash-secret).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

NETWORK = "kv-network"
"""Purpose of a caller's network (``client_network``) in the key-value scopes."""
EMAIL = "email"
"""Purpose of a normalised e-mail address in a workspace's claim on it."""
SECRET_MIN_CHARS = 32
"""The shortest hash secret accepted (the stack generates 64 characters)."""


@dataclass(frozen=True)
class HashSecrets:
    """The deployment's hash secrets.

    Attributes:
        current: makes every new digest.
        previous: older secrets, newest first; digests made with them are still found.
    """

    current: str
    previous: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> HashSecrets:
        """Read a secret as stored: ``{"current": "…", "previous": ["…"]}`` (the
        Secrets Manager secret's JSON) or one bare secret.

        Raises:
            ValueError: not that JSON, or a secret under ``SECRET_MIN_CHARS`` characters.
        """
        stripped = text.strip()
        if stripped.startswith("{"):
            try:
                value = json.loads(stripped)
                secrets = cls(
                    current=value["current"],
                    previous=tuple(value.get("previous") or ()),
                )
            except (ValueError, KeyError, TypeError, AttributeError) as error:
                raise ValueError(
                    'the hash secret must be {"current": "…", "previous": [ … ]} or one string'
                ) from error
        else:
            secrets = cls(current=stripped)
        for secret in (secrets.current, *secrets.previous):
            if not isinstance(secret, str) or len(secret) < SECRET_MIN_CHARS:
                raise ValueError(
                    f"every hash secret must be a string of at least {SECRET_MIN_CHARS} characters"
                )
        return secrets


class KeyedHash:
    """Digests of personal data under the deployment's hash secrets.

    Args:
        load: returns the secrets; called once, on the first digest (a Secrets Manager
            read is paid only by requests that need a digest).
    """

    def __init__(self, load: Callable[[], HashSecrets]) -> None:
        self._load = load
        self._keys: dict[str, list[bytes]] = {}
        self._secrets: HashSecrets | None = None
        self._lock = threading.Lock()

    def digest(self, purpose: str, text: str) -> str:
        """The current digest of ``text`` for ``purpose``: 64 hex characters."""
        return self.candidates(purpose, text)[0]

    def candidates(self, purpose: str, text: str) -> list[str]:
        """Every digest ``text`` may be stored under, the current one first: then each
        previous secret's, then the unkeyed SHA-256 of releases before 24; no repeats.

        Raises:
            ValueError: the secrets could not be read (a configuration error).
        """
        data = text.encode("utf-8")
        found = [hmac.new(key, data, hashlib.sha256).hexdigest() for key in self._purpose(purpose)]
        found.append(hashlib.sha256(data).hexdigest())
        return list(dict.fromkeys(found))

    def emails(self, email: str) -> list[str]:
        """``candidates`` of an e-mail address as compared for uniqueness
        (``normalized_email``): the keys of a workspace's claims on it, current first."""
        return self.candidates(EMAIL, normalized_email(email))

    def _purpose(self, purpose: str) -> list[bytes]:
        keys = self._keys.get(purpose)
        if keys is None:
            with self._lock:
                if self._secrets is None:
                    self._secrets = self._load()
                secrets = self._secrets
            label = f"pinework/{purpose}".encode()
            keys = [
                hmac.new(secret.encode("utf-8"), label, hashlib.sha256).digest()
                for secret in (secrets.current, *secrets.previous)
            ]
            self._keys[purpose] = keys
        return keys


def normalized_email(email: str) -> str:
    """An e-mail address as compared for uniqueness: NFKC, trimmed, case-folded
    (``" Ana@Example.COM"`` and full-width ``ａｎａ@example.com`` are ``ana@example.com``)."""
    return unicodedata.normalize("NFKC", email).strip().casefold()


DEVELOPMENT_SECRETS = HashSecrets(current="pinework-development-hash-secret-not-for-deployment")
"""The secret of tests and of code run outside Lambda with none configured; the local
server makes its own (``.pinework-local/hash-secret``), and Lambda refuses to run without
``PINEWORK_HASH_SECRET_ARN``."""
