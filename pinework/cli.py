"""The ``pinework`` command line (docs/reference.md#12-cli).

``pinework memory …`` and ``pinework kv …`` call the HTTP API through
:class:`pinework.Client`, configured only by ``PINEWORK_API_URL``,
``PINEWORK_TOKEN``, ``PINEWORK_RUN`` and ``PINEWORK_TASK``.
``pinework admin …`` writes straight to DynamoDB through the service code
(see :mod:`pinework.admin`).

Every command takes ``--json``: stdout is then exactly the server's JSON (or
the error envelope). Errors print ``error: <code>: <message>`` on stderr and
exit with status 1; usage errors exit with status 2.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from pinework import _render
from pinework._wire import ModelT
from pinework.client import Client
from pinework.dashboard import dashboard as _dashboard_command
from pinework.errors import PineworkAPIError
from pinework.models import (
    AuditPage,
    KvKeys,
    KvValue,
    Memory,
    MemoryPage,
    PendingPage,
    RecallLogPage,
    RecallResult,
    ReviewPage,
    ReviewReport,
    ReviewRun,
    Routine,
    RoutinePage,
)

if TYPE_CHECKING:
    from pinework.admin import AdminOperations

__all__ = ["Connections", "app", "main", "make_client"]

app = typer.Typer(
    name="pinework",
    help="Pinework Memory: agent memory and key-value tools from the command line.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help texts contain brackets such as pinework[admin]
)
memory_app = typer.Typer(
    help="Agent memory: facts and day logs.", no_args_is_help=True, rich_markup_mode=None
)
kv_app = typer.Typer(
    help="Key-value meta-tools: remember, recall, forget.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
admin_app = typer.Typer(
    help=(
        "Operator commands: create workspaces, agents, persons and their tokens; "
        "issue, list, revoke and rotate tokens; set a workspace's review approval."
    ),
    no_args_is_help=True,
    rich_markup_mode=None,
)
routine_app = typer.Typer(
    help="The nightly 'Memory dreaming' routine of each agent: list, pause, resume, delete.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
review_app = typer.Typer(
    help=(
        "Daily reviews: run one now (or dry-run it), list the reports, approve or reject "
        "pending actions."
    ),
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(memory_app, name="memory")
app.add_typer(kv_app, name="kv")
app.add_typer(routine_app, name="routine")
app.add_typer(review_app, name="review")
app.add_typer(admin_app, name="admin")
app.command("dashboard")(_dashboard_command)

JsonFlag = Annotated[
    bool, typer.Option("--json", help="Print the JSON response (or error envelope) only.")
]
MemoryId = Annotated[str, typer.Argument(help="The memory's id, mem_…", metavar="MEMORY_ID")]
AgentOption = Annotated[
    str | None,
    typer.Option("--agent", help="The agent, agt_… (a person must name one; an agent: itself)."),
]
AgentFilterOption = Annotated[
    str | None,
    typer.Option("--agent", help="Only this agent's, agt_… (a person: all if omitted)."),
]
LimitOption = Annotated[
    int | None, typer.Option("--limit", min=1, help="Page size (default 100, at most 500).")
]
NextTokenOption = Annotated[
    str | None, typer.Option("--next-token", help="Continue after a previous page.")
]
ExpiresOption = Annotated[
    str | None,
    typer.Option("--expires", help="Expiry: RFC 3339 UTC time, or a date (end of that UTC day)."),
]


def make_client() -> Client:
    """Build the client every API command uses, from the environment (unless the
    caller passed its own in ``Connections``).

    Returns:
        A client configured by ``PINEWORK_API_URL``, ``PINEWORK_TOKEN``,
        ``PINEWORK_RUN`` and ``PINEWORK_TASK``.

    Raises:
        ValueError: ``PINEWORK_API_URL`` is not an http(s) URL.
    """
    return Client.from_env()


@dataclass(frozen=True)
class Connections:
    """What the commands connect with, for a caller that runs ``app`` itself.

    ``main()`` passes none: the API commands then use ``make_client()`` and the
    admin commands ``pinework.admin.open_admin_service()``, both configured by the
    environment. Tests pass their own as click's context object, e.g.
    ``CliRunner().invoke(app, args, obj=Connections(client=lambda: Client(...,
    transport=httpx.MockTransport(...))))``.

    Attributes:
        client: builds the API client (one per command).
        admin: opens the service the ``admin`` commands call.
    """

    client: Callable[[], Client] | None = None
    admin: Callable[[], AdminOperations] | None = None


def _connections() -> Connections:
    """The ``Connections`` the running command was invoked with (defaults if none)."""
    from typer._click.globals import get_current_context

    context = get_current_context(silent=True)
    found = None if context is None else context.find_object(Connections)
    return found or Connections()


def main() -> None:
    """Run the CLI (the ``pinework`` console script).

    A usage error (a bad or missing option) exits 2; with ``--json`` it also
    prints the error envelope (``invalid_request``) on stdout, so scripts always
    get JSON.
    """
    import sys

    from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError

    try:
        # Without standalone mode, click returns a command's exit code instead of exiting.
        code = app(standalone_mode=False)
    except typer.Exit as done:
        raise SystemExit(done.exit_code) from None
    except typer.Abort:
        raise SystemExit(130) from None
    except NoArgsIsHelpError as error:
        error.show()
        raise SystemExit(error.exit_code) from None
    except UsageError as error:
        if "--json" in sys.argv[1:]:
            typer.echo(
                _render.to_json(
                    {"error": {"code": "invalid_request", "message": error.format_message()}}
                )
            )
        error.show()
        raise SystemExit(error.exit_code) from None
    except ClickException as error:
        error.show()
        raise SystemExit(error.exit_code) from None
    if isinstance(code, int) and code:
        raise SystemExit(code)


def _fail(code: str, message: str, as_json: bool) -> NoReturn:
    """Report an error: envelope on stdout with ``--json``, ``error: code: message`` on stderr."""
    if as_json:
        typer.echo(_render.to_json({"error": {"code": code, "message": message}}))
    typer.echo(f"error: {code}: {message}", err=True)
    raise typer.Exit(1)


def _run(
    as_json: bool,
    operation: Callable[[Client], ModelT],
    render: Callable[[ModelT], None],
    *,
    no_query_hint: str | None = None,
) -> ModelT:
    """Call the API and print the result: its raw JSON with ``--json``, else ``render``.

    ``no_query_hint`` names this command's options for the API's "nothing to recall
    for" error, whose message speaks of the ``X-Pinework-Task`` header.
    """
    try:
        with (_connections().client or make_client)() as client:
            result = operation(client)
    except PineworkAPIError as exc:
        message = exc.message
        if no_query_hint and exc.code == "invalid_request" and "X-Pinework-Task" in message:
            message = f"{message} With the CLI: {no_query_hint}."
        _fail(exc.code, message, as_json)
    except ValueError as exc:  # a bad argument or PINEWORK_API_URL, found before sending
        _fail("invalid_request", str(exc), as_json)
    if as_json:
        typer.echo(_render.to_json(result.raw))
    else:
        render(result)
    return result


def _say(prefix: str) -> Callable[[Memory], None]:
    """A renderer printing ``prefix`` and the memory's list line."""
    return lambda memory: typer.echo(f"{prefix} {_render.memory_row(memory)}")


def _print_version(value: bool) -> None:
    """Print the installed version and stop (``--version``)."""
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(version("pinework"))
        except PackageNotFoundError:
            typer.echo("unknown")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version."
        ),
    ] = False,
) -> None:
    """Pinework Memory command line.

    Configure with PINEWORK_API_URL, PINEWORK_TOKEN, PINEWORK_RUN and PINEWORK_TASK.
    """


# pinework memory …


@memory_app.command("save")
def memory_save(
    fact: Annotated[str, typer.Argument(help="The fact, at most 500 characters.")],
    expires: ExpiresOption = None,
    supersedes: Annotated[
        str | None, typer.Option("--supersedes", help="The mem_… this fact replaces.")
    ] = None,
    agent: AgentOption = None,
    evidence: Annotated[
        str | None,
        typer.Option(
            "--evidence",
            help="The tool-output excerpt that supports the fact (at most 2,000 characters).",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Save a fact."""
    _run(
        as_json,
        lambda c: c.save_fact(
            fact, expires_at=expires, supersedes=supersedes, agent_id=agent, evidence=evidence
        ),
        _say("saved"),
    )


@memory_app.command("day")
def memory_day(
    line: Annotated[str, typer.Argument(help="The line, at most 300 characters.")],
    as_json: JsonFlag = False,
) -> None:
    """Append a line to today's (UTC) day log (agents only)."""

    def render(memory: Memory) -> None:
        lines = len(memory.text.splitlines())
        noun = "line" if lines == 1 else "lines"
        verb = "started day log" if lines == 1 else "appended to"
        typer.echo(f"{verb} {memory.id} (day log of {memory.date}, {lines} {noun})")

    _run(as_json, lambda c: c.append_day_line(line), render)


@memory_app.command("list")
def memory_list(
    kind: Annotated[str | None, typer.Option("--kind", help="fact or day.")] = None,
    status: Annotated[str | None, typer.Option("--status", help="active or archived.")] = None,
    agent: AgentFilterOption = None,
    include_archived: Annotated[
        bool, typer.Option("--all", help="Include archived memories.")
    ] = False,
    limit: LimitOption = None,
    next_token: NextTokenOption = None,
    as_json: JsonFlag = False,
) -> None:
    """List memories, newest first, one per line."""

    def render(page: MemoryPage) -> None:
        for memory in page.data:
            typer.echo(_render.memory_row(memory))
        if not page.data:
            typer.echo("no memories")
        _more(page.next_token)

    _run(
        as_json,
        lambda c: c.list_memories(
            agent_id=agent,
            kind=kind,
            status=status,
            include_archived=include_archived,
            limit=limit,
            next_token=next_token,
        ),
        render,
    )


@memory_app.command("show")
def memory_show(memory_id: MemoryId, as_json: JsonFlag = False) -> None:
    """Show one memory with every field."""
    _run(
        as_json,
        lambda c: c.get_memory(memory_id),
        lambda memory: typer.echo(_render.memory_block(memory)),
    )


@memory_app.command("edit")
def memory_edit(
    memory_id: MemoryId,
    text: Annotated[str | None, typer.Option("--text", help="The new text.")] = None,
    expires: ExpiresOption = None,
    if_match: Annotated[
        str | None,
        typer.Option(
            "--if-match",
            help="Edit only if the memory is still at this ETag (as shown by show, "
            'e.g. "mem_….v3"); default: the version read just before the edit.',
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Edit a memory's text and/or expiry (persons only).

    The edit names the version it is based on (``If-Match``): a fresh read's, or
    ``--if-match``. When someone changed the memory in between, it fails with
    ``precondition_failed`` and nothing changes (docs/issues.md#issue-15: no lost edits).
    """
    if text is None and expires is None:
        raise typer.BadParameter("give --text, --expires or both")

    def edit(client: Client) -> Memory:
        version = if_match or client.get_memory(memory_id).etag
        return client.edit_memory(memory_id, text=text, expires_at=expires, if_match=version)

    _run(as_json, edit, _say("edited"))


@memory_app.command("archive")
def memory_archive(
    memory_id: MemoryId,
    reason: Annotated[str, typer.Option("--reason", help="Why (required, 500 characters).")],
    as_json: JsonFlag = False,
) -> None:
    """Archive a memory so it is never recalled."""
    _run(as_json, lambda c: c.archive(memory_id, reason), _say("archived"))


@memory_app.command("veto")
def memory_veto(
    memory_id: MemoryId,
    reason: Annotated[str | None, typer.Option("--reason", help="A note for the audit.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Veto a memory: archive it with reason 'vetoed' (persons only)."""
    _run(as_json, lambda c: c.veto(memory_id, reason), _say("vetoed"))


@memory_app.command("unarchive")
def memory_unarchive(memory_id: MemoryId, as_json: JsonFlag = False) -> None:
    """Bring an archived memory back."""
    _run(as_json, lambda c: c.unarchive(memory_id), _say("unarchived"))


@memory_app.command("history")
def memory_history(
    memory_id: MemoryId,
    limit: LimitOption = None,
    next_token: NextTokenOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Show a memory's audit records, oldest first: who changed what, when."""

    def render(page: AuditPage) -> None:
        for record in page.data:
            typer.echo(_render.audit_row(record))
        if not page.data:
            typer.echo("no history")
        _more(page.next_token)

    _run(as_json, lambda c: c.history(memory_id, limit=limit, next_token=next_token), render)


@memory_app.command("recall")
def memory_recall(
    query: Annotated[
        str | None, typer.Option("--query", help="What to recall for (default: the task).")
    ] = None,
    agent: AgentOption = None,
    block: Annotated[
        bool, typer.Option("--block", help="Print the rendered --- MEMORY --- block instead.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Recall the memories relevant to a query, best first, with their scores."""

    def render(result: RecallResult) -> None:
        _fallback_note(result)
        if block:
            typer.echo(result.block)
            return
        for scored in result.memories:
            typer.echo(_render.scored_row(scored))
        if not result.memories:
            typer.echo("no memories recalled")

    _run(
        as_json,
        lambda c: c.recall(query=query, agent_id=agent),
        render,
        no_query_hint="give --query, or set PINEWORK_TASK (agents)",
    )


def _fallback_note(result: RecallResult) -> None:
    """Say on stderr that a recall fell back to the newest facts (docs/reference.md#8-recall), if it
    did: stdout stays what the command prints (the block, or the scored lines)."""
    if result.fallback:
        typer.echo(
            f"fallback: {result.fallback} (scoring failed or ran past its time budget)", err=True
        )


@memory_app.command("start")
def memory_recall_start(
    session: Annotated[
        str,
        typer.Option("--session", envvar="PINEWORK_SESSION", help="The conversation's id."),
    ],
    resumed: Annotated[bool, typer.Option("--resumed", help="This run resumes it.")] = False,
    task: Annotated[str | None, typer.Option("--task", help="The task text.")] = None,
    message: Annotated[str | None, typer.Option("--message", help="The message.")] = None,
    slash: Annotated[
        str | None, typer.Option("--slash-command", help="The run is a slash command.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Run-start recall (agents): print the --- MEMORY --- block, or why it was skipped."""

    def render(result: RecallResult) -> None:
        if result.skipped:
            typer.echo(f"skipped: {result.reason}")
            return
        _fallback_note(result)
        typer.echo(result.block or "")

    _run(
        as_json,
        lambda c: c.recall_start(
            session, resumed=resumed, task=task, message=message, slash_command=slash
        ),
        render,
        no_query_hint="give --task or --message, or set PINEWORK_TASK",
    )


@memory_app.command("recalls")
def memory_recall_log(
    agent: AgentOption = None,
    limit: LimitOption = None,
    next_token: NextTokenOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Show the recall log: which memories went to which session, run and task."""

    def render(page: RecallLogPage) -> None:
        for entry in page.data:
            where = " ".join(
                f"{label}={value}"
                for label, value in (
                    ("session", entry.session_id),
                    ("run", entry.run_id),
                    ("task", entry.task_key),
                )
                if value
            )
            picked = ", ".join(
                m.memory_id if m.score is None else f"{m.memory_id} ({m.score:.2f})"
                for m in entry.memories
            )
            typer.echo(f"{entry.at:%Y-%m-%dT%H:%M:%SZ}  {entry.kind:<9} {where}  {picked or '-'}")
            if entry.query:
                typer.echo(f"    query: {entry.query}")
        if not page.data:
            typer.echo("no recalls")
        _more(page.next_token)

    _run(
        as_json,
        lambda c: c.recall_log(agent_id=agent, limit=limit, next_token=next_token),
        render,
    )


# pinework kv …


@kv_app.command("remember")
def kv_remember(
    key: Annotated[str, typer.Argument(help="The key, 1-512 bytes.")],
    value: Annotated[str, typer.Argument(help="The value; stored as a string unless --parse.")],
    parse: Annotated[
        bool, typer.Option("--parse", help="Parse VALUE as JSON and store that value.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Store a value under a key."""
    stored: Any = value
    if parse:
        try:
            stored = json.loads(value)
        except ValueError as exc:
            raise typer.BadParameter(f"VALUE is not JSON: {exc}") from exc
    _run(
        as_json,
        lambda c: c.kv_remember(key, stored),
        lambda result: typer.echo(f"stored {result.key} (ttl: {result.ttl})"),
    )


@kv_app.command("recall")
def kv_recall(
    key: Annotated[str | None, typer.Argument(help="The key; omit it to list keys.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Print a key's stored value, or list the keys without KEY.

    Without --json, a missing key exits with status 1 (like grep); with --json
    the answer's "found" says it and the exit status is 0.
    """
    result = _run(as_json, lambda c: c.kv_recall(key), _render_kv_recall)
    if not as_json and isinstance(result, KvValue) and not result.found:
        raise typer.Exit(1)


def _render_kv_recall(result: KvValue | KvKeys) -> None:
    """Print the value, a not-found note (stderr), or one key per line."""
    if isinstance(result, KvKeys):
        for key in result.keys:
            typer.echo(key)
    elif result.found:
        typer.echo(result.value)
    else:
        typer.echo(f"not found: {result.key}", err=True)


@kv_app.command("forget")
def kv_forget(
    key: Annotated[str, typer.Argument(help="The key.")],
    as_json: JsonFlag = False,
) -> None:
    """Delete a key."""
    _run(
        as_json,
        lambda c: c.kv_forget(key),
        lambda result: typer.echo(
            f"forgot {result.key}" if result.deleted else f"nothing stored under {result.key}"
        ),
    )


# pinework routine …

RoutineId = Annotated[
    str, typer.Argument(help="The routine's rtn_… id, or its agent's agt_… id.", metavar="ROUTINE")
]


def _more(next_token: str | None) -> None:
    """Tell how to read the next page of a list, if there is one."""
    if next_token:
        typer.echo(f"more: --next-token {next_token}")


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
            typer.echo(_routine_line(routine))
        if not page.data:
            typer.echo("no routines")
        _more(page.next_token)

    _run(
        as_json,
        lambda c: c.list_routines(agent_id=agent, limit=limit, next_token=next_token),
        render,
    )


@routine_app.command("show")
def routine_show(routine_id: RoutineId, as_json: JsonFlag = False) -> None:
    """Show one routine."""
    _run(as_json, lambda c: c.get_routine(routine_id), lambda r: typer.echo(_routine_line(r)))


@routine_app.command("pause")
def routine_pause(routine_id: RoutineId, as_json: JsonFlag = False) -> None:
    """Pause a routine: the nightly review skips the agent (persons only)."""
    _run(
        as_json,
        lambda c: c.pause_routine(routine_id),
        lambda r: typer.echo(f"paused {_routine_line(r)}"),
    )


@routine_app.command("resume")
def routine_resume(routine_id: RoutineId, as_json: JsonFlag = False) -> None:
    """Resume a paused routine (persons only)."""
    _run(
        as_json,
        lambda c: c.resume_routine(routine_id),
        lambda r: typer.echo(f"resumed {_routine_line(r)}"),
    )


@routine_app.command("delete")
def routine_delete(routine_id: RoutineId, as_json: JsonFlag = False) -> None:
    """Delete a routine; later saves do not create it again (persons only)."""
    _run(
        as_json,
        lambda c: c.delete_routine(routine_id),
        lambda r: typer.echo(f"deleted {r.id} ({r.agent_id})"),
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
        lambda r: typer.echo(_routine_line(r)),
    )


# pinework review …


def _render_report(report: ReviewReport) -> None:
    """The plan, one action per line (with its decision in approval mode), then
    what was applied and skipped."""
    mode = "dry run" if report.dry_run else report.trigger
    approval = ", approval required" if report.approval == "required" else ""
    typer.echo(f"review {report.id} of {report.agent_id} for {report.date} ({mode}{approval})")
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
        typer.echo(f"  {action.id} {action.action:<16} {ids}{keep}: {action.reason}{state}")
        if action.text is not None:
            # What a lift would save: a person deciding needs to read it.
            typer.echo(f"      text: {action.text}")
    if not report.plan.actions:
        typer.echo("  nothing to do")
    for note in report.plan.notes:
        typer.echo(f"  note: {note}")
    if not report.dry_run:
        counts = f"applied {len(report.applied)}, skipped {len(report.skipped)}"
        if report.decisions:
            pending = sum(d.state in ("pending", "applying") for d in report.decisions)
            rejected = sum(d.state == "rejected" for d in report.decisions)
            counts += f", rejected {rejected}, pending {pending}"
        typer.echo(counts)
        for outcome in report.skipped:
            typer.echo(f"  skipped {outcome.action_id}: {outcome.detail}")


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
    typer.echo(
        f"review {answer.id} of {answer.agent_id} for {answer.date} ({mode}): {answer.status}"
    )
    if answer.status == "failed":
        typer.echo(f"  attempt {answer.attempts} failed ({answer.error}); the queue retries it")
    else:
        typer.echo(
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
    """List an agent's review reports, newest first."""

    def render(page: ReviewPage) -> None:
        for item in page.data:
            decisions = (
                f", pending {item.pending}, rejected {item.rejected}"
                if item.approval == "required"
                else ""
            )
            typer.echo(
                f"{item.id}  {item.date}  {item.trigger:<8} {item.status:<7} planned "
                f"{item.planned}, applied {item.applied}, skipped {item.skipped}{decisions}"
            )
        if not page.data:
            typer.echo("no reviews")
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
            typer.echo(
                f"{item.review_id} {action.id}  {item.agent_id}  {action.action} {ids}{keep}: "
                f"{action.reason}"
            )
        if not page.data:
            typer.echo("nothing waits for a person")
        _more(page.next_token)

    _run(
        as_json,
        lambda c: c.list_pending_actions(agent, limit=limit, next_token=next_token),
        render,
    )


# pinework admin …


def _admin(as_json: bool, operation: Callable[[AdminOperations], dict[str, Any]]) -> dict[str, Any]:
    """Run an admin operation; print its result as JSON with ``--json``."""
    from chalicelib.errors import PineworkError  # no dependencies beyond the standard library

    try:
        opener = _connections().admin
        if opener is None:
            from pinework.admin import open_admin_service

            opener = open_admin_service
        service = opener()
    except ValueError as exc:  # a bad setting (pydantic's errors are ValueErrors too)
        _fail("invalid_setting", str(exc), as_json)
    except ImportError as exc:
        _fail(
            "admin_unavailable",
            f"the admin commands need the service code and boto3 ({exc}); "
            "install them with: pip install 'pinework[admin]'",
            as_json,
        )
    try:
        result = operation(service)
    except PineworkError as exc:
        _fail(exc.code, exc.message, as_json)
    except Exception as exc:  # boto3/endpoint failures: one line, not a traceback
        hint = ""
        if type(exc).__name__ == "EndpointConnectionError":
            hint = (
                " (is `make serve` running? If it was started on another port, set "
                "PINEWORK_DYNAMODB_PORT, or the PINEWORK_DYNAMODB_ENDPOINT line its banner prints)"
            )
        _fail("admin_failed", f"{type(exc).__name__}: {exc}{hint}", as_json)
    if as_json:
        typer.echo(_render.to_json(result))
    return result


_TOKEN_NOTE = "store the token now: only its hash is kept, it cannot be shown again"


@admin_app.command("create-workspace")
def admin_create_workspace(
    name: Annotated[str, typer.Option("--name", help="The workspace's name.")],
    as_json: JsonFlag = False,
) -> None:
    """Create a workspace and print its id."""
    result = _admin(as_json, lambda svc: {"id": svc.create_workspace(name).id})
    if not as_json:
        typer.echo(f"created workspace {result['id']} ({name})")


@admin_app.command("create-agent")
def admin_create_agent(
    workspace: Annotated[str, typer.Option("--workspace", help="The workspace, wsp_….")],
    name: Annotated[str, typer.Option("--name", help="The agent's name.")],
    as_json: JsonFlag = False,
) -> None:
    """Create an agent in a workspace and print its id and bearer token."""

    def create(svc: AdminOperations) -> dict[str, str | None]:
        issued = svc.create_agent(workspace, name)
        return {"id": issued.id, "token": issued.token, "tokenId": issued.token_id}

    result = _admin(as_json, create)
    if not as_json:
        typer.echo(f"created agent {result['id']} in {workspace}\ntoken: {result['token']}")
        typer.echo(_TOKEN_NOTE, err=True)


@admin_app.command("create-person")
def admin_create_person(
    workspace: Annotated[str, typer.Option("--workspace", help="The workspace, wsp_….")],
    email: Annotated[str, typer.Option("--email", help="The person's email address.")],
    as_json: JsonFlag = False,
) -> None:
    """Create a person in a workspace and print their id and bearer token."""

    def create(svc: AdminOperations) -> dict[str, str | None]:
        issued = svc.create_person(workspace, email)
        return {"id": issued.id, "token": issued.token, "tokenId": issued.token_id}

    result = _admin(as_json, create)
    if not as_json:
        typer.echo(f"created person {result['id']} ({email}) in {workspace}")
        typer.echo(f"token: {result['token']}")
        typer.echo(_TOKEN_NOTE, err=True)


@admin_app.command("backfill-embeddings")
def admin_backfill_embeddings(
    workspace: Annotated[str, typer.Option("--workspace", help="The workspace, wsp_….")],
    agent: Annotated[
        str | None, typer.Option("--agent", help="Only this agent, agt_… (default: all).")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Embed live facts saved without a recall embedding, or with an older format."""
    result = _admin(as_json, lambda svc: svc.backfill_embeddings(workspace, agent).to_wire())
    if not as_json:
        typer.echo(
            f"scanned {result['scanned']} live facts: {result['current']} already current, "
            f"{result['embedded']} embedded, {result['changed']} changed meanwhile "
            "(their edit stored a fresh embedding)"
        )


@admin_app.command("set-review-approval")
def admin_set_review_approval(
    workspace: Annotated[str, typer.Option("--workspace", help="The workspace, wsp_….")],
    value: Annotated[
        str,
        typer.Argument(
            help="required: each review action waits for a person; none: reviews apply at once.",
            metavar="required|none",
        ),
    ],
    as_json: JsonFlag = False,
) -> None:
    """Set whether the workspace's reviews wait for a person to approve each action."""

    def configure(svc: AdminOperations) -> dict[str, str]:
        configured = svc.set_review_approval(workspace, value)
        return {"id": configured.id, "reviewApproval": configured.review_approval}

    result = _admin(as_json, configure)
    if not as_json:
        typer.echo(f"workspace {result['id']}: reviewApproval {result['reviewApproval']}")


@admin_app.command("upgrade-table")
def admin_upgrade_table(as_json: JsonFlag = False) -> None:
    """Once, after upgrading a table written before the dashboard: list every agent
    under its workspace and index every memory for the dashboard (scans the table;
    safe to rerun)."""
    result = _admin(as_json, lambda svc: svc.upgrade_table().to_wire())
    if not as_json:
        if result["doneBefore"]:
            typer.echo("the table was upgraded before; nothing to do")
        else:
            typer.echo(
                f"scanned {result['scanned']} items: {result['agentsListed']} agents listed, "
                f"{result['memoriesIndexed']} memories indexed, "
                f"{result['changedMeanwhile']} changed meanwhile (their change indexed them)"
            )


# The token lifecycle commands (docs/issues.md#issue-12) register themselves on ``admin``.
from pinework import cli_tokens  # noqa: E402, F401
