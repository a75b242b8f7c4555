"""What every signed-in page has at hand (docs/reference.md#13-dashboard, docs/issues.md#issue-13):
the request, the services, the signed-in person, the time; and how a page answers (a full page,
an htmx fragment, a redirect, an error next to the form that caused it)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from chalicelib.errors import STATUS_BY_CODE, PineworkError
from chalicelib.models.principal import Principal
from chalicelib.services.access.sessions import SignedIn
from chalicelib.web.http import WebRequest, WebResponse, redirect, safe_next
from chalicelib.web.render import render
from chalicelib.wiring import Services

NOTICES = {
    "saved": "Fact saved.",
    "edited": "Memory edited.",
    "vetoed": "Memory vetoed. Undo brings it back.",
    "archived": "Memory archived. Undo brings it back.",
    "erased": "Memory erased: its text is gone everywhere; the tombstone stays in the history.",
    "restored": "Memory brought back.",
    "approved": "Action approved.",
    "rejected": "Action rejected; it will not be proposed again.",
    "undone": "Action undone: what it changed is restored.",
    "paused": "Routine paused: the nightly review skips this agent.",
    "resumed": "Routine resumed.",
    "deleted": "Routine deleted. Later saves do not re-create it; create it again below.",
    "created": "Routine created.",
    "reviewed": "Review finished.",
    "queued": "Review queued: the review worker runs it; reload this page to follow it.",
    "approval": "Review approval saved.",
    "learning-approval": "Learning approval saved.",
    "learning-proposed": "Learning added: every agent is told it from its next recall.",
    "learning-exists": "A live learning already says this: nothing was added; it is shown here.",
    "learning-approve": "Learning approved: every agent is told it from its next recall.",
    "learning-edit": "Learning edited.",
    "learning-reject": "Learning rejected: agents may not propose it again.",
    "learning-retire": "Learning retired: no agent is told it any more.",
    "page-created": "Page created as a draft: publish it when agents may read it.",
    "page-edit": "Page saved.",
    "page-publish": "Page published: agents read it.",
    "page-archive": "Page archived: no agent reads it; publish it again to bring it back.",
    "signed-out": "You are signed out.",
    "role-set": "Role saved.",
    "token-revoked": "Token revoked: the next request with it is refused (401).",
}
"""The one-line confirmations a redirect may ask for (``?done=<key>``): fixed texts,
so nothing a URL carries is ever shown as is."""


@dataclass(frozen=True)
class FormError:
    """An error to show next to the form that caused it: the API's code and message."""

    code: str
    message: str
    form: str = ""

    @property
    def status(self) -> int:
        """The HTTP status of the code (docs/reference.md#6-errors), as the page answers it."""
        return STATUS_BY_CODE.get(self.code, 500)

    @classmethod
    def of(cls, error: PineworkError, form: str = "") -> FormError:
        """The error a service raised, for the form named ``form``."""
        return cls(error.code, error.message, form)


@dataclass(frozen=True)
class WebContext:
    """A signed-in request.

    Attributes:
        request: the request.
        services: every service (the pages call them as ``principal``).
        signed_in: the session and its person.
        now: the time the page is made at.
    """

    request: WebRequest
    services: Services
    signed_in: SignedIn
    now: datetime

    @property
    def principal(self) -> Principal:
        """The signed-in person."""
        return self.signed_in.principal

    def page(self, template: str, status: int = 200, **context: Any) -> WebResponse:
        """Render a template with what every page needs (base, person, CSRF token…)."""
        body = render(template, **self.common(), **context)
        return WebResponse(status=status, body=body)

    def common(self) -> dict[str, Any]:
        """The context every template gets."""
        done = self.request.param("done")
        return {
            "base": self.request.base,
            "person": self.signed_in.person,
            "csrf": self.signed_in.session.csrf_token,
            "now": self.now,
            "here": self.here(),
            "notice": NOTICES.get(done or ""),
            "name_of": functools.cache(self._name_of),
        }

    def _name_of(self, principal_id: str | None) -> str | None:
        """The name a person reads for an agent or person id of the workspace (one read
        per id and page: the template's ``name_of`` caches it)."""
        if not principal_id:
            return None
        return self.services.dashboard.workspace.display_name(self.principal, principal_id)

    def here(self) -> str:
        """This page's path and query within the app, without ``done`` (to come back to)."""
        kept = [
            (name, value)
            for name, values in self.request.query.items()
            if name != "done"
            for value in values
        ]
        return self.request.path + ("?" + urlencode(kept) if kept else "")

    def back(self, form: dict[str, str], fallback: str, done: str | None = None) -> WebResponse:
        """After a plain (not htmx) form post: 303 to the form's ``next`` (a path within
        the app) or ``fallback``, with ``?done=`` naming the confirmation to show."""
        target = safe_next(form.get("next") or fallback)
        if done is not None:
            target += ("&" if "?" in target else "?") + f"done={done}"
        return redirect(self.request, target)
