"""Webhook endpoint routes (docs/reference.md#webhooks, docs/issues.md#issue-47), under
``/api/v1``, for persons: register (the answer shows the signing secret once), list,
remove, send a test event, resume a paused endpoint, read recent deliveries."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chalice.app import Blueprint, Response

from chalicelib.api.context import call_context
from chalicelib.api.http import (
    ANY_CONTENT,
    endpoint,
    json_response,
    parse_body,
    reject_other_methods,
)
from chalicelib.api.idempotency import idempotent
from chalicelib.models.principal import Principal
from chalicelib.models.requests import EmptyRequest
from chalicelib.models.responses import ResponseModel
from chalicelib.models.webhook import CreateWebhookRequest, DeliveryList, WebhookList
from chalicelib.services.access.who import refuse_agents
from chalicelib.services.webhooks.service import WEBHOOKS_ARE_FOR_PERSONS, WebhookService

webhooks_api = Blueprint(__name__)


def _request() -> Any:
    return webhooks_api.current_request


def _persons_change(change: Callable[[WebhookService, Principal], ResponseModel]) -> Response:
    """A person's change of one endpoint with an empty body: agents refused first."""
    call = call_context(_request())
    refuse_agents(call.principal, WEBHOOKS_ARE_FOR_PERSONS)
    parse_body(_request().raw_body, EmptyRequest)
    return json_response(change(call.services.webhooks, call.principal).wire())


# No Idempotency-Key: the answer holds the signing secret, which a replay would have to
# keep in clear (as a sign-in link's).
@webhooks_api.route("/webhooks", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
def create_webhook() -> Response:
    """A person registers an endpoint -> 201 with its secret (shown this once)."""
    call = call_context(_request())
    refuse_agents(call.principal, WEBHOOKS_ARE_FOR_PERSONS)
    body = parse_body(_request().raw_body, CreateWebhookRequest)
    return json_response(call.services.webhooks.create(call.principal, body).wire(), 201)


@webhooks_api.route("/webhooks", methods=["GET"], content_types=ANY_CONTENT)
@endpoint
def list_webhooks() -> Response:
    """The workspace's endpoints, oldest first (never their secrets)."""
    call = call_context(_request())
    found = call.services.webhooks.list_endpoints(call.principal)
    return json_response(WebhookList(data=found).wire())


@webhooks_api.route("/webhooks/{webhook_id}", methods=["DELETE"], content_types=ANY_CONTENT)
@endpoint
@idempotent(webhooks_api)
def delete_webhook(webhook_id: str) -> Response:
    """A person removes an endpoint; the answer shows it as it was."""
    return _persons_change(lambda webhooks, person: webhooks.delete(person, webhook_id))


@webhooks_api.route("/webhooks/{webhook_id}/test", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
@idempotent(webhooks_api)
def test_webhook(webhook_id: str) -> Response:
    """Send a signed ``pinework.webhook.ping`` now; the answer is the attempt."""
    return _persons_change(lambda webhooks, person: webhooks.test(person, webhook_id))


@webhooks_api.route("/webhooks/{webhook_id}/resume", methods=["POST"], content_types=ANY_CONTENT)
@endpoint
@idempotent(webhooks_api)
def resume_webhook(webhook_id: str) -> Response:
    """A person resumes a paused endpoint (idempotent)."""
    return _persons_change(lambda webhooks, person: webhooks.resume(person, webhook_id))


@webhooks_api.route("/webhooks/{webhook_id}/deliveries", methods=["GET"], content_types=ANY_CONTENT)
@endpoint
def list_webhook_deliveries(webhook_id: str) -> Response:
    """The endpoint's recent delivery attempts, newest first."""
    call = call_context(_request())
    found = call.services.webhooks.deliveries(call.principal, webhook_id)
    return json_response(DeliveryList(data=found).wire())


reject_other_methods(
    webhooks_api,
    {
        "/webhooks": ["GET", "POST"],
        "/webhooks/{webhook_id}": ["DELETE"],
        "/webhooks/{webhook_id}/test": ["POST"],
        "/webhooks/{webhook_id}/resume": ["POST"],
        "/webhooks/{webhook_id}/deliveries": ["GET"],
    },
)
