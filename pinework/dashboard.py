"""``pinework dashboard``: open the persons' dashboard signed in (docs/reference.md#13-dashboard).

It asks the API for a one-time sign-in link with the person's token
(``PINEWORK_TOKEN``), prints it and opens it in the default browser. The link
works once, for 10 minutes; the token itself never goes into a URL.
"""

from __future__ import annotations

import webbrowser
from typing import Annotated

import typer

from pinework import _render
from pinework.errors import PineworkAPIError


def dashboard(
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Only print the link; open nothing.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the API's JSON.")] = False,
) -> None:
    """Open the dashboard signed in as you (a one-time link; PINEWORK_TOKEN must be a
    person's token)."""
    from pinework import cli

    try:
        with cli.make_client() as client:
            link = client.sign_in_link()
            url = client.root_url + link.path
    except PineworkAPIError as exc:
        cli._fail(exc.code, exc.message, as_json)
    except ValueError as exc:
        cli._fail("invalid_request", str(exc), as_json)
    if as_json:
        _render.echo(_render.to_json({**(link.raw or {}), "url": url}))
    else:
        _render.echo(f"Dashboard sign-in link (works once, until {link.expires_at:%H:%M} UTC):")
        _render.echo(url)
    if not no_browser:
        webbrowser.open(url)
