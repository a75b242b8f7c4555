"""``pinework kv remember | recall | forget``: the key-value meta-tools
(docs/reference.md#10-key-value). Registered on ``kv`` by ``pinework.cli``."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from pinework import _render
from pinework.cli import (
    JsonFlag,
    _run,
    kv_app,
)
from pinework.client import Client
from pinework.models import (
    KvKeys,
    KvValue,
)

# pinework kv …

IfRevisionOption = Annotated[
    int | None,
    typer.Option(
        "--if-revision",
        min=0,
        help="Only if the key is at this revision (`kv recall KEY --json` shows it); 0: only "
        "if the key is absent. Otherwise precondition_failed, nothing changed.",
    ),
]


@kv_app.command("remember")
def kv_remember(
    key: Annotated[str, typer.Argument(help="The key, 1-512 bytes.")],
    value: Annotated[str, typer.Argument(help="The value; stored as a string unless --parse.")],
    parse: Annotated[
        bool, typer.Option("--parse", help="Parse VALUE as JSON and store that value.")
    ] = False,
    if_revision: IfRevisionOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Store a value under a key (docs/reference.md#kv-revisions for --if-revision)."""
    stored: Any = value
    if parse:
        try:
            stored = json.loads(value)
        except ValueError as exc:
            raise typer.BadParameter(f"VALUE is not JSON: {exc}") from exc
    _run(
        as_json,
        lambda c: c.kv_remember(key, stored, if_revision=if_revision),
        lambda result: _render.echo(
            f"stored {result.key} (ttl: {result.ttl}"
            + ("" if result.revision is None else f", revision {result.revision}")
            + ")"
        ),
    )


@kv_app.command("recall")
def kv_recall(
    key: Annotated[str | None, typer.Argument(help="The key; omit it to list keys.")] = None,
    cursor: Annotated[
        str | None,
        typer.Option("--cursor", help="List the page after this cursor (a listing's `next`)."),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, help="Keys per page (100 by default, at most 1000)."),
    ] = None,
    every: Annotated[
        bool, typer.Option("--all", help="List every key, following the pages.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Print a key's stored value, or list the keys without KEY (a page; --all for every one).

    Without --json, a missing key exits with status 1 (like grep); with --json
    the answer's "found" says it and the exit status is 0. A listing prints one key
    per line and, when more follow, "next: <cursor>" on stderr (pass it to --cursor).
    """
    if key is not None and (cursor is not None or limit is not None or every):
        raise typer.BadParameter("--cursor, --limit and --all list keys: leave out KEY.")
    if every:
        _run(as_json, lambda c: _every_key(c, cursor, limit), _render_kv_recall)
        return
    result = _run(
        as_json,
        lambda c: c.kv_recall(key, cursor=cursor, limit=limit),
        _render_kv_recall,
    )
    if not as_json and isinstance(result, KvValue) and not result.found:
        raise typer.Exit(1)


def _every_key(client: Client, cursor: str | None, limit: int | None) -> KvKeys:
    """Every key from ``cursor`` on, one request per page, as one ``KvKeys`` (``next`` null)."""
    keys: list[str] = []
    while True:
        page = client.kv_keys(cursor=cursor, limit=limit)
        keys += page.keys
        if page.next_cursor is None or page.next_cursor == cursor:
            return KvKeys.from_wire({"keys": keys, "count": page.count, "next": None})
        cursor = page.next_cursor


def _render_kv_recall(result: KvValue | KvKeys) -> None:
    """Print the value, a not-found note (stderr), or one key per line (and ``next``)."""
    if isinstance(result, KvKeys):
        for key in result.keys:
            _render.echo(key)
        if result.next_cursor is not None:
            _render.echo(f"next: {result.next_cursor}", err=True)
    elif result.found:
        _render.echo(result.value)
    else:
        _render.echo(f"not found: {result.key}", err=True)


@kv_app.command("forget")
def kv_forget(
    key: Annotated[str, typer.Argument(help="The key.")],
    if_revision: IfRevisionOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Delete a key (docs/reference.md#kv-revisions for --if-revision)."""
    _run(
        as_json,
        lambda c: c.kv_forget(key, if_revision=if_revision),
        lambda result: _render.echo(
            f"forgot {result.key}" if result.deleted else f"nothing stored under {result.key}"
        ),
    )
