"""API Gateway's own errors in the service's envelope (docs/issues.md#issue-12;
docs/reference.md#6-errors, docs/reference.md#14-operations).

API Gateway answers some requests without calling the Lambda function: an unknown
route or method, a body over 10 MB, throttling, an integration that took longer than
29 s or failed, and (when configured) authorizer, API key, WAF and validation
failures. By default it answers ``{"message": "..."}``. These gateway responses make
every one of them ``{"error": {"code", "message"}}`` with the status of the code's
row in ``chalicelib.errors.STATUS_BY_CODE``, and 429s carry ``Retry-After`` like the
app's own. They reach the deployed API two ways: the ``GatewayResponses`` of the
template's ``RestAPI`` (``make package``), and ``put_gateway_responses`` after
``chalice deploy`` (``make deploy``, which must redo them on every deploy: Chalice
overwrites the API definition).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chalicelib.errors import STATUS_BY_CODE

if TYPE_CHECKING:
    from mypy_boto3_apigateway import APIGatewayClient

GATEWAY_MESSAGE = "$context.error.messageString"
"""API Gateway's own message for the response, already a quoted JSON string."""
NOT_FOUND_MESSAGE = (
    "No such route: check the URL. The routes are listed in docs/reference.md, "
    "section 7 (HTTP API)."
)
NOT_FOUND_BODY = {"error": {"code": "not_found", "message": NOT_FOUND_MESSAGE}}
"""What a request to an unknown path gets, deployed and locally (``infra/local_server.py``)."""


@dataclass(frozen=True)
class GatewayError:
    """How one API Gateway response type is answered.

    Attributes:
        response_type: API Gateway's name for it (``MISSING_AUTHENTICATION_TOKEN``).
        code: the envelope's code (a key of ``STATUS_BY_CODE``).
        message: what to do; ``None`` keeps API Gateway's own message.
        keep_status: for ``DEFAULT_4XX``/``DEFAULT_5XX``: leave the status of the
            answer they stand in for (setting one would change every 4XX or 5XX).
    """

    response_type: str
    code: str
    message: str | None
    keep_status: bool = False

    @property
    def status(self) -> int:
        """The HTTP status of ``code``."""
        return STATUS_BY_CODE[self.code]

    def template(self) -> str:
        """The ``application/json`` response template."""
        if self.message is None:
            return '{"error":{"code":"' + self.code + '","message":' + GATEWAY_MESSAGE + "}}"
        return json.dumps(
            {"error": {"code": self.code, "message": self.message}},
            ensure_ascii=False,
            separators=(",", ":"),
        )

    def headers(self) -> dict[str, str]:
        """Response headers (values as API Gateway literals, in single quotes)."""
        headers = {"Content-Type": "'application/json'"}
        if self.status == 429:
            headers["Retry-After"] = "'1'"
        return headers


_AUTH = "Send 'Authorization: Bearer <token>' with a token from 'pinework admin'."
GATEWAY_ERRORS: tuple[GatewayError, ...] = (
    GatewayError("MISSING_AUTHENTICATION_TOKEN", "not_found", NOT_FOUND_MESSAGE),
    GatewayError("RESOURCE_NOT_FOUND", "not_found", NOT_FOUND_MESSAGE),
    GatewayError(
        "REQUEST_TOO_LARGE",
        "payload_too_large",
        "The request is over API Gateway's 10 MB; key-value values may be up to 5.5 MiB.",
    ),
    GatewayError(
        "THROTTLED", "rate_limited", "Too many requests right now; retry after Retry-After seconds."
    ),
    GatewayError(
        "QUOTA_EXCEEDED",
        "rate_limited",
        "The usage plan's quota is used up for now; retry after Retry-After seconds.",
    ),
    GatewayError(
        "INTEGRATION_TIMEOUT",
        "timeout",
        "The request took longer than API Gateway's 29 seconds and was cut off; what it "
        "changed may or may not be saved, so read before you retry. Long reviews are "
        "queued instead (202).",
    ),
    GatewayError(
        "INTEGRATION_FAILURE",
        "bad_gateway",
        "The service failed to answer (its function crashed or answered badly); try again.",
    ),
    GatewayError("UNAUTHORIZED", "unauthorized", f"Missing or unknown token. {_AUTH}"),
    GatewayError(
        "EXPIRED_TOKEN", "unauthorized", f"AWS credentials are not how this API signs in. {_AUTH}"
    ),
    GatewayError(
        "INVALID_SIGNATURE",
        "unauthorized",
        f"AWS signatures are not how this API signs in. {_AUTH}",
    ),
    GatewayError("ACCESS_DENIED", "forbidden", "Access denied."),
    GatewayError("INVALID_API_KEY", "forbidden", "The API Gateway API key is not valid."),
    GatewayError("WAF_FILTERED", "forbidden", "The request was blocked by the firewall."),
    GatewayError("BAD_REQUEST_PARAMETERS", "invalid_request", None),
    GatewayError("BAD_REQUEST_BODY", "invalid_request", None),
    GatewayError(
        "UNSUPPORTED_MEDIA_TYPE",
        "unsupported_media_type",
        "Send JSON bodies with 'Content-Type: application/json'.",
    ),
    GatewayError("API_CONFIGURATION_ERROR", "internal_error", None),
    GatewayError("AUTHORIZER_CONFIGURATION_ERROR", "internal_error", None),
    GatewayError("AUTHORIZER_FAILURE", "internal_error", None),
    GatewayError("DEFAULT_4XX", "invalid_request", None, keep_status=True),
    GatewayError("DEFAULT_5XX", "internal_error", None, keep_status=True),
)
"""Every response type API Gateway (REST) has, with its answer."""


def sam_gateway_responses() -> dict[str, Any]:
    """The ``GatewayResponses`` property of an ``AWS::Serverless::Api``."""
    responses: dict[str, Any] = {}
    for error in GATEWAY_ERRORS:
        response: dict[str, Any] = {
            "ResponseParameters": {"Headers": error.headers()},
            "ResponseTemplates": {"application/json": error.template()},
        }
        if not error.keep_status:
            response["StatusCode"] = str(error.status)
        responses[error.response_type] = response
    return responses


def put_gateway_responses(apigateway: APIGatewayClient, rest_api_id: str, stage: str) -> int:
    """Set every gateway response on a deployed REST API, then redeploy its stage
    (gateway responses take effect in the next deployment).

    Args:
        apigateway: a boto3 ``apigateway`` client.
        rest_api_id: the API's id (``chalice deploy`` records it).
        stage: the API Gateway stage to redeploy (``api_gateway_stage``).

    Returns:
        How many responses were set.
    """
    for error in GATEWAY_ERRORS:
        arguments: dict[str, Any] = {
            "restApiId": rest_api_id,
            "responseType": error.response_type,
            "responseParameters": {
                f"gatewayresponse.header.{name}": value for name, value in error.headers().items()
            },
            "responseTemplates": {"application/json": error.template()},
        }
        if not error.keep_status:
            arguments["statusCode"] = str(error.status)
        apigateway.put_gateway_response(**arguments)
    apigateway.create_deployment(
        restApiId=rest_api_id,
        stageName=stage,
        description="pinework: gateway responses in the error envelope",
    )
    return len(GATEWAY_ERRORS)
