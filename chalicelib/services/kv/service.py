"""The key-value meta-tools: ``remember``, ``recall``, ``forget`` (docs/reference.md#10-key-value).

A small persistent store scoped by who calls:

* a workspace bearer token (agent or person) -> ``account#<wsp_id>``, shared by
  every agent and person of the workspace (hand-offs between agents);
* else an ``X-Api-Key`` -> ``byok#<sha256 hex of the key>``; a source network
  (below) starts at most ``PINEWORK_KV_BYOK_NEW_SCOPES_PER_DAY`` new ones per UTC day;
* else anonymous -> ``anon#<sha256 hex of the client network>``.

The client network is the IP as API Gateway saw the connection (never a header
the caller controls): an IPv4 address as is, an IPv6 address as its /64, since one
subscriber commonly holds a whole /64 (docs/reference.md#kv-quotas); a new ``X-Api-Key``
scope also counts against the IPv6 caller's /48 (docs/reference.md#kv-new-scopes).

Anonymous entries live 24 hours after their last write (``ttl: "24h"``); the
others are permanent. Values are stored as strings (``kv_json.stringify``) and
recalled as those strings, never parsed back.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from chalicelib.errors import (
    InvalidRequest,
    KvQuotaExceeded,
    PayloadTooLarge,
    PreconditionFailed,
    SecretInMemory,
    Unauthorized,
)
from chalicelib.ids import Clock
from chalicelib.limits import (
    ANONYMOUS_LIFETIME,
    API_KEY_MAX_CHARS,
    IPV6_SCOPE_PREFIX,
    IPV6_SITE_PREFIX,
    KEY_MAX_BYTES,
    KV_ACCOUNT_MAX_BYTES,
    KV_ACCOUNT_MAX_KEYS,
    KV_ANON_MAX_BYTES,
    KV_ANON_MAX_KEYS,
    KV_ANON_VALUE_MAX_BYTES,
    KV_BYOK_MAX_BYTES,
    KV_BYOK_MAX_KEYS,
    KV_BYOK_NEW_SCOPES_PER_DAY,
    KV_BYOK_NEW_SCOPES_SITE_FACTOR,
    KV_NEW_SCOPES_COUNTER_LIFETIME,
    VALUE_MAX_BYTES,
)
from chalicelib.models.principal import Principal
from chalicelib.services.keyed_hash import DEVELOPMENT_SECRETS, NETWORK, KeyedHash
from chalicelib.services.kv.json_text import stringify
from chalicelib.services.kv.key_pages import KeyList, page_of_keys
from chalicelib.services.text import SecretFinder
from chalicelib.storage.protocols import (
    KvNewScopes,
    KvNewScopesReached,
    KvQuota,
    KvQuotaReached,
    KvRepository,
    KvRevisionMismatch,
)

ScopeKind = Literal["account", "byok", "anon"]


@dataclass(frozen=True)
class KvScope:
    """Whose key-value space a call reads and writes.

    Attributes:
        kind: ``account`` (workspace token), ``byok`` (``X-Api-Key``) or ``anon``.
        owner: the workspace id, the SHA-256 hex of the key, or the keyed digest of the
            client network (docs/reference.md#keyed-hashes-of-personal-data).
        network: for ``byok``, the keyed digest of the caller's network
            (``client_network``), which a new scope counts against; not part of the
            scope's identity.
        older: for ``anon``, the owners the same network had under previous hash secrets
            (and unkeyed); ``recall`` and ``forget`` still reach entries stored there.
        site: for ``byok`` from IPv6, the keyed digest of the caller's /48, which a new
            scope counts against too; None for IPv4.
    """

    kind: ScopeKind
    owner: str
    network: str | None = field(default=None, compare=False)
    site: str | None = field(default=None, compare=False)
    older: tuple[str, ...] = field(default=(), compare=False)

    @property
    def older_names(self) -> list[str]:
        """The stored scopes of ``older``, e.g. ``anon#<sha256 hex>``."""
        return [f"{self.kind}#{owner}" for owner in self.older]

    @property
    def name(self) -> str:
        """The stored scope, e.g. ``account#wsp_…`` or ``anon#<sha256 hex>``."""
        return f"{self.kind}#{self.owner}"

    @property
    def permanent(self) -> bool:
        """False for anonymous scopes, whose entries expire (docs/reference.md#10-key-value)."""
        return self.kind != "anon"


@dataclass(frozen=True)
class KvLimits:
    """The quotas of each kind of scope and the largest anonymous value
    (docs/reference.md#kv-quotas; ``PINEWORK_KV_*`` settings).

    Attributes:
        anon, byok, account: the quota of one scope of that kind.
        anon_value_max_bytes: the largest anonymous value, measured like ``VALUE_MAX_BYTES``.
        byok_new_scopes_per_day: new ``X-Api-Key`` scopes one network may start per UTC
            day (0: none).
    """

    anon: KvQuota = field(default_factory=lambda: KvQuota(KV_ANON_MAX_KEYS, KV_ANON_MAX_BYTES))
    byok: KvQuota = field(default_factory=lambda: KvQuota(KV_BYOK_MAX_KEYS, KV_BYOK_MAX_BYTES))
    account: KvQuota = field(
        default_factory=lambda: KvQuota(KV_ACCOUNT_MAX_KEYS, KV_ACCOUNT_MAX_BYTES)
    )
    anon_value_max_bytes: int = KV_ANON_VALUE_MAX_BYTES
    byok_new_scopes_per_day: int = KV_BYOK_NEW_SCOPES_PER_DAY

    @property
    def site_new_scopes_per_day(self) -> int:
        """New ``X-Api-Key`` scopes one IPv6 /48 may start per UTC day
        (``KV_BYOK_NEW_SCOPES_SITE_FACTOR`` times a network's)."""
        return KV_BYOK_NEW_SCOPES_SITE_FACTOR * self.byok_new_scopes_per_day

    def quota(self, scope: KvScope) -> KvQuota:
        """The quota of ``scope``'s kind."""
        quotas = {"anon": self.anon, "byok": self.byok, "account": self.account}
        return quotas[scope.kind]

    def value_max_bytes(self, scope: KvScope) -> int:
        """The largest value ``scope`` may store, as it travels."""
        return (
            VALUE_MAX_BYTES if scope.permanent else min(VALUE_MAX_BYTES, self.anon_value_max_bytes)
        )


@dataclass(frozen=True)
class Remembered:
    """``remember`` answer: ``{stored: true, key, ttl: "permanent" | "24h"}``, and the new
    ``revision`` when the write was conditional (docs/reference.md#kv-revisions)."""

    key: str
    permanent: bool
    revision: int | None = None

    def to_wire(self) -> dict[str, Any]:
        """The JSON body (docs/reference.md#10-key-value)."""
        body: dict[str, Any] = {
            "stored": True,
            "key": self.key,
            "ttl": "permanent" if self.permanent else "24h",
        }
        if self.revision is not None:
            body["revision"] = self.revision
        return body


@dataclass(frozen=True)
class Recalled:
    """``recall {key}`` answer: ``{key, value, found}``; ``value`` is the stored string or
    null. ``revision`` (the entry's, 0 when missing) is in the answer only when asked for
    (``withRevision``, docs/reference.md#kv-revisions)."""

    key: str
    value: str | None
    revision: int | None = None

    def to_wire(self, with_revision: bool = False) -> dict[str, Any]:
        """The JSON body (docs/reference.md#10-key-value)."""
        body: dict[str, Any] = {
            "key": self.key,
            "value": self.value,
            "found": self.value is not None,
        }
        if with_revision:
            body["revision"] = self.revision if self.value is not None else 0
        return body


@dataclass(frozen=True)
class Forgotten:
    """``forget`` answer: ``{deleted, key}``."""

    key: str
    deleted: bool

    def to_wire(self) -> dict[str, Any]:
        """The JSON body (docs/reference.md#10-key-value)."""
        return {"deleted": self.deleted, "key": self.key}


def sha256_hex(text: str) -> str:
    """The SHA-256 hex digest of ``text`` (UTF-8): an ``X-Api-Key``'s scope (a secret the
    caller chose, not personal data)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def client_address(source_ip: str | None) -> str:
    """Canonical text of the caller's IP: IPv6 compressed, IPv4-mapped IPv6 as IPv4.

    Raises:
        Unauthorized: no usable source IP (API Gateway always sends one).
    """
    try:
        address = ipaddress.ip_address((source_ip or "").strip())
    except ValueError as error:
        raise Unauthorized(
            "Cannot tell where this request comes from; send Authorization: Bearer <token> "
            "or X-Api-Key."
        ) from error
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return address.compressed


def client_network(source_ip: str | None, prefix: int = IPV6_SCOPE_PREFIX) -> str:
    """The caller's network as text: an IPv4 address (IPv4-mapped IPv6 included) as
    ``client_address`` gives it, an IPv6 address as its ``prefix`` (by default its /64,
    ``2001:db8:1:2::/64``).

    Raises:
        Unauthorized: no usable source IP (API Gateway always sends one).
    """
    address = client_address(source_ip)
    if ":" not in address:
        return address
    network = ipaddress.IPv6Network(f"{address}/{prefix}", strict=False)
    return network.compressed


class KvService:
    """The key-value meta-tools (docs/reference.md#10-key-value).

    Args:
        entries: key-value storage.
        secrets: the secret detector memories use; it guards ``remember`` too.
        clock: the current time (anonymous expiry).
        limits: the quotas per kind of scope (the defaults of ``chalicelib/limits.py``).
        digests: the keyed digests of callers' networks (the development secret when
            None; docs/reference.md#keyed-hashes-of-personal-data).
    """

    def __init__(
        self,
        entries: KvRepository,
        secrets: SecretFinder,
        clock: Clock,
        limits: KvLimits | None = None,
        digests: KeyedHash | None = None,
    ) -> None:
        self._digests = digests or KeyedHash(lambda: DEVELOPMENT_SECRETS)
        self._entries = entries
        self._secrets = secrets
        self._clock = clock
        self._limits = limits or KvLimits()

    def scope_for(
        self, principal: Principal | None, api_key: str | None, source_ip: str | None
    ) -> KvScope:
        """Resolve the caller's scope: bearer principal, else ``X-Api-Key``, else client IP.

        Args:
            principal: the authenticated bearer principal (an invalid token never
                gets here: it is 401 ``unauthorized``).
            api_key: the ``X-Api-Key`` header, if sent.
            source_ip: ``requestContext.identity.sourceIp`` from API Gateway.

        Raises:
            InvalidRequest: an empty or over-long ``X-Api-Key``.
            Unauthorized: anonymous without a usable source IP.
        """
        if principal is not None:
            return KvScope("account", principal.workspace_id)
        if api_key is not None:
            api_key = api_key.strip()
            if not api_key or len(api_key) > API_KEY_MAX_CHARS:
                raise InvalidRequest(
                    f"X-Api-Key must be 1 to {API_KEY_MAX_CHARS} characters; "
                    "leave the header out to call anonymously."
                )
            network, site = self._networks_or_none(source_ip)
            return KvScope("byok", sha256_hex(api_key), network=network, site=site)
        current, *older = self._digests.candidates(NETWORK, client_network(source_ip))
        return KvScope("anon", current, older=tuple(older))

    def remember(
        self, scope: KvScope, key: str, value: Any, if_revision: int | None = None
    ) -> Remembered:
        """Store ``value`` under ``key``: a string as given, anything else serialized;
        with ``if_revision``, only over that revision (0: only a new key;
        docs/reference.md#kv-revisions).

        Returns:
            ``{stored: true, key, ttl}`` (and ``revision`` with ``if_revision``); anonymous
            entries expire 24 hours after this write.

        Raises:
            PreconditionFailed: ``if_revision`` is not the entry's (412); nothing stored.
            InvalidRequest: a key of 0 or over 512 UTF-8 bytes; NaN/Infinity or a
                non-JSON value.
            PayloadTooLarge: the value is over 5.5 MiB as it travels, or over the
                anonymous cap in an anonymous scope (``payload_too_large``).
            KvQuotaExceeded: the scope would pass its quota of keys or bytes, or it is a
                new ``X-Api-Key`` scope past its network's new scopes for the UTC day
                (``kv_quota_exceeded``, docs/reference.md#kv-quotas); nothing is stored.
            SecretInMemory: the value looks like a credential (docs/reference.md#6-errors; a
                deliberate difference from docs/reference.md#10-key-value, see DECISIONS); or the
                key has a credential's shape (keys are listed to the whole scope by ``recall {}``;
                a key is an identifier, so the generic high-entropy rule does not apply).
        """
        check_key(key)
        kind = self._secrets.find_secret(key, shapes_only=True)
        if kind is not None:
            raise SecretInMemory(
                f"The key looks like a secret ({kind}). Every caller of the scope can list "
                "the keys: name the entry, and keep credentials in a secret manager."
            )
        stored = stringify(value)
        self._check_size(scope, stored)
        kind = self._secrets.find_secret(stored)
        if kind is not None:
            raise SecretInMemory(
                f"The value looks like a secret ({kind}). The key-value store is not a vault: "
                "pass credentials in headers or keep them in a secret manager."
            )
        now = self._clock.now()
        expires_at = None
        if not scope.permanent:
            expires_at = math.ceil((now + ANONYMOUS_LIFETIME).timestamp())
        quota = self._limits.quota(scope)
        new_scopes = self._new_scopes(scope, now)
        try:
            revision = self._entries.put(
                scope.name,
                key,
                stored,
                expires_at=expires_at,
                now=now.timestamp(),
                quota=quota,
                new_scopes=new_scopes,
                expected_revision=if_revision,
            )
        except KvRevisionMismatch as mismatch:
            raise stale_revision(key, if_revision, mismatch) from mismatch
        except KvQuotaReached as reached:
            raise quota_exceeded(scope, quota, reached) from reached
        except KvNewScopesReached as reached:
            raise KvQuotaExceeded(
                f"This network (an IPv4 address or an IPv6 /64) may start "
                f"{self._limits.byok_new_scopes_per_day:,} new X-Api-Key scopes per UTC day, "
                f"an IPv6 /48 {self._limits.site_new_scopes_per_day:,}, and has; nothing was "
                "stored. Keep using an X-Api-Key you already have "
                "(it works from any network), use a workspace token, or try again after "
                "midnight UTC."
            ) from reached
        return Remembered(
            key=key,
            permanent=scope.permanent,
            revision=None if if_revision is None else revision,
        )

    def _new_scopes(self, scope: KvScope, now: datetime) -> KvNewScopes | None:
        """The cap a new ``X-Api-Key`` scope counts against: its network's UTC day."""
        if scope.kind != "byok":
            return None
        day = now.astimezone(UTC).date()
        day_start = datetime(day.year, day.month, day.day, tzinfo=UTC)
        return KvNewScopes(
            network=scope.network or self._digests.digest(NETWORK, "unknown"),
            day=day.isoformat(),
            max_new=self._limits.byok_new_scopes_per_day,
            expires_at=math.ceil((day_start + KV_NEW_SCOPES_COUNTER_LIFETIME).timestamp()),
            site=scope.site,
            site_max_new=self._limits.site_new_scopes_per_day if scope.site else 0,
        )

    def _check_size(self, scope: KvScope, stored: str) -> None:
        size = len(json.dumps(stored, ensure_ascii=False).encode("utf-8"))
        limit = self._limits.value_max_bytes(scope)
        if size <= limit:
            return
        if limit < VALUE_MAX_BYTES:
            raise PayloadTooLarge(
                f"The value is {size:,} bytes as JSON; an anonymous value may be {limit:,}. "
                "Send X-Api-Key (or a bearer token) to store larger values, or split it."
            )
        raise PayloadTooLarge(
            f"The value is {size:,} bytes as JSON; the limit is {VALUE_MAX_BYTES:,} "
            "(5.5 MiB). Split it over several keys, or keep it elsewhere and remember a "
            "pointer."
        )

    def recall(self, scope: KvScope, key: str) -> Recalled:
        """Read one key: the stored string, or ``found: false`` (missing or expired).

        Raises:
            InvalidRequest: a key of 0 or over 512 UTF-8 bytes.
        """
        check_key(key)
        now = self._now()
        found = self._entries.read(scope.name, key, now=now)
        for older in scope.older_names:
            if found is not None:
                break
            # Under a name before a key rotation: found, but not yet in this scope's own
            # name, so a conditional write sees no entry (revision 0) until it is rewritten.
            old = self._entries.get(older, key, now=now)
            found = None if old is None else (old, 0)
        if found is None:
            return Recalled(key, None)
        return Recalled(key, found[0], found[1])

    def list_keys(
        self, scope: KvScope, cursor: str | None = None, limit: int | None = None
    ) -> KeyList:
        """One page of the scope's live keys in key order, with the scope's key count.

        Args:
            cursor: ``next`` of the previous page (opaque), or None for the first page.
            limit: keys per page, from 1 (100 by default; more than 1,000 reads as 1,000).

        Returns:
            ``{keys, count, next}``: at most ``limit`` keys and 1 MiB of them as JSON;
            ``next`` continues after the last one (null on the last page);
            ``count`` comes from the scope's usage item, not from reading every key.

        Raises:
            InvalidRequest: a cursor not made by a listing (``invalid_request``).
        """
        return page_of_keys(self._entries, scope.name, self._now(), cursor, limit)

    def forget(self, scope: KvScope, key: str, if_revision: int | None = None) -> Forgotten:
        """Delete one key; ``deleted`` is false when nothing live was stored under it. With
        ``if_revision``, only that revision (docs/reference.md#kv-revisions).

        Raises:
            InvalidRequest: a key of 0 or over 512 UTF-8 bytes.
            PreconditionFailed: ``if_revision`` is not the entry's (412); nothing deleted.
        """
        check_key(key)
        now = self._now()
        try:
            deleted = self._entries.delete(scope.name, key, now=now, expected_revision=if_revision)
        except KvRevisionMismatch as mismatch:
            raise stale_revision(key, if_revision, mismatch) from mismatch
        older = [self._entries.delete(name, key, now=now) for name in scope.older_names]
        return Forgotten(key, deleted or any(older))

    def _now(self) -> float:
        return self._clock.now().timestamp()

    def _networks_or_none(self, source_ip: str | None) -> tuple[str | None, str | None]:
        """The keyed digests of the caller's network and (IPv6 only) its /48, or None
        without a usable source IP (those callers then share one network for the
        new-scope cap)."""
        try:
            network = client_network(source_ip)
        except Unauthorized:
            return None, None
        site = None
        if ":" in network:
            site = self._digests.digest(NETWORK, client_network(source_ip, IPV6_SITE_PREFIX))
        return self._digests.digest(NETWORK, network), site


def stale_revision(
    key: str, expected: int | None, mismatch: KvRevisionMismatch
) -> PreconditionFailed:
    """The ``precondition_failed`` of a conditional key-value write
    (docs/reference.md#kv-revisions)."""
    now = "absent" if mismatch.current == 0 else f"at revision {mismatch.current}"
    return PreconditionFailed(
        f"The key {key!r} is {now}, not {'absent' if expected == 0 else f'at revision {expected}'}"
        ": someone changed it since you read it. Nothing was changed; recall it and try again."
    )


def quota_exceeded(scope: KvScope, quota: KvQuota, reached: KvQuotaReached) -> KvQuotaExceeded:
    """The ``kv_quota_exceeded`` error of a refused write, saying which bound it passes
    and what to do (docs/reference.md#error-kv_quota_exceeded)."""
    usage = reached.usage
    if reached.added_keys > 0 and usage.key_count + reached.added_keys > quota.max_keys:
        held = f"{usage.key_count:,} of its {quota.max_keys:,} keys"
    else:
        held = f"{usage.byte_count:,} of its {quota.max_bytes:,} bytes"
    advice = {
        "anon": "Forget keys you no longer need, or send X-Api-Key for a larger quota.",
        "byok": "Forget keys you no longer need, or use a workspace token.",
        "account": "Forget keys you no longer need.",
    }[scope.kind]
    return KvQuotaExceeded(f"This key-value scope holds {held}; nothing was stored. {advice}")


def check_key(key: str) -> None:
    """A key is 1 to 512 bytes of UTF-8 (docs/reference.md#10-key-value).

    Raises:
        InvalidRequest: empty, over 512 bytes, or not encodable (a lone surrogate).
    """
    try:
        size = len(key.encode("utf-8"))
    except UnicodeEncodeError as error:
        raise InvalidRequest("The key holds an invalid Unicode character.") from error
    if not 1 <= size <= KEY_MAX_BYTES:
        raise InvalidRequest(
            f"The key is {size} bytes of UTF-8; keys are 1 to {KEY_MAX_BYTES} bytes."
        )
