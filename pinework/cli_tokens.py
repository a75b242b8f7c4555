"""``pinework admin issue-token | list-tokens | revoke-token | rotate-token``: the
bearer-token lifecycle (docs/reference.md#authentication, docs/reference.md#14-operations;
docs/issues.md#issue-12). Registered on ``admin`` by
``pinework.cli``; like the other admin commands they write straight to the table.

A token is printed once, when it is issued (or rotated in); listings show its
``tok_…`` id and a short non-secret prefix, never the token or its hash.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from pinework import _render
from pinework.cli import JsonFlag, admin_app
from pinework.cli_admin import _TOKEN_NOTE, _admin

if TYPE_CHECKING:
    from pinework.admin import AdminOperations

PrincipalId = Annotated[
    str, typer.Argument(help="The agent (agt_…) or person (usr_…).", metavar="PRINCIPAL_ID")
]
TokenId = Annotated[str, typer.Argument(help="The token's id, tok_…", metavar="TOKEN_ID")]


@admin_app.command("issue-token")
def admin_issue_token(
    principal: PrincipalId,
    label: Annotated[
        str | None, typer.Option("--label", help="A note to tell the tokens apart (ci-runner).")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Issue one more bearer token for an agent or a person (the others keep working)."""
    result = _admin(as_json, lambda svc: svc.issue_token(principal, label))
    if not as_json:
        _render.echo(f"issued token {result['id']} for {result['principalId']}")
        _render.echo(f"token: {result['token']}")
        _render.echo(_TOKEN_NOTE, err=True)


@admin_app.command("list-tokens")
def admin_list_tokens(principal: PrincipalId, as_json: JsonFlag = False) -> None:
    """List an agent's or a person's tokens: id, prefix, status, created, last used."""

    def listing(svc: AdminOperations) -> dict[str, Any]:
        tokens = svc.list_tokens(principal)
        return {"object": "list", "data": tokens}

    result = _admin(as_json, listing)
    if as_json:
        return
    if not result["data"]:
        _render.echo(f"{principal} has no tokens")
    for token in result["data"]:
        _render.echo(_line(token))


@admin_app.command("revoke-token")
def admin_revoke_token(token_id: TokenId, as_json: JsonFlag = False) -> None:
    """Revoke a token now: its next request is refused (401)."""
    result = _admin(as_json, lambda svc: svc.revoke_token(token_id))
    if not as_json:
        _render.echo(f"revoked token {result['id']} of {result['principalId']}")


@admin_app.command("rotate-token")
def admin_rotate_token(
    token_id: TokenId,
    grace_hours: Annotated[
        float | None,
        typer.Option(
            "--grace-hours",
            help="How long the old token keeps working (default 24; 0 to 720).",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Issue a replacement token; the old one keeps working for the grace period."""
    result = _admin(as_json, lambda svc: svc.rotate_token(token_id, grace_hours))
    if not as_json:
        previous, issued = result["previous"], result["token"]
        _render.echo(
            f"rotated {previous['id']} -> {issued['id']}; "
            f"{previous['id']} works until {previous['expiresAt']}"
        )
        _render.echo(f"token: {issued['token']}")
        _render.echo(_TOKEN_NOTE, err=True)


def _line(token: dict[str, Any]) -> str:
    """One token of a listing: id, prefix, status, created, last used, label."""
    parts = [
        token["id"],
        f"{token['prefix']}…" if token["prefix"] else "(no prefix: issued before prefixes)",
        token["status"],
        f"created {token['createdAt'] or '?'}",
        f"last used {token['lastUsedAt'] or 'never'}",
    ]
    if token["expiresAt"]:
        parts.append(f"expires {token['expiresAt']}")
    if token["rotatedTo"]:
        parts.append(f"rotated to {token['rotatedTo']}")
    if token["label"]:
        parts.append(f"[{token['label']}]")
    return "  ".join(parts)
