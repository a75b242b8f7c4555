"""The dashboard's Learnings pages (docs/reference.md#15-learnings, docs/issues.md#issue-25-item-5):
the workspace's learnings (proposed first, oldest first; then active, rejected and retired,
newest first), filtered by state and text, with a form to propose one; each learning's page
with its decisions (approve, edit then approve, reject, edit, retire) and its history. Every
decision form carries the version it was made from: a stale one is refused (412) with the
learning as it stands now."""

from __future__ import annotations

from chalicelib.errors import InvalidRequest, PineworkError, PreconditionFailed
from chalicelib.models.learning import Learning, LearningState
from chalicelib.models.principal import Agent
from chalicelib.models.recall import RecallLogEntry
from chalicelib.services.run_context import RunContext
from chalicelib.web.context import FormError, WebContext
from chalicelib.web.http import WebResponse
from chalicelib.web.views.stale import form_version

RECALL_AGENTS = 20
RECALL_ENTRIES = 50
LEARNINGS_SHOWN = 200
"""Learnings of one state on the page at most (the workspace holds at most 200 live ones,
proposed and active together, so only rejected and retired ones can be cut)."""
STALE_LEARNING = (
    "This learning changed since you opened it: someone decided or edited it first. Nothing "
    "you sent was saved. It is shown here as it stands now."
)
_PAGE_ORDER = (
    LearningState.PROPOSED,
    LearningState.ACTIVE,
    LearningState.REJECTED,
    LearningState.RETIRED,
)


def learnings_page(
    web: WebContext, *, error: FormError | None = None, form: dict[str, str] | None = None
) -> WebResponse:
    """``GET /learnings`` (docs/reference.md#15-learnings): the workspace's learnings,
    proposed ones first (oldest first: the longest waiting on top), then active, rejected
    and retired ones (each newest first); ``state`` keeps one state, ``q`` keeps those
    whose text holds it (case-insensitive). Each state is listed on its own, so old
    proposals are never cut by many newer decided ones; at most ``LEARNINGS_SHOWN`` of a
    state are shown (``cut`` names the states that hold more). ``error`` and ``form``:
    the propose form's refusal and what was typed, shown again. ``unreviewed=true``
    keeps the active learnings no person reviewed; the page always says how many there
    are ("Not reviewed (N)", a note when any; docs/reference.md#unreviewed-learnings).

    Raises:
        InvalidRequest: ``state`` is not a learning state, or not ``active`` with
            ``unreviewed``.
    """
    state_text = web.request.param("state") or ""
    if state_text and state_text not in {state.value for state in LearningState}:
        raise InvalidRequest("state must be proposed, active, rejected or retired.")
    query = (web.request.param("q") or "").strip()
    unreviewed = (web.request.param("unreviewed") or "") in ("true", "1")
    wanted = [LearningState(state_text)] if state_text else list(_PAGE_ORDER)
    if unreviewed:
        wanted = [LearningState(state_text or LearningState.ACTIVE.value)]
    shown: list[Learning] = []
    cut: list[str] = []
    for state in wanted:
        found, more = web.services.learnings.list_learnings(
            web.principal,
            state=state,
            query=query or None,
            limit=LEARNINGS_SHOWN,
            after=None,
            unreviewed=unreviewed,
        )
        shown += found[::-1] if state is LearningState.PROPOSED else found
        if more is not None:
            cut.append(state.value)
    return web.page(
        "learnings.html",
        status=error.status if error else 200,
        nav="learnings",
        learnings=shown,
        cut=cut,
        shown_at_most=LEARNINGS_SHOWN,
        state=state_text,
        q=query,
        unreviewed=unreviewed,
        unreviewed_count=web.services.learnings.unreviewed_count(web.principal),
        states=[state.value for state in _PAGE_ORDER],
        error=error,
        form=form or {},
    )


def propose(web: WebContext) -> WebResponse:
    """``POST /learnings`` (form ``text``; docs/reference.md#15-learnings): a person's
    learning, active at once; 303 to its page with ``?done=learning-proposed``, or to the
    live learning that already says the same with ``?done=learning-exists``.

    A refusal (``invalid_request``: blank; ``memory_text_too_long``: over 500 characters;
    ``secret_in_memory``; ``learning_limit_reached``: 200 live learnings) answers the
    Learnings page with the error's status, the error next to the form and the text kept.
    """
    form = web.request.form()
    try:
        learning, new = web.services.learnings.propose(
            web.principal, form.get("text", ""), RunContext()
        )
    except PineworkError as error:
        return learnings_page(web, error=FormError.of(error, "propose"), form=form)
    done = "learning-proposed" if new else "learning-exists"
    return web.back({}, f"/learnings/{learning.id}", done=done)


def learning_page(
    web: WebContext,
    learning_id: str,
    *,
    errors: dict[str, FormError] | None = None,
    form: dict[str, str] | None = None,
) -> WebResponse:
    """``GET /learnings/{learning_id}`` (docs/reference.md#15-learnings): the learning
    (text, state, who proposed it with its run and task, who decided and why), the
    decision forms its state allows (each with its ``version``), the recalls that gave it
    and its history records, oldest first. ``errors`` maps a form's verb (``approve``,
    ``edit``, ``reject``, ``retire``) to the error shown next to it (the page answers that
    error's status); ``form`` is what was typed, shown again.

    Raises:
        LearningNotFound: no such learning in the person's workspace (404; another
            workspace's answers the same).
    """
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
    """The recalls that gave the learning, newest first, as (agent, log entry) pairs:
    the last ``RECALL_ENTRIES`` of the recall log of each of the workspace's first
    ``RECALL_AGENTS`` agents (the log is kept by agent; its entries name the learnings
    they gave; docs/reference.md#15-learnings)."""
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
    """``POST /learnings/{learning_id}/{verb}`` (docs/reference.md#15-learnings), ``verb``
    one of ``approve`` (form ``text``: the text to approve, blank keeps it;
    ``archive_copies=yes``), ``edit`` (``text``), ``reject`` (``reason``, required) or
    ``retire`` (``reason``, optional). Every form carries ``version``, the learning's
    version it was made from, sent as ``expected_versions``; 303 back to the learning's
    page with ``?done=learning-<verb>``.

    A refusal answers the learning's page with the error's status, the error next to the
    form and what was typed kept: ``precondition_failed`` (412, the form is stale: the
    learning as it stands now), ``invalid_request`` (400: a blank reason or text, no
    ``version``), ``learning_decided`` (409: its state does not allow it),
    ``memory_text_too_long``, ``secret_in_memory``.

    Raises:
        LearningNotFound: no such learning in the person's workspace (404).
    """
    form = web.request.form()
    service = web.services.learnings
    try:
        versions = form_version(form, "learning")
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


def proposed_count(web: WebContext) -> int:
    """How many of the workspace's learnings are proposed, waiting for a person (the
    agents overview's notice, linking to ``/learnings?state=proposed``;
    docs/reference.md#15-learnings). At most 200: the workspace's live learnings."""
    found, _ = web.services.learnings.list_learnings(
        web.principal, state=LearningState.PROPOSED, query=None, limit=LEARNINGS_SHOWN, after=None
    )
    return len(found)
