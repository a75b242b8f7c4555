"""Dashboard sign-in (docs/reference.md#13-dashboard, docs/issues.md#issue-13): a person's browser
session and the one-time sign-in codes that start one.

Neither secret is stored: a session is kept under the SHA-256 of its cookie
value, a code under the SHA-256 of the code.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from chalicelib.models.common import Timestamp, WireModel
from chalicelib.models.principal import Principal, PrincipalKind


class WebSession(WireModel):
    """A signed-in person's dashboard session (server side).

    Attributes:
        secret_hash: SHA-256 hex of the cookie value (the item's key).
        person_id: the person (``usr_…``).
        workspace_id: their workspace.
        csrf_token: the token every state-changing form must carry (random;
            it protects nothing on its own, so it is stored as is).
        created_at: sign-in time.
        last_seen_at: the last time the idle expiry was pushed back.
        expires_at: idle expiry (``last_seen_at`` + 12 h); pushed back at most
            every 15 minutes, never past ``absolute_expires_at``.
        absolute_expires_at: sign-in + 7 days, whatever the activity.
        via: ``token`` or ``link``: how the person signed in.
        token_hash: SHA-256 of the bearer token the session was signed in with (pasted,
            or the one that made the link): the session ends when that token is
            revoked or past its rotation grace (docs/reference.md#offboarding). None only
            for records made before sessions were tied to tokens, which have ended.
        person_epoch: the person's ``sessions_epoch`` at sign-in; None as above.
    """

    secret_hash: str
    person_id: str
    workspace_id: str
    csrf_token: str = Field(repr=False)
    created_at: Timestamp
    last_seen_at: Timestamp
    expires_at: Timestamp
    absolute_expires_at: Timestamp
    via: str
    token_hash: str | None = Field(default=None, repr=False)
    person_epoch: int | None = None

    def is_live(self, now: datetime) -> bool:
        """True while neither expiry has passed."""
        return now < self.expires_at and now < self.absolute_expires_at

    @property
    def principal(self) -> Principal:
        """The person the session acts as (every page calls the services as them)."""
        return Principal(
            kind=PrincipalKind.PERSON, id=self.person_id, workspace_id=self.workspace_id
        )


class SignInCode(WireModel):
    """A one-time sign-in code as stored (under its hash): who it signs in, until when,
    and the bearer token that made it (``token_hash``; the session it starts is tied to
    that token)."""

    code_hash: str
    person_id: str
    workspace_id: str
    created_at: Timestamp
    expires_at: Timestamp
    token_hash: str | None = Field(default=None, repr=False)


class SignInLink(WireModel):
    """A new one-time sign-in link (``POST /api/v1/sign-in-links``), shown once.

    ``path`` is relative to the API's root (the stage URL on AWS): the client
    appends it to its ``PINEWORK_API_URL``.
    """

    path: str
    expires_at: Timestamp

    def to_wire(self) -> dict[str, Any]:
        """Return the JSON object (``object: "sign_in_link"``)."""
        return {"object": "sign_in_link", **self.model_dump(mode="json", by_alias=True)}
