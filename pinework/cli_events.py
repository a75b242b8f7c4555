"""``pinework events tail``: read the change events' feed (docs/reference.md#change-events),
one page or, with ``--follow``, polling until interrupted. Registered on ``events`` by
``pinework.cli``.

Each event prints one line: ``evt_…  time  type  subject``; a page ends with
``cursor: evt_…`` (send it as ``--after`` next time). With ``--json`` one page prints the
server's JSON exactly, and ``--follow`` prints one event's JSON a line. Errors print
``error: <code>: <message>`` on stderr and exit 1; e.g. ``invalid_request`` (a malformed
``--after``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Annotated

import typer

from pinework import _render
from pinework.cli import LOCAL_ERROR, JsonFlag, _connections, _fail, _run, events_app, make_client
from pinework.client import Client
from pinework.errors import PineworkAPIError
from pinework.models import Event, EventPage

DEFAULT_INTERVAL = 5.0
"""Seconds ``--follow`` waits after a page that left nothing ready."""


def event_row(event: Event) -> str:
    """One event line: ``evt_…  2026-11-30T12:00:00Z  pinework.memory.saved  mem_…``."""
    moment = event.time.isoformat().replace("+00:00", "Z")
    return f"{event.id}  {moment}  {event.type}  {event.subject}"


def follow(
    client: Client,
    after: str | None,
    limit: int | None,
    interval: float,
    sleep: Callable[[float], object] = time.sleep,
) -> Iterator[Event]:
    """Every event after ``after``, page after page, for ever: the next page at once when
    ``has_more``, else after ``interval`` seconds (``sleep``).

    Raises:
        PineworkAPIError: as ``Client.list_events``.
    """
    cursor = after
    while True:
        page = client.list_events(after=cursor, limit=limit)
        yield from page.data
        cursor = page.next_cursor
        if not page.has_more:
            sleep(interval)


@events_app.command("tail")
def events_tail(
    after: Annotated[
        str | None,
        typer.Option("--after", help="The cursor a previous page printed (evt_…)."),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, max=200, help="Page size (default 100, at most 200)."),
    ] = None,
    follow_flag: Annotated[
        bool, typer.Option("--follow", help="Keep polling for new events until interrupted.")
    ] = False,
    interval: Annotated[
        float,
        typer.Option("--interval", min=0.5, help="Seconds between polls with --follow."),
    ] = DEFAULT_INTERVAL,
    as_json: JsonFlag = False,
) -> None:
    """The change events after ``--after`` (from the oldest kept, 30 days, without),
    oldest first: a person's workspace's, an agent's own. Prints one line per event, then
    ``cursor: evt_…`` (``no events`` when none). ``--follow`` keeps polling every
    ``--interval`` seconds until Ctrl-C. Errors: invalid_request (a malformed cursor)."""
    if follow_flag:
        _follow(after, limit, interval, as_json)
        return

    def render(page: EventPage) -> None:
        for event in page.data:
            _render.echo(event_row(event))
        if not page.data:
            _render.echo("no events")
        if page.next_cursor:
            _render.echo(f"cursor: {page.next_cursor}")

    _run(as_json, lambda c: c.list_events(after=after, limit=limit), render)


def _follow(after: str | None, limit: int | None, interval: float, as_json: bool) -> None:
    """Print events as ``follow`` yields them until Ctrl-C (then exit 0)."""
    try:
        with (_connections().client or make_client)() as client:
            for event in follow(client, after, limit, interval):
                _render.echo(_render.to_json(event.raw) if as_json else event_row(event))
    except KeyboardInterrupt:
        return
    except PineworkAPIError as exc:
        _fail(exc.code, exc.message, as_json)
    except ValueError as exc:
        _fail(LOCAL_ERROR, str(exc), as_json)
