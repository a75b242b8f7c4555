"""``pinework learning …``: propose a fact every agent of the workspace needs, and (persons)
decide it (docs/reference.md#15-learnings). Registered on ``learning`` by ``pinework.cli``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer

from pinework import _render
from pinework.cli import JsonFlag, LimitOption, NextTokenOption, _more, _run, learning_app
from pinework.models import Learning, LearningAuditPage, LearningPage

LearningId = Annotated[str, typer.Argument(help="The learning, lrn_….")]
IfMatchOption = Annotated[
    str | None,
    typer.Option("--if-match", help="The learning's ETag as read: change it only at that version."),
]


def _row(learning: Learning) -> str:
    """``lrn_…  active    text`` (one line)."""
    return f"{learning.id}  {learning.state:<9} {' '.join(learning.text.split())}"


def _said(prefix: str) -> Callable[[Learning], None]:
    """A renderer printing ``prefix`` and the learning's line."""
    return lambda learning: _render.echo(f"{prefix} {_row(learning)}")


@learning_app.command("propose")
def learning_propose(
    fact: Annotated[
        str, typer.Argument(help="The fact every agent needs, at most 500 characters.")
    ],
    as_json: JsonFlag = False,
) -> None:
    """Propose a learning (an agent's waits for a person; a person's is active at once)."""
    _run(as_json, lambda c: c.propose_learning(fact), _said("proposed"))


@learning_app.command("list")
def learning_list(
    state: Annotated[
        str | None,
        typer.Option("--state", help="proposed, active, rejected or retired."),
    ] = None,
    q: Annotated[str | None, typer.Option("--q", help="Text the learning contains.")] = None,
    limit: LimitOption = None,
    next_token: NextTokenOption = None,
    as_json: JsonFlag = False,
) -> None:
    """The workspace's learnings, newest first."""

    def render(page: LearningPage) -> None:
        for learning in page.data:
            _render.echo(_row(learning))
        if not page.data:
            _render.echo("no learnings")
        _more(page.next_token)

    _run(
        as_json,
        lambda c: c.list_learnings(state=state, q=q, limit=limit, next_token=next_token),
        render,
    )


@learning_app.command("show")
def learning_show(learning_id: LearningId, as_json: JsonFlag = False) -> None:
    """One learning with who proposed and decided it."""

    def render(learning: Learning) -> None:
        _render.echo(_row(learning))
        _render.echo(f"proposed by {learning.proposed_by} ({learning.proposed_by_type})")
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
    """Approve a proposed learning (persons): every agent is told it from its next recall."""
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
    """Edit a proposed or active learning's text (persons)."""
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
    """Reject a proposed learning (persons): no agent may propose it again."""
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
    """Retire an active learning (persons): no agent is told it any more."""
    _run(
        as_json,
        lambda c: c.retire_learning(learning_id, reason=reason, if_match=if_match),
        _said("retired"),
    )


@learning_app.command("history")
def learning_history(learning_id: LearningId, as_json: JsonFlag = False) -> None:
    """A learning's history, oldest first."""

    def render(page: LearningAuditPage) -> None:
        for record in page.data:
            after = (record.after or {}).get("text", "")
            _render.echo(
                f"{record.at:%Y-%m-%d %H:%M}Z  {record.action:<8} {record.actor_id}  {after}"
            )

    _run(as_json, lambda c: c.learning_history(learning_id), render)
