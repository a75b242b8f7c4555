"""Dashboard sign-in and sessions (docs/reference.md#13-dashboard, docs/issues.md#issue-13).

A person signs in with their bearer token or with a one-time link (made by
``pinework dashboard``, or printed by ``make serve``); either starts a session:
a random cookie value whose SHA-256 keys a server-side record. The record ends
12 hours after the last request (pushed back at most every 15 minutes, so most
requests write nothing), 7 days after sign-in at the latest, or at sign-out,
which deletes it. Agents cannot sign in. Each session has its own CSRF token,
which every state-changing form must carry.

A session is tied to the bearer token it was signed in with (pasted, or the one that
made its link) and to the person's ``sessionsEpoch``: it ends at its next request once
that token is revoked or past its rotation grace, once the person's sessions are ended
(``pinework admin end-sessions``), or once the person is removed
(docs/reference.md#offboarding). A link is only a pointer: opening it shows a
confirmation page, and only a same-origin POST of its code signs in.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from urllib.parse import quote

from chalicelib.errors import Forbidden, InvalidRequest, Unauthorized
from chalicelib.ids import Clock
from chalicelib.limits import (
    SESSION_IDLE_LIFETIME,
    SESSION_MAX_LIFETIME,
    SESSION_REFRESH_INTERVAL,
    SIGN_IN_LINK_LIFETIME,
)
from chalicelib.models.principal import Person, Principal, PrincipalKind, Workspace
from chalicelib.models.session import SignInCode, SignInLink, WebSession
from chalicelib.models.token import TokenStatus
from chalicelib.services.access.auth import AuthService, hash_token
from chalicelib.services.access.who import refuse_agents
from chalicelib.storage.dashboard_protocols import WebSessionRepository
from chalicelib.storage.protocols import DirectoryRepository

SIGN_IN_LINK_PATH = "/sign-in/link"
"""Where a one-time link points, relative to the app's root."""
AGENTS_CANNOT_SIGN_IN = (
    "This is an agent's token; agents cannot sign in to the dashboard. Use a person's token."
)
LINK_UNUSABLE = (
    "This sign-in link was used already or has expired (links work once, for 10 minutes). "
    "Run `pinework dashboard` for a new one, or sign in with your token."
)
_SECRET_MAX_CHARS = 200
"""Longer cookie values, codes or tokens are refused before hashing (none is that long)."""


def secret_hash(secret: str) -> str:
    """SHA-256 hex of a session cookie value or sign-in code (how they are stored)."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class IssuedSession:
    """A new session and its cookie value (shown once; only its hash is stored)."""

    secret: str
    session: WebSession


@dataclass(frozen=True)
class LinkInvitation:
    """What a one-time link would sign in as (its confirmation page shows it)."""

    person: Person
    workspace: Workspace


@dataclass(frozen=True)
class SignedIn:
    """A live session and the person it belongs to."""

    session: WebSession
    person: Person

    @property
    def principal(self) -> Principal:
        """The person as a principal: every page calls the services as them."""
        return self.session.principal


class DashboardSessions:
    """Sign-in, sessions and CSRF tokens of the dashboard.

    Args:
        store: sessions and codes.
        directory: persons.
        auth: resolves a pasted token exactly as the API resolves a bearer token
            (revoked, and rotated past the grace period, are refused).
        clock: the current time.
    """

    def __init__(
        self,
        store: WebSessionRepository,
        directory: DirectoryRepository,
        auth: AuthService,
        clock: Clock,
    ) -> None:
        self._store = store
        self._directory = directory
        self._auth = auth
        self._clock = clock

    def sign_in_with_token(self, token: str) -> IssuedSession:
        """Start a session for the person whose bearer token this is.

        Raises:
            InvalidRequest: no token was given.
            Unauthorized: the token is unknown, revoked, or rotated and past its
                grace period (the API's rules: ``AuthService.authenticate``).
            Forbidden: it is an agent's token (agents cannot sign in).
        """
        token = token.strip()
        if not token:
            raise InvalidRequest("Paste your person token (pwk_…) to sign in.")
        if len(token) > _SECRET_MAX_CHARS or any(char.isspace() for char in token):
            raise Unauthorized(
                "This token is unknown or revoked. Ask an admin for a person's token."
            )
        principal = self._auth.authenticate(f"Bearer {token}")
        if principal.is_agent:
            raise Forbidden(AGENTS_CANNOT_SIGN_IN)
        return self._start(principal, via="token", token_hash=hash_token(token))

    def create_link(self, principal: Principal, *, token_hash: str | None) -> SignInLink:
        """Make a one-time sign-in link for the calling person (docs/reference.md#13-dashboard).

        The code is random, stored only as its SHA-256, works once and for 10 minutes.
        ``token_hash`` is the hash of the bearer token that asked (``bearer_token_hash``):
        the session the link starts is tied to that token (docs/reference.md#offboarding);
        None ties it to the person only.

        Returns:
            The link's path (relative to the app's root) and when it expires.

        Raises:
            Forbidden: an agent asked (agents cannot sign in).
        """
        refuse_agents(principal, AGENTS_CANNOT_SIGN_IN)
        now = self._clock.now()
        code = secrets.token_urlsafe(32)
        expires_at = now + SIGN_IN_LINK_LIFETIME
        self._store.create_code(
            SignInCode(
                code_hash=secret_hash(code),
                person_id=principal.id,
                workspace_id=principal.workspace_id,
                created_at=now,
                expires_at=expires_at,
                token_hash=token_hash,
            )
        )
        return SignInLink(path=f"{SIGN_IN_LINK_PATH}?code={quote(code)}", expires_at=expires_at)

    def describe_link(self, code: str) -> LinkInvitation:
        """Who a one-time code would sign in, without using it (the confirmation page).

        Raises:
            Unauthorized: no such code, expired, its person removed, or the token
                that made it revoked or past its grace.
        """
        if not code or len(code) > _SECRET_MAX_CHARS:
            raise Unauthorized(LINK_UNUSABLE)
        found = self._store.get_code(secret_hash(code))
        person = self._usable(found)
        workspace = self._directory.get_workspace(person.workspace_id)
        if workspace is None:
            raise Unauthorized(LINK_UNUSABLE)
        return LinkInvitation(person=person, workspace=workspace)

    def sign_in_with_link(self, code: str) -> IssuedSession:
        """Use a one-time code: it is deleted whatever happens next (single use, one
        conditional delete). Called on the confirmation page's same-origin POST only.

        Raises:
            Unauthorized: no such code (never issued, or used already), expired, its
                person removed, or the token that made it revoked or past its grace.
        """
        if not code or len(code) > _SECRET_MAX_CHARS:
            raise Unauthorized(LINK_UNUSABLE)
        found = self._store.consume_code(secret_hash(code))
        person = self._usable(found)
        principal = Principal(
            kind=PrincipalKind.PERSON, id=person.id, workspace_id=person.workspace_id
        )
        token_hash = None if found is None else found.token_hash
        return self._start(principal, via="link", token_hash=token_hash)

    def _usable(self, found: SignInCode | None) -> Person:
        if found is None or found.expires_at <= self._clock.now():
            raise Unauthorized(LINK_UNUSABLE)
        person = self._directory.get_person(found.person_id)
        if person is None or person.workspace_id != found.workspace_id or person.removed_at:
            raise Unauthorized(LINK_UNUSABLE)
        if found.token_hash is not None and not self._token_live(found.token_hash, person.id):
            raise Unauthorized(LINK_UNUSABLE)
        return person

    def resume(self, secret: str | None) -> SignedIn | None:
        """The live session a cookie value names, its idle expiry pushed back when the
        last push is 15 minutes old or more (one conditional write).

        Returns:
            None when there is no such session, it expired, it was signed out
            meanwhile, or it was ended (``ended``: its token revoked or past its
            grace, the person's sessions ended, the person removed or gone; the
            record is deleted then).
        """
        if not secret or len(secret) > _SECRET_MAX_CHARS:
            return None
        session = self._store.get_session(secret_hash(secret))
        now = self._clock.now()
        if session is None or not session.is_live(now):
            return None
        person = self._directory.get_person(session.person_id)
        if person is None or self.ended(session, person):
            self._store.delete_session(session.secret_hash)
            return None
        if now - session.last_seen_at >= SESSION_REFRESH_INTERVAL:
            expires_at = min(now + SESSION_IDLE_LIFETIME, session.absolute_expires_at)
            if not self._store.extend_session(session, now, expires_at):
                return None
            session = session.model_copy(update={"last_seen_at": now, "expires_at": expires_at})
        return SignedIn(session=session, person=person)

    def ended(self, session: WebSession, person: Person) -> bool:
        """True when a live session was ended by offboarding (docs/reference.md#offboarding):
        its person removed (or of another workspace), their sessions ended since it
        began (``sessions_epoch``), its token revoked or past its rotation grace, or it
        predates sessions being tied to tokens."""
        if person.workspace_id != session.workspace_id or person.removed_at is not None:
            return True
        if session.person_epoch is None or session.person_epoch != person.sessions_epoch:
            return True
        return session.token_hash is not None and not self._token_live(
            session.token_hash, person.id
        )

    def _token_live(self, token_hash: str, person_id: str) -> bool:
        stored = self._directory.get_token(token_hash)
        return (
            stored is not None
            and stored.record.principal_id == person_id
            and stored.record.status(self._clock.now()) is not TokenStatus.EXPIRED
        )

    def sign_out(self, secret: str | None) -> None:
        """End the session a cookie value names (deletes its record; none is fine)."""
        if secret and len(secret) <= _SECRET_MAX_CHARS:
            self._store.delete_session(secret_hash(secret))

    @staticmethod
    def check_csrf(session: WebSession, sent: str | None) -> None:
        """Refuse a state-changing request whose CSRF token is not the session's.

        Raises:
            Forbidden: missing or different (compared in constant time).
        """
        if not sent or not hmac.compare_digest(
            sent.encode("utf-8", "replace"), session.csrf_token.encode("utf-8")
        ):
            raise Forbidden(
                "The form's security token is missing or out of date. Reload the page and "
                "try again."
            )

    def _start(self, principal: Principal, *, via: str, token_hash: str | None) -> IssuedSession:
        person = self._directory.get_person(principal.id)
        if person is None or person.removed_at is not None:
            raise Unauthorized(LINK_UNUSABLE if via == "link" else "This person was removed.")
        now = self._clock.now()
        secret = secrets.token_urlsafe(32)
        session = WebSession(
            secret_hash=secret_hash(secret),
            person_id=principal.id,
            workspace_id=principal.workspace_id,
            csrf_token=secrets.token_urlsafe(32),
            created_at=now,
            last_seen_at=now,
            expires_at=now + SESSION_IDLE_LIFETIME,
            absolute_expires_at=now + SESSION_MAX_LIFETIME,
            via=via,
            token_hash=token_hash,
            person_epoch=person.sessions_epoch,
        )
        self._store.create_session(session)
        return IssuedSession(secret=secret, session=session)
