"""Stale dashboard forms (docs/reference.md#stale-forms, docs/issues.md#issue-21-item-1): every
form that changes a memory carries the version it was shown at, and ``MemoryService`` refuses a
change to a memory at any other version (the ``If-Match`` mechanism of the API: the check is
inside the conditional write's attempt, docs/reference.md#error-precondition_failed).

A stale edit is answered with the conflict page: the stored text beside the person's own,
which stays in an editable form carrying the new version, so nothing typed is lost.
"""

from __future__ import annotations

import re

from chalicelib.errors import InvalidRequest, PreconditionFailed
from chalicelib.limits import DAY_LOG_MAX_CHARS, FACT_MAX_CHARS
from chalicelib.models.memory import Memory, MemoryKind
from chalicelib.web.context import FormError, WebContext
from chalicelib.web.http import WebResponse

_VERSION = re.compile(r"[1-9][0-9]{0,17}")
"""A memory's version as a form sends it (the ETag's ``v<version>``, without the ``v``)."""

STALE_MESSAGE = (
    "This memory changed since you opened it: someone (a person, or the agent adding a "
    "day line) saved a newer version. Nothing you sent was saved. It is shown here as it "
    "stands now; check that your change still applies and send it again."
)


def form_version(form: dict[str, str], what: str = "memory") -> frozenset[int]:
    """The version of the object (``what``: memory, learning, page) a dashboard form was
    made from (its ``version`` field), as the ``expected_versions`` of the service call.

    Raises:
        InvalidRequest: no ``version``, or not a positive whole number (400
            ``invalid_request``; docs/reference.md#stale-forms).
    """
    value = form.get("version", "")
    if not _VERSION.fullmatch(value):
        raise InvalidRequest(
            f"This form does not say which version of the {what} it was made from; "
            "reload the page and try again."
        )
    return frozenset({int(value)})


def _plain(text: str) -> str:
    """``text`` with the browser's CRLF (and lone CR) line breaks as LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def text_changed(form: dict[str, str]) -> bool:
    """Whether the person changed the text the edit form showed (``text`` against the
    ``text_was`` it was rendered with; line breaks compared as LF). A form without
    ``text_was`` counts as changed. Only a changed text is sent, so a person who moved
    only the expiry never writes back the text they were shown
    (docs/reference.md#stale-forms)."""
    if "text_was" not in form:
        return True
    return _plain(form.get("text", "")) != _plain(form["text_was"])


def kept_text(memory: Memory, form: dict[str, str]) -> tuple[str, str]:
    """The text the conflict page's form starts with, and what happened to it.

    Returns:
        ``(text, how)``: the stored text when the person did not change the one shown
        (``how == "stored"``); for a day row the agent appended to meanwhile (the stored
        text begins with the text shown), the person's text with the lines added since
        (``"appended"``); otherwise the person's text as sent (``"yours"``).
    """
    typed = form.get("text", memory.text)
    if not text_changed(form):
        return memory.text, "stored"
    shown, stored = _plain(form["text_was"]), _plain(memory.text)
    if memory.kind is MemoryKind.DAY and stored.startswith(shown) and len(stored) > len(shown):
        added = stored[len(shown) :]
        joint = "" if typed.endswith(("\n", "\r")) or added.startswith("\n") else "\n"
        return _plain(typed) + joint + added, "appended"
    return typed, "yours"


def stale_error(error: PreconditionFailed, form: str) -> FormError:
    """``precondition_failed`` (412) worded for a person at the dashboard."""
    return FormError(error.code, STALE_MESSAGE, form)


def conflict_page(
    web: WebContext, memory: Memory, form: dict[str, str], error: PreconditionFailed
) -> WebResponse:
    """The answer to a stale edit (412): ``memory`` as stored now beside the text and
    expiry the person sent, in a form prefilled with them that carries
    ``memory.version``.

    Args:
        web: the request.
        memory: the memory as stored now (read after the refusal).
        form: the edit form as sent (``text``, ``text_was``, ``expires``, ``expires_was``).
        error: the service's refusal.
    """
    stored_date = memory.expires_at.date().isoformat()
    chosen = form.get("expires", "")
    # The person's date only when they changed the one shown; otherwise the stored one.
    expires = chosen if chosen and chosen != form.get("expires_was") else stored_date
    agent = web.services.dashboard.workspace.agent(web.principal, memory.agent_id)
    failure = stale_error(error, "edit")
    text, how = kept_text(memory, form)
    return web.page(
        "memory_conflict.html",
        status=failure.status,
        nav="agents",
        memory=memory,
        agent=agent,
        error=failure,
        typed_text=text,
        kept=how,
        typed_expires=expires,
        expires_date=stored_date,
        text_max=FACT_MAX_CHARS if memory.kind is MemoryKind.FACT else DAY_LOG_MAX_CHARS,
    )
