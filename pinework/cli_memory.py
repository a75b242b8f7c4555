"""``pinework memory …``: facts, day lines, the lifecycle, history and recall
(docs/reference.md#4-states, docs/reference.md#8-recall). Registered on ``memory`` by
``pinework.cli``."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from pinework import _render
from pinework.cli import (
    AgentFilterOption,
    AgentOption,
    ExpiresOption,
    JsonFlag,
    LimitOption,
    MemoryId,
    NextTokenOption,
    _more,
    _run,
    _say,
    memory_app,
)
from pinework.client import Client
from pinework.models import (
    AuditPage,
    Memory,
    MemoryPage,
    RecallLogPage,
    RecallResult,
)

TagOption = Annotated[
    list[str] | None,
    typer.Option(
        "--tag",
        help="A tag (repeat for more; at most 10; a-z 0-9 . _ : -, case ignored).",
    ),
]
"""Tags given on the command line (docs/reference.md#tags)."""

MetaFilterOption = Annotated[
    list[str] | None,
    typer.Option(
        "--meta-filter",
        help="Only facts whose metadata meets this condition (repeat: all of them): "
        "key:value, key:in:a|b or key:op:value with op eq, in, gt, gte, lt, lte; at most 5.",
    ),
]
"""Metadata conditions given on the command line (docs/reference.md#metadata-filters)."""

MetaOption = Annotated[
    list[str] | None,
    typer.Option(
        "--meta",
        help="A metadata entry key=value (repeat; at most 10). true/false and numbers "
        "are sent as such, anything else as a string.",
    ),
]
"""Metadata given on the command line (docs/reference.md#metadata)."""


def parse_meta(entries: list[str] | None) -> dict[str, bool | int | float | str] | None:
    """``--meta key=value`` entries as the metadata object: ``true``/``false`` are
    booleans, a JSON number is a number, anything else a string (``None``: none given).

    Raises:
        typer.BadParameter: an entry without ``=``.
    """
    if not entries:
        return None
    found: dict[str, bool | int | float | str] = {}
    for entry in entries:
        key, sep, value = entry.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"--meta takes key=value, not {entry!r}")
        found[key.strip()] = _meta_value(value)
    return found


def _meta_value(raw: str) -> bool | int | float | str:
    if raw in ("true", "false"):
        return raw == "true"
    try:
        number = json.loads(raw)
    except ValueError:
        return raw
    return number if isinstance(number, int | float) and not isinstance(number, bool) else raw


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
    tag: TagOption = None,
    meta: MetaOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Save a fact."""
    metadata = parse_meta(meta)
    _run(
        as_json,
        lambda c: c.save_fact(
            fact,
            expires_at=expires,
            supersedes=supersedes,
            agent_id=agent,
            evidence=evidence,
            tags=tag,
            metadata=metadata,
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
        lines = len(_render.lines_of(memory.text))
        noun = "line" if lines == 1 else "lines"
        verb = "started day log" if lines == 1 else "appended to"
        _render.echo(f"{verb} {memory.id} (day log of {memory.date}, {lines} {noun})")

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
    tag: Annotated[
        list[str] | None,
        typer.Option("--tag", help="Only facts holding this tag (repeat: all of them)."),
    ] = None,
    any_tag: Annotated[
        list[str] | None,
        typer.Option("--any-tag", help="Only facts holding one of these tags (repeat)."),
    ] = None,
    meta_filter: MetaFilterOption = None,
    as_json: JsonFlag = False,
) -> None:
    """List memories, newest first, one per line."""

    def render(page: MemoryPage) -> None:
        for memory in page.data:
            _render.echo(_render.memory_row(memory))
        if not page.data:
            _render.echo("no memories")
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
            tags=tag,
            any_tags=any_tag,
            meta=meta_filter,
        ),
        render,
    )


@memory_app.command("show")
def memory_show(memory_id: MemoryId, as_json: JsonFlag = False) -> None:
    """Show one memory with every field."""
    _run(
        as_json,
        lambda c: c.get_memory(memory_id),
        lambda memory: _render.echo(_render.memory_block(memory)),
    )


@memory_app.command("edit")
def memory_edit(
    memory_id: MemoryId,
    text: Annotated[str | None, typer.Option("--text", help="The new text.")] = None,
    expires: ExpiresOption = None,
    tag: Annotated[
        list[str] | None,
        typer.Option("--tag", help="The fact's new tags (repeat; replaces its set)."),
    ] = None,
    clear_tags: Annotated[
        bool, typer.Option("--clear-tags", help="Remove every tag of the fact.")
    ] = False,
    meta: Annotated[
        list[str] | None,
        typer.Option(
            "--meta", help="The fact's new metadata, key=value (repeat; replaces it all)."
        ),
    ] = None,
    clear_meta: Annotated[
        bool, typer.Option("--clear-meta", help="Remove all of the fact's metadata.")
    ] = False,
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
    """Edit a memory's text, expiry, tags and/or metadata (persons only).

    The edit names the version it is based on (``If-Match``): a fresh read's, or
    ``--if-match``. When someone changed the memory in between, it fails with
    ``precondition_failed`` and nothing changes (docs/issues.md#issue-15: no lost edits).
    """
    if tag and clear_tags:
        raise typer.BadParameter("give --tag or --clear-tags, not both")
    if meta and clear_meta:
        raise typer.BadParameter("give --meta or --clear-meta, not both")
    tags = [] if clear_tags else tag
    metadata = {} if clear_meta else parse_meta(meta)
    if text is None and expires is None and tags is None and metadata is None:
        raise typer.BadParameter(
            "give --text, --expires, --tag, --clear-tags, --meta or --clear-meta"
        )

    def edit(client: Client) -> Memory:
        version = if_match or client.get_memory(memory_id).etag
        return client.edit_memory(
            memory_id,
            text=text,
            expires_at=expires,
            tags=tags,
            metadata=metadata,
            if_match=version,
        )

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


@memory_app.command("erase")
def memory_erase(
    memory_id: MemoryId,
    reason: Annotated[str, typer.Option("--reason", help="Why (required, 500 characters).")],
    as_json: JsonFlag = False,
) -> None:
    """Erase a memory: its text removed everywhere, a tombstone kept (persons only)."""
    _run(as_json, lambda c: c.erase(memory_id, reason), _say("erased"))


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
            _render.echo(_render.audit_row(record))
        if not page.data:
            _render.echo("no history")
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
    tag: Annotated[
        list[str] | None,
        typer.Option("--tag", help="Rank only facts holding this tag (repeat: all of them)."),
    ] = None,
    meta_filter: MetaFilterOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Recall the memories relevant to a query, best first, with their scores, then the
    workspace's learnings the recall gave (docs/reference.md#learnings-in-recall);
    ``--tag`` / ``--meta-filter`` rank only the facts meeting them
    (docs/reference.md#metadata-filters)."""

    def render(result: RecallResult) -> None:
        _fallback_note(result)
        if block:
            _render.echo(result.block)
            return
        for scored in result.memories:
            _render.echo(_render.scored_row(scored))
        for learned in result.learnings:
            _render.echo(_render.scored_learning_row(learned))
        if not result.memories:
            _render.echo(
                "no memories recalled (the learnings above are the workspace's)"
                if result.learnings
                else "no memories recalled"
            )

    _run(
        as_json,
        lambda c: c.recall(query=query, agent_id=agent, tags=tag, meta=meta_filter),
        render,
        no_query_hint="give --query, or set PINEWORK_TASK (agents)",
    )


def _fallback_note(result: RecallResult) -> None:
    """Say on stderr that a recall fell back to the newest facts (docs/reference.md#8-recall), if it
    did: stdout stays what the command prints (the block, or the scored lines)."""
    if result.fallback:
        _render.echo(
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
            _render.echo(f"skipped: {result.reason}")
            return
        _fallback_note(result)
        _render.echo(result.block or "")

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
            _render.echo(f"{entry.at:%Y-%m-%dT%H:%M:%SZ}  {entry.kind:<9} {where}  {picked or '-'}")
            if entry.query:
                _render.echo(f"    query: {entry.query}")
        if not page.data:
            _render.echo("no recalls")
        _more(page.next_token)

    _run(
        as_json,
        lambda c: c.recall_log(agent_id=agent, limit=limit, next_token=next_token),
        render,
    )
