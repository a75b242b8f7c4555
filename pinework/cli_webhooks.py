"""``pinework webhooks add|list|remove|test|resume|deliveries``: a workspace's webhook
endpoints (docs/reference.md#webhooks), for persons. Registered on ``webhooks`` by
``pinework.cli``.

``add`` prints the endpoint's line and its signing secret (``secret: whsec_…``), shown
this once; ``list`` one line per endpoint: ``whk_…  state  url  types``. With ``--json``
each prints the server's JSON exactly. Errors print ``error: <code>: <message>`` on
stderr and exit 1; e.g. ``webhook_url_refused``, ``webhook_limit_reached``,
``webhook_not_found``, ``forbidden`` (an agent's token)."""

from __future__ import annotations

from typing import Annotated

import typer

from pinework import _render
from pinework.cli import JsonFlag, _run, webhooks_app
from pinework.models import Webhook, WebhookDelivery, WebhookDeliveryPage, WebhookPage


def webhook_row(webhook: Webhook) -> str:
    """``whk_…  active  https://…  pinework.memory.saved,…`` (and the last error)."""
    row = f"{webhook.id}  {webhook.state}  {webhook.url}  {','.join(webhook.event_types)}"
    return row + (f"  last error: {webhook.last_error}" if webhook.last_error else "")


def delivery_row(delivery: WebhookDelivery) -> str:
    """``dlv_…  time  ok|failed  status  ms  event type  attempt n  error``."""
    moment = delivery.at.isoformat().replace("+00:00", "Z")
    status = "ok" if delivery.ok else "failed"
    code = delivery.status_code if delivery.status_code is not None else "-"
    row = (
        f"{delivery.id}  {moment}  {status}  {code}  {delivery.duration_ms} ms  "
        f"{delivery.event_type}  attempt {delivery.attempt}"
    )
    return row + (f"  {delivery.error}" if delivery.error else "")


WebhookId = Annotated[str, typer.Argument(help="The endpoint, whk_….", metavar="WEBHOOK_ID")]


@webhooks_app.command("add")
def webhooks_add(
    url: Annotated[str, typer.Argument(help="The receiver's https:// URL.")],
    event_types: Annotated[
        list[str] | None,
        typer.Option("--type", help="An event type to send (repeat it); all without."),
    ] = None,
    description: Annotated[
        str | None, typer.Option("--description", help="A note for persons.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Register an endpoint; prints it and its signing secret, shown only this once."""

    def render(webhook: Webhook) -> None:
        _render.echo(webhook_row(webhook))
        _render.echo(f"secret: {webhook.secret}  (shown once: keep it to verify deliveries)")

    _run(
        as_json,
        lambda c: c.create_webhook(url, event_types=event_types or None, description=description),
        render,
    )


@webhooks_app.command("list")
def webhooks_list(as_json: JsonFlag = False) -> None:
    """The workspace's endpoints, one line each (never their secrets)."""

    def render(page: WebhookPage) -> None:
        for webhook in page.data:
            _render.echo(webhook_row(webhook))
        if not page.data:
            _render.echo("no webhook endpoints")

    _run(as_json, lambda c: c.list_webhooks(), render)


@webhooks_app.command("remove")
def webhooks_remove(
    webhook_id: WebhookId,
    as_json: JsonFlag = False,
) -> None:
    """Remove an endpoint: nothing more is sent to it."""
    _run(
        as_json,
        lambda c: c.delete_webhook(webhook_id),
        lambda webhook: _render.echo(f"removed {webhook.id}"),
    )


@webhooks_app.command("test")
def webhooks_test(
    webhook_id: WebhookId,
    as_json: JsonFlag = False,
) -> None:
    """Send a signed pinework.webhook.ping now and print the attempt."""
    _run(as_json, lambda c: c.test_webhook(webhook_id), lambda d: _render.echo(delivery_row(d)))


@webhooks_app.command("resume")
def webhooks_resume(
    webhook_id: WebhookId,
    as_json: JsonFlag = False,
) -> None:
    """Resume a paused endpoint (delivery goes on from the event it failed on)."""
    _run(as_json, lambda c: c.resume_webhook(webhook_id), lambda w: _render.echo(webhook_row(w)))


@webhooks_app.command("deliveries")
def webhooks_deliveries(
    webhook_id: WebhookId,
    as_json: JsonFlag = False,
) -> None:
    """The endpoint's recent delivery attempts, newest first (kept 7 days)."""

    def render(page: WebhookDeliveryPage) -> None:
        for delivery in page.data:
            _render.echo(delivery_row(delivery))
        if not page.data:
            _render.echo("no deliveries")

    _run(as_json, lambda c: c.list_webhook_deliveries(webhook_id), render)
