"""``pinework routine …`` and ``pinework review …``: the nightly routine and the daily
reviews, their pending actions, approvals and undo (docs/reference.md#9-review).
Registered on ``routine`` and ``review`` by ``pinework.cli``."""

from __future__ import annotations

from typing import Annotated

import typer

from pinework import _render
from pinework.cli import (
    AgentFilterOption,
    AgentOption,
    JsonFlag,
    LimitOption,
    NextTokenOption,
    _more,
    _run,
    review_app,
    routine_app,
)
from pinework.client import Client
from pinework.models import (
    PendingPage,
    ReviewPage,
    ReviewReport,
    ReviewRun,
    Routine,
    RoutinePage,
)

# pinework routine …

RoutineId = Annotated[
    str, typer.Argument(help="The routine's rtn_… id, or its agent's agt_… id.", metavar="ROUTINE")
]


def _routine_line(routine: Routine) -> str:
    """One line per routine: id, agent, status, schedule."""
    return (
        f"{routine.id}  {routine.agent_id}  {routine.status:<7} {routine.name} ({routine.schedule})"
    )


@routine_app.command("list")
def routine_list(
    agent: AgentFilterOption = None,
    limit: LimitOption = None,
    next_token: NextTokenOption = None,
    as_json: JsonFlag = False,
) -> None:
    """List routines by agent id (an agent: its own; a person: one agent's or all)."""

    def render(page: RoutinePage) -> None:
        for routine in page.data:
            _render.echo(_routine_line(routine))
        if not page.data:
            _render.echo("no routines")
        _more(page.next_token)

    _run(
        as_json,
        lambda c: c.list_routines(agent_id=agent, limit=limit, next_token=next_token),
        render,
    )


@routine_app.command("show")
def routine_show(routine_id: RoutineId, as_json: JsonFlag = False) -> None:
    """Show one routine."""
    _run(as_json, lambda c: c.get_routine(routine_id), lambda r: _render.echo(_routine_line(r)))


@routine_app.command("pause")
def routine_pause(routine_id: RoutineId, as_json: JsonFlag = False) -> None:
    """Pause a routine: the nightly review skips the agent (persons only)."""
    _run(
        as_json,
        lambda c: c.pause_routine(routine_id),
        lambda r: _render.echo(f"paused {_routine_line(r)}"),
    )


@routine_app.command("resume")
def routine_resume(routine_id: RoutineId, as_json: JsonFlag = False) -> None:
    """Resume a paused routine (persons only)."""
    _run(
        as_json,
        lambda c: c.resume_routine(routine_id),
        lambda r: _render.echo(f"resumed {_routine_line(r)}"),
    )


@routine_app.command("delete")
def routine_delete(routine_id: RoutineId, as_json: JsonFlag = False) -> None:
    """Delete a routine; later saves do not create it again (persons only)."""
    _run(
        as_json,
        lambda c: c.delete_routine(routine_id),
        lambda r: _render.echo(f"deleted {r.id} ({r.agent_id})"),
    )


@routine_app.command("create")
def routine_create(
    agent: Annotated[str, typer.Option("--agent", help="The agent, agt_….")],
    as_json: JsonFlag = False,
) -> None:
    """Create an agent's routine again after a delete (persons only)."""
    _run(
        as_json,
        lambda c: c.create_routine(agent),
        lambda r: _render.echo(_routine_line(r)),
    )


# pinework review …


def _render_report(report: ReviewReport) -> None:
    """The plan, one action per line (with its decision in approval mode), then
    the counts (applied, skipped; rejected and pending when a decision is recorded;
    undone) and what was skipped."""
    mode = "dry run" if report.dry_run else report.trigger
    approval = ", approval required" if report.approval == "required" else ""
    _render.echo(f"review {report.id} of {report.agent_id} for {report.date} ({mode}{approval})")
    states = {decision.action_id: decision for decision in report.decisions}
    for action in report.plan.actions:
        ids = ", ".join(action.memory_ids) or "-"
        keep = f" -> {action.keep_id}" if action.keep_id else ""
        decision = states.get(action.id)
        state = ""
        if decision is not None:
            by = f" by {decision.decided_by}" if decision.decided_by else ""
            state = f"  [{decision.state}{by}]"
        undone = next((u for u in report.undone if u.action_id == action.id), None)
        if undone is not None:
            state += f"  [undone by {undone.undone_by}]"
        _render.echo(f"  {action.id} {action.action:<16} {ids}{keep}: {action.reason}{state}")
        if action.text is not None:
            # What a lift would save: a person deciding needs to read it.
            _render.echo(f"      text: {action.text}")
    if not report.plan.actions:
        _render.echo("  nothing to do")
    for note in report.plan.notes:
        _render.echo(f"  note: {note}")
    if not report.dry_run:
        counts = f"applied {len(report.applied)}, skipped {len(report.skipped)}"
        if report.decisions:
            pending = sum(d.state in ("pending", "applying") for d in report.decisions)
            rejected = sum(d.state == "rejected" for d in report.decisions)
            counts += f", rejected {rejected}, pending {pending}"
        _render.echo(f"{counts}, undone {len(report.undone)}")
        for outcome in report.skipped:
            _render.echo(f"  skipped {outcome.action_id}: {outcome.detail}")


@review_app.command("run")
def review_run(
    agent: Annotated[str, typer.Option("--agent", help="The agent to review, agt_….")],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show the plan only; change nothing.")
    ] = False,
    wait: Annotated[
        bool,
        typer.Option(
            "--wait", help="If the server queues the review, wait for its report (polls)."
        ),
    ] = False,
    wait_seconds: Annotated[
        int, typer.Option("--wait-seconds", min=1, help="How long --wait waits at most.")
    ] = 900,
    as_json: JsonFlag = False,
) -> None:
    """Run an agent's review now, for yesterday (UTC) (persons only).

    A review that may take longer than API Gateway's 29 seconds (the bedrock reviewer,
    or a large store) is queued: this prints its id and status, and --wait waits for
    its report. Exits 1 when --wait ends without one (failed, or still queued).
    """

    def operation(client: Client) -> ReviewReport | ReviewRun:
        answer = client.run_review(agent, dry_run=dry_run)
        if wait and isinstance(answer, ReviewRun):
            return client.wait_for_review(answer.id, timeout=wait_seconds)
        return answer

    result = _run(as_json, operation, _render_review)
    if wait and isinstance(result, ReviewRun):
        raise typer.Exit(code=1)


def _render_review(answer: ReviewReport | ReviewRun) -> None:
    """A report, or a queued review's status line."""
    if isinstance(answer, ReviewReport):
        _render_report(answer)
        return
    mode = "dry run" if answer.dry_run else "manual"
    _render.echo(
        f"review {answer.id} of {answer.agent_id} for {answer.date} ({mode}): {answer.status}"
    )
    if answer.status == "failed":
        _render.echo(f"  attempt {answer.attempts} failed ({answer.error}); the queue retries it")
    else:
        _render.echo(
            "  queued: it may take longer than API Gateway's 29 s, so the review worker runs "
            f"it; follow it with: pinework review show {answer.id}"
        )


@review_app.command("list")
def review_list(
    agent: AgentOption = None,
    limit: LimitOption = None,
    next_token: NextTokenOption = None,
    as_json: JsonFlag = False,
) -> None:
    """List an agent's review reports, newest first (counts: planned, applied,
    skipped, pending and rejected when a person decides, undone)."""

    def render(page: ReviewPage) -> None:
        for item in page.data:
            # A conflict waits for a person in every mode: pending shows whenever
            # something waits, not only under reviewApproval required.
            decisions = (
                f", pending {item.pending}, rejected {item.rejected}"
                if item.approval == "required" or item.pending
                else ""
            )
            _render.echo(
                f"{item.id}  {item.date}  {item.trigger:<8} {item.status:<7} planned "
                f"{item.planned}, applied {item.applied}, skipped {item.skipped}{decisions}"
                f", undone {item.undone}"
            )
        if not page.data:
            _render.echo("no reviews")
        _more(page.next_token)

    _run(as_json, lambda c: c.list_reviews(agent, limit=limit, next_token=next_token), render)


@review_app.command("show")
def review_show(
    review_id: Annotated[str, typer.Argument(help="The review's id, rvw_…", metavar="REVIEW")],
    as_json: JsonFlag = False,
) -> None:
    """Show one review report: plan, applied, skipped (or a queued review's status)."""
    _run(as_json, lambda c: c.get_review(review_id), _render_review)


ReviewArgument = Annotated[str, typer.Argument(help="The review's id, rvw_…", metavar="REVIEW_ID")]
ActionArgument = Annotated[
    str, typer.Argument(help="The action's number (1, 2, …) or id (a1, a2, …).", metavar="N")
]


@review_app.command("approve")
def review_approve(
    review_id: ReviewArgument,
    action: ActionArgument,
    keep: Annotated[
        str | None,
        typer.Option(
            "--keep", help="For a conflict: the fact to keep, mem_… (default: the plan's)."
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Approve a pending action: it is applied now (persons only).

    When the memories changed since the plan was made, the action is recorded
    as skipped with the reason.
    """
    _run(
        as_json, lambda c: c.approve_review_action(review_id, action, keep_id=keep), _render_report
    )


@review_app.command("reject")
def review_reject(
    review_id: ReviewArgument, action: ActionArgument, as_json: JsonFlag = False
) -> None:
    """Reject a pending action: it is never applied, nor proposed again (persons only)."""
    _run(as_json, lambda c: c.reject_review_action(review_id, action), _render_report)


@review_app.command("undo")
def review_undo(
    review_id: ReviewArgument, action: ActionArgument, as_json: JsonFlag = False
) -> None:
    """Undo an applied review action: what it changed is restored (persons only).

    Refused (review_undo_conflict) when a memory changed since the review.
    """
    _run(as_json, lambda c: c.undo_review_action(review_id, action), _render_report)


@review_app.command("pending")
def review_pending(
    agent: AgentOption = None,
    limit: LimitOption = None,
    next_token: NextTokenOption = None,
    as_json: JsonFlag = False,
) -> None:
    """List the review actions waiting for a person (the workspace's, or --agent's)."""

    def render(page: PendingPage) -> None:
        for item in page.data:
            action = item.action
            ids = ", ".join(action.memory_ids) or "-"
            keep = f" -> {action.keep_id}" if action.keep_id else ""
            _render.echo(
                f"{item.review_id} {action.id}  {item.agent_id}  {action.action} {ids}{keep}: "
                f"{action.reason}"
            )
        if not page.data:
            _render.echo("nothing waits for a person")
        _more(page.next_token)

    _run(
        as_json,
        lambda c: c.list_pending_actions(agent, limit=limit, next_token=next_token),
        render,
    )
