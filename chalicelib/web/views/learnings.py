"""The dashboard's Learnings pages (docs/reference.md#15-learnings, docs/issues.md#issue-25-item-5):
the workspace's learnings (proposed first, oldest first; then active, rejected and retired,
newest first), filtered by state and text, with a form to propose one; each learning's page
with its decisions (approve, edit then approve, reject, edit, retire) and its history. Every
decision form carries the version it was made from: a stale one is refused (412) with the
learning as it stands now."""

from __future__ import annotations

import re

from chalicelib.errors import InvalidRequest, PineworkError, PreconditionFailed
from chalicelib.models.learning import Learning, LearningState
from chalicelib.models.principal import Agent
from chalicelib.models.recall import RecallLogEntry
from chalicelib.services.run_context import RunContext
from chalicelib.web.context import FormError, WebContext
from chalicelib.web.http import WebResponse

RECALL_AGENTS = 20
RECALL_ENTRIES = 50
LEARNINGS_SHOWN = 200
"""Learnings on the page at most (the workspace holds at most 200 live ones)."""
STALE_LEARNING = (
    "This learning changed since you opened it: someone decided or edited it first. Nothing "
    "you sent was saved. It is shown here as it stands now."
)
_VERSION = re.compile(r"[1-9][0-9]{0,17}")
_ORDER = {LearningState.PROPOSED: 0, LearningState.ACTIVE: 1, LearningState.REJECTED: 2}


def learnings_page(
    web: WebContext, *, error: FormError | None = None, form: dict[str, str] | None = None
) -> WebResponse:
    """``GET /learnings``: ``state`` and ``q`` filter; proposed ones first, oldest first."""
    state_text = web.request.param("state") or ""
    if state_text and state_text not in {state.value for state in LearningState}:
        raise InvalidRequest("state must be proposed, active, rejected or retired.")
    query = (web.request.param("q") or "").strip()
    found, _ = web.services.learnings.list_learnings(
        web.principal,
        state=LearningState(state_text) if state_text else None,
        query=query or None,
        limit=LEARNINGS_SHOWN,
        after=None,
    )
    found.sort(key=lambda learning: (_ORDER.get(learning.state, 3), _newest_last(learning)))
    return web.page(
        "learnings.html",
        status=error.status if error else 200,
        nav="learnings",
        learnings=found,
        state=state_text,
        q=query,
        states=[state.value for state in LearningState],
        error=error,
        form=form or {},
    )


def _newest_last(learning: Learning) -> str:
    """Proposed ones oldest first (the longest waiting on top); the others newest first."""
    if learning.state is LearningState.PROPOSED:
        return learning.id
    return "".join(chr(0x10FFFF - ord(char)) for char in learning.id)


def propose(web: WebContext) -> WebResponse:
    """``POST /learnings``: a person's learning, active at once."""
    form = web.request.form()
    try:
        learning, _ = web.services.learnings.propose(
            web.principal, form.get("text", ""), RunContext()
        )
    except PineworkError as error:
        return learnings_page(web, error=FormError.of(error, "propose"), form=form)
    return web.back({}, f"/learnings/{learning.id}", done="learning-proposed")


def learning_page(
    web: WebContext,
    learning_id: str,
    *,
    errors: dict[str, FormError] | None = None,
    form: dict[str, str] | None = None,
) -> WebResponse:
    """``GET /learnings/{learning_id}``: the learning, its decisions and its history."""
    learning = web.services.learnings.get(web.principal, learning_id)
    history = web.services.learnings.history(web.principal, learning_id)
    errors = errors or {}
    recalled = where_recalled(web, learning_id)
    return web.page(
        "learning.html",
        status=next(iter(errors.values())).status if errors else 200,
        nav="learnings",
        learning=learning,
        history=history,
        recalled=recalled,
        recall_agents=RECALL_AGENTS,
        recall_entries=RECALL_ENTRIES,
        errors=errors,
        form=form or {},
    )


def where_recalled(web: WebContext, learning_id: str) -> list[tuple[Agent, RecallLogEntry]]:
    """The recalls that gave the learning, newest first: the last ``RECALL_ENTRIES`` of
    the recall log of each of the workspace's first ``RECALL_AGENTS`` agents (the log is
    kept by agent; its entries name the learnings they gave)."""
    found: list[tuple[Agent, RecallLogEntry]] = []
    for agent in web.services.dashboard.workspace.agents(web.principal)[:RECALL_AGENTS]:
        entries, _ = web.services.recall.log(web.principal, agent.id, RECALL_ENTRIES, None)
        found += [
            (agent, entry)
            for entry in entries
            if any(given.learning_id == learning_id for given in entry.learnings)
        ]
    return sorted(found, key=lambda pair: pair[1].at, reverse=True)


def decide(web: WebContext, learning_id: str, verb: str) -> WebResponse:
    """``POST /learnings/{learning_id}/{approve|edit|reject|retire}``: the form's
    ``version`` is the expected version; a stale or refused decision shows the page with
    the error next to its form and what was typed kept."""
    form = web.request.form()
    service = web.services.learnings
    try:
        versions = _form_version(form)
        if verb == "approve":
            text = form.get("text", "").strip() and form.get("text")
            archive = form.get("archive_copies") == "yes"
            service.approve(
                web.principal, learning_id, text or None, versions, archive_copies=archive
            )
        elif verb == "edit":
            service.edit(web.principal, learning_id, form.get("text", ""), versions)
        elif verb == "reject":
            service.reject(web.principal, learning_id, form.get("reason", ""), versions)
        else:
            service.retire(web.principal, learning_id, form.get("reason") or None, versions)
    except PreconditionFailed as stale:
        failure = FormError(stale.code, STALE_LEARNING, verb)
        return learning_page(web, learning_id, errors={verb: failure}, form=form)
    except PineworkError as error:
        return learning_page(web, learning_id, errors={verb: FormError.of(error, verb)}, form=form)
    return web.back({}, f"/learnings/{learning_id}", done=f"learning-{verb}")


def _form_version(form: dict[str, str]) -> frozenset[int]:
    value = form.get("version", "")
    if not _VERSION.fullmatch(value):
        raise InvalidRequest("This form does not say which version it was made from; reload.")
    return frozenset({int(value)})


def proposed_count(web: WebContext) -> int:
    """How many learnings wait for a person (the agents overview's notice)."""
    found, _ = web.services.learnings.list_learnings(
        web.principal, state=LearningState.PROPOSED, query=None, limit=LEARNINGS_SHOWN, after=None
    )
    return len(found)
