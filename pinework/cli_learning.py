"""``pinework learning …``: propose a fact every agent of the workspace needs, and (persons)
decide it (docs/reference.md#15-learnings). Registered on ``learning`` by ``pinework.cli``.

Each command prints one line per learning (``lrn_…  state     text``, the text on one line),
or with ``--json`` the server's JSON exactly. Errors print ``error: <code>: <message>`` on
stderr (with ``--json`` also the error envelope on stdout) and exit 1; e.g. ``forbidden``
(an agent deciding), ``learning_decided`` (a decision its state does not allow),
``learning_rejected`` (an agent proposing what a person rejected), ``learning_not_found``,
``precondition_failed`` (``--if-match`` names another version)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer

from pinework import _render
from pinework.cli import JsonFlag, NextTokenOption, _more, _run, learning_app
from pinework.models import Learning, LearningAuditPage, LearningPage

LearningId = Annotated[str, typer.Argument(help="The learning, lrn_….")]
LearningLimitOption = Annotated[
    int | None,
    typer.Option("--limit", min=1, max=200, help="Page size (default 50, at most 200)."),
]
IfMatchOption = Annotated[
    str | None,
    typer.Option("--if-match", help="The learning's ETag as read: change it only at that version."),
]


def _said(prefix: str) -> Callable[[Learning], None]:
    """A renderer printing ``prefix`` and the learning's line."""
    return lambda learning: _render.echo(f"{prefix} {_render.learning_row(learning)}")


@learning_app.command("propose")
def learning_propose(
    fact: Annotated[
        str, typer.Argument(help="The fact every agent needs, at most 500 characters.")
    ],
    as_json: JsonFlag = False,
) -> None:
    """Propose a learning (an agent's waits for a person; a person's is active at once).

    Prints ``proposed lrn_…  state  text``; the live learning that already says the same is
    printed instead of a new one. Errors: learning_rejected, learning_limit_reached,
    rate_limited, memory_text_too_long, secret_in_memory.
    """
    _run(as_json, lambda c: c.propose_learning(fact), _said("proposed"))


@learning_app.command("list")
def learning_list(
    state: Annotated[
        str | None,
        typer.Option("--state", help="proposed, active, rejected or retired."),
    ] = None,
    q: Annotated[str | None, typer.Option("--q", help="Text the learning contains.")] = None,
    unreviewed: Annotated[
        bool,
        typer.Option(
            "--unreviewed",
            help="Only the active learnings no person reviewed (persons): approve or retire each.",
        ),
    ] = False,
    limit: LearningLimitOption = None,
    next_token: NextTokenOption = None,
    as_json: JsonFlag = False,
) -> None:
    """The workspace's learnings, newest first, one line each (``no learnings`` when none;
    ``more: --next-token …`` when there is a next page). ``--unreviewed``: the active ones
    that went live without a person, until one approves or retires each (``no unreviewed
    learnings`` when none). Errors: invalid_request (an unknown state; ``--unreviewed``
    with a state other than active), forbidden (an agent's ``--unreviewed``)."""

    def render(page: LearningPage) -> None:
        for learning in page.data:
            _render.echo(_render.learning_row(learning))
        if not page.data:
            _render.echo("no unreviewed learnings" if unreviewed else "no learnings")
        _more(page.next_token)

    _run(
        as_json,
        lambda c: c.list_learnings(
            state=state, q=q, limit=limit, next_token=next_token, unreviewed=unreviewed
        ),
        render,
    )


@learning_app.command("show")
def learning_show(learning_id: LearningId, as_json: JsonFlag = False) -> None:
    """One learning with who proposed, edited and decided it. Errors: learning_not_found."""

    def render(learning: Learning) -> None:
        _render.echo(_render.learning_row(learning))
        _render.echo(f"proposed by {learning.proposed_by} ({learning.proposed_by_type})")
        if learning.edited_by:
            _render.echo(f"edited by {learning.edited_by}")
        if learning.decided_by:
            _render.echo(f"decided by {learning.decided_by}")
        if learning.reason:
            _render.echo(f"reason: {learning.reason}")

    _run(as_json, lambda c: c.get_learning(learning_id), render)


@learning_app.command("approve")
def learning_approve(
    learning_id: LearningId,
    text: Annotated[
        str | None, typer.Option("--text", help="Edit the text as you approve it.")
    ] = None,
    if_match: IfMatchOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Approve a proposed learning (persons): every agent is told it from its next recall.

    Errors: forbidden (an agent), learning_decided (not proposed), learning_not_found,
    precondition_failed.
    """
    _run(
        as_json,
        lambda c: c.approve_learning(learning_id, text=text, if_match=if_match),
        _said("approved"),
    )


@learning_app.command("edit")
def learning_edit(
    learning_id: LearningId,
    text: Annotated[str, typer.Option("--text", help="The new text.")],
    if_match: IfMatchOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Edit a proposed or active learning's text (persons). Errors: forbidden,
    learning_decided (rejected or retired), learning_not_found, precondition_failed."""
    _run(
        as_json,
        lambda c: c.edit_learning(learning_id, text, if_match=if_match),
        _said("edited"),
    )


@learning_app.command("reject")
def learning_reject(
    learning_id: LearningId,
    reason: Annotated[str, typer.Option("--reason", help="Why (1 to 500 characters).")],
    if_match: IfMatchOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Reject a proposed learning (persons): no agent may propose it again. Errors:
    forbidden, learning_decided (not proposed), learning_not_found, precondition_failed."""
    _run(
        as_json,
        lambda c: c.reject_learning(learning_id, reason, if_match=if_match),
        _said("rejected"),
    )


@learning_app.command("retire")
def learning_retire(
    learning_id: LearningId,
    reason: Annotated[str | None, typer.Option("--reason", help="An optional note.")] = None,
    if_match: IfMatchOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Retire an active learning (persons): no agent is told it any more. Errors:
    forbidden, learning_decided (not active), learning_not_found, precondition_failed."""
    _run(
        as_json,
        lambda c: c.retire_learning(learning_id, reason=reason, if_match=if_match),
        _said("retired"),
    )


@learning_app.command("history")
def learning_history(learning_id: LearningId, as_json: JsonFlag = False) -> None:
    """A learning's history, oldest first: ``time  action  actor  text after`` (a
    record without a text, such as an erasure's, shows its reason instead). Errors:
    learning_not_found."""

    def render(page: LearningAuditPage) -> None:
        for record in page.data:
            after = (record.after or {}).get("text") or record.reason or ""
            actor = record.actor_id or record.actor_type
            _render.echo(f"{record.at:%Y-%m-%d %H:%M}Z  {record.action:<8} {actor}  {after}")

    _run(as_json, lambda c: c.learning_history(learning_id), render)
