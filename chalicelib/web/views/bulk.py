"""Bulk actions on an agent's memory list (docs/reference.md#bulk-actions,
docs/issues.md#issue-46-item-3): a person ticks memories of the list and archives,
vetoes, tags or untags them in one step, sees what changed and what did not, and undoes
it. Each tick is a field ``pick-<mem_id>`` of the list's bulk form; the one text field
``detail`` is the archive reason, the veto note, or the tags (comma-separated).

Every change calls ``BulkService`` as the signed-in person; its error codes and messages
are shown on the outcome page.
"""

from __future__ import annotations

from typing import Any

from chalicelib.errors import InvalidRequest, PineworkError
from chalicelib.models.bulk import BulkRequest
from chalicelib.web.context import FormError, WebContext
from chalicelib.web.http import WebResponse

PICK = "pick-"
"""The prefix of a ticked memory's field (``pick-mem_…``)."""


def bulk_request(form: dict[str, str]) -> BulkRequest:
    """The list's bulk form as the API's request.

    Raises:
        InvalidRequest: nothing ticked, or an unknown action.
    """
    ids = [name.removeprefix(PICK) for name in form if name.startswith(PICK)]
    if not ids:
        raise InvalidRequest("Tick at least one memory of the list first.")
    action = form.get("action", "")
    detail = form.get("detail", "")
    body: dict[str, Any] = {"action": action, "ids": ids}
    if action == "archive":
        body["reason"] = detail
    elif action == "veto":
        body["note"] = detail or None
    elif action in ("tag", "untag"):
        body["tags"] = [tag for tag in detail.replace(",", " ").split() if tag]
    else:
        raise InvalidRequest("Choose archive, veto, tag or untag.")
    return BulkRequest.model_validate(body)


def apply_on_list(web: WebContext, agent_id: str) -> WebResponse:
    """``POST /agents/{agent_id}/bulk``: apply the list's bulk form; the outcome page
    (what changed, what did not and why, Undo), or the error on it (400)."""
    agent = web.services.dashboard.workspace.agent(web.principal, agent_id)
    form = web.request.form()
    try:
        result = web.services.bulk.apply(web.principal, bulk_request(form))
    except PineworkError as error:
        return _outcome(web, agent, error=FormError.of(error, "bulk"))
    return _outcome(
        web,
        agent,
        bulk_id=result.id,
        action=result.action.value,
        changed=result.outcome.changed_wire(),
        skipped=result.outcome.skipped,
    )


def undo_on_list(web: WebContext, agent_id: str, bulk_id: str) -> WebResponse:
    """``POST /agents/{agent_id}/bulk/{bulk_id}/undo``: undo a bulk action; the outcome
    page (what was put back, what was left and why)."""
    agent = web.services.dashboard.workspace.agent(web.principal, agent_id)
    try:
        record, outcome = web.services.bulk.undo(web.principal, bulk_id)
    except PineworkError as error:
        return _outcome(web, agent, error=FormError.of(error, "undo"))
    return _outcome(
        web,
        agent,
        action=record.action.value,
        undone=True,
        changed=outcome.changed_wire(),
        skipped=outcome.skipped,
    )


def _outcome(
    web: WebContext, agent: Any, *, error: FormError | None = None, **context: Any
) -> WebResponse:
    return web.page(
        "bulk.html",
        status=error.status if error else 200,
        nav="agents",
        agent=agent,
        error=error,
        **{
            "bulk_id": None,
            "action": None,
            "undone": False,
            "changed": [],
            "skipped": [],
            **context,
        },
    )
