"""``pinework admin …``: the operator commands that write straight to the table
(workspaces, agents, persons and their offboarding, backfills of embeddings and of the
recall index, review approval, the table upgrade;
docs/reference.md#14-operations). Registered on ``admin`` by ``pinework.cli``; the token
commands are in ``pinework.cli_tokens``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pinework import _render
from pinework.cli import (
    LOCAL_ERROR,
    JsonFlag,
    _connections,
    _fail,
    admin_app,
)

if TYPE_CHECKING:
    from pinework.admin import AdminOperations, IndexProgressStep, IssuedCredential


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
        _render.echo(_render.to_json(result))
    return result


_TOKEN_NOTE = "store the token now: only its hash is kept, it cannot be shown again"


def _issued(issued: IssuedCredential) -> dict[str, str | None]:
    """The JSON ``create-agent`` and ``create-person`` print: the id and the new token."""
    return {"id": issued.id, "token": issued.token, "tokenId": issued.token_id}


@admin_app.command("create-workspace")
def admin_create_workspace(
    name: Annotated[str, typer.Option("--name", help="The workspace's name.")],
    as_json: JsonFlag = False,
) -> None:
    """Create a workspace and print its id."""
    result = _admin(as_json, lambda svc: {"id": svc.create_workspace(name).id})
    if not as_json:
        _render.echo(f"created workspace {result['id']} ({name})")


@admin_app.command("create-agent")
def admin_create_agent(
    workspace: Annotated[str, typer.Option("--workspace", help="The workspace, wsp_….")],
    name: Annotated[str, typer.Option("--name", help="The agent's name.")],
    as_json: JsonFlag = False,
) -> None:
    """Create an agent in a workspace and print its id and bearer token."""

    result = _admin(as_json, lambda svc: _issued(svc.create_agent(workspace, name)))
    if not as_json:
        _render.echo(f"created agent {result['id']} in {workspace}\ntoken: {result['token']}")
        _render.echo(_TOKEN_NOTE, err=True)


RoleOption = Annotated[
    str,
    typer.Option(
        "--role",
        help="owner (may also manage people, agents and tokens on the dashboard) or member.",
    ),
]


@admin_app.command("create-person")
def admin_create_person(
    workspace: Annotated[str, typer.Option("--workspace", help="The workspace, wsp_….")],
    email: Annotated[str, typer.Option("--email", help="The person's email address.")],
    role: RoleOption = "member",
    as_json: JsonFlag = False,
) -> None:
    """Create a person in a workspace and print their id and bearer token."""

    result = _admin(as_json, lambda svc: _issued(svc.create_person(workspace, email, role)))
    if not as_json:
        _render.echo(f"created person {result['id']} ({email}, {role}) in {workspace}")
        _render.echo(f"token: {result['token']}")
        _render.echo(_TOKEN_NOTE, err=True)


PersonOption = Annotated[str, typer.Option("--person", help="The person, usr_….")]


@admin_app.command("set-role")
def admin_set_role(
    person: PersonOption,
    role: Annotated[str, typer.Option("--role", help="owner or member.")],
    as_json: JsonFlag = False,
) -> None:
    """Set a person's role: owner or member (an operator may leave a workspace without
    an owner; the dashboard never does)."""
    result = _admin(as_json, lambda svc: svc.set_role(person, role))
    if not as_json:
        typer.echo(f"{result['id']} ({result['email']}) is now {result['role']}")


@admin_app.command("end-sessions")
def admin_end_sessions(person: PersonOption, as_json: JsonFlag = False) -> None:
    """End every dashboard session of a person at its next request (their tokens keep
    working; they may sign in again)."""
    result = _admin(as_json, lambda svc: svc.end_sessions(person))
    if not as_json:
        typer.echo(f"ended the dashboard sessions of {result['id']} ({result['email']})")


@admin_app.command("remove-person")
def admin_remove_person(person: PersonOption, as_json: JsonFlag = False) -> None:
    """Remove a person: their tokens are revoked, their sessions end, their e-mail address
    may be given to a new person; their past edits stay attributed to them."""
    result = _admin(as_json, lambda svc: svc.remove_person(person))
    if not as_json:
        typer.echo(
            f"removed person {result['id']} ({result['email']}) from {result['workspaceId']}: "
            f"{result['tokensRevoked']} tokens revoked, sessions ended, e-mail address released"
        )


def _ask(question: str) -> bool:
    """A yes/no prompt, no by default. No answer at all (the input ended: no terminal, a
    pipe) is a no, said on stderr with the way round it (``--yes``), never a silent exit."""
    try:
        return typer.confirm(question, default=False)
    except typer.Abort:
        _render.echo("\nno answer (no terminal?): nothing changed; pass --yes to confirm", err=True)
        return False


def _erase(kind: str, target_id: str, dry_run: bool, yes: bool, by: str, as_json: bool) -> None:
    """``pinework admin erase-agent|erase-person|erase-workspace``."""
    if (
        not dry_run
        and not yes
        and not as_json
        and not _ask(f"Erase {kind} {target_id} and everything of it? This cannot be undone")
    ):
        raise typer.Exit(1)

    def progress(step: Any) -> None:
        if not as_json:
            _render.echo(f"{step.phase}: {step.scanned:,} items read, {step.matched:,} found")

    result = _admin(
        as_json,
        lambda svc: svc.erase(kind, target_id, by=by, dry_run=dry_run, progress=progress).to_wire(),
    )
    if as_json:
        return
    items = ", ".join(f"{name} {count:,}" for name, count in result["items"].items()) or "none"
    if result["alreadyErased"]:
        _render.echo(
            f"{kind} {target_id} was erased already, by {result['erasedBy']} at "
            f"{result['finishedAt']}: nothing to do"
        )
    elif result["dryRun"]:
        _render.echo(
            f"dry run, nothing changed: {_counted(result['itemCount'], 'item')} would go "
            f"({items}), {_counted(result['objectVersions'], 'object version')} "
            f"({result['objectBytes']:,} bytes)"
        )
    else:
        _render.echo(
            f"erased {kind} {target_id}: {_counted(result['itemCount'], 'item')} ({items}), "
            f"{_counted(result['objectVersions'], 'object version')} "
            f"({result['objectBytes']:,} bytes); a tombstone record stays"
        )


DryRunFlag = Annotated[bool, typer.Option("--dry-run", help="Count what would go; change nothing.")]
YesFlag = Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")]
ByOption = Annotated[
    str,
    typer.Option("--by", help="Who asked (kept in the tombstone), e.g. a ticket or a name."),
]


@admin_app.command("erase-agent")
def admin_erase_agent(
    agent: Annotated[str, typer.Argument(help="The agent, agt_….")],
    by: ByOption = "operator",
    dry_run: DryRunFlag = False,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Erase an agent: its memories, history, recalls, reviews, routine, tokens, index
    and objects (resumable; a rerun continues)."""
    _erase("agent", agent, dry_run, yes, by, as_json)


@admin_app.command("erase-person")
def admin_erase_person(
    person: Annotated[str, typer.Argument(help="The person, usr_….")],
    by: ByOption = "operator",
    dry_run: DryRunFlag = False,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Erase a person: their item, e-mail claim, tokens, sessions and idempotency records
    (their id stays on what they did)."""
    _erase("person", person, dry_run, yes, by, as_json)


@admin_app.command("erase-workspace")
def admin_erase_workspace(
    workspace: Annotated[str, typer.Argument(help="The workspace, wsp_….")],
    by: ByOption = "operator",
    dry_run: DryRunFlag = False,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Erase a workspace: every agent and person of it and everything of theirs, its
    key-value account scope and its objects (resumable; a rerun continues)."""
    _erase("workspace", workspace, dry_run, yes, by, as_json)


@admin_app.command("export")
def admin_export(
    output: Annotated[Path, typer.Option("--output", "-o", help="The file to write.")],
    workspace: Annotated[
        str | None, typer.Option("--workspace", help="A whole workspace, wsp_….")
    ] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="One agent, agt_….")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Write a workspace or an agent as versioned JSON Lines (no tokens); streams."""
    if (workspace is None) == (agent is None):
        _fail(LOCAL_ERROR, "give exactly one of --workspace and --agent", as_json)
    kind, target = ("workspace", workspace) if workspace is not None else ("agent", agent)

    def progress(count: int) -> None:
        if not as_json:
            _render.echo(f"{count:,} items written")

    with output.open("w", encoding="utf-8") as handle:
        result = _admin(
            as_json,
            lambda svc: svc.export(
                kind, str(target), lambda line: handle.write(line + "\n"), progress
            ).to_wire(),
        )
    if not as_json:
        _render.echo(
            f"exported {kind} {target} to {output}: {_counted(result['itemCount'], 'item')}, "
            f"{_counted(result['objects'], 'object')}"
        )


@admin_app.command("import")
def admin_import(
    file: Annotated[Path, typer.Argument(help="A file `pinework admin export` wrote.")],
    into: Annotated[
        str | None,
        typer.Option(
            "--into",
            help="Give every id a new one, in this workspace (wsp_…); default: ids kept.",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Load an export into this stage: idempotent (a second run changes nothing); a newer
    format, a bad line or a truncated file writes nothing."""
    if not file.is_file():
        _fail(LOCAL_ERROR, f"no file {file}", as_json)

    def lines() -> Any:
        with file.open(encoding="utf-8") as handle:
            yield from handle

    def progress(count: int) -> None:
        if not as_json:
            _render.echo(f"{count:,} lines loaded")

    result = _admin(
        as_json,
        lambda svc: svc.import_file(lines, remap_into=into, progress=progress).to_wire(),
    )
    if not as_json:
        _render.echo(
            f"imported {file}: {_counted(result['itemCount'], 'item')} written, "
            f"{result['alreadyThere']:,} already there, {result['conflicts']:,} conflicts "
            f"(kept as they were), {_counted(result['objects'], 'object')}"
            + (f"; workspace {result['workspaceId']}" if result["workspaceId"] else "")
        )


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
        _render.echo(
            f"scanned {result['scanned']} live facts: {result['current']} already current, "
            f"{result['embedded']} embedded, {result['changed']} changed meanwhile "
            "(their edit stored a fresh embedding)"
        )


@admin_app.command("backfill-recall-index")
def admin_backfill_recall_index(
    workspace: Annotated[
        str | None,
        typer.Option("--workspace", help="Only this workspace's agents, wsp_… (default: all)."),
    ] = None,
    agent: Annotated[
        str | None, typer.Option("--agent", help="Only this agent, agt_… (default: all).")
    ] = None,
    rebuild: Annotated[
        bool,
        typer.Option(
            "--rebuild",
            help="Clear each agent's index and build it again (after a rollback and a new "
            "upgrade).",
        ),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Build the recall index of agents created before it (resumable, safe to rerun and
    to run while the service runs; without --workspace it scans the table)."""
    progress = None if as_json else _print_index_progress
    result = _admin(
        as_json,
        lambda svc: svc.backfill_recall_index(
            workspace, agent, rebuild=rebuild, progress=progress
        ).to_wire(),
    )
    if not as_json:
        _render.echo(
            f"{_counted(result['agentsSeen'], 'agent')}: {result['agentsAlreadyIndexed']:,} "
            f"already indexed, {result['agentsIndexed']:,} indexed now; "
            f"{_counted(result['factsIndexed'], 'fact')} indexed, "
            f"{result['changedMeanwhile']:,} changed meanwhile (their change wrote their entry)"
        )


def _print_index_progress(step: IndexProgressStep) -> None:
    """One line per agent as ``backfill-recall-index`` goes: ``[3/12] agt_… 4,210 facts
    indexed``."""
    done = "already indexed" if step.skipped else f"{_counted(step.facts, 'fact')} indexed"
    _render.echo(f"[{step.done}/{step.total}] {step.agent_id} {done}")


def _counted(count: int, noun: str) -> str:
    """``1 fact``, ``4,210 facts``."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


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
        _render.echo(f"workspace {result['id']}: reviewApproval {result['reviewApproval']}")


@admin_app.command("set-learning-approval")
def admin_set_learning_approval(
    workspace: Annotated[str, typer.Option("--workspace", help="The workspace, wsp_….")],
    value: Annotated[
        str,
        typer.Argument(
            help="required: an agent's proposed learning waits for a person; "
            "none: it is active at once.",
            metavar="required|none",
        ),
    ],
    as_json: JsonFlag = False,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes",
            help="Confirm 'none': any agent's proposed text is told to every agent at once, "
            "unread by a person.",
        ),
    ] = False,
) -> None:
    """Set whether agents' proposed learnings wait for a person
    (docs/reference.md#learning-approval); 'none' needs --yes (or a yes at the prompt)."""
    confirmed = yes
    if value.strip().lower() == "none" and not yes and not as_json:
        _render.echo(
            "With 'none', any agent's proposed text is told to every agent of the workspace "
            "at once, unread by a person (a prompt injection reaches them all)."
        )
        confirmed = _ask("Switch learningApproval to none?")
        if not confirmed:
            _render.echo("learningApproval not changed", err=True)
            raise typer.Exit(1)

    def configure(svc: AdminOperations) -> dict[str, str]:
        configured = svc.set_learning_approval(workspace, value, confirmed=confirmed)
        return {"id": configured.id, "learningApproval": configured.learning_approval}

    result = _admin(as_json, configure)
    if not as_json:
        _render.echo(f"workspace {result['id']}: learningApproval {result['learningApproval']}")


@admin_app.command("sweep-retention")
def admin_sweep_retention(as_json: JsonFlag = False) -> None:
    """Remove the audit texts of every memory archived longer than the retention period
    (PINEWORK_ARCHIVED_TEXT_RETENTION_DAYS, default 365; the nightly review does it for
    the agents it reviews). Scans the table; safe to rerun."""
    result = _admin(as_json, lambda svc: svc.sweep_retention())
    if not as_json:
        _render.echo(
            f"{result['agents']} agents swept: the texts of {result['memories']} archived "
            f"memories' history went ({result['records']} audit records)"
        )


@admin_app.command("rehash-emails")
def admin_rehash_emails(as_json: JsonFlag = False) -> None:
    """After a new hash secret: move every person's e-mail claim to its digest (scans
    the table; safe to rerun; docs/operations.md#rotating-the-hash-secret)."""
    result = _admin(as_json, lambda svc: svc.rehash_emails())
    if not as_json:
        _render.echo(
            f"{result['persons']} persons: {result['rekeyed']} claims under the current "
            f"secret, {result['taken']} held by another person (left as they are)"
        )


@admin_app.command("upgrade-table")
def admin_upgrade_table(as_json: JsonFlag = False) -> None:
    """Once, after upgrading a table written before the dashboard: list every agent
    under its workspace and index every memory for the dashboard (scans the table;
    safe to rerun)."""
    result = _admin(as_json, lambda svc: svc.upgrade_table().to_wire())
    if not as_json:
        if result["doneBefore"]:
            _render.echo("the table was upgraded before; nothing to do")
        else:
            _render.echo(
                f"scanned {result['scanned']} items: {result['agentsListed']} agents listed, "
                f"{result['memoriesIndexed']} memories indexed, "
                f"{result.get('ownersMarked', 0)} owner marks written, "
                f"{result.get('erasuresListed', 0)} erasures listed, "
                f"{result.get('tagsRefiled', 0)} tagged facts refiled, "
                f"{result.get('staleTagsDropped', 0)} stale tag entries dropped, "
                f"{result.get('sectionPagesRebuilt', 0)} wiki pages' sections rebuilt, "
                f"{result['changedMeanwhile']} changed meanwhile (their change indexed them)"
            )
