"""The ``pinework`` command line (docs/reference.md#12-cli).

``pinework memory …`` and ``pinework kv …`` call the HTTP API through
:class:`pinework.Client`, configured only by ``PINEWORK_API_URL``,
``PINEWORK_TOKEN``, ``PINEWORK_RUN`` and ``PINEWORK_TASK``.
``pinework admin …`` writes straight to DynamoDB through the service code
(see :mod:`pinework.admin`).

Every command takes ``--json``: stdout is then exactly the server's JSON (or
the error envelope). Errors print ``error: <code>: <message>`` on stderr and
exit with status 1; usage errors exit with status 2.

This module holds the groups, the shared options and the request runner; the commands
live one module per group: :mod:`pinework.cli_memory`, :mod:`pinework.cli_kv`,
:mod:`pinework.cli_reviews` (routines and reviews), :mod:`pinework.cli_learning`
(learnings, docs/reference.md#15-learnings), :mod:`pinework.cli_admin` and
:mod:`pinework.cli_tokens`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from pinework import _render
from pinework._wire import ModelT
from pinework.client import Client
from pinework.dashboard import dashboard as _dashboard_command
from pinework.errors import PineworkAPIError
from pinework.models import (
    Memory,
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
learning_app = typer.Typer(
    help=(
        "Learnings: facts every agent of the workspace is told. Agents propose; persons "
        "approve, edit, reject or retire."
    ),
    no_args_is_help=True,
    rich_markup_mode=None,
)
events_app = typer.Typer(
    help="Change events: what changed in the workspace (a person) or to the agent (an agent).",
    no_args_is_help=True,
    rich_markup_mode=None,
)
wiki_app = typer.Typer(
    help="Wiki pages: shared Markdown pages every agent's recall matches (persons write them).",
    no_args_is_help=True,
    rich_markup_mode=None,
)
webhooks_app = typer.Typer(
    help="Webhook endpoints: change events sent, signed, to your HTTPS URL (persons).",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(memory_app, name="memory")
app.add_typer(learning_app, name="learning")
app.add_typer(kv_app, name="kv")
app.add_typer(routine_app, name="routine")
app.add_typer(review_app, name="review")
app.add_typer(admin_app, name="admin")
app.add_typer(events_app, name="events")
app.add_typer(wiki_app, name="wiki")
app.add_typer(webhooks_app, name="webhooks")
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
            _render.echo(
                _render.to_json({"error": {"code": LOCAL_ERROR, "message": error.format_message()}})
            )
        error.show()
        raise SystemExit(error.exit_code) from None
    except ClickException as error:
        error.show()
        raise SystemExit(error.exit_code) from None
    if isinstance(code, int) and code:
        raise SystemExit(code)


LOCAL_ERROR = "invalid_argument"
"""The code of a mistake found here before anything was sent (docs/reference.md#cli-errors):
never a server's code, so a reader knows the server did not answer."""


def _fail(code: str, message: str, as_json: bool) -> NoReturn:
    """Report an error: envelope on stdout with ``--json``, ``error: code: message`` on stderr;
    exit 1 for the server's answer, 2 for a mistake found here (``LOCAL_ERROR``, a usage
    error: docs/reference.md#cli-errors)."""
    if as_json:
        _render.echo(_render.to_json({"error": {"code": code, "message": message}}))
    if code == LOCAL_ERROR:
        _render.echo(f"error: {message} (checked before sending: nothing was sent)", err=True)
        raise typer.Exit(2)
    _render.echo(f"error: {code}: {message}", err=True)
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
        _fail(LOCAL_ERROR, str(exc), as_json)
    if as_json:
        _render.echo(_render.to_json(result.raw))
    else:
        render(result)
    return result


def _say(prefix: str) -> Callable[[Memory], None]:
    """A renderer printing ``prefix`` and the memory's list line."""
    return lambda memory: _render.echo(f"{prefix} {_render.memory_row(memory)}")


def _print_version(value: bool) -> None:
    """Print the installed version and stop (``--version``)."""
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            _render.echo(version("pinework"))
        except PackageNotFoundError:
            _render.echo("unknown")
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


def _more(next_token: str | None) -> None:
    """Tell how to read the next page of a list, if there is one."""
    if next_token:
        _render.echo(f"more: --next-token {next_token}")


# The commands register themselves on the groups above, one module per group.
from pinework import (  # noqa: E402, F401
    cli_admin,
    cli_events,
    cli_kv,
    cli_learning,
    cli_memory,
    cli_reviews,
    cli_tokens,
    cli_webhooks,
    cli_wiki,
)
